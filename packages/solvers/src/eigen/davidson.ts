/**
 * Block Davidson (Davidson 1975; Liu 1978) for the k lowest eigenpairs of a symmetric
 * operator with the diagonal preconditioner, following PySCF's `lib.linalg_helper.davidson1`
 * defaults for FCI: level shift 1e-3, denominators clamped at ±1e-8, subspace of
 * 12 + 4·(k − 1) vectors collapsed onto the current Ritz vectors, convergence when every
 * eigenvalue moved by < tol = 1e-10 between iterations and every residual norm is
 * < residualTol = √tol (1e-5 by default, PySCF's `toloose`). With `rtol` the residual rule is
 * the relative one of Lanczos and LOBPCG instead (docs/guides/eigen-convergence.md); with
 * `nConverge` only the lowest roots decide the verdict, the others are guard roots.
 *
 * This file is the driver (options, the iteration); the initial subspace is in
 * ./davidson-start, the corrections and their orthonormalisation in ./davidson-correct, the
 * convergence rules in ./davidson-rule.
 *
 * Memory traffic per iteration (m basis vectors, b new corrections, n rows): b matvecs;
 * the new projected-matrix column entries (b·m dots); the residuals R = A·V·c − θ·V·c
 * (2·k·m axpys); b host-computed denominators uploaded; CGS2 of the corrections against V
 * twice (8·b·m axpys and dots) and two SVQB passes. Four synchronisations per iteration (H
 * entries, residual norms, two Gram matrices). Memory: 2·maxSubspace + 2k vectors.
 * @module
 */
import type { LinearOperator, VectorSpace } from '@gpusparse/formats';
import { DimensionMismatchError, InvalidParameterError, unverifiedKernelOf } from '@gpusparse/formats';
import { spaceAndOperator } from '../common/argument-order';
import type { EigenResult, StopReason } from '../common/result';
import type { EigenBaseOptions } from './common';
import { allFinite, checkEigenInput, EigenRun, finishEigen, confirmedEigen, noIteration, readAndRelease } from './common';
import { corrections, type DavidsonCorrector, type DiagonalCache, orthonormalCorrections } from './davidson-correct';
import { type DavidsonRule, davidsonRule } from './davidson-rule';
import { initialSubspace } from './davidson-start';
import { symmetricEigen } from './dense';
import { combineColumns } from './ortho';
import { returnedVoid } from '../common/operator-check';

export { type DavidsonCorrector, F64_ONE_ROUND_KEEP } from './davidson-correct';
export { lowestIndices } from './davidson-start';

/** Options of {@link davidson}. */
export interface DavidsonOptions<V> extends EigenBaseOptions {
  /** The operator's main diagonal in float64 (length n): the preconditioner and the initial guess. */
  diagonal: Float64Array;
  /** Energy tolerance: |θᵢ − θᵢ(previous iteration)| < tol for every root (default 1e-10; 1e-6·max(1, max|dᵢ|) in an f32 space). */
  tol?: number;
  /** Residual tolerance: ‖A·xᵢ − θᵢ·xᵢ‖ < residualTol for every root (default √tol; 1e-4·max(1, max|dᵢ|) in an f32 space). */
  residualTol?: number;
  /**
   * Relative residual tolerance. When given, the residual rule is the one of Lanczos and LOBPCG,
   * ‖A·xᵢ − θᵢ·xᵢ‖ ≤ max(rtol·‖A‖est, atol) with ‖A‖est = max(max|dᵢ|, largest |Ritz value|),
   * and the energy rule |Δθᵢ| < tol defaults to rtol·‖A‖est (docs/guides/eigen-convergence.md).
   * Not together with `residualTol`. Default: none (the absolute PySCF rule above).
   */
  rtol?: number;
  /** Absolute floor of the relative rule (only with `rtol`; default 0). */
  atol?: number;
  /**
   * How many of the k roots decide convergence (the lowest `nConverge`, default k). The others
   * are guard roots: they are corrected while unconverged and returned, but an unconverged guard
   * root neither holds the verdict nor keeps the solver running once the wanted roots pass.
   */
  nConverge?: number;
  /** Largest subspace before a collapse onto the k Ritz vectors (default 12 + 4·(k − 1)). */
  maxSubspace?: number;
  /** Level shift added to the denominators dᵢ − θ (default 1e-3). */
  levelShift?: number;
  /** Initial guesses (at least k; copied). Default: unit vectors at the k lowest diagonal entries. */
  initialVectors?: readonly V[];
  /** Squared relative norm below which an orthogonalised correction is dropped (default 1e-14 f64, 1e-8 f32). */
  lindep?: number;
}

