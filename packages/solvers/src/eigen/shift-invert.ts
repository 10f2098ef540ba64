/**
 * Shift-invert Lanczos for the eigenvalues of a symmetric matrix just above a shift σ below its
 * spectrum — by default σ = 0, the smallest eigenvalues of a symmetric positive definite matrix.
 * Lanczos runs on B = (A − σI)⁻¹, whose largest eigenvalues μ = 1/(λ − σ) are the wanted λ,
 * well separated relative to ‖B‖ even when A is stiff: on bcsstk13 (‖A‖ ≈ 3·10^12, λ₀ ≈ 284)
 * plain Lanczos needs thousands of steps for the smallest pairs, B's largest converge in tens.
 * Each B·x is an inner preconditioned CG solve (Jacobi by default) in float64 on the host, to a
 * relative residual 100 times below the outer tolerance, so that the error of the inexact
 * products stays under the convergence threshold.
 *
 * Memory traffic per outer step: one inner solve (its iterations × (one SpMV + 5 vector
 * operations)) plus Lanczos's own (see lanczos.ts). Memory: the Lanczos basis plus 5 vectors.
 * A − σI must be positive definite: an inner CG that meets pᵀ(A − σI)p ≤ 0 throws
 * {@link NotPositiveDefiniteError}, so a caller can fall back to plain Lanczos. With σ next to an
 * eigenvalue (the products then accurate only to u·κ, above tol), the pairs next to σ are found by
 * inverse iteration and deflated first: ./shift-invert-near.ts.
 * @module
 */
import type { CsrMatrix, LinearOperator } from '@gpusparse/formats';
import { csrDiagonal, csrNormInf, DimensionMismatchError, HostOperator, HostVectorSpace, InvalidMatrixError, InvalidParameterError } from '@gpusparse/formats';
import type { EigenResult } from '../common/result';
import type { EigenIterationInfo } from './common';
import { type LanczosOptions, lanczos } from './lanczos';
import { deflate, lockNearest, mergeNear, type NearPhase, NearSingularShift, type ShiftGuard } from './shift-invert-near';
import { newStats } from '../common/result';
import { assertUsableOperator, returnedVoid } from '../common/operator-check';

/**
 * A − σI turned out not positive definite (an inner CG met non-positive curvature), or singular
 * to working precision (`singular`: σ is an eigenvalue of A within rounding).
 */
export class NotPositiveDefiniteError extends InvalidMatrixError {
  constructor(where: string, sigma: number, curvature: number, singular?: { normA: number }) {
    super(
      where,
      singular
        ? `A − σI with σ = ${sigma} is singular to working precision (its smallest eigenvalue is ≤ ‖b‖/‖(A − σI)⁻¹·b‖ = ${curvature.toExponential(3)}, below 2^-40·‖A‖∞ = ${(SINGULAR_SHIFT * singular.normA).toExponential(3)}): σ is an eigenvalue of A within rounding, and the inner solves cannot resolve the others; use plain Lanczos or a σ further below the spectrum`
        : `A − σI with σ = ${sigma} is not positive definite (CG met pᵀ(A − σI)p = ${curvature.toExponential(3)} ≤ 0): shift-invert needs σ below the spectrum; use plain Lanczos or a lower σ`,
    );
    this.name = 'NotPositiveDefiniteError';
  }
}

/**
 * A − σI whose smallest eigenvalue is provably below 2^-40·‖A‖∞ is refused (σ on an eigenvalue:
 * session 12 found 5 000 Lanczos steps and 5 668 inner solves ending 'max-iterations' with λ₁ twice).
 */
const SINGULAR_SHIFT = 2 ** -40;


/** Options of {@link lanczosShiftInvert}. */
export interface ShiftInvertOptions extends Omit<LanczosOptions<Float64Array>, 'which' | 'v0'> {
  /** The shift σ, below the wanted eigenvalues and below the spectrum (default 0: A must be SPD). */
  sigma?: number;
  /** Relative residual of each inner CG solve (default min(1e-10, tol/100)). */
  innerRtol?: number;
  /** Most CG iterations per inner solve (default max(1000, 10·n)). */
  innerMaxIterations?: number;
  /** Inner preconditioner: 'jacobi' (default, diag(A) − σ) or a float64 host operator ≈ (A − σI)⁻¹. */
  // onIteration receives λ = σ + 1/μ as values; its residualNorms and threshold are those of (A − σI)⁻¹
  preconditioner?: 'jacobi' | LinearOperator<Float64Array>;
}

