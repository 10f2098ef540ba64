/**
 * The small dense symmetric eigenproblems of the projected (Rayleigh–Ritz) steps, solved on the
 * host in float64 with ml-matrix (Householder tridiagonalisation + QL, JAMA's tred2/tql2).
 * @module
 */
import { InvalidParameterError } from '@gpusparse/formats';
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

/** Every eigenpair of a dense symmetric matrix: values ascending, vectors[k] the unit vector of values[k]. */
export interface DenseEigenpairs {
  values: Float64Array;
  vectors: Float64Array[];
}

/**
 * All eigenpairs of the symmetric n×n matrix `a` (row-major, length n²; only the lower triangle
 * is read) by ml-matrix's EigenvalueDecomposition (Householder tridiagonalisation + implicit QL).
 * A non-finite entry is refused (InvalidParameterError naming the entry) before the QL sweeps,
 * which would not terminate on it. Cost O(n³) flops (≈ 9n³ with vectors), 3 · 8n² bytes.
 * @example
 * denseSymmetricEigen(Float64Array.from([2, 1, 1, 2]), 2).values; // Float64Array [1, 3]
 */
export function denseSymmetricEigen(a: Float64Array, n: number): DenseEigenpairs {
  if (!Number.isInteger(n) || n < 0 || a.length !== n * n) throw new InvalidParameterError('a', `a row-major ${n}×${n} array (${n * n} values)`, a.length);
  if (n === 0) return { values: new Float64Array(0), vectors: [] };
  const m = new Matrix(n, n);
  for (let i = 0; i < n; i++) {
    for (let j = 0; j <= i; j++) {
      const x = a[i * n + j]!;
      if (!Number.isFinite(x)) throw new InvalidParameterError(`a[${i}][${j}]`, 'a finite number', x);
      m.set(i, j, x);
      m.set(j, i, x);
    }
  }
  const evd = new EigenvalueDecomposition(m, { assumeSymmetric: true });
  const lam = evd.realEigenvalues;
  const vec = evd.eigenvectorMatrix;
  const order = lam.map((_, i) => i).sort((p, q) => lam[p]! - lam[q]!);
  return { values: Float64Array.from(order, (k) => lam[k]!), vectors: order.map((k) => Float64Array.from(vec.getColumn(k))) };
}