/** Options of {@link davidsonWith}: Davidson with a caller-supplied correction step. */
export interface DavidsonCoreOptions<V> extends Omit<DavidsonOptions<V>, 'diagonal'> {
  /** Diagonal preconditioner / initial guess (optional when `corrector` and `initialVectors` are given). */
  diagonal?: Float64Array;
  /** Computes the corrections instead of the diagonal preconditioner. */
  corrector?: DavidsonCorrector<V>;
  /** Method name in the result (default 'davidson'). */
  name?: string;
  /**
   * Recompute ‖A·v − θ·v‖ from the returned vectors at exit (default true: k more products).
   * false: a converged run reports the residual norms of its last iteration instead (formed from
   * the subspace in the same precision) — for callers that recompute them anyway, like the CI
   * polish, where the k exit products were a third of its float64 products.
   */
  recomputeResiduals?: boolean;
  /**
   * Replaces the per-root convergence test (|Δθ| < tol and ‖r‖ ≤ residualTol): given this
   * iteration's Ritz values and residual norms (all k), which roots count as converged. A
   * converged root gets no correction; the run ends when the first nConverge are. Used by
   * eigsMixed's bound acceptance (eigen/bounds.ts), where the first iteration over the fast
   * Ritz vectors often settles every root without a correction.
   */
  acceptRoots?: (theta: readonly number[], residualNorms: readonly number[], previous: readonly number[] | undefined) => boolean[];
}

/**
 * The k lowest eigenpairs of a symmetric operator by block Davidson with the diagonal
 * (level-shifted, clamped) preconditioner. Robust to degenerate roots (block method) and to
 * near-dependent corrections (CGS2 + SVQB with dropping). Cost per iteration: ≤ k matvecs,
 * O(m·n·k) vector work, 4 readbacks; see the module notes.
 * @example
 * const r = await davidson(space, op, { k: 3, diagonal: op.diagonal!() });
 * r.values; // three lowest eigenvalues (e.g. CI energies), ascending
 */
export function davidson<V, S>(space: VectorSpace<V, S>, op: LinearOperator<V>, opts: DavidsonOptions<V>): Promise<EigenResult<V>>;
/** @deprecated operator-first order: call `davidson(space, op, opts)` (same behaviour). */
export function davidson<V, S>(op: LinearOperator<V>, space: VectorSpace<V, S>, opts: DavidsonOptions<V>): Promise<EigenResult<V>>;
export async function davidson<V, S>(
  spaceOrOp: VectorSpace<V, S> | LinearOperator<V>,
  opOrSpace: VectorSpace<V, S> | LinearOperator<V>,
  opts: DavidsonOptions<V>,
): Promise<EigenResult<V>> {
  const [space, op] = spaceAndOperator('davidson', spaceOrOp, opOrSpace);
  if (!(opts.diagonal instanceof Float64Array)) throw new InvalidParameterError('davidson diagonal', 'a Float64Array', opts.diagonal);
  return davidsonWith(space, op, opts);
}

/**
 * Block Davidson with the subspace management of {@link davidson} and either its diagonal
 * preconditioner or a caller's `corrector` (e.g. a correction equation solved in another
 * space, see eigsMixed's 'jd' polish). Cost: as davidson plus the corrector's.
 * @example
 * const r = await davidsonWith(space, op, { k: 2, initialVectors: x0, corrector: myCorrector });
 */
