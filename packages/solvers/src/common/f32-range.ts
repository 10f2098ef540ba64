/**
 * What a float32 space can resolve. Norms there are square roots of float32 sums of squares: an
 * entry below 2^-63 squares to less than float32's smallest normal number (2^-126) and is lost
 * (flushed to 0 on most GPUs), so a vector whose entries are all that small reads ‖v‖ = 0 — at
 * n entries, any ‖v‖ below √n·2^-63 may. A Krylov solve on A·1e-30 with b = A·1 read ‖b‖ = 0
 * and returned x = 0 as 'converged' ("b = 0, so x = 0"); an eigensolver on A·1e-30 read every
 * residual as 0 and called wrong Ritz pairs converged. The checks here refuse those runs (or
 * take the 'converged' back) with the scale that went wrong and the exact remedy: multiplying
 * A and b by a power of two changes no digit of the answer.
 * @module
 */
import { InvalidParameterError, type VectorSpace } from '@gpusparse/formats';
import type { SolveContext } from './context';

/** The norm below which a float32 norm of n entries may read 0 (√n·2^-62: twice the point where every entry's square underflows). */
export function float32NormFloor(n: number): number {
  return Math.sqrt(Math.max(n, 1)) * 2 ** -62;
}

/** ‖v‖ of a vector whose float32 norm read 0 or +∞, from a copy scaled by 2^∓100 (exact, one pass, one readback). */
async function rescaledNorm<V, S>(space: VectorSpace<V, S>, v: V, n: number, up: boolean, read: (s: S) => Promise<number>): Promise<number> {
  const s = up ? 2 ** 100 : 2 ** -100;
  const t = space.create(n);
  try {
    space.axpby(s, v, 0, t);
    return (await read(space.norm2(t))) / s;
  } finally {
    space.release(t);
  }
}

/**
 * Krylov solvers, once ‖b‖ is read: on a float32 space, throw InvalidParameterError when ‖b‖
 * read 0 for a b that is not 0 (x = 0 would be returned 'converged'), or +∞ for a finite b.
 * A stopping level below the floor is handled at the exit ({@link float32ToleranceUnresolved}).
 * Cost: nothing on a float64 space or in range; one pass and one readback when ‖b‖ read 0 or +∞.
 * @example
 * await assertFloat32Resolves(ctx, bNorm); // before the b = 0 early exit
 */
export async function assertFloat32Resolves<V, S>(ctx: SolveContext<V, S>, bNorm: number): Promise<void> {
  const { space, n, method } = ctx;
  if (space.precision !== 'f32') return;
  const fix = 'multiply A and b by one power of two (exact: x is unchanged) so that the entries of b are near 1, or use refinedSolve (it scales b itself) or a float64 space';
  if (bNorm === 0 || bNorm === Number.POSITIVE_INFINITY) {
    const norm = await rescaledNorm(space, ctx.b, n, bNorm === 0, (s) => ctx.take(s));
    if (bNorm === 0 && norm > 0) {
      throw new InvalidParameterError(`${method} b`, `a right-hand side that float32 can measure (‖b‖ ≥ √n·2^-62 = ${float32NormFloor(n).toExponential(2)} on this float32 space)`, `‖b‖ = ${norm.toExponential(3)}, which reads 0 in float32 (the squares of its entries underflow) and would return x = 0 as converged; ${fix}`);
    }
    if (bNorm === Number.POSITIVE_INFINITY && Number.isFinite(norm)) {
      throw new InvalidParameterError(`${method} b`, 'a right-hand side whose squared norm fits float32 (‖b‖ < 1.8e19)', `‖b‖ = ${norm.toExponential(3)}, whose square overflows float32; ${fix}`);
    }
  }
}

/**
 * Krylov exits on a float32 space: a 'converged' whose stopping level max(rtol·‖b‖, atol) is
 * below {@link float32NormFloor} is not evidence (a residual at that level reads 0, so any x
 * passes). Returns the detail that replaces it (reason 'breakdown'), else undefined. The level
 * itself is not refused up front: benchmarks run fixed iteration counts with rtol 1e-30. O(1).
 */
export function float32ToleranceUnresolved(precision: 'f32' | 'f64', n: number, tol: number, bNorm: number, method: string): string | undefined {
  if (precision !== 'f32' || !(tol > 0) || !(bNorm > 0) || !(tol < float32NormFloor(n))) return undefined;
  return `${method}: the stopping level max(rtol·‖b‖, atol) = ${tol.toExponential(2)} (‖b‖ = ${bNorm.toExponential(2)}) is below what a float32 norm of ${n} entries resolves (√n·2^-62 = ${float32NormFloor(n).toExponential(2)}: smaller residuals read 0), so 'converged' is not evidence; multiply A and b by one power of two (exact: x is unchanged) so that the entries of b are near 1, or use refinedSolve (it scales b itself) or a float64 space`;
}

/**
 * Eigensolvers' exit on a float32 space: when the residual threshold is below
 * {@link float32NormFloor}, a residual read as ≤ threshold may be one that underflowed, so a
 * 'converged' is not evidence. Returns the detail that replaces it (reason 'breakdown'), or
 * undefined when the threshold is measurable. O(1).
 */
export function float32ThresholdUnresolved(precision: 'f32' | 'f64', n: number, threshold: number | undefined, method: string): string | undefined {
  if (precision !== 'f32' || threshold === undefined || !(threshold < float32NormFloor(n))) return undefined;
  return `${method}: the residual threshold ${threshold.toExponential(2)} (tol·‖A‖est) is below what a float32 norm of ${n} entries resolves (√n·2^-62 = ${float32NormFloor(n).toExponential(2)}: smaller residuals read 0), so the pairs are unverified; multiply A by a power of two (exact: eigenvalues scale by it, vectors unchanged) so that its entries are near 1, or use eigsMixed / a float64 space`;
}
