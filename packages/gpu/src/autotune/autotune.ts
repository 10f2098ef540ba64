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
import type { CsrMatrix } from '@gpusparse/formats';
import type { GpuContext } from '../device/context';
import { getKernel, kernels as registry } from '../kernels/registry';
import type { AnySpmvKernel } from '../kernels/types';
import { GpuOperator, gpuOperatorFromCsr } from '../operator';
import { type Candidate, defaultPruneRules, type PruneRules } from './candidates';
import type { CacheEntry } from './cache';
import { adapterKey, candidateSpaceHash, matrixFingerprint } from './fingerprint';
import { ConversionCache, type TuneVectors, tuneVectors, verifyProduct } from './measure';
import { profileMatrix } from './profile';
import type { Trial, TuningReport } from './report';
import { timeCandidates } from './search';
import { resolveStore } from './store';
import type { AutotuneOptions, AutotuneResult, Held } from './types';

export { type AutotuneOptions, type AutotuneResult, type TuneProgress, TuningError } from './types';

/** Part of every cache key; bump it when candidate generation or the objective changes meaning. */
export const TUNER_VERSION = 1;

/** The choice when tuning is off. */
export const DEFAULT_CHOICE = { kernel: 'csr-vector', params: {} } as const;

const decade = (v: number) => Math.round(Math.log10(Math.max(1, v)));

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
    return { kernel, params, report, operator: () => buildOperator(ctx, a, ks.find((d) => d.id === kernel) ?? getKernel(kernel), params, held) };
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

/** Build the operator of a choice, reusing the verified upload once when it was kept. */
function buildOperator(ctx: GpuContext, a: CsrMatrix, k: AnySpmvKernel, params: Record<string, number>, held: Held): GpuOperator {
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
