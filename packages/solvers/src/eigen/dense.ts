/**
 * The small dense symmetric eigenproblems of the projected (Rayleigh–Ritz) steps, solved on the
 * host in float64 with ml-matrix (Householder tridiagonalisation + QL, JAMA's tred2/tql2).
 * @module
 */
import { EigenvalueDecomposition, Matrix } from 'ml-matrix';

/** Eigenpairs of a small symmetric matrix, eigenvalues ascending. */
export interface DenseEigen {
  /** Eigenvalues, ascending. */
  values: number[];
  /** vectors[i] is the unit eigenvector of values[i] (length m). */
  vectors: number[][];
}

/**
 * Eigen-decomposition of the symmetric m×m matrix `h` (row arrays; only the symmetric part
 * (h + hᵀ)/2 is used). Returns undefined when h holds a non-finite entry, so that callers
 * turn it into reason 'non-finite' instead of an exception.
 * Cost: O(m³) host flops.
 * @example
 * symmetricEigen([[2, 1], [1, 2]]); // { values: [1, 3], vectors: [[-0.707, 0.707], [0.707, 0.707]] } (signs free)
 */
export function symmetricEigen(h: readonly (readonly number[])[]): DenseEigen | undefined {
  const m = h.length;
  if (m === 0) return { values: [], vectors: [] };
  const a = Matrix.zeros(m, m);
  for (let i = 0; i < m; i++) {
    for (let j = 0; j < m; j++) {
      const x = 0.5 * (h[i]![j]! + h[j]![i]!);
      if (!Number.isFinite(x)) return undefined;
      a.set(i, j, x);
    }
  }
  const evd = new EigenvalueDecomposition(a, { assumeSymmetric: true });
  const lam = evd.realEigenvalues;
  const vec = evd.eigenvectorMatrix;
  const order = lam.map((_, i) => i).sort((p, q) => lam[p]! - lam[q]!);
  const values = order.map((i) => lam[i]!);
  const vectors = order.map((i) => vec.getColumn(i));
  if (!values.every(Number.isFinite)) return undefined;
  return { values, vectors };
}

/**
 * An m×m zero matrix as row arrays.
 * @example
 * zeros(2); // [[0, 0], [0, 0]]
 */
export function zeros(m: number): number[][] {
  return Array.from({ length: m }, () => new Array<number>(m).fill(0));
}
