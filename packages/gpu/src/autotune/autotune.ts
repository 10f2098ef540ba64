/**
 * The SpMV autotuner: choose a kernel and its parameters for one matrix on one device by
 * measurement, within a stated share of the caller's time, verify the choice against the
 * float64 reference, and remember it per matrix fingerprint and adapter.
 *
 * Order of work: cheap statistics → candidates (registry × declared values) pruned with
 * reasons → timing in order of predicted promise until the budget is out → verification of the
 * best objective (conversion + upload + expectedProducts · product time), falling back to the
 * next best when the per-row bound fails → cache.
 * @module
 */
import { type CsrMatrix, GpuSparseError, type SparseMatrix } from '@gpusparse/formats';
import type { GpuContext } from '../device/context';
import { getKernel, kernels as registry } from '../kernels/registry';
import type { AnySpmvKernel, DeviceMatrix } from '../kernels/types';
import { GpuOperator, gpuOperatorFromCsr } from '../operator';
import { type Candidate, type CandidateSpec, defaultPruneRules, enumerateCandidates, type PruneRules } from './candidates';
import type { CacheEntry, TuneStore } from './cache';
import { adapterKey, candidateSpaceHash, matrixFingerprint } from './fingerprint';
import { ConversionCache, measureCandidate, type TuneVectors, tuneVectors, verifyProduct } from './measure';
import { retimeFinalists } from './finalists';
import { profileMatrix } from './profile';
import type { Trial, TuningReport } from './report';
import { resolveStore } from './store';

/** Raised when no candidate could be timed and verified. */
export class TuningError extends GpuSparseError {}

/** Progress of a tuning run. */
export interface TuneProgress {
  readonly phase: 'stats' | 'trial' | 'verify' | 'done';
  /** Candidates handled so far / all candidates. */
  readonly done: number;
  readonly total: number;
  readonly spentMs: number;
  readonly budgetMs: number;
  readonly trial?: Trial;
}

/** Options of {@link autotune}. */
export interface AutotuneOptions {
  /** The caller's whole time budget (ms), e.g. of a solve; tuning spends `fraction` of it. */
  readonly budgetMs?: number;
  /** Products the caller expects to do (default: budgetMs / first product time, else 1000). */
  readonly expectedProducts?: number;
  /** Share of the budget tuning may spend (default 0.1). */
  readonly fraction?: number;
  /** Restrict to these kernels (all variants) or kernels with some parameters fixed. */
  readonly candidates?: readonly CandidateSpec[];
  /** Skip tuning: use this kernel and parameters. */
  readonly fixed?: { readonly kernel: string; readonly params?: Readonly<Record<string, number>> };
  /** false: no tuning, the default kernel (csr-vector with its defaults). */
  readonly tune?: boolean;
  /** true (default): the default store; a path; a store; false: no cache. */
  readonly cache?: boolean | string | TuneStore;
  /** Add an FNV-1a hash of the arrays to the fingerprint (default false: structure only). */
  readonly contentHash?: boolean;
  /** Time every candidate that can run (soft prunes included), ignoring the budget (benchmarks). */
  readonly exhaustive?: boolean;
  /** Timed repetitions per candidate (default 10) and untimed warm-up runs (default 2). */
  readonly reps?: number;
  readonly warmup?: number;
  /** How many of the best (by objective) are re-timed in interleaved rounds before choosing (default 3; 0 or 1: none). */
  readonly finalists?: number;
  /** Pruning thresholds. */
  readonly rules?: Partial<PruneRules>;
  /** Kernels to choose from (default: the registry). */
  readonly kernels?: readonly AnySpmvKernel[];
  readonly onProgress?: (p: TuneProgress) => void;
  /** Where warnings go (default console.warn); they are also in the report. */
  readonly warn?: (msg: string) => void;
}

/** What {@link autotune} returns. */
export interface AutotuneResult {
  readonly kernel: string;
  readonly params: Record<string, number>;
  readonly report: TuningReport;
  /** Build the GPU operator of the choice (first call reuses the verified upload when kept). */
  operator(): GpuOperator;
}

/** Part of every cache key; bump it when candidate generation or the objective changes meaning. */
export const TUNER_VERSION = 1;

