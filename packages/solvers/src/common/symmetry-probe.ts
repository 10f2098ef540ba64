/**
 * Why a solver for symmetric matrices did not converge, when the reason is its input: Lanczos,
 * Davidson, LOBPCG and CG need A symmetric, and on a non-symmetric A they ended 'breakdown' or
 * 'max-iterations' with a detail that did not say so (s14-harden-e: LOBPCG ran 1 000 iterations
 * to λ = −8.4e13 on a 6 × 6 upper-bidiagonal A with eigenvalues 1…6; Lanczos "basis spans the
 * whole space but residuals 3.44e+0 …"; CG "x is the best checked iterate"). Probed only at such
 * an exit, so a converged run pays nothing.
 * @module
 */
import { type LinearOperator, mulberry32, type VectorSpace } from '@gpusparse/formats';
import type { SolverStats } from './result';
import { returnedVoid } from './operator-check';

/** Unit roundoff of each precision. */
const U = { f32: 2 ** -24, f64: 2 ** -53 } as const;

/**
 * The relative asymmetry |⟨x, A·y⟩ − ⟨A·x, y⟩| / max(‖A·x‖‖y‖, ‖x‖‖A·y‖) above which A is named
 * non-symmetric: 32·√n·u, well above what rounding gives a symmetric A (≈ √n·u for the two dots of
 * random vectors, summed in any order) and below what an antisymmetric part of A's size gives
 * (≈ 1/√n: 40 × 40 upper bidiagonal 6e-3; a fixed 1e-3 would miss such a matrix past n ≈ 10^5).
 */
const limit = (n: number, precision: 'f32' | 'f64') => 32 * Math.sqrt(n) * U[precision];

/**
 * A sentence naming A as non-symmetric when ⟨x, A·y⟩ and ⟨A·x, y⟩ differ, for two fixed
 * pseudo-random x, y, by more than rounding could make them (32·√n·u relative); undefined otherwise (a symmetric A, n < 2, a non-square operator). Cost: 2 products,
 * 6 reductions, 1 readback.
 * `instead` says what to use for a non-symmetric A.
 * @example const hint = await asymmetryHint(op, space, run.stats, 'an eigensolver for general matrices'); // on a non-converged exit
 */
export async function asymmetryHint<V, S>(op: LinearOperator<V>, space: VectorSpace<V, S>, stats: SolverStats, instead: string): Promise<string | undefined> {
  const n = op.rows;
  if (n < 2 || op.cols !== n) return undefined;
  const [x, y] = [0x5eed1, 0x5eed2].map((seed) => {
    const r = mulberry32(seed);
    return space.fromArray(Float64Array.from({ length: n }, () => r() * 2 - 1));
  });
  const [ax, ay] = [space.create(n), space.create(n)];
  let got: number[];
  try {
    returnedVoid(op.apply(x!, ax), 'symmetry probe', 'apply', ax);
    returnedVoid(op.apply(y!, ay), 'symmetry probe', 'apply', ay);
    stats.matvecs += 2;
    const scalars = [space.dot(x!, ay), space.dot(ax, y!), space.norm2(ax), space.norm2(ay), space.norm2(x!), space.norm2(y!)];
    got = await space.readMany(scalars);
    stats.readbacks++;
    for (const s of scalars) space.release(s);
  } catch {
    return undefined; // a hint only: a product that fails here (a shift-invert inner solve) leaves the result as it was
  } finally {
    for (const v of [x!, y!, ax, ay]) space.release(v);
  }
  const [xAy, Axy, nAx, nAy, nx, ny] = got;
  const scale = Math.max(nAx! * ny!, nx! * nAy!);
  const rel = Math.abs(xAy! - Axy!) / scale;
  if (!(rel > limit(n, space.precision))) return undefined; // NaN (a non-finite product) names nothing
  return `A does not look symmetric: ⟨x, A·y⟩ − ⟨A·x, y⟩ = ${rel.toExponential(2)} relative to ‖A·x‖·‖y‖ for pseudo-random x, y (this solver needs a symmetric A; for a non-symmetric one use ${instead})`;
}
