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
 * Memory traffic per iteration (m basis vectors, b new corrections, n rows): b matvecs;
 * the new projected-matrix column entries (b·m dots); the residuals R = A·V·c − θ·V·c
 * (2·k·m axpys); b host-computed denominators uploaded; CGS2 of the corrections against V
 * twice (8·b·m axpys and dots) and two SVQB passes. Four synchronisations per iteration (H
 * entries, residual norms, two Gram matrices). Memory: 2·maxSubspace + 2k vectors.
 * @module
 */
import type { LinearOperator, VectorSpace } from '@gpusparse/formats';
import { DimensionMismatchError, InvalidParameterError } from '@gpusparse/formats';
import { spaceAndOperator } from '../common/argument-order';
import { eigenTolerance, residualThreshold, toleranceReport } from '../common/eigen-tolerance';
import type { EigenResult, EigenToleranceReport, StopReason } from '../common/result';
import type { EigenBaseOptions } from './common';
import { allFinite, checkEigenInput, checkPositive, EigenRun, finishEigen, noIteration, readAndRelease } from './common';
import { symmetricEigen } from './dense';
import { combineColumns, projectOutTwice, svqb } from './ortho';

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

/** Denominator clamp of the diagonal preconditioner (PySCF: |d − θ| < 1e-8 → 1e-8). */
const CLAMP = 1e-8;
/**
 * On float64 spaces the second CGS2 + SVQB round runs only when the first kept less than this
 * squared fraction of some correction's norm: the round's loss of orthogonality grows like
 * ε / (kept fraction), so at ≥ 1e-2 the block is orthonormal (and ⟂ V) to ≈ 100ε after one
 * round ("twice is enough" — the second round only repairs what cancellation lost). float32
 * spaces always take both rounds.
 */
export const F64_ONE_ROUND_KEEP = 1e-2;

/**
 * Indices of the k smallest entries of d (Davidson's initial guess: the lowest diagonal
 * entries), ascending by value then index (the order a full sort would give). For k ≤ 64 an
 * insertion selection in O(n·k) — a full sort of 1.2·10^7 diagonal entries takes 3 s here —
 * above that a full sort, O(n log n).
 * @example lowestIndices(Float64Array.of(3, 1, 2, 1), 3); // [1, 3, 2]
 */
export function lowestIndices(d: Float64Array, k: number): number[] {
  const kk = Math.max(0, Math.min(k, d.length));
  if (kk > 64) {
    return Array.from(d, (_, i) => i)
      .sort((a, b) => d[a]! - d[b]! || a - b)
      .slice(0, kk);
  }
  const best: number[] = [];
  const less = (x: number, y: number) => d[x]! < d[y]! || (d[x] === d[y] && x < y);
  for (let i = 0; i < d.length; i++) {
    if (best.length === kk && (kk === 0 || !less(i, best[kk - 1]!))) continue;
    let p = best.length === kk ? kk - 1 : best.length;
    if (best.length < kk) best.push(i);
    while (p > 0 && less(i, best[p - 1]!)) {
      best[p] = best[p - 1]!;
      p--;
    }
    best[p] = i;
  }
  return best;
}

/**
 * A replacement for the diagonal preconditioner: given the residuals of the unconverged roots
 * (`roots[j]` is the root of `residuals[j]`), all current Ritz values, and a way to form the
 * current Ritz vectors, return correction vectors (any number; they are orthogonalised and
 * filtered by the caller).
 */