/** The choice when tuning is off. */
export const DEFAULT_CHOICE = { kernel: 'csr-vector', params: {} } as const;

const decade = (v: number) => Math.round(Math.log10(Math.max(1, v)));

/** Internal: keep the verified winner's upload for the operator. */
interface Held {
  keep?: boolean;
  handle?: DeviceMatrix;
}

/**
 * Choose the SpMV kernel and parameters for `a` on `ctx`'s device. A cache hit times nothing
 * (it only verifies the remembered choice with one product); a miss times candidates in order
 * of predicted promise while the spent time stays within `fraction` of the budget (the first
 * candidate is always timed), then verifies the best by objective.
 * Cost: statistics O(nnz + rows log rows); per timed candidate one conversion (shared between
 * candidates of the same format parameters), one upload and warmup + reps products.
 * @example
 * const { kernel, params, report } = await autotune(ctx, a, { expectedProducts: 500, cache: false });
 * console.log(reportTable(report));
 */
export async function autotune(ctx: GpuContext, a: CsrMatrix, opts: AutotuneOptions = {}): Promise<AutotuneResult> {
  return tuneInternal(ctx, a, opts, {});
}

async function tuneInternal(ctx: GpuContext, a: CsrMatrix, opts: AutotuneOptions, held: Held): Promise<AutotuneResult> {
  const start = performance.now();
  const warnings: string[] = [];
  const warn = (m: string) => {
    warnings.push(m);
    (opts.warn ?? console.warn)(m);
  };
  const fraction = opts.fraction ?? 0.1;
  if (!(fraction > 0 && fraction <= 1)) throw new RangeError(`autotune: fraction expected in (0, 1], got ${fraction}`);
  for (const f of ['budgetMs', 'expectedProducts'] as const) {
    const v = opts[f];
    if (v !== undefined && !(v > 0)) throw new RangeError(`autotune: ${f} expected a number > 0, got ${v}`);
  }
  const ks = opts.kernels ?? registry;
  const rules: PruneRules = { ...defaultPruneRules, ...opts.rules };
  const nnz = a.rowPtr[a.rows] ?? 0;
  const report: TuningReport = {
    rows: a.rows,
    cols: a.cols,
    nnz,
    key: '',
    source: 'tuned',
    cacheWhere: 'none',
    expectedProducts: opts.expectedProducts ?? 0,
    budgetMs: 0,
    spentMs: 0,
    statsMs: 0,
    method: 'none',
    trials: [],
    timed: 0,
    pruned: 0,
    rejected: 0,
    warnings,
  };
  const finish = (kernel: string, params: Record<string, number>): AutotuneResult => {
    report.spentMs = performance.now() - start;
    opts.onProgress?.({ phase: 'done', done: report.trials.length, total: report.trials.length, spentMs: report.spentMs, budgetMs: report.budgetMs });
    return { kernel, params, report, operator: () => buildOperator(ctx, a, kernel, params, held) };
  };
  if (opts.fixed || opts.tune === false) {
    const choice = opts.fixed ?? DEFAULT_CHOICE;
    const k = ks.find((d) => d.id === choice.kernel) ?? getKernel(choice.kernel);
    report.source = opts.fixed ? 'fixed' : 'off';
    return finish(k.id, { ...k.defaults, ...choice.params });
  }

  const profile = profileMatrix(a, Math.max(rules.maxDiagonals, 1024));
  const fp = matrixFingerprint(a, profile.stats, { content: opts.contentHash });
  const sizing = opts.expectedProducts !== undefined ? `p${decade(opts.expectedProducts)}` : opts.budgetMs !== undefined ? `b${decade(opts.budgetMs)}` : 'p3';
  const key = [fp.key, adapterKey(ctx), `v${TUNER_VERSION}k${candidateSpaceHash(ks)}`, sizing, opts.candidates ? `c${JSON.stringify(opts.candidates)}` : ''].join('/');
  (report as { key: string }).key = key;
  report.statsMs = performance.now() - start;
  opts.onProgress?.({ phase: 'stats', done: 0, total: 0, spentMs: report.statsMs, budgetMs: 0 });
  const store = await resolveStore(opts.cache, warn);
  (report as { cacheWhere: string }).cacheWhere = store?.where ?? 'none';
  const v = tuneVectors(ctx, a.rows, a.cols);
  try {
    const hit = store?.get(key);
    if (hit && ks.some((k) => k.id === hit.kernel)) {
      const r = await verifyCached(ctx, a, hit, ks, v, held, report);
      if (r) return finish(hit.kernel, { ...hit.params });
      warn(`gpusparse autotune: the cached choice ${hit.kernel} failed verification on this matrix; tuning again`);
    }
    report.source = 'tuned';
    const win = await timeCandidates(ctx, a, opts, rules, ks, profile, v, report, held, start);
    if (store) {
      const entry: CacheEntry = { kernel: win.kernel, params: win.params, productMs: win.ms!, conversionMs: win.conversionMs ?? 0, uploadMs: win.uploadMs ?? 0, method: report.method === 'timestamp' ? 'timestamp' : 'wall', date: new Date().toISOString() };
      store.set(key, entry);
    }
    return finish(win.kernel, { ...win.params });
  } finally {
    v.dx.dispose();
    v.dy.dispose();
  }
}

