/**
 * The SpMV autotuner: choose a kernel and its parameters for one matrix on one device by
 * measurement, within a stated share of the caller's time, verify the choice against the
 * float64 reference, and remember it per matrix fingerprint and adapter.
 *
 * The matrix is uploaded as CSR once (`uploadCsrArrays`): the statistics, every CSR candidate
 * and, when a CSR kernel wins, the final operator read those buffers. Then it goes through four
 * stages once, each in its own file: profile (`profile.ts`, from the device statistics of
 * `profile/device-stats.ts`: row-length histogram, diagonals, sliced-ELL padding; fingerprint) → short-list
 * (`candidates.ts` assesses every candidate, `shortlist.ts` picks the CSR floor and the few the
 * model cannot separate) → trials (`trials.ts`: one conversion and one upload each, interleaved
 * timing rounds within the budget) → decision (`decision.ts`: objective, spread, verification on
 * the same uploads, the CSR floor when nothing else works). Then the cache.
 * @module
 */
import type { CsrMatrix } from '@gpusparse/formats';
import type { GpuContext } from '../device/context';
import { getKernel, kernels as registry } from '../kernels/registry';
import { type SharedCsrUpload, uploadCsrArrays } from '../kernels/csr/csr-device';
import { diaDeviceSpecs } from '../kernels/dia/dia-tiled.kernel';
import { type AnySpmvKernel, supportsCsr, type UploadOptions } from '../kernels/types';
import { deviceMatrixStats, deviceStatsSpecs, type SellLayout } from '../profile/device-stats';
import { GpuOperator, gpuOperatorFromCsr } from '../operator';
import type { CacheEntry, TuneStore } from './cache';
import { type Candidate, defaultPruneRules, enumerateCandidates, type PruneRules } from './candidates';
import { ConversionCache, type TuneVectors, tuneVectors } from './conversions';
import { decide, deferToSolve, uncertain } from './decision';
import { InSolveOperator } from './in-solve';
import { adapterKey, candidateSpaceHash, matrixFingerprint } from './fingerprint';
import { type MatrixProfile, profileFromDevice, profileMatrix } from './profile';
import { REPORT_GLOSSARY, type Trial, type TuningReport } from './report';
import { DEFAULT_MAX_TIMED, shortList } from './shortlist';
import { resolveStore } from './store';
import { admit, CLOCK_WARM_MS, interleave, type TrialSession } from './trials';
import type { AutotuneOptions, AutotuneResult, Held } from './types';
import { verifyProduct } from './verify';

export { type AutotuneOptions, type AutotuneResult, type TuneProgress, TuningError } from './types';

/** Part of every cache key; bump it when candidate generation or the objective changes meaning. */
export const TUNER_VERSION = 3; // 3: csr-vec4 preparation as a conversion, csr-balanced on power-law rows only

/**
 * The smallest tuning budget (ms) when no budgetMs is stated: issue 16's overhead target is
 * "≤ 0.5 s or ≤ 10 % of the work it serves, whichever is larger", so the budget is that larger one.
 */
export const MIN_BUDGET_MS = 500;

/** The choice when tuning is off. */
export const DEFAULT_CHOICE = { kernel: 'csr-vector', params: {} } as const;

const decade = (v: number) => Math.round(Math.log10(Math.max(1, v)));

/**
 * Choose the SpMV kernel and parameters for `a` on `ctx`'s device. A cache hit times nothing
 * (it only verifies the remembered choice with one product); a miss profiles the matrix, times
 * the model's short-list (the CSR floor first) in interleaved rounds within the budget, and
 * verifies the best objective, falling back to the CSR floor — it answers whenever any kernel
 * can run. Cost: statistics O(nnz + rows log rows); per short-listed candidate one conversion
 * (shared by candidates of one layout) and one upload; rounds × (warmup + reps) products each.
 * @example
 * const { kernel, params, report } = await autotune(ctx, a, { expectedProducts: 500, cache: false });
 * console.log(reportTable(report));
 */
export async function autotune(ctx: GpuContext, a: CsrMatrix, opts: AutotuneOptions = {}): Promise<AutotuneResult> {
  return tuneInternal(ctx, a, opts, {});
}

