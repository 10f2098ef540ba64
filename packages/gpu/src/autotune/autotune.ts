/**
 * The SpMV autotuner: choose a kernel and its parameters for one matrix on one device by
 * measurement, within a stated share of the caller's time, verify the choice against the
 * float64 reference, and remember it per matrix fingerprint and adapter.
 *
 * The matrix is uploaded as CSR once (`uploadCsrArrays`): the statistics, every CSR candidate
 * and, when a CSR kernel wins, the final operator read those buffers. Then it passes through
 * the stages once, each in its own file:
 * 1. profile (`profile.ts`: row-length histogram, diagonals, sliced-ELL padding from the device
 *    statistics of `profile/device-stats.ts`; the fingerprint and cache key), then the cache
 *    (`cached.ts`: a hit is verified, not timed);
 * 2. short-list (`candidates.ts` lists every candidate, `cost-model.ts` predicts and prunes it,
 *    `shortlist.ts` picks the CSR floor and the few the model cannot separate);
 * 3. trials (`admission.ts`: one conversion and one upload each, admitted within the budget;
 *    `trials.ts`: interleaved rounds of all of them back to back, `round-timer.ts` on the device,
 *    `rounds.ts` reading the clock state and the spread from the rounds);
 * 4. decision (`decision.ts`: objective, spread, the cheaper to build when spreads overlap,
 *    verification on the same uploads, the CSR floor when nothing else works).
 * The budget rules are in `budget.ts`, the options' checks in `options.ts`.
 * @module
 */
import { checkFloat32Range } from '../memory/float32-range';
import type { CsrMatrix } from '@gpusparse/formats';
import type { GpuContext } from '../device/context';
import { getKernel, kernels as registry } from '../kernels/registry';
import { type SharedCsrUpload, uploadCsrArrays } from '../kernels/csr/csr-device';
import type { AnySpmvKernel } from '../kernels/types';
import { GpuOperator, gpuOperatorFromCsr } from '../operator';
import { admit } from './admission';
import type { Calibration } from './calibrate';
import { calibrationFor } from './calibration-store';
import { predictMs } from './cost-terms';
import { budgetFrom, budgetNote } from './budget';
import { entryOutsideSpace } from './cache';
import { forget, remember, verifyCached } from './cached';
import { type Candidate, defaultPruneRules, enumerateCandidates, type PruneRules } from './candidates';
import { ConversionCache, type TuneVectors, tuneVectors } from './conversions';
import { decide, deferToSolve } from './decision';
import { InSolveOperator } from './in-solve';
import { newReport, validateOptions } from './options';
import { compileAhead, prewarmTuner, softwareAdapter } from './prewarm';
import { type MatrixProfile, profileStage } from './profile';
import type { Trial, TuningReport } from './report';
import { entryQuantileLength } from './cost-model';
import { DEFAULT_MAX_TIMED, shortList } from './shortlist';
import { resolveStore } from './store';
import { type TrialSession, timeRounds } from './trials';
import type { AutotuneOptions, AutotuneResult, Held } from './types';

export { MIN_BUDGET_MS, budgetNote } from './budget';
export { PREWARM_NNZ, prewarmTuner } from './prewarm';
export { type AutotuneOptions, type AutotuneResult, type TuneProgress, TuningError } from './types';

/** The choice when tuning is off. */
export const DEFAULT_CHOICE = { kernel: 'csr-vector', params: {} } as const;

/**
 * Choose the SpMV kernel and parameters for `a` on `ctx`'s device. A cache hit times nothing
 * (it only verifies the remembered choice with one product); a miss profiles the matrix, times
 * the model's short-list (the CSR floor first) in interleaved rounds within the budget, and
 * verifies the best objective, falling back to the CSR floor — it answers whenever any kernel
 * can run. Cost: statistics O(nnz + rows log rows); per short-listed candidate one conversion
 * (shared by candidates of one layout) and one upload; rounds × (reps + 1) products each.
 * @example
 * const { kernel, params, report } = await autotune(ctx, a, { expectedProducts: 500, cache: false });
 * console.log(reportTable(report));
 */
export async function autotune(ctx: GpuContext, a: CsrMatrix, opts: AutotuneOptions = {}): Promise<AutotuneResult> {
  return tuneInternal(ctx, a, opts, {});
}