/** Verify a cached choice with one product (no timing); records it as the only trial. */
async function verifyCached(ctx: GpuContext, a: CsrMatrix, hit: CacheEntry, ks: readonly AnySpmvKernel[], v: TuneVectors, held: Held, report: TuningReport): Promise<boolean> {
  const k = ks.find((d) => d.id === hit.kernel)!;
  const c: Candidate = { kernel: k, params: { ...k.defaults, ...hit.params }, conversionKey: 'cached', estimatedBytes: 0, predicted: 0, work: 0 };
  const t: Trial = { kernel: k.id, params: c.params, status: 'cached', reason: 'cache hit (not timed)', predicted: 0, estimatedBytes: 0, ms: hit.productMs, conversionMs: hit.conversionMs, uploadMs: hit.uploadMs };
  report.trials.push(t);
  report.source = 'cache';
  try {
    const conv = new ConversionCache(a, 0);
    const { m } = conv.get(c);
    const ok = k.supports(m, ctx.limits, c.params);
    if (ok !== true) throw new Error(`unsupported: ${ok}`);
    const handle = k.upload(ctx, m, c.params);
    const res = await verifyProduct(ctx, a, c, m, handle, v);
    Object.assign(t, { verified: res.ok, maxErrOverBound: res.maxErrOverBound });
    if (res.ok && held.keep) held.handle = handle;
    else handle.dispose();
    if (res.ok) report.winner = { kernel: k.id, params: c.params, ms: hit.productMs };
    else Object.assign(t, { status: 'error', error: `cached choice failed verification: error/bound ${res.maxErrOverBound.toExponential(2)} at row ${res.row}` });
    return res.ok;
  } catch (e) {
    if (ctx.isLost) throw e;
    Object.assign(t, { status: 'error', error: `cached choice failed: ${(e as Error).message}` });
    return false;
  }
}