function validate(opts: AutotuneOptions): void {
  const fraction = opts.fraction ?? 0.1;
  if (!(fraction > 0 && fraction <= 1)) throw new RangeError(`autotune: fraction expected in (0, 1], got ${fraction}`);
  for (const f of ['budgetMs', 'expectedProducts'] as const) {
    const v = opts[f];
    if (v !== undefined && !(v > 0)) throw new RangeError(`autotune: ${f} expected a number > 0, got ${v}`);
  }
  if (opts.clockWarmMs !== undefined && !(opts.clockWarmMs >= 0 && Number.isFinite(opts.clockWarmMs))) throw new RangeError(`autotune: clockWarmMs expected a finite number ≥ 0, got ${opts.clockWarmMs}`);
  for (const f of ['reps', 'rounds', 'maxTimed'] as const) {
    const v = opts[f];
    if (v !== undefined && !(Number.isInteger(v) && v >= 1)) throw new RangeError(`autotune: ${f} expected an integer ≥ 1, got ${v}`);
  }
}

function newReport(a: CsrMatrix, opts: AutotuneOptions, warnings: string[]): TuningReport {
  return {
    rows: a.rows,
    cols: a.cols,
    nnz: a.rowPtr[a.rows] ?? 0,
    key: '',
    source: 'tuned',
    cacheWhere: 'none',
    expectedProducts: opts.expectedProducts ?? 0,
    budgetMs: opts.budgetMs !== undefined ? (opts.fraction ?? 0.1) * opts.budgetMs : Number.POSITIVE_INFINITY,
    spentMs: 0,
    statsMs: 0,
    costs: { statsMs: 0, vectorsMs: 0, conversionMs: 0, uploadMs: 0, timingMs: 0, verifyMs: 0 },
    method: 'none',
    trials: [],
    timed: 0,
    pruned: 0,
    failed: 0,
    rejected: 0,
    warnings,
    glossary: REPORT_GLOSSARY,
  };
}

/** Chunk heights of the sliced layouts among `ks` (their σ = 1 padding is summed on the device). */
function sliceHeights(ks: readonly AnySpmvKernel[]): number[] {
  const out = new Set<number>();
  for (const k of ks) {
    for (const [name, spec] of Object.entries(k.params as Record<string, { values: readonly number[] }>)) if (name === 'sliceHeight' || name === 'C') for (const v of spec.values) out.add(v);
  }
  return [...out];
}

/** SELL-C-σ layouts (σ = C · sigmaChunks > C) among `ks`: their padding is summed on the device. */
function sellLayouts(ks: readonly AnySpmvKernel[]): SellLayout[] {
  const out: SellLayout[] = [];
  for (const k of ks) {
    const p = k.params as Record<string, { values: readonly number[] } | undefined>;
    for (const C of p.C?.values ?? []) for (const n of p.sigmaChunks?.values ?? []) if (n > 1 && !out.some((l) => l.C === C && l.sigma === C * n)) out.push({ C, sigma: C * n });
  }
  return out;
}

/**
 * Stage 1: the profile (on the device from the shared CSR upload; on the host when the device
 * path declines) and the cache key. Cost on the device: a few passes over the row pointers and
 * one over the columns, two readbacks, O(rows) on the host; measured as statsMs.
 */
async function profileStage(ctx: GpuContext, a: CsrMatrix, shared: SharedCsrUpload, opts: AutotuneOptions, ks: readonly AnySpmvKernel[], rules: PruneRules, report: TuningReport): Promise<MatrixProfile> {
  const t0 = performance.now();
  const limit = Math.max(rules.maxDiagonals, 1024);
  // a software adapter (lavapipe) runs the window sorts on the CPU, slower than the host's sampled estimate
  const software = softwareAdapter(ctx);
  const d = await deviceMatrixStats(ctx, shared, sliceHeights(ks), software ? [] : sellLayouts(ks));
  const profile = typeof d === 'string' ? profileMatrix(a, limit) : profileFromDevice(a, d, limit);
  report.statsWhere = typeof d === 'string' ? `host: ${d}` : 'device';
  const fp = matrixFingerprint(a, profile.stats, { content: opts.contentHash, histogram: profile.histogram });
  const sizing = opts.expectedProducts !== undefined ? `p${decade(opts.expectedProducts)}` : opts.budgetMs !== undefined ? `b${decade(opts.budgetMs)}` : 'p3';
  (report as { key: string }).key = [fp.key, adapterKey(ctx), `v${TUNER_VERSION}k${candidateSpaceHash(ks)}`, sizing, opts.candidates ? `c${JSON.stringify(opts.candidates)}` : ''].join('/');
  report.statsMs = report.costs.statsMs = performance.now() - t0;
  report.statsSplit = { deviceMs: report.statsMs, estimatesMs: 0, compiled: 0 };
  return profile;
}

