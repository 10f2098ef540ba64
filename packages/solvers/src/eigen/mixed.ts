/**
 * Mixed-precision eigensolver driver: a fast phase in the caller's (typically float32, GPU)
 * space runs to the accuracy that precision can reach, then a float64 polish on the host
 * (HostVectorSpace and a float64 host operator) starts from the fast Ritz vectors and takes the
 * few iterations needed to reach ~1e-10 relative eigenvalue error and ~1e-8 residual norms.
 *
 * Polish methods ('jd' by default): 'jd' is a float64 Davidson on the host whose corrections
 * solve the Jacobi–Davidson correction equation by GMRES in the fast space, so the fast space
 * still does most operator applications and the host needs a few k-matvec iterations (the
 * residual goes to float32 scaled to unit norm, so float32 limits only the correction's
 * relative accuracy). 'davidson' (diagonal preconditioner) and 'lobpcg' polish entirely on the
 * host and converge at their usual rate from the fast phase's accuracy: few iterations on
 * diagonally dominant matrices, hundreds on matrices with tiny relative gaps.
 * Memory traffic between the phases: k vector readbacks; per 'jd' iteration k vector uploads
 * and downloads. With `devicePolish` (a float64-accurate space on the same device, e.g. df64)
 * the polish runs there instead of on the host: the phases hand vectors over on the device,
 * each 'jd' iteration reads back a few scalars, and only the final k vectors come back.
 * @module
 */
import type { LinearOperator, VectorSpace } from '@gpusparse/formats';
import { HostVectorSpace } from '@gpusparse/formats';
import type { EigenResult } from '../common/result';
import { ritzValueBounds } from './bounds';
import type { EigenIterationInfo } from './common';
import { type CorrectorBridge, fastCorrector, hostBridge, spaceBridge } from './correction';
import { davidson, davidsonWith } from './davidson';
import { lanczos } from './lanczos';
import { lobpcg } from './lobpcg';
import type { DevicePolish, EigenPhaseReport, EigenvalueBoundReport, MixedEigenOptions, MixedEigenResult } from './mixed-types';
import { returnedVoid } from '../common/operator-check';
import { problemScale, scaledOptions, unscaledResult } from './mixed-scale';
import { checkMixedOptions } from './mixed-options';

export type { DevicePolish, EigenPhaseReport, EigenvalueBoundReport, MixedEigenOptions, MixedEigenResult } from './mixed-types';

function report<V>(phase: 'fast' | 'polish', space: string, r: EigenResult<V>, sign = 1): EigenPhaseReport {
  return {
    phase,
    space,
    method: r.method,
    reason: r.reason,
    iterations: r.iterations,
    matvecs: r.stats.matvecs,
    readbacks: r.stats.readbacks,
    ms: r.stats.ms,
    values: r.values.map((x) => sign * x),
    residualNorms: r.residualNorms,
  };
}

/** −A on a space (to polish the largest eigenpairs with a lowest-eigenpair method). */
function negatedFast<V, S>(a: LinearOperator<V>, space: VectorSpace<V, S>): LinearOperator<V> {
  return {
    rows: a.rows,
    cols: a.cols,
    label: `-(${a.label ?? 'A'})`,
    apply(x, y) {
      returnedVoid(a.apply(x, y), 'eigsMixed fastOperator', 'apply', y);
      space.axpby(0, x, -1, y); // y = −A·x
    },
    applyScaled(alpha, x, beta, y) {
      returnedVoid(a.applyScaled(-alpha, x, beta, y), 'eigsMixed fastOperator', 'applyScaled', y); // y = −alpha·A·x + beta·y
    },
  };
}

/**
 * Eigenpairs to float64 accuracy from a fast low-precision space: runs `method` in
 * (fastOperator, fastSpace), then polishes in float64 on the host from its Ritz vectors.
 * Cost: the fast solve, k vector readbacks, and a few host float64 iterations (k matvecs each).
 * @example
 * const r = await eigsMixed({ method: 'davidson', k: 3, fastOperator: gpuOp, fastSpace: gpu,
 *   hostOperator: HostOperator.fromCsr(h), diagonal: csrDiagonal(h) });
 * r.values; r.phases; // [{ phase: 'fast', matvecs: 180, ... }, { phase: 'polish', matvecs: 12, ... }]
 */
