/**
 * The tuning report: every candidate with what happened to it (timed, pruned and why, skipped
 * for the budget, failed and why), the decision (winner, runner-up, whether their spreads
 * overlap), the verification, the time spent by stage against the budget, and a glossary of
 * every figure; printable as a table and as JSON (the CLI's `tune --json` and the browser page
 * print this same object).
 * @module
 */

/** What happened to one candidate. */
export type TrialStatus = 'timed' | 'cached' | 'pruned' | 'budget' | 'skipped' | 'error';

/** One candidate of a tuning run. */
export interface Trial {
  readonly kernel: string;
  readonly params: Readonly<Record<string, number>>;
  status: TrialStatus;
  /** Prune reason (status 'pruned'), why the budget left it out (status 'budget', on the short-list), or why it was not short-listed (status 'skipped'). */
  reason?: string;
  /** Predicted relative cost from the matrix statistics (the short-list order; no unit). */
  readonly predicted: number;
  /** Estimated device bytes before conversion. */
  readonly estimatedBytes: number;
  /** Calibrated product-time prediction (ms) and its interval, when the adapter's calibration was available (`cost-terms.ts`). */
  predictedMs?: number;
  predictedLowMs?: number;
  predictedHighMs?: number;
  /** Product time (ms): the median of the round medians of the interleaved trials. */
  ms?: number;
  /** Smallest and largest round median (ms): the spread of the measurement. */
  loMs?: number;
  hiMs?: number;
  /** Round medians (ms), in round order. */
  samples?: number[];
  /** 2·nnz / ms, in GFLOP/s (10^9 floating-point operations per second). */
  gflops?: number;
  /** Storage bytes of the format (float32 values, 32-bit indices). */
  bytes?: number;
  deviceBytes?: number;
  /** Host conversion from CSR (ms, 0 for CSR kernels; shared by candidates of one layout). */
  conversionMs?: number;
  /** Upload of the converted matrix including pipeline compilation (ms). */
  uploadMs?: number;
  /** Expected total cost to the caller (ms) of choosing this candidate: conversionMs + uploadMs + expectedProducts · ms. */
  objectiveMs?: number;
  /** The verification of this candidate (winners and rejected winners only). */
  verified?: boolean;
  maxErrOverBound?: number;
  /** Rows the verification compared (all rows up to {@link VERIFY_NNZ} non-zeros; evenly spread row blocks past that). */
  verifiedRows?: number;
  /** Why it failed: the stage (conversion, unsupported, upload, timing, verification) and the message. */
  error?: string;
}

/** Where the tuning time went (ms, wall clock). */
export interface TuningCosts {
  /** Row-length statistics, diagonals, fingerprint (on the device from the shared CSR upload, or on the host), and the per-layout estimates of the candidates (padded slots, block fill). */
  statsMs: number;
  /** The tuning vectors x and y: creation and upload. */
  vectorsMs: number;
  /** Host conversions of the short-listed candidates. */
  conversionMs: number;
  /** Uploads: the CSR arrays once (validation included; shared by the statistics, every CSR candidate and the final operator), plus each other short-listed format's own (pipeline compilation included). */
  uploadMs: number;
  /** The interleaved timing rounds. */
  timingMs: number;
  /** Verification: one product, its readback and the float64 reference on the host. */
  verifyMs: number;
  /**
   * Waiting for pipelines compiled ahead of time in parallel (`prewarm.ts`): the statistics' before
   * their passes and each short-listed candidate's before its conversion. A per-process cost — 0
   * once this process has compiled them.
   */
  compileMs: number;
}

/** The decision between the timed candidates. */
export interface TuningDecision {
  /** Kept timing rounds (each round times every live short-listed candidate once, back to back; rounds at a lower clock are not counted). */
  rounds: number;
  /** Leading rounds discarded because the clock was still rising (their times fell in later rounds). */
  discardedRounds?: number;
  /** True when the spreads overlapped and the cheaper-to-build candidate (conversion + upload) was taken instead of the best median. */
  cheaperToBuild?: boolean;
  /** The runner-up by objective, when there was one. */
  runnerUp?: { kernel: string; params: Record<string, number>; ms: number; loMs: number; hiMs: number };
  /** True when the winner's spread overlaps the runner-up's: the two are not separated by the measurement. */
  uncertain: boolean;
  /** One sentence on the decision (why, and how sure). */
  note: string;
}