export function davidsonWith<V, S>(space: VectorSpace<V, S>, op: LinearOperator<V>, opts: DavidsonCoreOptions<V>): Promise<EigenResult<V>>;
/** @deprecated operator-first order: call `davidsonWith(space, op, opts)` (same behaviour). */
export function davidsonWith<V, S>(op: LinearOperator<V>, space: VectorSpace<V, S>, opts: DavidsonCoreOptions<V>): Promise<EigenResult<V>>;
export async function davidsonWith<V, S>(
  spaceOrOp: VectorSpace<V, S> | LinearOperator<V>,
  opOrSpace: VectorSpace<V, S> | LinearOperator<V>,
  opts: DavidsonCoreOptions<V>,
): Promise<EigenResult<V>> {
  const [space, op] = spaceAndOperator('davidsonWith', spaceOrOp, opOrSpace);
  return confirmedEigen(space, () => davidsonRun(space, op, opts));
}

/** One run of {@link davidsonWith} (rerun by confirmedEigen when the operator's tuned kernel failed the final check). */
async function davidsonRun<V, S>(space: VectorSpace<V, S>, op: LinearOperator<V>, opts: DavidsonCoreOptions<V>): Promise<EigenResult<V>> {
  const c = setUp(space, op, opts);
  const { k, run, method } = c;
  const n = op.rows;
  // initial block: user vectors or unit vectors at the lowest diagonal entries, orthonormalised
  let guess: V[];
  if (opts.initialVectors) {
    if (opts.initialVectors.length < k) {
      throw new InvalidParameterError('davidson initialVectors', `at least k = ${k} vectors`, opts.initialVectors.length);
    }
    guess = opts.initialVectors.map((v) => {
      if (space.length(v) !== n) throw new DimensionMismatchError('davidson initialVectors', n, space.length(v));
      const x = space.create(n);
      space.copy(v, x);
      return x;
    });
  } else guess = [];
  const start = await initialSubspace(space, c.diag.d, k, guess, c.lindep, run.stats);
  if (start.nonFinite) {
    return finishEigen(op, space, run, { values: new Array(k).fill(Number.NaN), vectors: start.nonFinite.slice(0, k), reason: 'non-finite', iterations: 0, method, detail: 'davidson: non-finite initial vectors' });
  }
  if (c.maxIterations === 0) return noIteration(op, space, run, start.v, k, method);
  const st: Iterate<V> = { v: [], av: [], h: [], newVecs: start.v, iterations: 0, reason: 'max-iterations', coeffs: [], theta: [], lastRn: [] };
  while (await iterate(c, st));
  return finish(c, st);
}

/** What one davidsonWith call fixes before iterating. */
interface Ctx<V, S> {
  space: VectorSpace<V, S>;
  op: LinearOperator<V>;
  opts: DavidsonCoreOptions<V>;
  run: EigenRun;
  k: number;
  name: string;
  f32: boolean;
  rule: DavidsonRule;
  nConverge: number;
  maxSubspace: number;
  maxIterations: number;
  lindep: number;
  method: string;
  /** The diagonal (zeros without one) and its copy in the space, for the preconditioner. */
  diag: DiagonalCache<V>;
  normA: number;
}

/** The subspace and the outcome so far. */
interface Iterate<V> {
  v: V[];
  av: V[];
  /** H = Vᵀ·A·V; empty after a collapse (recomputed whole). */
  h: number[][];
  /** Vectors to append to V at the next iteration. */
  newVecs: V[];
  thetaPrev?: number[];
  iterations: number;
  reason: StopReason;
  detail?: string;
  coeffs: number[][];
  theta: number[];
  lastRn: number[];
}