/**
 * Over budget by more than 20 %: which fixed costs did it, and why they could not be skipped.
 * Undefined when within. O(1).
 */
export function budgetNote(r: TuningReport): string | undefined {
  const over = r.overheadMs ?? r.spentMs;
  if (!(over > 1.2 * r.budgetMs)) return undefined;
  const why: Record<string, string> = {
    statsMs: `statistics (${r.statsWhere === 'device' ? 'device kernels over the CSR upload and two readbacks' : 'one host pass over the matrix for row lengths and diagonals'}; candidate estimates)`,
    vectorsMs: 'the tuning vectors (creation and upload)',
    conversionMs: 'host conversions',
    uploadMs: `uploads (the CSR arrays once${r.csrUploadMs !== undefined ? `, ${r.csrUploadMs.toFixed(1)} ms with their validation,` : ''} needed whatever the budget: the statistics read them and a CSR operator reuses them)`,
    timingMs: 'timing (at least one round of the first candidate)',
    verifyMs: 'verification of the winner (one product, its readback and the float64 reference)',
  };
  const costs = { ...r.costs, uploadMs: r.costs.uploadMs - (r.spentMs - over) };
  const parts = Object.entries(costs)
    .sort((x, y) => y[1] - x[1])
    .filter(([, ms]) => ms > 0.05 * over)
    .map(([k, ms]) => `${why[k]} ${ms.toFixed(1)} ms`);
  const excluded = r.spentMs > over ? ` (plus the CSR upload, ${(r.spentMs - over).toFixed(1)} ms, that the operator reuses)` : '';
  return `spent ${over.toFixed(1)} ms${excluded} of a ${r.budgetMs.toFixed(1)} ms budget: the fixed costs that every tuning pays — ${parts.join('; ')} — exceed it`;
}

async function tuneInternal(ctx: GpuContext, a: CsrMatrix, opts: AutotuneOptions, held: Held): Promise<AutotuneResult> {
  const start = performance.now();
  const compiled0 = ctx.pipelines.compiled;
  validate(opts);
  const warnings: string[] = [];
  const warn = (m: string) => {
    warnings.push(m);
    (opts.warn ?? console.warn)(m);
  };
  const ks = opts.kernels ?? registry;
  const report = newReport(a, opts, warnings);
  const log0 = ctx.pipelines.log.length;
  let prewarmed = 0;
  const finish = (kernel: string, params: Record<string, number>): AutotuneResult => {
    report.spentMs = performance.now() - start;
    // the CSR upload is the operator's own when a CSR kernel wins, and stands in for the
    // winner's upload otherwise: a call without tuning pays one upload too
    report.overheadMs = report.spentMs - (report.csrUploadMs ?? 0);
    if (report.statsSplit) {
      report.statsSplit.compiled = ctx.pipelines.compiled - compiled0;
      report.statsSplit.blockingCompileMs = ctx.pipelines.log.slice(log0).reduce((s, e) => s + (e.mode === 'sync' ? e.ms : 0), 0);
      report.statsSplit.prewarmed = prewarmed;
    }
    if (!Number.isFinite(report.budgetMs)) report.budgetMs = 0; // a cache hit or a fixed choice: no budget was set
    report.budgetNote = report.source === 'tuned' && !opts.exhaustive ? budgetNote(report) : undefined;
    opts.onProgress?.({ phase: 'done', done: report.trials.length, total: report.trials.length, spentMs: report.spentMs, budgetMs: report.budgetMs });
    return { kernel, params, report, operator: () => buildOperator(ctx, a, ks.find((d) => d.id === kernel) ?? getKernel(kernel), params, held, report, opts) };
  };
  if (opts.fixed || opts.tune === false) {
    const choice = opts.fixed ?? DEFAULT_CHOICE;
    const k = ks.find((d) => d.id === choice.kernel) ?? getKernel(choice.kernel);
    report.source = opts.fixed ? 'fixed' : 'off';
    return finish(k.id, { ...k.defaults, ...choice.params });
  }
  const rules: PruneRules = { ...defaultPruneRules, ...opts.rules };
  // on a software adapter the compiles would compete with the statistics for the same CPU cores
  prewarmed = softwareAdapter(ctx) ? 0 : prewarmTuner(ctx, a, ks).asked;
  const shared = await sharedUpload(ctx, a, report);
  let v: TuneVectors | undefined;
  try {
    const profile = await profileStage(ctx, a, shared, opts, ks, rules, report);
    opts.onProgress?.({ phase: 'stats', done: 0, total: 0, spentMs: report.statsMs, budgetMs: report.budgetMs });
    const store = await resolveStore(opts.cache, warn);
    (report as { cacheWhere: string }).cacheWhere = store?.where ?? 'none';
    const t0 = performance.now();
    v = tuneVectors(ctx, a.rows, a.cols);
    report.costs.vectorsMs = performance.now() - t0;
    const hit = store?.get(report.key);
    if (hit && ks.some((k) => k.id === hit.kernel)) {
      if (await verifyCached(ctx, a, hit, ks, v, shared, held, report)) return finish(hit.kernel, { ...hit.params });
      warn(`gpusparse autotune: the cached choice ${hit.kernel} failed verification on this matrix; tuning again`);
    }
    report.source = 'tuned';
    // the budget covers the tuning overhead: everything but the one upload any operator needs
    const win = await search(ctx, a, opts, ks, rules, profile, v, shared, report, held, start + (report.csrUploadMs ?? 0));
    if (held.inSolve) held.remember = (t) => remember(store, report, t);
    else remember(store, report, win);
    return finish(win.kernel, { ...win.params });
  } finally {
    v?.dx.dispose();
    v?.dy.dispose();
    shared.release(); // a CSR winner's handle still holds the arrays
  }
}

