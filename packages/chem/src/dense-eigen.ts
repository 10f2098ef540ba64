/**
 * All eigenpairs of a small dense symmetric matrix in float64, for the CI driver's
 * `solver: 'dense'` (full spectra of small spaces, e.g. the 133 A1 states of H2O/STO-2G). The
 * work is ml-matrix's EigenvalueDecomposition (tred2/tql2) through @gpusparse/solvers'
 * `denseSymmetricEigen`; this module keeps the chem package's name and row-major signature.
 * @module
 */
import { type DenseEigenpairs, denseSymmetricEigen } from '@gpusparse/solvers';

/** Eigenvalues ascending; vectors[k] is the unit eigenvector of values[k]. */
export type { DenseEigenpairs };

/**
 * Eigen-decomposition of the symmetric n×n matrix `a` (row-major, length n²; only the lower
 * triangle is read). Cost O(n³) flops (≈ 9n³ with vectors).
 * @throws InvalidParameterError when a is not n² long or holds a non-finite entry
 * @example
 * symmetricEigenDense(Float64Array.from([2, 1, 1, 2]), 2).values; // [1, 3]
 */
export function symmetricEigenDense(a: Float64Array, n: number): DenseEigenpairs {
  return denseSymmetricEigen(a, n);
}