/** Time the candidates within the budget, then verify by objective; returns the accepted trial. */
async function timeCandidates(
  ctx: GpuContext,
  a: CsrMatrix,
  opts: AutotuneOptions,
  rules: PruneRules,
  ks: readonly AnySpmvKernel[],
  profile: ReturnType<typeof profileMatrix>,
  v: TuneVectors,
  report: TuningReport,
  held: Held,
  start: number,
): Promise<Trial> {
  const fraction = opts.fraction ?? 0.1;
  const nnz = report.nnz;
  const guessProducts = opts.expectedProducts ?? 1000;
  const list = enumerateCandidates(a, profile, ks, rules, guessProducts, opts.candidates);
  if (list.length === 0) throw new TuningError(`autotune: expected at least one candidate, got none (candidates ${JSON.stringify(opts.candidates)})`);
  const trials: Trial[] = list.map((c) => ({ kernel: c.kernel.id, params: c.params, status: c.pruned ? 'pruned' : 'budget', reason: c.pruned?.reason, predicted: c.predicted, estimatedBytes: c.estimatedBytes }));
  report.trials.push(...trials);
  report.pruned = trials.filter((t) => t.status === 'pruned').length;
  let products = opts.expectedProducts ?? 0;
  report.budgetMs = opts.budgetMs !== undefined ? fraction * opts.budgetMs : Number.POSITIVE_INFINITY;
  const reps = opts.reps ?? 10;
  const warmup = opts.warmup ?? 2;
  const conv = new ConversionCache(a, 4 * (12 * nnz + 4 * a.rows) + 2 ** 20);
  const objective = (t: Trial) => (t.conversionMs ?? 0) + (t.uploadMs ?? 0) + products * t.ms!;
  let convPerByte = 0;
  let uploadPerByte = 0;
  let lastMs = 0;
  const seenConv = new Set<string>();
  // what choosing still costs, reserved inside the budget: re-timing the finalists (uploads and
  // 2 rounds of warmup + reps products each) and verifying the best (one upload, one product)
  const finalists = Math.max(0, Math.floor(opts.finalists ?? 3));
  const closing = (): number => {
    const top = trials.filter((t) => t.status === 'timed').sort((x, y) => objective(x) - objective(y)).slice(0, Math.max(finalists, 1));
    let ms = 0;
    for (const t of top) ms += (finalists > 1 ? t.uploadMs! + 2 * (reps + warmup) * t.ms! : 0);
    return ms + (top[0] ? top[0].uploadMs! + top[0].ms! + report.statsMs : 0);
  };
  // timing order: the static prediction until one product is timed, then the calibrated objective
  // products · (ms per unit of work) · work + conversion (unless shared and done) + upload
  const pending = list.map((_, i) => i).filter((i) => !(list[i]!.pruned && (list[i]!.pruned!.hard || !opts.exhaustive)));
  const msPerWork: number[] = [];
  let handled = 0;
  while (pending.length > 0) {
    let pick = 0;
    const kWork = msPerWork.length ? [...msPerWork].sort((x, y) => x - y)[msPerWork.length >> 1]! : 0;
    const costOf = (c: Candidate) => ({ conv: seenConv.has(c.conversionKey) ? 0 : convPerByte * c.estimatedBytes, upload: uploadPerByte * c.estimatedBytes, product: kWork * c.work });
    if (kWork > 0) {
      let best = Number.POSITIVE_INFINITY;
      pending.forEach((i, k) => {
        const e = costOf(list[i]!);
        const score = e.conv + e.upload + Math.max(1, products) * e.product;
        if (score < best) [best, pick] = [score, k];
      });
    }
    const i = pending.splice(pick, 1)[0]!;
    const c = list[i]!;
    const t = trials[i]!;
    handled++;
    const spent = performance.now() - start;
    if (report.timed > 0 && !opts.exhaustive) {
      const e = costOf(c);
      const need = e.conv + e.upload + (reps + warmup) * (e.product || lastMs);
      if (spent + need + closing() > report.budgetMs) {
        t.reason = `budget: needs ~${need.toFixed(1)} ms, ${Math.max(0, report.budgetMs - spent).toFixed(1)} ms left`;
        continue;
      }
    }
    try {
      const { meas, handle } = await measureCandidate(ctx, conv, c, v, { reps, warmup });
      handle.dispose();
      Object.assign(t, {
        status: 'timed',
        ms: meas.medianMs,
        minMs: meas.minMs,
        gflops: (2 * nnz) / (meas.medianMs * 1e6),
        bytes: meas.storageBytes,
        deviceBytes: meas.deviceBytes,
        conversionMs: meas.conversionMs,
        uploadMs: meas.uploadMs,
      });
      report.timed++;
      report.method = meas.method;
      if (!seenConv.has(c.conversionKey) && c.estimatedBytes > 0) convPerByte = Math.max(convPerByte, meas.conversionMs / c.estimatedBytes);
      seenConv.add(c.conversionKey);
      uploadPerByte = Math.max(uploadPerByte * 0.5, meas.uploadMs / Math.max(1, c.estimatedBytes));
      lastMs = meas.medianMs;
      if (c.work > 0) msPerWork.push(meas.medianMs / c.work);
      if (report.timed === 1) {
        // the first product time turns the caller's statement into a budget and a product count
        if (products === 0) products = opts.budgetMs !== undefined ? Math.max(1, Math.round(opts.budgetMs / meas.medianMs)) : 1000;
        if (opts.budgetMs === undefined) report.budgetMs = fraction * products * meas.medianMs;
        (report as { expectedProducts: number }).expectedProducts = products;
      }
    } catch (e) {
      if (ctx.isLost) throw e;
      Object.assign(t, { status: 'error', error: (e as Error).message });
    }
    opts.onProgress?.({ phase: 'trial', done: handled, total: list.length, spentMs: performance.now() - start, budgetMs: report.budgetMs, trial: t });
  }
  const byObjective = () => {
    for (const t of trials) if (t.status === 'timed') t.objectiveMs = objective(t);
    return list.map((c, i) => ({ c, t: trials[i]! })).filter((p) => p.t.status === 'timed').sort((p, q) => p.t.objectiveMs! - q.t.objectiveMs!);
  };
  if (finalists > 1 && report.timed > 1 && (opts.exhaustive || performance.now() - start + closing() <= report.budgetMs)) {
    await retimeFinalists(ctx, conv, byObjective().slice(0, finalists), v, { reps, warmup, rounds: 2 });
    for (const t of trials) if (t.status === 'timed') t.gflops = (2 * nnz) / (t.ms! * 1e6);
  }
  const ranked = byObjective();
  for (const { c, t } of ranked) {
    opts.onProgress?.({ phase: 'verify', done: report.trials.length, total: report.trials.length, spentMs: performance.now() - start, budgetMs: report.budgetMs, trial: t });
    const { m } = conv.get(c);
    let handle: DeviceMatrix | undefined;
    try {
      const h = c.kernel.upload(ctx, m as SparseMatrix, c.params);
      handle = h;
      const res = await verifyProduct(ctx, a, c, m, h, v);
      Object.assign(t, { verified: res.ok, maxErrOverBound: res.maxErrOverBound });
      if (!res.ok) t.error = `verification failed: error/bound ${res.maxErrOverBound.toExponential(2)} at row ${res.row}`;
    } catch (e) {
      if (ctx.isLost) throw e;
      Object.assign(t, { verified: false, error: `verification failed: ${(e as Error).message}` });
    }
    if (t.verified && handle) {
      if (held.keep) held.handle = handle;
      else handle?.dispose();
      report.winner = { kernel: t.kernel, params: { ...t.params }, ms: t.ms!, objectiveMs: t.objectiveMs, gflops: t.gflops };
      conv.clear();
      return t;
    }
    handle?.dispose();
    report.rejected++;
  }
  conv.clear();
  const why = trials.filter((t) => t.error).slice(0, 3).map((t) => `${t.kernel}: ${t.error}`).join('; ');
  throw new TuningError(`autotune: expected a candidate that runs and passes verification on this ${a.rows}×${a.cols} matrix, got none (${report.timed} timed, ${report.rejected} rejected${why ? `; ${why}` : ''})`);
}

