/**
 * The small dense symmetric eigenproblems of the projected (Rayleigh–Ritz) steps, solved on the
 * host in float64: Householder tridiagonalisation + implicit-shift QR on flat arrays
 * (./dense-qr; cyclic Jacobi as its fallback and test reference). denseSymmetricEigen (the CI
 * driver's full diagonalisations) keeps Jacobi up to JACOBI_MAX_ORDER and ml-matrix above it.
 * @module
 */
import { InvalidParameterError } from '@gpusparse/formats';
import { tridiagonalQrEigen } from './dense-qr';
import { mlMatrix } from './ml-matrix-lazy';

/** Largest order solved by cyclic Jacobi (≈ 6–10 sweeps of 4m³ flops: cheap up to here). */
export const JACOBI_MAX_ORDER = 32;

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
  const a = new Float64Array(m * m);
  for (let i = 0; i < m; i++) {
    for (let j = 0; j < m; j++) {
      const x = 0.5 * (h[i]![j]! + h[j]![i]!);
      if (!Number.isFinite(x)) return undefined;
      a[i * m + j] = x;
    }
  }
  // Householder + implicit QR: 3–5× fewer flops than Jacobi at the orders of a Lanczos restart
  return tridiagonalQrEigen(a, m) ?? jacobiEigen(h);
}

/**
 * {@link symmetricEigen} by cyclic Jacobi (the reference it is tested against; the fallback
 * should the QR sweeps not converge). Undefined on a non-finite entry.
 */
export function jacobiSymmetricEigen(h: readonly (readonly number[])[]): DenseEigen | undefined {
  return h.length === 0 ? { values: [], vectors: [] } : jacobiEigen(h);
}

/**
 * Cyclic Jacobi on the symmetric part of `h` (m ≥ 1): rotations zero each off-diagonal entry in
 * turn until the off-diagonal mass is below roundoff of the whole matrix. Accurate to a few ulps
 * of ‖h‖ in every eigenvalue; undefined on a non-finite entry.
 */
function jacobiEigen(h: readonly (readonly number[])[]): DenseEigen | undefined {
  const m = h.length;
  const a = new Float64Array(m * m);
  const v = new Float64Array(m * m);
  let frob = 0;
  for (let i = 0; i < m; i++) {
    v[i * m + i] = 1;
    for (let j = 0; j < m; j++) {
      const x = 0.5 * (h[i]![j]! + h[j]![i]!);
      if (!Number.isFinite(x)) return undefined;
      a[i * m + j] = x;
      frob += x * x;
    }
  }
  const tiny = (Number.EPSILON * Number.EPSILON * frob) / (m * m);
  for (let sweep = 0; sweep < 60; sweep++) {
    let off = 0;
    for (let p = 0; p < m; p++) for (let q = p + 1; q < m; q++) off += a[p * m + q]! ** 2;
    if (off <= tiny) break;
    for (let p = 0; p < m - 1; p++) for (let q = p + 1; q < m; q++) rotate(a, v, m, p, q);
  }
  const order = Array.from({ length: m }, (_, i) => i).sort((p, q) => a[p * m + p]! - a[q * m + q]!);
  const values = order.map((i) => a[i * m + i]!);
  const vectors = order.map((i) => Array.from({ length: m }, (_, k) => v[k * m + i]!));
  return values.every(Number.isFinite) ? { values, vectors } : undefined;
}

/** One Jacobi rotation A ← JᵀAJ, V ← VJ in the (p, q) plane chosen so that A[p][q] becomes 0. */
function rotate(a: Float64Array, v: Float64Array, m: number, p: number, q: number): void {
  const apq = a[p * m + q]!;
  if (apq === 0) return;
  const theta = (a[q * m + q]! - a[p * m + p]!) / (2 * apq);
  // the smaller root of t² + 2θt − 1 = 0 (|rotation angle| ≤ π/4 keeps the sweep convergent)
  const t = Number.isFinite(theta * theta) ? Math.sign(theta || 1) / (Math.abs(theta) + Math.sqrt(theta * theta + 1)) : 0.5 / theta;
  const c = 1 / Math.sqrt(t * t + 1);
  const s = t * c;
  for (let k = 0; k < m; k++) {
    const kp = a[k * m + p]!, kq = a[k * m + q]!;
    a[k * m + p] = c * kp - s * kq;
    a[k * m + q] = s * kp + c * kq;
    const vp = v[k * m + p]!, vq = v[k * m + q]!;
    v[k * m + p] = c * vp - s * vq;
    v[k * m + q] = s * vp + c * vq;
  }
  for (let k = 0; k < m; k++) {
    const pk = a[p * m + k]!, qk = a[q * m + k]!;
    a[p * m + k] = c * pk - s * qk;
    a[q * m + k] = s * pk + c * qk;
  }
  a[p * m + q] = 0;
  a[q * m + p] = 0;
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
 * is read): cyclic Jacobi up to order JACOBI_MAX_ORDER, above it ml-matrix's
 * EigenvalueDecomposition (Householder tridiagonalisation + implicit QL).
 * A non-finite entry is refused (InvalidParameterError naming the entry) before the QL sweeps,
 * which would not terminate on it. Cost O(n³) flops (≈ 9n³ with vectors), 3 · 8n² bytes.
 * @example
 * denseSymmetricEigen(Float64Array.from([2, 1, 1, 2]), 2).values; // Float64Array [1, 3]
 */
export function denseSymmetricEigen(a: Float64Array, n: number): DenseEigenpairs {
  if (!Number.isInteger(n) || n < 0 || a.length !== n * n) throw new InvalidParameterError('a', `a row-major ${n}×${n} array (${n * n} values)`, a.length);
  if (n === 0) return { values: new Float64Array(0), vectors: [] };
  for (let i = 0; i < n; i++) {
    for (let j = 0; j <= i; j++) if (!Number.isFinite(a[i * n + j]!)) throw new InvalidParameterError(`a[${i}][${j}]`, 'a finite number', a[i * n + j]!);
  }
  if (n <= JACOBI_MAX_ORDER) {
    const rows = Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => (j <= i ? a[i * n + j]! : a[j * n + i]!)));
    const eig = jacobiEigen(rows)!;
    return { values: Float64Array.from(eig.values), vectors: eig.vectors.map((x) => Float64Array.from(x)) };
  }
  const { EigenvalueDecomposition, Matrix } = mlMatrix();
  const m = new Matrix(n, n);
  for (let i = 0; i < n; i++) {
    for (let j = 0; j <= i; j++) {
      m.set(i, j, a[i * n + j]!);
      m.set(j, i, a[i * n + j]!);
    }
  }
  const evd = new EigenvalueDecomposition(m, { assumeSymmetric: true });
  const lam = evd.realEigenvalues;
  const vec = evd.eigenvectorMatrix;
  const order = lam.map((_, i) => i).sort((p, q) => lam[p]! - lam[q]!);
  return { values: Float64Array.from(order, (k) => lam[k]!), vectors: order.map((k) => Float64Array.from(vec.getColumn(k))) };
}