/** What the inner solves did. */
export interface InnerSolveStats {
  solves: number;
  /** CG iterations summed over all solves (one SpMV each). */
  iterations: number;
  /** The most iterations one solve took. */
  maxIterations: number;
  /** Solves that stopped at innerMaxIterations above innerRtol. */
  unconverged: number;
  /** The largest relative residual an inner solve ended with. */
  worstRelativeResidual: number;
}

/** Result of {@link lanczosShiftInvert}: eigenpairs of A, plus the inner-solve counters. */
export interface ShiftInvertResult extends EigenResult<Float64Array> {
  inner: InnerSolveStats;
  sigma: number;
}

/**
 * y = (A − σI)⁻¹·x by preconditioned CG from x₀ = 0, synchronous (the operator interface is),
 * in float64. Throws NotPositiveDefiniteError on non-positive curvature. With `guard.locked`,
 * y = P·(A − σI)⁻¹·P·x, P = I − Σ v·vᵀ over the locked vectors (./shift-invert-near); with
 * `guard.active`, a solve whose product is accurate to no better than u·‖A − σI‖·‖y‖/‖x‖ > tol
 * throws {@link NearSingularShift}.
 */
function inverseOperator(a: CsrMatrix, sigma: number, m: LinearOperator<Float64Array>, rtol: number, maxIt: number, stats: InnerSolveStats, guard?: ShiftGuard): LinearOperator<Float64Array> {
  const n = a.rows;
  const op = HostOperator.fromCsr(a);
  const normA = csrNormInf(a);
  const scaled = jacobiScaled(a, sigma);
  const r = new Float64Array(n);
  const z = new Float64Array(n);
  const p = new Float64Array(n);
  const q = new Float64Array(n);
  const dot = (u: Float64Array, v: Float64Array): number => {
    let s = 0;
    for (let i = 0; i < n; i++) s += u[i]! * v[i]!;
    return s;
  };
  const solve = (b0: Float64Array, x: Float64Array): void => {
    x.fill(0);
    const b = guard && guard.locked.length > 0 ? deflate(b0, guard.locked) : b0; // P·x
    r.set(b); // r = b − (A − σI)·0
    const bn = Math.sqrt(dot(b, b));
    stats.solves++;
    if (bn === 0) return;
    returnedVoid(m.apply(r, z), 'lanczosShiftInvert', 'preconditioner apply', z); // z = M⁻¹·r
    p.set(z);
    let rho = dot(r, z);
    let it = 0;
    let rn = bn;
    while (rn > rtol * bn && it < maxIt) {
      op.apply(p, q);
      for (let i = 0; i < n; i++) q[i]! -= sigma * p[i]!; // q = (A − σI)·p
      const pq = dot(p, q);
      if (!(pq > 0)) throw new NotPositiveDefiniteError('lanczosShiftInvert', sigma, pq);
      const alpha = rho / pq;
      for (let i = 0; i < n; i++) {
        x[i]! += alpha * p[i]!; // x ← x + α·p
        r[i]! -= alpha * q[i]!; // r ← r − α·q
      }
      returnedVoid(m.apply(r, z), 'lanczosShiftInvert', 'preconditioner apply', z); // z = M⁻¹·r
      const rhoNew = dot(r, z);
      const beta = rhoNew / rho;
      rho = rhoNew;
      for (let i = 0; i < n; i++) p[i] = z[i]! + beta * p[i]!; // p ← z + β·p
      rn = Math.sqrt(dot(r, r));
      it++;
    }
    // CG from 0: ‖x‖ grows towards ‖(A − σI)⁻¹b‖ ≤ ‖b‖/λmin, so λmin ≤ ‖b‖/‖x‖ (no false alarm)
    const bound = bn / Math.sqrt(dot(x, x));
    if (bound <= SINGULAR_SHIFT * normA) throw new NotPositiveDefiniteError('lanczosShiftInvert', sigma, bound, { normA });
    if (guard && guard.locked.length > 0) x.set(deflate(x, guard.locked)); // P·(A − σI)⁻¹·P·x
    // the residual b − (A − σI)·x cannot be computed below ≈ u·|A − σI|·|x|: the product's relative accuracy,
    // measured with A − σI scaled to a unit diagonal (S = diag(A − σI)^½: u·‖Â‖∞·‖S·x‖/‖S⁻¹·b‖), as its rounding is componentwise
    const floor = scaled ? 2 ** -53 * scaled.norm * scaledRatio(scaled.s, x, b) : 2 ** -53 * (normA + Math.abs(sigma)) / bound;
    if (guard) guard.noise = Math.max(guard.noise, floor);
    if (guard?.active && floor > guard.tol) throw new NearSingularShift(floor);
    stats.iterations += it;
    stats.maxIterations = Math.max(stats.maxIterations, it);
    stats.worstRelativeResidual = Math.max(stats.worstRelativeResidual, rn / bn);
    if (rn > rtol * bn) stats.unconverged++;
  };
  return {
    rows: n,
    cols: n,
    label: `(A − ${sigma}·I)⁻¹ by pcg(${m.label ?? 'user'})`,
    apply: solve,
    applyScaled(alpha, x, beta, y) {
      const t = new Float64Array(n);
      solve(x, t);
      for (let i = 0; i < n; i++) y[i] = alpha * t[i]! + beta * y[i]!; // y = α·B·x + β·y
    },
  };
}