/** Whether `ctx` runs on a CPU (lavapipe, SwiftShader): its "device" work and compiles share the host's cores. */
const softwareAdapter = (ctx: GpuContext): boolean => /llvmpipe|lavapipe|swiftshader|software/i.test(Object.values(ctx.adapterInfo).join(' '));

/** Non-zeros from which the tuner compiles its likely pipelines ahead of time: the CSR upload's host work (validation, float32 values; ≈ 0.2 s at 2^23 on the H100 host) then hides the compiles (10–30 ms each). */
export const PREWARM_NNZ = 1 << 23;
/** Variants per CSR kernel compiled ahead of time at most (in declared order: the defaults and the floor's neighbours first). */
const PREWARM_PER_KERNEL = 6;

/**
 * Ask for the statistics kernels and the CSR kernels' likely variants ahead of time
 * (createComputePipelineAsync, no wait): on a large matrix they compile on the device's worker
 * threads while the host validates and converts the CSR arrays, instead of one by one on the
 * run's path (9 blocking compiles on issue 16's stencil). A get() before one is ready compiles
 * it as before. Returns how many were asked for and a promise of their end (never rejects).
 * O(kernels · variants) host work.
 * @example const { asked } = prewarmTuner(ctx, a, kernels); // 0 below PREWARM_NNZ non-zeros
 */
export function prewarmTuner(ctx: GpuContext, a: CsrMatrix, ks: readonly AnySpmvKernel[], minNnz = PREWARM_NNZ): { asked: number; done: Promise<void> } {
  if ((a.rowPtr[a.rows] ?? 0) < minNnz) return { asked: 0, done: Promise.resolve() };
  const specs = [...deviceStatsSpecs(), ...diaDeviceSpecs(ctx.caps)];
  for (const k of ks) {
    if (k.format !== 'csr' || !k.pipelineSpec) continue;
    const combos = enumerateParams(k).slice(0, PREWARM_PER_KERNEL);
    for (const p of combos) {
      try {
        specs.push(k.pipelineSpec(p, ctx.caps));
      } catch {
        // a combination the kernel refuses on this device (e.g. lanes past the workgroup): never timed either
      }
    }
  }
  return { asked: specs.length, done: ctx.pipelines.prewarm(specs) };
}