export function eigsMixed<V, S>(opts: MixedEigenOptions<V, S>): Promise<MixedEigenResult> {
  return eigsMixedIn(opts, false);
}

/** eigsMixed; unless `probed`, first the power-of-two scale of the problem (./mixed-scale.ts: A·1e-30 is solved as 2^s·A). */
async function eigsMixedIn<V, S>(opts: MixedEigenOptions<V, S>, probed: boolean): Promise<MixedEigenResult> {
  const { k, fastOperator, fastSpace, hostOperator } = opts;
  const { which, tol, rule, accept, guard } = checkMixedOptions(opts);
  if (!probed) {
    const p = await problemScale(opts);
    const r = p.scale === 1 ? await eigsMixedIn(opts, true) : unscaledResult(await eigsMixedIn(scaledOptions(opts, p.scale), true), p.scale);
    for (const t of [r.stats, r.phases[0]!]) {
      t.matvecs += p.matvecs; // the probe: fast-space work
      t.readbacks += p.readbacks;
    }
    return r;
  }
  // with the bound, the fast phase also finds the guard pairs (they bound the wanted roots' gap)
  const kFast = accept === 'bound' ? Math.min(fastOperator.rows, k + guard) : k;
  const f32 = fastSpace.precision === 'f32';
  const fastTol = opts.fastTol ?? (f32 ? (accept === 'bound' ? 1e-6 : 1e-4) : 1e-8);
  const hostSpace = opts.hostSpace ?? new HostVectorSpace();
  const t0 = performance.now();
  const tag =
    (phase: 'fast' | 'polish') =>
    (info: EigenIterationInfo): unknown =>
      opts.onIteration?.({ ...info, phase });
  const common = { k: kFast, signal: opts.signal };

  // phase 1: fast space
  let fast: EigenResult<V>;
  if (opts.method === 'davidson') {
    const d = opts.diagonal!;
    let scale = 0;
    for (let i = 0; i < d.length; i++) scale = Math.max(scale, Math.abs(d[i]!));
    scale = scale > 0 ? scale : 1;
    fast = await davidson(fastOperator, fastSpace, { ...common, nConverge: k, onIteration: tag('fast'), diagonal: d, tol: fastTol * scale, residualTol: fastTol * scale, maxIterations: opts.fastMaxIterations, maxSubspace: opts.maxBasis });
  } else if (opts.method === 'lanczos') {
    fast = await lanczos(fastOperator, fastSpace, { ...common, onIteration: tag('fast'), which, tol: fastTol, maxIterations: opts.fastMaxIterations, maxBasis: opts.maxBasis ?? fastLanczosBasis(fastOperator.rows, kFast, f32), ...(opts.fastCheckMultiplicity === undefined ? {} : { checkMultiplicity: opts.fastCheckMultiplicity }) });
  } else {
    fast = await lobpcg(fastOperator, fastSpace, { ...common, onIteration: tag('fast'), tol: fastTol, maxIterations: opts.fastMaxIterations, guard: k > 1 ? 2 : 0 });
  }
  const phases = [report('fast', fastSpace.name, fast)];
  const sign = which === 'largest' ? -1 : 1;
  if (fast.reason === 'stopped') {
    const start = await hostStart(fast, fastSpace);
    return combineMixed(fast, undefined, start, phases, sign, undefined, t0, k);
  }
  const unitRoundoff = opts.devicePolish ? (opts.devicePolish.unitRoundoff ?? 2 ** -44) : 2 ** -53;
  const normFloor = normLowerBound(fast, opts.diagonal ?? (opts.devicePolish ? undefined : hostOperator?.diagonal?.()));
  const ctx: PolishContext = { k, kSolve: kFast, tol, rule, sign, tag, signal: opts.signal, accept, unitRoundoff, normFloor };
  const polished = opts.devicePolish
    ? await polishOnDevice(opts, fast, ctx, opts.devicePolish)
    : await polishIn(opts, fast, ctx, { space: hostSpace, operator: hostOperator!, start: await hostStart(fast, fastSpace), bridge: hostBridge(fastSpace) });
  const polishReport = report('polish', polished.space, polished.result, sign);
  if (polished.innerMatvecs !== undefined) polishReport.innerMatvecs = polished.innerMatvecs;
  if (polished.innerReadbacks !== undefined) polishReport.innerReadbacks = polished.innerReadbacks;
  phases.push(polishReport);
  const out = combineMixed(fast, polished.result, polished.vectors, phases, sign, polished.innerMatvecs, t0, k);
  out.bounds = polished.bounds;
  if (opts.method === 'lanczos' && opts.fastCheckMultiplicity !== false && kFast < fastOperator.rows) noteMultiplicityCheck(out, fast);
  return out;
}