/**
 * λ = σ + 1/μ cannot be resolved below u·|σ|: a σ with u·|σ| > tol·‖A‖∞ (far outside the
 * spectrum) gives no digit of λ (session 13: σ = −1e300 on poisson2d 6² 'converged' to
 * λ = −2.97e284 for 0.40). Refused, naming the largest |σ| that resolves λ to tol·‖A‖∞.
 */
function assertShiftResolves(a: CsrMatrix, sigma: number, tol: number): void {
  const limit = (tol / 2 ** -53) * csrNormInf(a);
  if (Math.abs(sigma) > limit) throw new InvalidParameterError('lanczosShiftInvert sigma', `|σ| ≤ tol/u·‖A‖∞ = ${limit.toExponential(2)} (farther, λ = σ + 1/μ loses every digit below u·|σ|)`, sigma);
}

/** S = diag(A − σI)^½ and ‖S⁻¹(A − σI)S⁻¹‖∞, or undefined when a diagonal entry of A − σI is not positive. */
function jacobiScaled(a: CsrMatrix, sigma: number): { s: Float64Array; norm: number } | undefined {
  const d = csrDiagonal(a);
  const s = new Float64Array(d.length);
  for (let i = 0; i < d.length; i++) {
    if (!(d[i]! - sigma > 0)) return undefined;
    s[i] = Math.sqrt(d[i]! - sigma);
  }
  let norm = 0;
  for (let i = 0; i < a.rows; i++) {
    let row = 0;
    for (let k = a.rowPtr[i]!; k < a.rowPtr[i + 1]!; k++) {
      const j = a.colIdx[k]!;
      row += Math.abs(a.values[k]! - (j === i ? sigma : 0)) / (s[i]! * s[j]!);
    }
    norm = Math.max(norm, row);
  }
  return { s, norm };
}

/** ‖S·x‖ / ‖S⁻¹·b‖. */
function scaledRatio(s: Float64Array, x: Float64Array, b: Float64Array): number {
  let nx = 0;
  let nb = 0;
  for (let i = 0; i < s.length; i++) {
    nx += (s[i]! * x[i]!) ** 2;
    nb += (b[i]! / s[i]!) ** 2;
  }
  return Math.sqrt(nx / nb);
}

/** The Jacobi preconditioner of A − σI: z = r / (a_ii − σ); throws on a non-positive pivot. */
function shiftedJacobi(a: CsrMatrix, sigma: number): LinearOperator<Float64Array> {
  const d = csrDiagonal(a);
  const inv = new Float64Array(d.length);
  for (let i = 0; i < d.length; i++) {
    const v = d[i]! - sigma;
    if (!(v > 0) || !Number.isFinite(v)) throw new NotPositiveDefiniteError(`lanczosShiftInvert: diagonal entry ${i} (${d[i]})`, sigma, v);
    inv[i] = 1 / v;
  }
  return {
    rows: d.length,
    cols: d.length,
    label: 'jacobi',
    apply(x, y) {
      for (let i = 0; i < inv.length; i++) y[i] = inv[i]! * x[i]!; // z = D⁻¹ ∘ r
    },
    applyScaled(alpha, x, beta, y) {
      for (let i = 0; i < inv.length; i++) y[i] = alpha * inv[i]! * x[i]! + beta * y[i]!;
    },
  };
}