/** Checks the options and fixes the run's constants. */
function setUp<V, S>(space: VectorSpace<V, S>, op: LinearOperator<V>, opts: DavidsonCoreOptions<V>): Ctx<V, S> {
  const k = opts.k;
  const name = opts.name ?? 'davidson';
  checkEigenInput(name, op, k, opts.maxIterations);
  const n = op.rows;
  const d = opts.diagonal ?? new Float64Array(n);
  if (opts.diagonal === undefined && !(opts.corrector && opts.initialVectors)) {
    throw new InvalidParameterError(`${name} diagonal`, 'a Float64Array (or both corrector and initialVectors)', opts.diagonal);
  }
  if (d.length !== n) throw new DimensionMismatchError(`${name} diagonal`, n, d.length);
  for (let i = 0; i < n; i++) {
    if (!Number.isFinite(d[i]!)) throw new InvalidParameterError(`${name} diagonal[${i}]`, 'a finite number', d[i]);
  }
  // float32 cannot resolve 1e-10 energy changes: its defaults scale with max|d| (≈ ‖A‖) instead
  let dMax = 0;
  for (let i = 0; i < n; i++) dMax = Math.max(dMax, Math.abs(d[i]!));
  const f32 = space.precision === 'f32';
  const rule = davidsonRule(name, opts, f32, dMax);
  const nConverge = opts.nConverge ?? k;
  if (!Number.isInteger(nConverge) || nConverge < 1 || nConverge > k) throw new InvalidParameterError(`${name} nConverge`, `an integer in 1..k = ${k}`, nConverge);
  const levelShift = opts.levelShift ?? 1e-3;
  const maxSubspace = Math.min(n, opts.maxSubspace ?? 12 + 4 * (k - 1));
  if (!Number.isInteger(maxSubspace) || (maxSubspace < k + 1 && maxSubspace < n)) {
    throw new InvalidParameterError('davidson maxSubspace', `an integer ≥ k + 1 = ${k + 1}`, opts.maxSubspace);
  }
  const maxIterations = opts.maxIterations ?? 200;
  const lindep = opts.lindep ?? (f32 ? 1e-8 : 1e-14);
  const run = new EigenRun(opts, op);
  const method = opts.corrector ? `${name}(k=${k}, maxSubspace=${maxSubspace})` : `${name}(k=${k}, maxSubspace=${maxSubspace}, shift=${levelShift})`;
  return { space, op, opts, run, k, name, f32, rule, nConverge, maxSubspace, maxIterations, lindep, method, diag: { d, levelShift }, normA: dMax };
}

/** 1. Extend V and A·V by the new vectors, and H by its new entries (one readback); returns them. */
async function extend<V, S>(c: Ctx<V, S>, st: Iterate<V>): Promise<number[]> {
  const { space, op, run } = c;
  const m0 = st.v.length;
  for (const t of st.newVecs) {
    const at = space.create(op.rows);
    returnedVoid(op.apply(t, at), 'davidson', 'apply', at); // A·t
    run.stats.matvecs++;
    st.v.push(t);
    st.av.push(at);
  }
  const m = st.v.length;
  const from = st.h.length === m0 ? m0 : 0; // after a collapse h is empty: recompute all of it
  const dots: S[] = [];
  for (let j = from; j < m; j++) dots.push(...space.multiDot(st.v.slice(0, j + 1), st.av[j]!)); // H[0..j][j]
  const got = await readAndRelease(space, dots, run.stats);
  if (from === 0) st.h = [];
  while (st.h.length < m) st.h.push([]);
  let p = 0;
  for (let j = from; j < m; j++) {
    for (let i = 0; i <= j; i++) {
      st.h[i]![j] = got[p]!;
      st.h[j]![i] = got[p]!;
      p++;
    }
  }
  return got;
}

/** 3. Residuals r_i = A·V·c_i − θ_i·V·c_i of the k Ritz pairs and their norms (one readback). */
async function residuals<V, S>(c: Ctx<V, S>, st: Iterate<V>): Promise<{ r: V[]; rn: number[] }> {
  const { space } = c;
  const r: V[] = [];
  const rnS: S[] = [];
  for (let i = 0; i < c.k; i++) {
    const ri = space.create(c.op.rows);
    space.combine(st.coeffs[i]!, st.av, 0, ri); // r = A·V·c
    space.combine(st.coeffs[i]!.map((x) => -st.theta[i]! * x), st.v, 1, ri); // r ← r − θ·V·c
    r.push(ri);
    rnS.push(space.norm2(ri));
  }
  return { r, rn: await readAndRelease(space, rnS, c.run.stats) };
}