/**
 * Says whether the Lanczos fast phase's multiplicity check ran to the end: Lanczos runs it only
 * after a converged first run and reports the reason of a check run that ended early, so the
 * check completed exactly when the fast phase ended 'converged'. An incomplete check leaves a
 * warning: the polish refines the pairs it was given, it cannot find a copy the check missed.
 */
function noteMultiplicityCheck<V>(out: MixedEigenResult, fast: EigenResult<V>): void {
  out.multiplicityChecked = fast.reason === 'converged';
  if (out.multiplicityChecked) return;
  const why = fast.detail ?? `the fast phase ended '${fast.reason}' before the check`;
  const warning = `eigsMixed: the fast phase's multiplicity check did not complete (${why}; ${fast.iterations} fast iterations): a missed copy of a multiple eigenvalue is not excluded (raise fastMaxIterations)`;
  out.stats.warnings = [...(out.stats.warnings ?? []), warning];
}

/** Basis bytes up to which the Lanczos fast phase takes the larger default basis (1 GiB). */
const FAST_BASIS_BYTES = 2 ** 30;

/**
 * Default Lanczos basis of eigsMixed's fast phase: 40 (at least 2k + 10, at most n) where 40
 * vectors of n take at most 1 GiB, else undefined (Lanczos's own default, max(20, 2k + 10)).
 * Why 40: a thick restart keeps about half the basis, so a larger basis restarts less often and
 * reaches the fast target in fewer products (host poisson3d 50×55×60, k = 5: 862 products at 20,
 * 526 at 40); on the H100 (poisson3d 100×110×120, k = 4, 2026-11-25) eigsMixed took 1 803 ms
 * with basis 40 against 2 032 ms with 20. Why the byte cap: the basis is 40 vectors, doubled
 * on a GPU space by the Lanczos basis block, next to the matrix; past 1 GiB the smaller basis
 * keeps the memory of the default run near the matrix's own.
 * @example fastLanczosBasis(1_320_000, 5, true) // 40
 */
export function fastLanczosBasis(n: number, k: number, f32: boolean): number | undefined {
  const m = Math.min(n, Math.max(40, 2 * k + 10));
  return m * n * (f32 ? 4 : 8) <= FAST_BASIS_BYTES ? m : undefined;
}

/** The fast Ritz vectors as float64 host vectors (non-finite or zero ones dropped); releases them. */
async function hostStart<V, S>(fast: EigenResult<V>, fastSpace: VectorSpace<V, S>): Promise<Float64Array[]> {
  const start: Float64Array[] = [];
  if (fast.reason !== 'non-finite') {
    for (const v of fast.vectors) {
      const a = await fastSpace.toArray(v);
      fast.stats.readbacks++;
      if (a.every(Number.isFinite) && a.some((x) => x !== 0)) start.push(a);
    }
  }
  fast.vectors.forEach((v) => { fastSpace.release(v); });
  return start;
}

/** What the polish needs besides the space: tolerances, the sign of the spectrum end, callbacks. */
interface PolishContext {
  k: number;
  /** Roots the polish solves: k, plus the guards with accept 'bound'. */
  kSolve: number;
  accept: 'residual' | 'bound';
  /** Unit roundoff of the polish space (for the bounds' rounding allowance). */
  unitRoundoff: number;
  /** A lower bound of ‖A‖₂ from the whole spectrum ({@link normLowerBound}), 0 when none. */
  normFloor: number;
  tol: number;
  rule: { residualTol: number } | { rtol: number; atol?: number };
  sign: number;
  tag: (phase: 'fast' | 'polish') => (info: EigenIterationInfo) => unknown;
  signal: AbortSignal | undefined;
}