/**
 * The k eigenvalues of a symmetric matrix nearest above σ (default σ = 0: the k smallest of an
 * SPD matrix), by thick-restart Lanczos on (A − σI)⁻¹ with inner PCG solves on the host in
 * float64. Converged when ‖(A − σI)⁻¹v − μv‖ ≤ max(tol·‖(A − σI)⁻¹‖est, atol) (tol default 1e-8),
 * which bounds the relative error of the wanted λ = σ + 1/μ; the returned residualNorms are
 * ‖A·v − λ·v‖ recomputed with A. Cost: one inner solve per Lanczos step (see the module notes).
 * @example
 * const r = await lanczosShiftInvert(a, { k: 4 }); // bcsstk13: λ₀ = 284.3328 in ~50 steps
 * r.values; r.inner.iterations;
 */
export async function lanczosShiftInvert(a: CsrMatrix, opts: ShiftInvertOptions): Promise<ShiftInvertResult> {
  if (a.rows !== a.cols) throw new DimensionMismatchError('lanczosShiftInvert: square matrix, cols', a.rows, a.cols);
  const n = a.rows;
  const sigma = opts.sigma ?? 0;
  if (!Number.isFinite(sigma)) throw new InvalidParameterError('lanczosShiftInvert sigma', 'a finite number', sigma);
  const tol = opts.tol ?? 1e-8;
  // checked here, before the inner tolerance is made from them (session 13: tol −1 was refused as "innerRtol −0.01", k 0 was a TypeError)
  if (!(Number.isFinite(tol) && tol > 0 && tol < 1)) throw new InvalidParameterError('lanczosShiftInvert tol', 'a finite number in (0, 1)', tol);
  if (!(Number.isInteger(opts.k) && opts.k >= 1 && opts.k <= n)) throw new InvalidParameterError('lanczosShiftInvert k', `an integer in 1..${n}`, opts.k);
  assertShiftResolves(a, sigma, tol);
  const innerRtol = opts.innerRtol ?? Math.min(1e-10, tol / 100);
  const innerMax = opts.innerMaxIterations ?? Math.max(1000, 10 * n);
  if (!(Number.isFinite(innerRtol) && innerRtol > 0)) throw new InvalidParameterError('lanczosShiftInvert innerRtol', 'a finite number > 0', innerRtol);
  if (!(Number.isInteger(innerMax) && innerMax >= 1)) throw new InvalidParameterError('lanczosShiftInvert innerMaxIterations', 'an integer ≥ 1', innerMax);
  const pre = opts.preconditioner === undefined || opts.preconditioner === 'jacobi' ? shiftedJacobi(a, sigma) : opts.preconditioner;
  assertUsableOperator('lanczosShiftInvert preconditioner', pre);
  const inner: InnerSolveStats = { solves: 0, iterations: 0, maxIterations: 0, unconverged: 0, worstRelativeResidual: 0 };
  // products too inaccurate for tol (σ next to an eigenvalue) end the Lanczos run: ./shift-invert-near
  const guard: ShiftGuard = { locked: [], active: true, tol, noise: 0 };
  const b = inverseOperator(a, sigma, pre, innerRtol, innerMax, inner, guard);
  const { sigma: _s, innerRtol: _r, innerMaxIterations: _m, preconditioner: _p, ...lanczosOpts } = opts;
  const t0 = performance.now();
  const user = opts.onIteration;
  // the callback sees λ = σ + 1/μ; residuals and threshold stay those of (A − σI)⁻¹
  const onIteration = user && ((info: EigenIterationInfo) => user({ ...info, values: info.values.map((mu) => sigma + 1 / mu) }));
  const run = (k: number) => lanczos(new HostVectorSpace(), b, { ...lanczosOpts, k, tol, which: 'largest', ...(onIteration ? { onIteration } : {}) });
  const { r, near } = await nearSingularRuns(a, sigma, b, guard, tol, opts.k, opts.seed ?? 1, run);
  // back to A: λ = σ + 1/μ (ascending, since μ comes descending), residuals with A itself
  const merged = near ? mergeNear(r, near, sigma, guard.noise, tol) : { values: r!.values.map((mu) => sigma + 1 / mu), vectors: r!.vectors, converged: r!.converged, reason: r!.reason, detail: r!.detail };
  const { values } = merged;
  const op = HostOperator.fromCsr(a);
  const tmp = new Float64Array(n);
  const residualNorms = merged.vectors.map((v, i) => {
    op.apply(v, tmp); // tmp = A·v
    let s = 0;
    for (let j = 0; j < n; j++) s += (tmp[j]! - values[i]! * v[j]!) ** 2;
    return Math.sqrt(s);
  });
  const detail = [merged.detail, inner.unconverged > 0 ? `${inner.unconverged} of ${inner.solves} inner solves stopped at ${innerMax} iterations (worst relative residual ${inner.worstRelativeResidual.toExponential(2)})` : undefined].filter(Boolean).join('; ');
  const stats = r ? { ...r.stats } : newStats();
  const out: ShiftInvertResult = {
    ...(r ?? { iterations: 0 }),
    ...merged,
    residualNorms,
    iterations: (r?.iterations ?? 0) + (near?.solves ?? 0),
    history: (r?.history ?? []).map((h) => ({ ...h, values: h.values.map((mu) => sigma + 1 / mu) })),
    stats: { ...stats, matvecs: (near ? inner.solves : stats.matvecs) + inner.iterations, ms: performance.now() - t0 },
    method: `shift-invert lanczos(σ=${sigma}, inner pcg(${pre.label ?? 'user'}) rtol=${innerRtol})`,
    inner,
    sigma,
  };
  const r0 = r ?? { tolerance: undefined };
  // far from the spectrum the rule on (A − σI)⁻¹ gives λ = σ + 1/μ only to ≈ tol·|λ − σ|
  const normA = csrNormInf(a);
  if (Math.abs(sigma) > normA) (out.stats.warnings ??= []).push(`σ = ${sigma} lies ${(Math.abs(sigma) / normA).toExponential(2)}·‖A‖∞ from 0: each λ = σ + 1/μ is accurate to ≈ tol·|λ − σ| (${(tol * Math.abs((values[0] ?? 0) - sigma)).toExponential(1)} for the first), not tol·|λ|; a σ nearer the wanted λ is more accurate`);
  if (r0.tolerance) out.tolerance = { ...r0.tolerance, rule: `shift-invert: ‖(A − σI)⁻¹v − μv‖ ≤ max(tol·‖(A − σI)⁻¹‖est, atol), λ = σ + 1/μ` };
  if (detail) out.detail = detail;
  else delete out.detail;
  return out;
}