async function tuneInternal(ctx: GpuContext, a: CsrMatrix, opts: AutotuneOptions, held: Held): Promise<AutotuneResult> {
  const start = performance.now();
  const compiled0 = ctx.pipelines.compiled;
  const ks = opts.kernels ?? registry;
  validateOptions(opts, ks);
  checkFloat32Range(a, 'autotune'); // else every candidate fails verification, far from the cause
  const warnings: string[] = [];
  const warn = (m: string) => {
    warnings.push(m);
    (opts.warn ?? console.warn)(m);
  };
  const report = newReport(a, opts, warnings);
  const log0 = ctx.pipelines.log.length;
  let prewarmed = 0;
  const finish = (kernel: string, params: Record<string, number>): AutotuneResult => {
    report.spentMs = performance.now() - start;
    // the CSR upload is the operator's own when a CSR kernel wins, and stands in for the
    // winner's upload otherwise: a call without tuning pays one upload too
    // … and the adapter's calibration when this call ran it (once per adapter, reported on its own)
    report.overheadMs = report.spentMs - (report.csrUploadMs ?? 0) - (report.calibration?.source === 'run' ? report.calibration.ms : 0);
    if (report.statsSplit) {
      report.statsSplit.compiled = ctx.pipelines.compiled - compiled0;
      report.statsSplit.blockingCompileMs = ctx.pipelines.log.slice(log0).reduce((s, e) => s + (e.mode === 'sync' ? e.ms : 0), 0);
      report.statsSplit.prewarmed = prewarmed + (report.statsSplit.prewarmed ?? 0);
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
    const stored = store?.get(report.key);
    // a hand-edited entry, or one of another build: said, then tuned afresh (and overwritten)
    const outside = stored && entryOutsideSpace(stored, ks, opts.candidates, profile.stats.max);
    if (outside) warn(`gpusparse autotune: ignoring the cached choice in ${store!.where} (${outside}); tuning again`);
    const hit = outside ? undefined : stored;
    if (hit) {
      if (await verifyCached(ctx, a, hit, ks, v, shared, held, report)) return finish(hit.kernel, { ...hit.params });
      warn(`gpusparse autotune: the cached choice ${hit.kernel} failed verification on this matrix; tuning again`);
    }
    report.source = 'tuned';
    const cal = await calibrationFor(ctx, opts.calibrate, opts.cache, warn);
    report.calibration = { source: cal?.source ?? 'off', ms: cal?.ms ?? 0, key: cal?.cal.key };
    // the budget covers the tuning overhead: everything but the one upload any operator needs and
    // the once-per-adapter calibration (reported on its own)
    const win = await search(ctx, a, opts, ks, rules, { profile, cal: cal?.cal }, v, shared, report, held, start + (report.csrUploadMs ?? 0) + (cal?.source === 'run' ? cal.ms : 0));
    if (held.inSolve) {
      held.remember = (t) => remember(store, report, t);
      held.forget = (t) => (t ? remember(store, report, t) : forget(store, report));
    }
    else remember(store, report, win);
    return finish(win.kernel, { ...win.params });
  } finally {
    v?.dx.dispose();
    v?.dy.dispose();
    shared.release(); // a CSR winner's handle still holds the arrays
  }
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

/** Stage 2: every candidate assessed, the short-list and the CSR floor; the estimates' time counts as statistics. */
function shortListStage(a: CsrMatrix, opts: AutotuneOptions, ks: readonly AnySpmvKernel[], rules: PruneRules, model: Model, report: TuningReport) {
  const t0 = performance.now();
  const profile = model.profile;
  const products = opts.expectedProducts ?? 1000;
  const list = withPredictions(enumerateCandidates(a, profile, ks, rules, products, opts.candidates), model);
  // the layout estimates (padded slots, block fill) are statistics too: counted with them
  const estimatesMs = performance.now() - t0;
  report.costs.statsMs += estimatesMs;
  report.statsMs = report.costs.statsMs;
  if (report.statsSplit) report.statsSplit.estimatesMs = estimatesMs;
  const trials: Trial[] = list.map((c) => ({ kernel: c.kernel.id, params: c.params, status: c.pruned ? 'pruned' : 'skipped', reason: c.pruned?.reason ?? 'not on the short-list: the model predicts it slower than the candidates timed', predicted: c.predicted, estimatedBytes: c.estimatedBytes, predictedMs: c.prediction?.ms, predictedLowMs: c.prediction?.low, predictedHighMs: c.prediction?.high }));
  report.trials.push(...trials);
  report.pruned = trials.filter((t) => t.status === 'pruned').length;
  // the interval is drawn by product time: the preparation (conversion, upload) is the
  // admission's to weigh against the budget, and the decision's by objective — a candidate the
  // model cannot separate on product time is timed when the budget allows its conversion
  const interval = model.cal ? { products, prepMs: () => 0 } : undefined;
  const { picks, floor, interval: size, truncated, net } = shortList(list, { ...profile.stats, entryTail: entryQuantileLength(profile, 0.9) }, { maxTimed: opts.maxTimed ?? DEFAULT_MAX_TIMED, exhaustive: opts.exhaustive ?? false, diagonalSlot: opts.maxTimed === undefined, interval });
  if (report.calibration && size !== undefined) Object.assign(report.calibration, { interval: size, truncated });
  const pair = (i: number): { c: Candidate; t: Trial; net?: boolean } => ({ c: list[i]!, t: trials[i]!, net: net?.includes(i) || undefined });
  return { picks: picks.map(pair), floor: floor.map(pair) };
}

/** What the short-list is drawn from: the profile and, when the adapter is calibrated, its calibration. */
interface Model {
  readonly profile: MatrixProfile;
  readonly cal?: Calibration;
}

/** The candidates with their calibrated predictions (hard-pruned ones excepted), when calibrated. O(candidates · log max row). */
function withPredictions(list: Candidate[], m: Model): Candidate[] {
  const cal = m.cal;
  if (!cal) return list;
  return list.map((c) => (c.pruned?.hard ? c : { ...c, prediction: predictMs(cal, m.profile, c.kernel, c.params, c.slots, c.factor) }));
}

/** Stages 2–4: short-list, trials (admission, interleaved rounds), decision. Returns the accepted trial. */
async function search(ctx: GpuContext, a: CsrMatrix, opts: AutotuneOptions, ks: readonly AnySpmvKernel[], rules: PruneRules, model: Model, v: TuneVectors, shared: SharedCsrUpload, report: TuningReport, held: Held, start: number): Promise<Trial> {
  const profile = model.profile;
  const { picks, floor } = shortListStage(a, opts, ks, rules, model, report);
  // every pick's pipelines compile in parallel from here; each candidate waits only for its own
  if (report.statsSplit) report.statsSplit.prewarmed = (report.statsSplit.prewarmed ?? 0) + compileAhead(ctx, [...picks, ...floor].map((p) => p.c));
  const s: TrialSession = {
    ctx,
    a,
    v,
    conv: new ConversionCache(a, 4 * (12 * report.nnz + 4 * a.rows) + 2 ** 20, { ctx, shared, offsets: profile.diagonals?.offsets }),
    report,
    start,
    reps: opts.reps ?? 5,
    rounds: opts.rounds ?? 3,
    minRounds: 3,
    exhaustive: opts.exhaustive ?? false,
    // tunedOperator keeps the winner's upload as the operator: the trials' builds are spent
    sunkBuild: held.keep === true && !(opts.exhaustive ?? false),
    onProgress: opts.onProgress,
    budgetFrom: (firstMs) => budgetFrom(opts, s, report, firstMs),
    products: opts.expectedProducts ?? 1000,
    live: [],
    shared,
    convMsPerByte: 0,
    // a first guess for other formats' uploads: the CSR arrays' rate (validation included)
    uploadMsPerByte: (report.csrUploadMs ?? 0) / Math.max(1, 8 * report.nnz + 4 * a.rows),
  };
  await admit(s, picks);
  if (opts.inSolve && held.keep && ctx.caps.timestampQuery && s.live.length > 1) return deferToSolve(s, floor, held);
  const timed = await timeRounds(s);
  s.report.timed = s.live.filter((f) => f.t.status === 'timed').length;
  return decide(s, timed, floor, held);
}

/** Build the operator of a choice, reusing the verified upload once when it was kept. */
function buildOperator(ctx: GpuContext, a: CsrMatrix, k: AnySpmvKernel, params: Record<string, number>, held: Held, report: TuningReport, opts: AutotuneOptions): GpuOperator {
  const cands = held.inSolve;
  held.inSolve = undefined;
  if (cands) return new InSolveOperator(ctx, cands, a, report, { rounds: typeof opts.inSolve === 'object' ? opts.inSolve.rounds : undefined, onDecided: held.remember, onFellBack: held.forget });
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
    // the operator's last allocations (the winner's upload on a cache hit, the in-solve query
    // set) report out-of-memory asynchronously: wait for their error scopes here (one
    // popErrorScope round trip) so that the ResourceLimitError comes from this call, not from the
    // solve's first readback
    try {
      await ctx.settle();
      ctx.check();
    } catch (e) {
      op.dispose();
      throw e;
    }
    return Object.assign(op, { tuning: r.report });
  } finally {
    held.handle?.dispose();
    for (const c of held.inSolve ?? []) c.handle.dispose();
  }
}