/** The polish in the device space: fast Ritz vectors handed over on the device, k vectors read at the end. */
async function polishOnDevice<V, S, P, PS>(opts: MixedEigenOptions<V, S>, fast: EigenResult<V>, c: PolishContext, dp: DevicePolish<V, P, PS>) {
  const start: P[] = [];
  if (fast.reason !== 'non-finite') {
    const moved = fast.vectors.map((v) => dp.fromFast(v));
    const norms = await dp.space.readMany(moved.map((v) => dp.space.norm2(v)));
    fast.stats.readbacks++;
    moved.forEach((v, j) => {
      if (Number.isFinite(norms[j]!) && norms[j]! > 0) start.push(v);
      else dp.space.release(v);
    });
  }
  fast.vectors.forEach((v) => { opts.fastSpace.release(v); });
  const bridge = spaceBridge(dp.space, (p: P, scale: number) => dp.toFast(p, scale), (v: V) => dp.fromFast(v));
  const out = await polishIn(opts, fast, c, { space: dp.space, operator: dp.operator, start, bridge });
  start.forEach((v) => { dp.space.release(v); });
  return out;
}

/**
 * Phase 2 in (space, operator) from the fast Ritz vectors `start`: 'jd' (corrections in the
 * fast space through `bridge`), 'davidson' or 'lobpcg'. Returns the result with float64 host
 * vectors (k readbacks when the space is on the device).
 */
async function polishIn<V, S, P, PS>(
  opts: MixedEigenOptions<V, S>,
  fast: EigenResult<V>,
  c: PolishContext,
  p: { space: VectorSpace<P, PS>; operator: LinearOperator<P>; start: P[]; bridge: CorrectorBridge<P, V> },
): Promise<{ result: EigenResult<P>; vectors: Float64Array[]; space: string; innerMatvecs: number | undefined; innerReadbacks?: number; bounds: EigenvalueBoundReport }> {
  const { k, kSolve, tol, rule, sign, tag } = c;
  const common = { k: kSolve, signal: c.signal };
  const polishOp = sign === 1 ? p.operator : negatedFast(p.operator, p.space);
  // scale of the eigenvalues for the relative energy tolerance: the fast values, else the diagonal, else 1
  let lamScale = Math.max(0, ...fast.values.filter(Number.isFinite).map(Math.abs));
  if (!(lamScale > 0) && opts.diagonal) for (const x of opts.diagonal) lamScale = Math.max(lamScale, Math.abs(x));
  if (!(lamScale > 0)) lamScale = 1;
  const judge = rootJudge(c, lamScale);
  const initialVectors = p.start.length >= kSolve ? p.start : undefined;
  let polishMethod = opts.polish ?? 'jd';
  if (polishMethod === 'jd' && !initialVectors) polishMethod = opts.diagonal ? 'davidson' : 'lobpcg';
  // accept 'bound': roots settle on the certified bound (or, failing it, the residual rules); guards never decide
  const byBound = c.accept === 'bound' ? { nConverge: k, acceptRoots: judge.accept, recomputeResiduals: false } : {};
  let result: EigenResult<P>;
  let innerMatvecs: number | undefined;
  let innerReadbacks: number | undefined;
  if (polishMethod === 'jd') {
    const fastOp = sign === 1 ? opts.fastOperator : negatedFast(opts.fastOperator, opts.fastSpace);
    // accept 'bound': a root's inner solve only as tight as its bound needs (judge.target); the documented 25 / 1e-3 kept
    const byTarget = c.accept === 'bound' ? { targetResidualOf: judge.target, skipBelowTarget: false } : {};
    const jd = fastCorrector(fastOp, opts.fastSpace, { innerIterations: opts.innerIterations ?? 25, innerRtol: opts.innerRtol ?? 1e-3, orthogonalization: opts.innerOrthogonalization ?? 'cgs', ...byTarget, ...(kSolve > k ? { guardFrom: k } : {}) }, p.bridge);
    result = await davidsonWith(polishOp, p.space, { ...common, ...byBound, onIteration: tag('polish'), corrector: jd.corrector, initialVectors, tol: tol * lamScale, ...rule, maxIterations: opts.polishMaxIterations ?? 50, maxSubspace: Math.min(polishOp.rows, opts.polishMaxSubspace ?? 4 * kSolve + 8), name: 'jd-davidson' });
    innerMatvecs = jd.stats.matvecs;
    innerReadbacks = jd.stats.readbacks;
  } else if (polishMethod === 'davidson') {
    const d = sign === 1 ? opts.diagonal! : opts.diagonal!.map((x) => -x);
    result = await davidson(polishOp, p.space, { ...common, ...byBound, onIteration: tag('polish'), diagonal: d, tol: tol * lamScale, ...rule, maxIterations: opts.polishMaxIterations ?? 100, initialVectors });
  } else {
    result = await lobpcg(polishOp, p.space, { ...common, onIteration: tag('polish'), ...('rtol' in rule ? { tol: rule.rtol, ...(rule.atol === undefined ? {} : { atol: rule.atol }) } : rule), maxIterations: opts.polishMaxIterations ?? 300, initialVectors, guard: k > 1 ? 2 : 0 });
  }
  const bounds = judge.report(result.values, result.residualNorms, result.converged);
  // the wanted k pairs only (the guards bounded their gap)
  for (const v of result.vectors.slice(k)) if (!(v instanceof Float64Array)) p.space.release(v);
  result = { ...result, values: result.values.slice(0, k), vectors: result.vectors.slice(0, k), residualNorms: result.residualNorms.slice(0, k) };
  const vectors: Float64Array[] = [];
  for (const v of result.vectors) {
    if (opts.returnVectors === false) {
      if (!(v instanceof Float64Array)) p.space.release(v);
    } else if (v instanceof Float64Array) vectors.push(v); // a host space's vectors are the answer
    else {
      vectors.push(await p.space.toArray(v));
      result.stats.readbacks++;
      p.space.release(v);
    }
  }
  return { result, vectors, space: p.space.name, innerMatvecs, ...(innerReadbacks === undefined ? {} : { innerReadbacks }), bounds };
}

