/**
 * Shift-invert with σ within rounding distance of an eigenvalue, but not on it (session 13). B =
 * (A − σI)⁻¹ has μ₁ = 1/(λ₁ − σ) far above the rest, and each product B·x is accurate only to
 * ≈ u·‖A − σI‖·‖B‖ relative (the inner CG's residual b − (A − σI)·x cannot be formed below
 * u·‖A − σI‖·‖x‖, and B amplifies it). Once that floor passes the outer tolerance, Lanczos's rule
 * ‖B·v − μ·v‖ ≤ tol·‖B‖ is out of reach: session 12 saw poisson2d 8², σ = λ₁·(1 − 10⁻⁹), end
 * 'max-iterations' after 5 000 steps and 5 668 inner solves, the values right but unproven.
 *
 * The error of such a product lies almost wholly along the eigenvectors next to σ (B amplifies
 * them most), so their direction is exact: inverse iteration on B finds each in two or three
 * solves. Each is accepted by its residual with A — ‖A·v − λ·v‖ ≤ tol·max(|λ|, λ − σ), λ = vᵀA·v:
 * λ to tol relative (the B rule would ask ‖A·v − λ·v‖ ≤ tol·(λ − σ), out of float64's reach here); polished while a solve gains 10× — and deflated (every later inner solve runs on
 * P·B·P, P = I − Σ v·vᵀ), and Lanczos finds the other pairs on the deflated B, whose products
 * are accurate again. A cluster that inverse iteration cannot split in 50 solves ends
 * 'breakdown' naming the near-singular shift, with the pairs found so far.
 * @module
 */
import { type CsrMatrix, HostOperator, type LinearOperator, mulberry32 } from '@gpusparse/formats';
import type { EigenResult } from '../common/result';

/**
 * What the inner solves of one shift-invert call share with its near-singular phase
 * (./shift-invert-near): the locked vectors projected out, whether a product too inaccurate for
 * the outer tolerance stops the Lanczos run, the worst accuracy floor seen.
 */
export interface ShiftGuard {
  locked: Float64Array[];
  active: boolean;
  tol: number;
  noise: number;
}

/** Thrown by a guarded inner solve (kept inside ./shift-invert: the package index exports that file only): the run goes to the near-singular phase. */
export class NearSingularShift extends Error {
  constructor(readonly floor: number) {
    super(`shift-invert: inner products accurate only to ${floor.toExponential(2)} relative`);
    this.name = 'NearSingularShift';
  }
}

/** x − Σ (v·x)·v over orthonormal `vs` (a copy). */
export function deflate(x: Float64Array, vs: readonly Float64Array[]): Float64Array {
  const y = Float64Array.from(x);
  for (const v of vs) {
    let d = 0;
    for (let i = 0; i < y.length; i++) d += v[i]! * y[i]!;
    for (let i = 0; i < y.length; i++) y[i]! -= d * v[i]!; // y ← y − (v·y)·v
  }
  return y;
}

/** Inverse-iteration solves per near-singular pair before the phase gives up (a cluster at σ). */
const POWER_SOLVES = 50;

/** One pair found by inverse iteration: λ = vᵀA·v and ‖A·v − λ·v‖. */
export interface LockedPair {
  value: number;
  vector: Float64Array;
  residual: number;
}

/** What the phase found: the pairs locked, the inner solves it spent, and — when it gave up — why. */
export interface NearPhase {
  locked: LockedPair[];
  solves: number;
  failure?: string;
}

const norm = (x: Float64Array): number => Math.sqrt(x.reduce((s, v) => s + v * v, 0));

/**
 * Inverse iteration on P·B·P (the guard's locked vectors deflated) from a seeded random start, to
 * ‖A·v − λ·v‖ ≤ tol·‖A − σI‖∞; the pair, or a failure naming the residual reached.
 */
export function lockNearest(a: CsrMatrix, sigma: number, b: LinearOperator<Float64Array>, guard: ShiftGuard, tol: number, seed: number): { pair?: LockedPair; solves: number; failure?: string } {
  const n = a.rows;
  const op = HostOperator.fromCsr(a);
  const rand = mulberry32(seed);
  let v = deflate(Float64Array.from({ length: n }, () => rand() * 2 - 1), guard.locked);
  const w = new Float64Array(n);
  const av = new Float64Array(n);
  let residual = Number.POSITIVE_INFINITY;
  for (let it = 1; it <= POWER_SOLVES; it++) {
    b.apply(v, w); // w = P·(A − σI)⁻¹·P·v
    const nw = norm(w);
    if (!(nw > 0 && Number.isFinite(nw))) return { solves: it, failure: `inverse iteration met ‖(A − σI)⁻¹·v‖ = ${nw}` };
    v = w.map((x) => x / nw); // v ← w/‖w‖
    op.apply(v, av); // av = A·v
    let value = 0;
    for (let i = 0; i < n; i++) value += v[i]! * av[i]!; // λ = vᵀA·v
    let s = 0;
    for (let i = 0; i < n; i++) s += (av[i]! - value * v[i]!) ** 2;
    const before = residual;
    residual = Math.sqrt(s);
    // the B rule's bound for the dominant pair, ‖(A − σI)⁻¹·r‖ ≤ tol·μ, holds when ‖r‖ ≤ tol·(λ − σ); λ itself to tol relative is enough
    const limit = tol * Math.max(Math.abs(value), value - sigma);
    // accepted at the limit, and polished while a solve still gains 10× (each costs one inner CG; u·κ-accurate products keep the direction exact)
    if (residual <= limit && !(residual < before / 10 && it < POWER_SOLVES)) return { pair: { value, vector: v, residual }, solves: it };
  }
  return { solves: POWER_SOLVES, failure: `inverse iteration reached ‖A·v − λ·v‖ = ${residual.toExponential(2)} after ${POWER_SOLVES} solves, not tol·max(|λ|, λ − σ) (a cluster of eigenvalues at σ, or λ at 0)` };
}

/**
 * The final pairs of a near-singular run: the locked ones and Lanczos's (λ = σ + 1/μ), ascending,
 * with Lanczos's verdict (or 'converged' when every pair was locked, 'breakdown' when the phase
 * gave up) and a detail naming the shift's accuracy floor.
 */
export function mergeNear(r: EigenResult<Float64Array> | undefined, phase: NearPhase, sigma: number, noise: number, tol: number): Pick<EigenResult<Float64Array>, 'values' | 'vectors' | 'converged' | 'reason'> & { detail: string } {
  const pairs = [...phase.locked.map((p) => ({ value: p.value, vector: p.vector })), ...(r ? r.values.map((mu, i) => ({ value: sigma + 1 / mu, vector: r.vectors[i]! })) : [])].sort((x, y) => x.value - y.value);
  const found = phase.locked.map((p) => p.value.toPrecision(12)).join(', ');
  const why = `near-singular shift: products of (A − σI)⁻¹ accurate only to ${noise.toExponential(2)} relative (u·‖A − σI‖·‖(A − σI)⁻¹‖), above tol ${tol}; ${phase.locked.length} pair(s) next to σ (λ = ${found || 'none'}) found by inverse iteration in ${phase.solves} solves, accepted by ‖A·v − λ·v‖ ≤ tol·max(|λ|, λ − σ) and deflated`;
  const verdict = phase.failure ? { converged: false, reason: 'breakdown' as const } : r ? { converged: r.converged, reason: r.reason } : { converged: true, reason: 'converged' as const };
  const detail = [why, phase.failure, r?.detail].filter(Boolean).join('; ');
  return { values: pairs.map((p) => p.value), vectors: pairs.map((p) => p.vector), ...verdict, detail };
}