/**
 * The interleaved rounds behind a decision: how many ran, how many were discarded because they
 * ran at a lower clock than the later ones (the clock was still rising), why they stopped, and
 * how slow each round ran (`clockIndex`: per round the median over candidates of time / that
 * candidate's fastest round; 1 = the fastest clock seen, ~2.7 the H100's idle clock).
 */
export interface TimingRounds {
  /** Rounds run, discarded ones included. */
  run: number;
  /** Leading rounds discarded as taken while the clock was rising. */
  discarded: number;
  /** 'clear' (separated after two kept rounds), 'rounds' (the rounds wanted), 'uncertain' (twice the rounds, still not separated), 'budget', 'max'. */
  stopped: 'clear' | 'rounds' | 'uncertain' | 'budget' | 'max';
  clockIndex: number[];
  method: 'timestamp' | 'wall' | 'none';
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
  /** Products the caller expects (stated, or budget / first product time, or 1000). */
  readonly expectedProducts: number;
  /** Tuning budget (ms): fraction · budgetMs when stated, else max(fraction · expectedProducts · first product ms, minBudgetMs). */
  budgetMs: number;
  /** Wall time the tuning took, everything included (the sum of `costs` plus bookkeeping). */
  spentMs: number;
  /**
   * The tuning overhead the budget covers: spentMs less the one CSR upload (`csrUploadMs`) that
   * the operator reuses when a CSR kernel wins and that stands in for the winner's own upload
   * otherwise — a call without tuning pays one upload too — and less the adapter's calibration
   * when this call ran it (`calibration.ms`: once per adapter, then kept).
   */
  overheadMs?: number;
  /** Wall time of the statistics alone (= costs.statsMs). */
  statsMs: number;
  /** Where the statistics were computed: 'device', or 'host (why the device path declined)'. */
  statsWhere?: string;
  /**
   * The statistics split: `deviceMs` the device passes with their readbacks (or the host pass when
   * the device path declined), `estimatesMs` the host's candidate estimates (padded slots, block
   * fill, predictions), `compiled` the pipelines compiled for the first time during the whole run
   * (each a fixed cost of tens of ms on a fresh process; none on a warm one), `blockingCompileMs`
   * the part of them compiled on the run's path, `prewarmed` those asked for ahead of time.
   */
  statsSplit?: {
    deviceMs: number;
    estimatesMs: number;
    compiled: number;
    /** Milliseconds of pipeline compiles that blocked the run (compiled on first use, not ahead of time). */
    blockingCompileMs?: number;
    /** Pipelines asked for ahead of time (compiled on the device's worker threads during the CSR upload and the statistics). */
    prewarmed?: number;
    /** Milliseconds the statistics waited for their pipelines before their passes (in `costs.compileMs`, not in `deviceMs`; 0 once this process compiled them). */
    compileWaitMs?: number;
  };
  /** The one CSR upload the statistics, the CSR candidates and (when a CSR kernel wins) the operator share (ms, validation included). */
  csrUploadMs?: number;
  /** Where the time went, by stage. */
  readonly costs: TuningCosts;
  /**
   * The calibrated cost model (`calibrate.ts`, once per adapter): where the calibration came from
   * ('run': measured in this call, its `ms` part of spentMs; 'cache': loaded; 'given': passed in;
   * 'off': none, the static model's order), and the short-list it drew: `interval` candidates
   * the model could not separate from the predicted best by objective, `truncated` when more
   * than `maxTimed` of them were.
   */
  calibration?: { source: 'run' | 'cache' | 'given' | 'off'; ms: number; key?: string; interval?: number; truncated?: boolean };
  /** Set when spentMs exceeds the budget by more than 20 %: which fixed cost did it, and why. */
  budgetNote?: string;
  /** Product time of the first timed candidate (ms): sets the budget when no budgetMs was stated. */
  firstProductMs?: number;
  /** 'timestamp' (GPU timestamps) or 'wall' (host clock over batched repetitions). */
  method: 'timestamp' | 'wall' | 'none';
  /** The interleaved timing rounds of the decision (absent when nothing was timed in rounds). */
  rounds?: TimingRounds;
  readonly trials: Trial[];
  timed: number;
  pruned: number;
  /** Candidates that failed (conversion, refusal, upload, timing), each with its reason. */
  failed: number;
  winner?: { kernel: string; params: Record<string, number>; ms: number; loMs?: number; hiMs?: number; objectiveMs?: number; gflops?: number };
  decision?: TuningDecision;
  /** Winners rejected by verification before the accepted one. */
  rejected: number;
  /** Warnings (cache problems, device errors). */
  readonly warnings: string[];
  /** What each figure means (the same text as under the table). */
  readonly glossary: Readonly<Record<string, string>>;
}