/** Every combination of a kernel's declared parameter values, the first value of each first. O(product of value counts). */
function enumerateParams(k: AnySpmvKernel): Record<string, number>[] {
  let out: Record<string, number>[] = [{}];
  for (const [name, spec] of Object.entries(k.params as Record<string, { values: readonly number[] }>)) out = out.flatMap((p) => spec.values.map((v) => ({ ...p, [name]: v })));
  return out.map((p) => ({ ...k.defaults, ...p }));
}

/** The CSR arrays on the device, once (validation included), timed as an upload. */
async function sharedUpload(ctx: GpuContext, a: CsrMatrix, report: TuningReport): Promise<SharedCsrUpload> {
  const t0 = performance.now();
  const shared = uploadCsrArrays(ctx, a, 'autotune');
  await ctx.finish();
  report.csrUploadMs = performance.now() - t0;
  report.costs.uploadMs += report.csrUploadMs;
  return shared;
}

function remember(store: TuneStore | undefined, report: TuningReport, win: Trial): void {
  if (!store) return;
  const entry: CacheEntry = { kernel: win.kernel, params: win.params, productMs: win.ms!, conversionMs: win.conversionMs ?? 0, uploadMs: win.uploadMs ?? 0, method: report.method === 'timestamp' ? 'timestamp' : 'wall', date: new Date().toISOString() };
  store.set(report.key, entry);
}

/** Stages 2–4: short-list, trials, decision. Returns the accepted trial. */
async function search(ctx: GpuContext, a: CsrMatrix, opts: AutotuneOptions, ks: readonly AnySpmvKernel[], rules: PruneRules, profile: MatrixProfile, v: TuneVectors, shared: SharedCsrUpload, report: TuningReport, held: Held, start: number): Promise<Trial> {
  const t0 = performance.now();
  const list = enumerateCandidates(a, profile, ks, rules, opts.expectedProducts ?? 1000, opts.candidates);
  // the layout estimates (padded slots, block fill) are statistics too: counted with them
  const estimatesMs = performance.now() - t0;
  report.costs.statsMs += estimatesMs;
  report.statsMs = report.costs.statsMs;
  if (report.statsSplit) report.statsSplit.estimatesMs = estimatesMs;
  const trials: Trial[] = list.map((c) => ({ kernel: c.kernel.id, params: c.params, status: c.pruned ? 'pruned' : 'skipped', reason: c.pruned?.reason ?? 'not on the short-list: the model predicts it slower than the candidates timed', predicted: c.predicted, estimatedBytes: c.estimatedBytes }));
  report.trials.push(...trials);
  report.pruned = trials.filter((t) => t.status === 'pruned').length;
  const exhaustive = opts.exhaustive ?? false;
  const { picks, floor } = shortList(list, profile.stats, { maxTimed: opts.maxTimed ?? DEFAULT_MAX_TIMED, exhaustive, diagonalSlot: opts.maxTimed === undefined });
  const pair = (i: number): { c: Candidate; t: Trial } => ({ c: list[i]!, t: trials[i]! });
  const rounds = opts.rounds ?? 3;
  const s: TrialSession = {
    ctx,
    a,
    v,
    conv: new ConversionCache(a, 4 * (12 * report.nnz + 4 * a.rows) + 2 ** 20, { ctx, shared, offsets: profile.diagonals?.offsets }),
    report,
    start,
    reps: opts.reps ?? 5,
    warmup: opts.warmup ?? 1,
    exhaustive,
    onProgress: opts.onProgress,
    budgetFrom: (firstMs) => budgetFrom(opts, s, report, firstMs),
    products: opts.expectedProducts ?? 1000,
    live: [],
    shared,
    convMsPerByte: 0,
    // at most a fifth of the (smallest) budget goes to raising the clock before timing
    clockWarmMs: opts.clockWarmMs ?? Math.min(CLOCK_WARM_MS, 0.2 * (opts.budgetMs !== undefined ? (opts.fraction ?? 0.1) * opts.budgetMs : (opts.minBudgetMs ?? MIN_BUDGET_MS))),
    // a first guess for other formats' uploads: the CSR arrays' rate (validation included)
    uploadMsPerByte: (report.csrUploadMs ?? 0) / Math.max(1, 8 * report.nnz + 4 * a.rows),
  };
  await admit(s, picks.map(pair), rounds);
  if (opts.inSolve && held.keep && ctx.caps.timestampQuery && s.live.length > 1) return deferToSolve(s, floor.map(pair), held);
  const done = await interleave(s, rounds, () => uncertain(s));
  return decide(s, done, floor.map(pair), held);
}