/**
 * The per-root verdict of the polish with accept 'bound' (certified bound ≤ tol·|θ|, else the
 * residual and energy-change rules), and the bound report at exit. Values in the polish's sign.
 */
function rootJudge(c: PolishContext, lamScale: number) {
  const { k, tol, rule } = c;
  // ‖A‖ of the whole operator, not of the wanted roots: the rounding of a float64 product scales
  // with ‖A‖, and the wanted |θ| can be 1 000× smaller (poisson3d: 0.007 against 12)
  let normA = Math.max(lamScale, c.normFloor);
  const allowance = () => 64 * c.unitRoundoff * normA;
  const residualOk = (rn: number) => rn <= ('residualTol' in rule ? rule.residualTol : Math.max(rule.rtol * normA, rule.atol ?? 0));
  let lastRn: readonly number[] = [];
  const byBound = (theta: readonly number[], rn: readonly number[]) => {
    for (const t of theta) if (Number.isFinite(t)) normA = Math.max(normA, Math.abs(t));
    const b = ritzValueBounds(theta, rn, allowance());
    return { b, ok: theta.map((t, i) => i < k && b.bound[i]! <= tol * Math.abs(t)) };
  };
  return {
    /**
     * The residual at which every wanted root's bound would pass with margin: with all k wanted
     * residuals ≤ ρ, ε² ≤ k·(ρ + a)² ≤ ½(tol·min|θ| − a)·gap, gap = σ − θ_{k−1} (σ = guard − its
     * residual, from this iteration's verdict), so ε²/gap + a ≤ tol·|θⱼ|. 0 (no loosening) without
     * a guard, a positive gap or room above the rounding allowance a.
     */
    target(theta: readonly number[]): number {
      const a = allowance();
      const guardRn = lastRn[k];
      if (theta.length <= k || guardRn === undefined || !Number.isFinite(guardRn)) return 0;
      const gap = theta[k]! - guardRn - a - theta[k - 1]!;
      const room = tol * Math.min(...theta.slice(0, k).map(Math.abs)) - a;
      const rho = gap > 0 && room > 0 ? Math.sqrt((0.5 * room * gap) / k) - a : 0;
      return Number.isFinite(rho) && rho > 0 ? rho : 0;
    },
    accept(theta: readonly number[], rn: readonly number[], previous: readonly number[] | undefined): boolean[] {
      lastRn = rn;
      const { ok } = byBound(theta, rn);
      return theta.map((t, i) => ok[i]! || (previous !== undefined && Math.abs(t - previous[i]!) < tol * lamScale && residualOk(rn[i]!)));
    },
    report(theta: readonly number[], rn: readonly number[], converged: boolean): EigenvalueBoundReport {
      const { b, ok } = byBound(theta, rn);
      return {
        bound: b.bound.slice(0, k),
        acceptedBy: ok.slice(0, k).map((o, i) => (o ? 'bound' : converged && residualOk(rn[i]!) ? 'residual' : 'none')),
        tol,
        guardValues: theta.slice(k).map((t) => c.sign * t),
        guardResidualNorms: rn.slice(k),
        allowance: allowance(),
      };
    },
  };
}