/** The meaning and unit of each figure of the report (also printed under the table). */
export const REPORT_GLOSSARY: Readonly<Record<string, string>> = {
  ms: 'time of one product y = A·x in milliseconds: the median over the kept interleaved rounds (each round runs every candidate back to back, the median of a few repetitions each; rounds taken while the GPU clock was still rising are discarded)',
  'lo–hi': 'the smallest and largest kept round (ms): the spread; when the winner\'s spread overlaps another\'s the decision is uncertain and the cheaper to build of them is taken (with tunedOperator every timed build is already spent: the faster median)',
  'GFLOP/s': '2·nnz / product time, in 10^9 floating-point operations per second',
  MB: 'device storage of the format (float32 values, 32-bit indices), in 10^6 bytes',
  'conv ms': 'one-time conversion from CSR: on the host, or on the device for dia and dia-tiled (0 for CSR kernels)',
  'upload ms': 'one-time upload to the device, shader compilation included',
  'objective ms': 'expected total cost of choosing this candidate: conv ms + upload ms + expected products × ms; the winner has the least of what is still to pay (with tunedOperator, whose winner\'s upload becomes the operator, the builds are spent: expected products × ms)',
  budget: 'the tuning budget: fraction × the stated budget, else max(fraction × expected products × first product ms, minBudgetMs); it covers the overhead, everything but the one CSR upload the operator reuses',
};

/**
 * A number for people: fixed decimals from 1 up, significant digits below (so that 0.00042 is
 * not shown as 0.00). Empty for undefined or non-finite.
 * @example fmtNumber(0.000421, 2) // '0.000421'
 */
export function fmtNumber(v: number | undefined, d = 3): string {
  if (v === undefined || !Number.isFinite(v)) return '';
  if (v === 0 || Math.abs(v) >= 1) return v.toFixed(d);
  return Number(v.toPrecision(3)).toString();
}

const paramText = (p: Readonly<Record<string, number>>) =>
  Object.entries(p)
    .map(([k, v]) => `${k}=${v}`)
    .join(',');

const note = (t: Trial): string => t.error ?? t.reason ?? (t.verified ? `verified (max err/bound ${fmtNumber(t.maxErrOverBound, 2)}${t.verifiedRows !== undefined ? `, ${t.verifiedRows} rows` : ''})` : '');

/** One table row of a trial. */
function trialRow(t: Trial): string[] {
  return [
    t.kernel,
    paramText(t.params),
    t.verified === false ? 'rejected' : t.status,
    fmtNumber(t.ms, 4),
    t.loMs !== undefined ? `${fmtNumber(t.loMs, 4)}–${fmtNumber(t.hiMs, 4)}` : '',
    fmtNumber(t.gflops, 2),
    fmtNumber(t.bytes !== undefined ? t.bytes / 1e6 : undefined, 2),
    fmtNumber(t.conversionMs, 1),
    fmtNumber(t.uploadMs, 1),
    fmtNumber(t.objectiveMs, 1),
    note(t),
  ];
}

/** One line on the timing rounds: how many, discarded for a rising clock, why they stopped, the clock index per round. */
function roundsLine(t: TimingRounds): string {
  const idx = t.clockIndex.map((v) => v.toFixed(2)).join(' ');
  return `rounds: ${t.run} run (the first a one-product probe), ${t.discarded} discarded as taken while the clock was rising, stopped: ${t.stopped}; clock index per round (1 = the fastest seen): ${idx}`;
}