/** The tuning budget once the first product time is known (and the expected products, when not stated). */
function budgetFrom(opts: AutotuneOptions, s: TrialSession, report: TuningReport, firstMs: number): number {
  const fraction = opts.fraction ?? 0.1;
  const products = opts.expectedProducts ?? (opts.budgetMs !== undefined ? Math.max(1, Math.round(opts.budgetMs / firstMs)) : 1000);
  s.products = products;
  (report as { expectedProducts: number }).expectedProducts = products;
  if (opts.budgetMs !== undefined) return fraction * opts.budgetMs;
  return Math.max(fraction * products * firstMs, opts.minBudgetMs ?? MIN_BUDGET_MS);
}

/** Verify a cached choice with one product (no timing); records it as the only trial. */
async function verifyCached(ctx: GpuContext, a: CsrMatrix, hit: CacheEntry, ks: readonly AnySpmvKernel[], v: TuneVectors, shared: SharedCsrUpload, held: Held, report: TuningReport): Promise<boolean> {
  const k = ks.find((d) => d.id === hit.kernel)!;
  const c: Candidate = { kernel: k, params: { ...k.defaults, ...hit.params }, conversionKey: 'cached', estimatedBytes: 0, predicted: 0, work: 0, prepBytes: 0 };
  const t: Trial = { kernel: k.id, params: c.params, status: 'cached', reason: 'cache hit (not timed)', predicted: 0, estimatedBytes: 0, ms: hit.productMs, conversionMs: hit.conversionMs, uploadMs: hit.uploadMs };
  report.trials.push(t);
  report.source = 'cache';
  const conv = new ConversionCache(a, 0, { ctx, shared });
  try {
    const pre = supportsCsr(k, a, ctx.limits, c.params);
    if (pre !== true) throw new Error(`unsupported: ${pre}`);
    const { m } = await conv.get(c);
    const ok = k.supports(m, ctx.limits, c.params);
    if (ok !== true) throw new Error(`unsupported: ${ok}`);
    const handle = k.upload(ctx, m, c.params, csrUploadOptions(k, shared));
    const t0 = performance.now();
    const res = await verifyProduct(ctx, a, c, m, handle, v);
    report.costs.verifyMs += performance.now() - t0;
    Object.assign(t, { verified: res.ok, maxErrOverBound: res.maxErrOverBound, verifiedRows: res.rows });
    if (res.ok && held.keep) held.handle = handle;
    else handle.dispose();
    if (res.ok) report.winner = { kernel: k.id, params: c.params, ms: hit.productMs, gflops: (2 * report.nnz) / (hit.productMs * 1e6) };
    else Object.assign(t, { status: 'error', error: `cached choice failed verification: error/bound ${res.maxErrOverBound.toExponential(2)} at row ${res.row}` });
    return res.ok;
  } catch (e) {
    if (ctx.isLost) throw e;
    Object.assign(t, { status: 'error', error: `cached choice failed: ${(e as Error).message}` });
    return false;
  } finally {
    conv.clear(); // a device-built layout stays with the handle
  }
}

/** Upload options of kernel `k`: the shared CSR arrays for a CSR kernel. */
function csrUploadOptions(k: AnySpmvKernel, shared: SharedCsrUpload): UploadOptions | undefined {
  return k.format === 'csr' ? { sharedCsr: shared } : undefined;
}

/** Build the operator of a choice, reusing the verified upload once when it was kept. */
function buildOperator(ctx: GpuContext, a: CsrMatrix, k: AnySpmvKernel, params: Record<string, number>, held: Held, report: TuningReport, opts: AutotuneOptions): GpuOperator {
  const cands = held.inSolve;
  held.inSolve = undefined;
  if (cands) return new InSolveOperator(ctx, cands, a, report, { rounds: typeof opts.inSolve === 'object' ? opts.inSolve.rounds : undefined, onDecided: held.remember });
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
    for (const c of held.inSolve ?? []) c.handle.dispose();
  }
}
