/**
 * The tuning report: every candidate with what happened to it (timed, pruned and why, skipped
 * for the budget, failed), the winner, the verification, the timing method and the budget
 * spent; printable as a table and as JSON.
 * @module
 */

/** What happened to one candidate. */
export type TrialStatus = 'timed' | 'cached' | 'pruned' | 'budget' | 'error';

/** One candidate of a tuning run. */
export interface Trial {
  readonly kernel: string;
  readonly params: Readonly<Record<string, number>>;
  status: TrialStatus;
  /** Prune reason (status 'pruned'), or why it was not reached (status 'budget'). */
  reason?: string;
  /** Predicted relative cost (the timing order). */
  readonly predicted: number;
  /** Estimated device bytes before conversion. */
  readonly estimatedBytes: number;
  /** Median product time (ms); for finalists the median over the first measurement and the re-timing rounds. */
  ms?: number;
  /** A finalist's first measurement (ms). */
  firstMs?: number;
  minMs?: number;
  /** 2·nnz / t in GFLOP/s. */
  gflops?: number;
  /** Storage bytes of the format (float32 values, 32-bit indices). */
  bytes?: number;
  deviceBytes?: number;
  conversionMs?: number;
  uploadMs?: number;
  /** conversionMs + uploadMs + expectedProducts · ms. */
  objectiveMs?: number;
  /** The verification of this candidate (winners and rejected winners only). */
  verified?: boolean;
  maxErrOverBound?: number;
  error?: string;
}

/** The full account of one {@link autotune} call. */
export interface TuningReport {
  readonly rows: number;
  readonly cols: number;
  readonly nnz: number;
  /** The cache key (fingerprint, adapter, candidate space, products decade). */
  readonly key: string;
  /** 'tuned', 'cache' (a hit: nothing timed), 'fixed' (a fixed choice) or 'off' (tuning disabled). */
  source: 'tuned' | 'cache' | 'fixed' | 'off';
  /** Where the cache lives ('none' when disabled). */
  readonly cacheWhere: string;
  readonly expectedProducts: number;
  /** Tuning budget (ms) = fraction · (stated budget, or expectedProducts · first product time). */
  budgetMs: number;
  /** Wall time the tuning took (statistics, conversions, uploads, timing, verification). */
  spentMs: number;
  /** Wall time of the cheap statistics alone. */
  statsMs: number;
  /** 'timestamp' (GPU timestamps) or 'wall' (host clock over batched repetitions). */
  method: 'timestamp' | 'wall' | 'none';
  readonly trials: Trial[];
  timed: number;
  pruned: number;
  winner?: { kernel: string; params: Record<string, number>; ms: number; objectiveMs?: number; gflops?: number };
  /** Winners rejected by verification before the accepted one. */
  rejected: number;
  /** Warnings (cache problems, device errors). */
  readonly warnings: string[];
}

const fmt = (v: number | undefined, d = 3) => (v === undefined || !Number.isFinite(v) ? '' : v.toFixed(d));
const paramText = (p: Readonly<Record<string, number>>) =>
  Object.entries(p)
    .map(([k, v]) => `${k}=${v}`)
    .join(',');

/**
 * The report as a text table: one line per trial (timed ones first by objective, then pruned
 * and budget-skipped ones with their reasons), then the summary. O(trials log trials).
 * @example console.log(reportTable(result.report));
 */
export function reportTable(r: TuningReport, opts: { maxRows?: number } = {}): string {
  const order = { cached: 0, timed: 0, error: 1, budget: 2, pruned: 3 } as const;
  const rows = [...r.trials].sort((a, b) => order[a.status] - order[b.status] || (a.objectiveMs ?? a.predicted) - (b.objectiveMs ?? b.predicted));
  const head = ['kernel', 'params', 'status', 'ms', 'GFLOP/s', 'MB', 'conv ms', 'upload ms', 'objective ms', 'note'];
  const body = rows.slice(0, opts.maxRows ?? rows.length).map((t) => [
    t.kernel,
    paramText(t.params),
    t.verified === false ? 'rejected' : t.status,
    fmt(t.ms, 4),
    fmt(t.gflops, 2),
    fmt(t.bytes !== undefined ? t.bytes / 1e6 : undefined, 2),
    fmt(t.conversionMs, 1),
    fmt(t.uploadMs, 1),
    fmt(t.objectiveMs, 1),
    t.error ?? t.reason ?? (t.verified ? `verified (max err/bound ${fmt(t.maxErrOverBound, 2)})` : ''),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd();
  const w = r.winner;
  const summary = [
    `matrix ${r.rows}×${r.cols}, ${r.nnz} nnz; source: ${r.source}; cache: ${r.cacheWhere}`,
    `timed ${r.timed}, pruned ${r.pruned}, rejected ${r.rejected}; method ${r.method}; spent ${fmt(r.spentMs, 1)} ms of a ${fmt(r.budgetMs, 1)} ms budget (statistics ${fmt(r.statsMs, 1)} ms); expected products ${r.expectedProducts}`,
    w ? `winner: ${w.kernel}(${paramText(w.params)}) ${fmt(w.ms, 4)} ms${w.gflops !== undefined ? `, ${fmt(w.gflops, 2)} GFLOP/s` : ''}` : 'winner: none',
    ...r.warnings.map((m) => `warning: ${m}`),
  ];
  return [line(head), ...body.map(line), '', ...summary].join('\n');
}

/** The report as JSON text (all trials). O(trials). @example writeFileSync('tune.json', reportJson(r)) */
export function reportJson(r: TuningReport): string {
  return JSON.stringify(r, null, 1);
}