/** The summary lines under the table. */
/** The cost model's line: where the calibration came from and what it short-listed. */
function calibrationLine(c: NonNullable<TuningReport['calibration']>): string {
  if (c.source === 'off') return 'cost model: static (no calibration: a software adapter, calibrate: false or GPUSPARSE_CALIBRATE=0)';
  const where = c.source === 'run' ? `calibrated in this call (${fmtNumber(c.ms, 1)} ms, not in the overhead)` : c.source === 'cache' ? 'calibration loaded' : 'calibration given';
  return `cost model: ${where}; ${c.interval ?? '?'} candidates inseparable from the predicted best${c.truncated ? ' (more than maxTimed: the worse-predicted left off)' : ''}`;
}

function summaryLines(r: TuningReport): string[] {
  const c = r.costs;
  const w = r.winner;
  const d = r.decision;
  return [
    `matrix ${r.rows}×${r.cols}, ${r.nnz} nnz; source: ${r.source}; cache: ${r.cacheWhere}`,
    `timed ${r.timed}, pruned ${r.pruned}, failed ${r.failed}, rejected ${r.rejected}; method ${r.method}; expected products ${r.expectedProducts}`,
    `spent ${fmtNumber(r.spentMs, 1)} ms${r.overheadMs !== undefined && r.overheadMs < r.spentMs ? ` (overhead ${fmtNumber(r.overheadMs, 1)} ms without the shared CSR upload)` : ''} of a ${fmtNumber(r.budgetMs, 1)} ms budget: statistics ${fmtNumber(c.statsMs, 1)}${r.statsWhere ? ` (${r.statsWhere})` : ''}, vectors ${fmtNumber(c.vectorsMs, 1)}, conversion ${fmtNumber(c.conversionMs, 1)}, upload ${fmtNumber(c.uploadMs, 1)}${r.csrUploadMs !== undefined ? ` (the shared CSR ${fmtNumber(r.csrUploadMs, 1)})` : ''}, timing ${fmtNumber(c.timingMs, 1)}, verification ${fmtNumber(c.verifyMs, 1)}, waiting for compiles ${fmtNumber(c.compileMs, 1)} ms`,
    ...(r.calibration ? [calibrationLine(r.calibration)] : []),
    ...(r.budgetNote ? [`over budget: ${r.budgetNote}`] : []),
    w ? `winner: ${w.kernel}(${paramText(w.params)}) ${fmtNumber(w.ms, 4)} ms per product${w.gflops !== undefined ? `, ${fmtNumber(w.gflops, 2)} GFLOP/s` : ''}${w.objectiveMs !== undefined ? `, objective ${fmtNumber(w.objectiveMs, 1)} ms for ${r.expectedProducts} products` : ''}` : 'winner: none',
    ...(d ? [`decision (${d.rounds} kept round${d.rounds === 1 ? '' : 's'}${d.uncertain ? ', uncertain' : ''}): ${d.note}`] : []),
    ...(r.rounds ? [roundsLine(r.rounds)] : []),
    ...r.warnings.map((m) => `warning: ${m}`),
  ];
}

/**
 * The report as a text table: one line per trial (timed ones first by objective, then failures,
 * budget skips and prunes with their reasons), the summary (time by stage, winner, decision),
 * and the glossary of the columns. O(trials log trials).
 * @example console.log(reportTable(result.report));
 */
export function reportTable(r: TuningReport, opts: { maxRows?: number } = {}): string {
  const order = { cached: 0, timed: 0, error: 1, budget: 2, skipped: 3, pruned: 4 } as const;
  const rows = [...r.trials].sort((a, b) => order[a.status] - order[b.status] || (a.objectiveMs ?? a.predicted) - (b.objectiveMs ?? b.predicted));
  const head = ['kernel', 'params', 'status', 'ms', 'lo–hi', 'GFLOP/s', 'MB', 'conv ms', 'upload ms', 'objective ms', 'note'];
  const body = rows.slice(0, opts.maxRows ?? rows.length).map(trialRow);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd();
  const more = rows.length > body.length ? [`(${rows.length - body.length} more trials: budget skips, candidates not short-listed, prunes; the JSON report has all)`] : [];
  const glossary = Object.entries(r.glossary).map(([k, v]) => `  ${k}: ${v}`);
  return [line(head), ...body.map(line), ...more, '', ...summaryLines(r), '', 'columns:', ...glossary].join('\n');
}

/** The report as JSON text (all trials, the costs, the decision and the glossary). O(trials). @example writeFileSync('tune.json', reportJson(r)) */
export function reportJson(r: TuningReport): string {
  return JSON.stringify(r, null, 1);
}