/** Build the operator of a choice, reusing the verified upload once when it was kept. */
function buildOperator(ctx: GpuContext, a: CsrMatrix, kernel: string, params: Record<string, number>, held: Held): GpuOperator {
  const k = getKernel(kernel);
  const handle = held.handle;
  held.handle = undefined;
  if (handle) return new GpuOperator(ctx, k, handle, { ...k.defaults, ...params }, a);
  return gpuOperatorFromCsr(ctx, a, { kernel: k, params });
}

/** Options of {@link tunedOperator}: {@link AutotuneOptions}. */
export type TunedOperatorOptions = AutotuneOptions;

/**
 * A GPU operator for `a` built from the tuned choice (or the fixed one, or the default with
 * `{ tune: false }`); the tuning report rides along as `tuning`. The verified upload of the
 * winner becomes the operator (no second upload on a miss).
 * Cost: as {@link autotune}, plus nothing on a miss; one upload on a hit.
 * @example
 * const op = await tunedOperator(ctx, a, { expectedProducts: 300 });
 * op.apply(x, y); console.log(op.tuning.winner);
 */
export async function tunedOperator(ctx: GpuContext, a: CsrMatrix, opts: TunedOperatorOptions = {}): Promise<GpuOperator & { readonly tuning: TuningReport }> {
  const held: Held = { keep: true };
  const r = await tuneInternal(ctx, a, opts, held);
  try {
    const op = r.operator();
    return Object.assign(op, { tuning: r.report });
  } finally {
    held.handle?.dispose();
  }
}