/**
 * One Davidson iteration: extend, Rayleigh–Ritz, residuals and the verdict, then corrections,
 * a collapse when the subspace would overflow, and their orthonormalisation. False once the
 * run has ended (`st.reason` says why).
 */
async function iterate<V, S>(c: Ctx<V, S>, st: Iterate<V>): Promise<boolean> {
  const { space, run, k } = c;
  if (run.aborted()) return end(st, 'stopped');
  const got = await extend(c, st);
  // 2. Rayleigh–Ritz on the host
  const eig = allFinite(got) ? symmetricEigen(st.h) : undefined;
  st.iterations++;
  if (!eig) return end(st, 'non-finite', `davidson: non-finite projected matrix at iteration ${st.iterations}`);
  st.theta = eig.values.slice(0, k);
  st.coeffs = eig.vectors.slice(0, k);
  c.normA = Math.max(c.normA, Math.abs(eig.values[0]!), Math.abs(eig.values[eig.values.length - 1]!));
  const residualTol = c.rule.residual(c.normA);
  const { r, rn } = await residuals(c, st);
  st.lastRn = rn;
  const conv = verdict(c, st, rn, residualTol);
  const stop = await run.record({ iteration: st.iterations, values: st.theta, residualNorms: rn, threshold: residualTol });
  const release = () => r.forEach((x) => { space.release(x); });
  const over = ended(c, st, rn, conv, stop);
  if (over) {
    release();
    return false;
  }
  // 4. corrections t_i = r_i / (d − θ_i + shift), clamped, for the unconverged roots (or the corrector's)
  const roots = st.theta.map((_, i) => i).filter((i) => !conv[i]);
  const t = await corrections(space, { r, roots, theta: st.theta, v: st.v, coeffs: st.coeffs }, c.diag, c.opts.corrector, run.stats);
  const tNorms: S[] = t.map((ti) => space.norm2(ti));
  release();
  // 5. collapse onto the current Ritz vectors when the subspace would overflow
  if (st.v.length + t.length > c.maxSubspace) collapse(c, st);
  // 6. orthonormalise the corrections against V and each other: CGS2 + SVQB, twice where needed
  const { o1, o2 } = await orthonormalCorrections(space, st.v, t, tNorms, { lindep: c.lindep, f32: c.f32, stats: run.stats });
  if (o1.nonFinite || o2.nonFinite) return end(st, 'non-finite', `davidson: non-finite correction at iteration ${st.iterations}`);
  st.newVecs = o2.block.slice(0, Math.max(0, c.op.rows - st.v.length));
  o2.block.slice(st.newVecs.length).forEach((y) => { space.release(y); });
  if (st.newVecs.length > 0) return true;
  // nothing new to add: the subspace is stationary
  if (rn.slice(0, c.nConverge).every((x) => x <= residualTol)) return end(st, 'converged');
  return end(st, 'breakdown', `davidson: every correction was linearly dependent on the subspace at iteration ${st.iterations} (residuals ${rn.map((x) => x.toExponential(2)).join(', ')})`);
}

/** End the run with `reason` (and `detail`); returns false for {@link iterate}. */
function end<V>(st: Iterate<V>, reason: StopReason, detail?: string): false {
  st.reason = reason;
  if (detail !== undefined) st.detail = detail;
  return false;
}

/** Which roots count as converged (|Δθ| < tol and ‖r‖ ≤ residualTol, or the caller's acceptRoots); θ becomes the previous θ. */
function verdict<V, S>(c: Ctx<V, S>, st: Iterate<V>, rn: number[], residualTol: number): boolean[] {
  const tol = c.rule.energy(c.normA);
  const { theta, thetaPrev } = st;
  const de = theta.map((t, i) => (thetaPrev ? t - thetaPrev[i]! : Number.POSITIVE_INFINITY));
  const conv = c.opts.acceptRoots ? c.opts.acceptRoots(theta, rn, thetaPrev) : theta.map((_, i) => Math.abs(de[i]!) < tol && rn[i]! <= residualTol);
  st.thetaPrev = theta;
  return conv;
}

