/**
 * What to tell a user whose solve failed for a reason the input shows (used by `gpusparse solve`
 * and the one-call `solve`).
 * @module
 */
import { type CsrMatrix, firstAsymmetry } from '@gpusparse/formats';

/**
 * For a CG run that did not converge: the first pair A(i, j) ≠ A(j, i) (1-based) and the methods
 * that fit, or undefined when A is symmetric. O(nnz); call it only after a failure.
 * @example cgAsymmetryHint(a) // "cg needs a symmetric positive definite A, and A(row 1, column 3) = 1 but …"
 */
export function cgAsymmetryHint(a: CsrMatrix): string | undefined {
  const bad = firstAsymmetry(a);
  return bad ? `cg needs a symmetric positive definite A, and A(row ${bad.row + 1}, column ${bad.col + 1}) = ${bad.aij} but A(row ${bad.col + 1}, column ${bad.row + 1}) = ${bad.aji}: use gmres or bicgstab` : undefined;
}