/**
 * A lower bound of ‖A‖₂ from what the fast phase saw of the whole spectrum, for the rounding
 * allowance 64·u·‖A‖ of accept 'bound': its ‖A‖ estimate (Lanczos and LOBPCG: the extreme Ritz
 * values of both ends of their projected matrices, which lie inside [λmin, λmax]), its values,
 * and max|aᵢᵢ| of the diagonal when known (|aᵢᵢ| = |eᵢᵀ·A·eᵢ| ≤ ‖A‖₂). 0 when none is known.
 */
function normLowerBound<V>(fast: EigenResult<V>, diagonal: Float64Array | undefined): number {
  let n = fast.tolerance?.normEstimate ?? 0;
  if (!Number.isFinite(n)) n = 0;
  for (const t of fast.values) if (Number.isFinite(t)) n = Math.max(n, Math.abs(t));
  if (diagonal) for (const d of diagonal) if (Number.isFinite(d)) n = Math.max(n, Math.abs(d));
  return n;
}

/** Both phases' warnings (e.g. a tuned kernel's fallback), as a stats field when there are any. */
function warningsOf<V, P>(fast: EigenResult<V>, polish: EigenResult<P> | undefined): { warnings?: string[] } {
  const w = [...(fast.stats.warnings ?? []), ...(polish?.stats.warnings ?? [])];
  return w.length > 0 ? { warnings: w } : {};
}

/** The phases joined into one result (values back to the caller's sign). */
function combineMixed<V, P>(fast: EigenResult<V>, polish: EigenResult<P> | undefined, vectors: Float64Array[], phases: EigenPhaseReport[], sign: number, innerMatvecs: number | undefined, t0: number, k: number): MixedEigenResult {
  const history = [...fast.history, ...(polish?.history ?? []).map((h) => ({ ...h, iteration: h.iteration + fast.iterations, values: h.values.map((x) => sign * x) }))];
  const out: MixedEigenResult = {
    values: polish ? polish.values.map((x) => sign * x) : fast.values.slice(0, k),
    vectors: vectors.slice(0, k),
    residualNorms: polish ? polish.residualNorms : fast.residualNorms.slice(0, k),
    converged: polish ? polish.converged : false,
    reason: polish ? polish.reason : fast.reason,
    iterations: fast.iterations + (polish?.iterations ?? 0),
    history,
    stats: {
      matvecs: fast.stats.matvecs + (polish?.stats.matvecs ?? 0) + (innerMatvecs ?? 0),
      precondApplies: fast.stats.precondApplies + (polish?.stats.precondApplies ?? 0),
      readbacks: fast.stats.readbacks + (polish?.stats.readbacks ?? 0),
      ms: performance.now() - t0,
      ...warningsOf(fast, polish),
    },
    method: `mixed(${fast.method} → ${polish?.method ?? 'none'})`,
    phases,
  };
  if (polish?.tolerance) out.tolerance = polish.tolerance;
  const detail = [fast.detail, polish?.detail].filter(Boolean).join('; ');
  if (detail) out.detail = detail;
  return out;
}