/** Whether the run ends after this iteration's residuals (non-finite, converged, stopped, iteration limit). */
function ended<V, S>(c: Ctx<V, S>, st: Iterate<V>, rn: number[], conv: boolean[], stop: boolean): boolean {
  if (!allFinite(rn)) return !end(st, 'non-finite', `davidson: non-finite residual at iteration ${st.iterations}`);
  if (conv.slice(0, c.nConverge).every(Boolean)) {
    const guards = conv.map((x, i) => (x ? -1 : i)).filter((i) => i >= 0);
    if (guards.length > 0) return !end(st, 'converged', `${c.name}: the ${c.nConverge} wanted roots converged; guard root${guards.length > 1 ? 's' : ''} ${guards.join(', ')} not (residual ${guards.map((i) => rn[i]!.toExponential(2)).join(', ')})`);
    return !end(st, 'converged');
  }
  if (stop) return !end(st, 'stopped');
  if (st.iterations >= c.maxIterations) return !end(st, 'max-iterations');
  return false;
}

/** 5. V ← X = V·C and A·V ← A·V·C (the k Ritz vectors); H is recomputed at the next extend. */
function collapse<V, S>(c: Ctx<V, S>, st: Iterate<V>): void {
  const { space, k } = c;
  const x = combineColumns(space, st.v, st.coeffs); // X = V·C
  const ax = combineColumns(space, st.av, st.coeffs); // A·X = A·V·C
  st.v.forEach((y) => { space.release(y); });
  st.av.forEach((y) => { space.release(y); });
  st.v = [];
  st.av = [];
  st.h = [];
  // re-append X through the regular path (its H block is recomputed explicitly)
  for (let i = 0; i < k; i++) {
    st.v.push(x[i]!);
    st.av.push(ax[i]!);
  }
  st.coeffs = st.coeffs.map((_, i) => Array.from({ length: k }, (_, j) => (i === j ? 1 : 0))); // X = V·I
}

/** The Ritz vectors of the final subspace, the space released, and the result. */
async function finish<V, S>(c: Ctx<V, S>, st: Iterate<V>): Promise<EigenResult<V>> {
  const { space, op, run, k } = c;
  let vectors: V[];
  let theta = st.theta;
  if (st.coeffs.length === k && st.v.length > 0 && st.coeffs[0]!.length <= st.v.length && st.reason !== 'non-finite') {
    vectors = combineColumns(space, st.v, st.coeffs);
  } else {
    vectors = Array.from({ length: k }, () => space.create(op.rows));
    if (theta.length < k) theta = new Array(k).fill(Number.NaN);
  }
  st.v.forEach((y) => { space.release(y); });
  st.av.forEach((y) => { space.release(y); });
  if (c.diag.inSpace !== undefined) space.release(c.diag.inSpace);
  // the roots the verdict judged by the residual rule (none when the caller's acceptRoots judged: a certified bound needs no residual)
  const judged = c.opts.acceptRoots ? 0 : c.nConverge;
  const exit = { values: theta, reason: st.reason, iterations: st.iterations, method: c.method, tolerance: c.rule.report(c.normA), judged, ...(st.detail ? { detail: st.detail } : {}) };
  // on a tuned kernel the residuals are recomputed anyway, on the verified kernel (finishEigen)
  if (c.opts.recomputeResiduals === false && st.reason === 'converged' && st.lastRn.length === k && allFinite(st.lastRn) && !unverifiedKernelOf(op, run.mark)) {
    // the last iteration's residuals belong to these very Ritz vectors (no products at exit)
    return { ...(await finishEigen(op, space, run, { ...exit, vectors: [] })), vectors, residualNorms: st.lastRn };
  }
  return finishEigen(op, space, run, { ...exit, vectors });
}