export type DavidsonCorrector<V> = (c: {
  residuals: readonly V[];
  roots: readonly number[];
  theta: readonly number[];
  ritzVectors: () => V[];
}) => Promise<V[]>;

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
  const k = opts.k;
  const name = opts.name ?? 'davidson';
  checkEigenInput(name, op, k);
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
  let normA = dMax;
  const levelShift = opts.levelShift ?? 1e-3;
  const maxSubspace = Math.min(n, opts.maxSubspace ?? 12 + 4 * (k - 1));
  if (!Number.isInteger(maxSubspace) || (maxSubspace < k + 1 && maxSubspace < n)) {
    throw new InvalidParameterError('davidson maxSubspace', `an integer ≥ k + 1 = ${k + 1}`, opts.maxSubspace);
  }
  const maxIterations = opts.maxIterations ?? 200;
  const lindep = opts.lindep ?? (f32 ? 1e-8 : 1e-14);
  const run = new EigenRun(opts);
  const stats = run.stats;
  const method = opts.corrector ? `${name}(k=${k}, maxSubspace=${maxSubspace})` : `${name}(k=${k}, maxSubspace=${maxSubspace}, shift=${levelShift})`;
  let dSpace: V | undefined; // the diagonal in the space, for spaces with shiftedDivide

  // initial block: user vectors or unit vectors at the lowest diagonal entries, orthonormalised
  let guess: V[];
  if (opts.initialVectors) {
    if (opts.initialVectors.length < k) {
      throw new InvalidParameterError('davidson initialVectors', `at least k = ${k} vectors`, opts.initialVectors.length);
    }
    guess = opts.initialVectors.map((v) => {
      if (space.length(v) !== n) throw new DimensionMismatchError('davidson initialVectors', n, space.length(v));
      const c = space.create(n);
      space.copy(v, c);
      return c;
    });
  } else guess = [];
  // the lowest diagonal entries, as many as a guess normally needs; all of them (a full sort)
  // only if linear dependence used those up
  let order = lowestIndices(d, Math.min(n, 2 * k + 8));
  let nextUnit = 0;
  let v: V[] = [];
  for (let attempt = 0; v.length < k && (attempt === 0 || nextUnit < n) && attempt < n + 1; attempt++) {
    while (guess.length + v.length < k && nextUnit < n) {
      if (nextUnit >= order.length) order = lowestIndices(d, n);
      const e = space.create(n);
      const unit = new Float64Array(n);
      unit[order[nextUnit++]!] = 1;
      space.write(e, unit);
      guess.push(e);
    }
    const refNorms = guess.map((g) => space.norm2(g));
    for (const g of guess) projectOutTwice(space, v, g); // g ← (I − VVᵀ)²·g
    const o = await svqb(space, guess, { dropTol: lindep, refNorms }, stats);
    if (o.nonFinite) {
      return finishEigen(op, space, run, { values: new Array(k).fill(Number.NaN), vectors: o.block.slice(0, k), reason: 'non-finite', iterations: 0, method, detail: 'davidson: non-finite initial vectors' });
    }
    v = [...v, ...o.block];
    guess = [];
  }
  if (maxIterations === 0) return noIteration(op, space, run, v, k, method);
  let av: V[] = [];
  let h: number[][] = [];
  let newVecs = v;
  v = [];
  let thetaPrev: number[] | undefined;
  let iterations = 0;
  let reason: StopReason = 'max-iterations';
  let detail: string | undefined;
  let coeffs: number[][] = [];
  let theta: number[] = [];
  let lastRn: number[] = [];

  for (;;) {
    if (run.aborted()) {
      reason = 'stopped';
      break;
    }
    // 1. extend V and A·V, and the new entries of H = Vᵀ·A·V (one readback)
    const m0 = v.length;
    for (const t of newVecs) {
      const at = space.create(n);
      op.apply(t, at); // A·t
      stats.matvecs++;
      v.push(t);
      av.push(at);
    }
    const m = v.length;
    const from = h.length === m0 ? m0 : 0; // after a collapse h is empty: recompute all of it
    const dots: S[] = [];
    for (let j = from; j < m; j++) dots.push(...space.multiDot(v.slice(0, j + 1), av[j]!)); // H[0..j][j]
    const got = await readAndRelease(space, dots, stats);
    if (from === 0) h = [];
    while (h.length < m) h.push([]);
    let p = 0;
    for (let j = from; j < m; j++) {
      for (let i = 0; i <= j; i++) {
        h[i]![j] = got[p]!;
        h[j]![i] = got[p]!;
        p++;
      }
    }
    // 2. Rayleigh–Ritz on the host
    const eig = allFinite(got) ? symmetricEigen(h) : undefined;
    iterations++;
    if (!eig) {
      reason = 'non-finite';
      detail = `davidson: non-finite projected matrix at iteration ${iterations}`;
      break;
    }
    theta = eig.values.slice(0, k);
    coeffs = eig.vectors.slice(0, k);
    normA = Math.max(normA, Math.abs(eig.values[0]!), Math.abs(eig.values[eig.values.length - 1]!));
    const residualTol = rule.residual(normA);
    const tol = rule.energy(normA);
    // 3. residuals r_i = A·V·c_i − θ_i·V·c_i and their norms (one readback)
    const r: V[] = [];
    const rnS: S[] = [];
    for (let i = 0; i < k; i++) {
      const ri = space.create(n);
      space.combine(coeffs[i]!, av, 0, ri); // r = A·V·c
      space.combine(coeffs[i]!.map((x) => -theta[i]! * x), v, 1, ri); // r ← r − θ·V·c
      r.push(ri);
      rnS.push(space.norm2(ri));
    }
    const rn = await readAndRelease(space, rnS, stats);
    lastRn = rn;
    const de = theta.map((t, i) => (thetaPrev ? t - thetaPrev[i]! : Number.POSITIVE_INFINITY));
    const conv = opts.acceptRoots ? opts.acceptRoots(theta, rn, thetaPrev) : theta.map((_, i) => Math.abs(de[i]!) < tol && rn[i]! <= residualTol);
    thetaPrev = theta;
    const stop = run.record({ iteration: iterations, values: theta, residualNorms: rn, threshold: residualTol });
    const release = () => r.forEach((x) => { space.release(x); });
    if (!allFinite(rn)) {
      release();
      reason = 'non-finite';
      detail = `davidson: non-finite residual at iteration ${iterations}`;
      break;
    }
    if (conv.slice(0, nConverge).every(Boolean)) {
      release();
      reason = 'converged';
      const guards = conv.map((c, i) => (c ? -1 : i)).filter((i) => i >= 0);
      if (guards.length > 0) detail = `${name}: the ${nConverge} wanted roots converged; guard root${guards.length > 1 ? 's' : ''} ${guards.join(', ')} not (residual ${guards.map((i) => rn[i]!.toExponential(2)).join(', ')})`;
      break;
    }
    if (stop) {
      release();
      reason = 'stopped';
      break;
    }
    if (iterations >= maxIterations) {
      release();
      reason = 'max-iterations';
      break;
    }
    // 4. corrections t_i = r_i / (d − θ_i + shift), clamped, for the unconverged roots (or the corrector's)
    let t: V[] = [];
    const roots = theta.map((_, i) => i).filter((i) => !conv[i]);
    if (opts.corrector) {
      const snapshotV = v;
      const snapshotC = coeffs;
      t = await opts.corrector({ residuals: roots.map((i) => r[i]!), roots, theta, ritzVectors: () => combineColumns(space, snapshotV, snapshotC) });
      stats.precondApplies += roots.length;
    } else if (space.shiftedDivide) {
      // on the device: d uploaded once, t = r ∘ (d − θ + shift)⁻¹ by one kernel per root (no
      // host vector of n and no upload per root and iteration: seconds at 4·10^7 rows)
      dSpace ??= space.fromArray(d);
      for (const i of roots) {
        const ti = space.create(n);
        space.shiftedDivide(r[i]!, dSpace, theta[i]! - levelShift, CLAMP, ti); // t = r ∘ (d − θ + shift)⁻¹
        stats.precondApplies++;
        t.push(ti);
      }
    } else {
      for (const i of roots) {
        const inv = new Float64Array(n);
        for (let j = 0; j < n; j++) {
          let den = d[j]! - theta[i]! + levelShift; // d_j − (θ − shift)
          if (Math.abs(den) < CLAMP) den = den < 0 ? -CLAMP : CLAMP;
          inv[j] = 1 / den;
        }
        const dinv = space.fromArray(inv);
        const ti = space.create(n);
        space.multiply(r[i]!, dinv, ti); // t = r ∘ (d − θ + shift)⁻¹
        stats.precondApplies++;
        space.release(dinv);
        t.push(ti);
      }
    }
    const tNorms: S[] = t.map((ti) => space.norm2(ti));
    release();
    // 5. collapse onto the current Ritz vectors when the subspace would overflow
    if (m + t.length > maxSubspace) {
      const x = combineColumns(space, v, coeffs); // X = V·C
      const ax = combineColumns(space, av, coeffs); // A·X = A·V·C
      v.forEach((y) => { space.release(y); });
      av.forEach((y) => { space.release(y); });
      v = [];
      av = [];
      h = [];
      // re-append X through the regular path (its H block is recomputed explicitly)
      for (let i = 0; i < k; i++) {
        v.push(x[i]!);
        av.push(ax[i]!);
      }
      coeffs = coeffs.map((_, i) => Array.from({ length: k }, (_, j) => (i === j ? 1 : 0))); // X = V·I
    }
    // 6. orthonormalise the corrections against V and each other: CGS2 + SVQB, twice where needed
    for (const ti of t) projectOutTwice(space, v, ti); // t ← (I − VVᵀ)²·t
    const o1 = await svqb(space, t, { dropTol: lindep, refNorms: tNorms }, stats);
    let o2 = o1;
    if (f32 || o1.nonFinite || o1.smallest < F64_ONE_ROUND_KEEP) {
      for (const ti of o1.block) projectOutTwice(space, v, ti);
      o2 = await svqb(space, o1.block, { dropTol: lindep }, stats);
    }
    if (o1.nonFinite || o2.nonFinite) {
      reason = 'non-finite';
      detail = `davidson: non-finite correction at iteration ${iterations}`;
      break;
    }
    newVecs = o2.block.slice(0, Math.max(0, n - v.length));
    o2.block.slice(newVecs.length).forEach((y) => { space.release(y); });
    if (newVecs.length === 0) {
      // nothing new to add: the subspace is stationary
      if (rn.slice(0, nConverge).every((x) => x <= residualTol)) reason = 'converged';
      else {
        reason = 'breakdown';
        detail = `davidson: every correction was linearly dependent on the subspace at iteration ${iterations} (residuals ${rn.map((x) => x.toExponential(2)).join(', ')})`;
      }
      break;
    }
  }
  // Ritz vectors of the final subspace
  let vectors: V[];
  if (coeffs.length === k && v.length > 0 && coeffs[0]!.length <= v.length && reason !== 'non-finite') {
    vectors = combineColumns(space, v, coeffs);
  } else {
    vectors = Array.from({ length: k }, () => space.create(n));
    if (theta.length < k) theta = new Array(k).fill(Number.NaN);
  }
  v.forEach((y) => { space.release(y); });
  av.forEach((y) => { space.release(y); });
  if (dSpace !== undefined) space.release(dSpace);
  const exit = { values: theta, reason, iterations, method, tolerance: rule.report(normA), ...(detail ? { detail } : {}) };
  if (opts.recomputeResiduals === false && reason === 'converged' && lastRn.length === k && allFinite(lastRn)) {
    // the last iteration's residuals belong to these very Ritz vectors (no products at exit)
    return { ...(await finishEigen(op, space, run, { ...exit, vectors: [] })), vectors, residualNorms: lastRn };
  }
  return finishEigen(op, space, run, { ...exit, vectors });
}