/**
 * The Lanczos run, and — when a guarded inner solve found the products too inaccurate for tol —
 * the near-singular phase: lock the pair next to σ by inverse iteration, run Lanczos again on the
 * deflated B for the others; repeated while the deflated B is still near-singular.
 */
async function nearSingularRuns(a: CsrMatrix, sigma: number, b: LinearOperator<Float64Array>, guard: ShiftGuard, tol: number, k: number, seed: number, run: (k: number) => Promise<EigenResult<Float64Array>>): Promise<{ r?: EigenResult<Float64Array>; near?: NearPhase }> {
  let near: NearPhase | undefined;
  for (;;) {
    const left = k - (near?.locked.length ?? 0);
    try {
      return left > 0 ? { r: await run(left), ...(near ? { near } : {}) } : { near: near! };
    } catch (e) {
      if (!(e instanceof NearSingularShift)) throw e;
    }
    near ??= { locked: [], solves: 0 };
    guard.active = false;
    const one = lockNearest(a, sigma, b, guard, tol, seed + 7919 * (near.locked.length + 1));
    guard.active = true;
    near.solves += one.solves;
    if (!one.pair) return { near: { ...near, failure: one.failure! } };
    near.locked.push(one.pair);
    guard.locked.push(one.pair.vector);
  }
}