/** Davidson's two convergence rules: absolute (PySCF) by default, relative with `rtol`. */
function davidsonRule(name: string, o: Pick<DavidsonCoreOptions<unknown>, 'tol' | 'residualTol' | 'rtol' | 'atol'>, f32: boolean, dMax: number): { residual(normA: number): number; energy(normA: number): number; report(normA: number): EigenToleranceReport } {
  checkPositive(`${name} tol`, o.tol);
  if (o.rtol !== undefined) {
    if (o.residualTol !== undefined) throw new InvalidParameterError(`${name} residualTol`, 'undefined when rtol is given (rtol replaces the absolute rule)', o.residualTol);
    const t = eigenTolerance(name, { tol: o.rtol, atol: o.atol }, o.rtol);
    const energy = (normA: number) => o.tol ?? o.rtol! * normA;
    return {
      residual: (normA) => residualThreshold(t, normA),
      energy,
      report: (normA) => ({ ...toleranceReport(t, normA), rule: '‖A·v − λ·v‖ ≤ max(rtol·‖A‖est, atol) and |Δλ| < energyTol', energyTol: energy(normA) }),
    };
  }
  checkPositive(`${name} residualTol`, o.residualTol);
  if (o.atol !== undefined) throw new InvalidParameterError(`${name} atol`, 'undefined unless rtol is given (a floor of the relative rule)', o.atol);
  const tol = o.tol ?? (f32 ? 1e-6 * Math.max(1, dMax) : 1e-10);
  const residualTol = o.residualTol ?? (f32 ? 1e-4 * Math.max(1, dMax) : Math.sqrt(tol));
  return {
    residual: () => residualTol,
    energy: () => tol,
    report: () => ({ rule: 'absolute: |Δλ| < energyTol and ‖A·v − λ·v‖ ≤ residualTol', atol: residualTol, threshold: residualTol, energyTol: tol }),
  };
}
