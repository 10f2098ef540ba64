/**
 * All eigenpairs of a small dense symmetric matrix in float64: Householder reduction to
 * tridiagonal form and the implicit QL algorithm (EISPACK tred2/tql2, as in JAMA). Used by
 * the CI driver's `solver: 'dense'` (full spectra of small spaces, e.g. the 133 A1 states of
 * H2O/STO-2G) and as a fallback when no iterative eigensolver is available.
 * @module
 */
import { InvalidParameterError } from '@gpusparse/formats';

/** Eigenvalues ascending; vectors[k] is the unit eigenvector of values[k]. */
export interface DenseEigenpairs {
  values: Float64Array;
  vectors: Float64Array[];
}

/**
 * Eigen-decomposition of the symmetric n×n matrix `a` (row-major, length n²; only the lower
 * triangle is read). Cost O(n³) flops (≈ 9n³ with vectors), 8n² bytes.
 * @example
 * symmetricEigenDense(Float64Array.from([2, 1, 1, 2]), 2).values; // [1, 3]
 */
export function symmetricEigenDense(a: Float64Array, n: number): DenseEigenpairs {
  if (a.length !== n * n) throw new InvalidParameterError('a', `a row-major ${n}×${n} array (${n * n} values)`, a.length);
  // V holds the matrix, then the eigenvectors as columns (row-major V[i*n+j]).
  const V = Float64Array.from(a);
  const d = new Float64Array(n);
  const e = new Float64Array(n);
  if (n === 0) return { values: d, vectors: [] };
  // tred2: Householder tridiagonalisation
  for (let j = 0; j < n; j++) d[j] = V[(n - 1) * n + j]!;
  for (let i = n - 1; i > 0; i--) {
    let scale = 0;
    let h = 0;
    for (let k = 0; k < i; k++) scale += Math.abs(d[k]!);
    if (scale === 0) {
      e[i] = d[i - 1]!;
      for (let j = 0; j < i; j++) {
        d[j] = V[(i - 1) * n + j]!;
        V[i * n + j] = 0;
        V[j * n + i] = 0;
      }
    } else {
      for (let k = 0; k < i; k++) {
        d[k]! /= scale;
        h += d[k]! * d[k]!;
      }
      let f = d[i - 1]!;
      let g = Math.sqrt(h);
      if (f > 0) g = -g;
      e[i] = scale * g;
      h -= f * g;
      d[i - 1] = f - g;
      for (let j = 0; j < i; j++) e[j] = 0;
      for (let j = 0; j < i; j++) {
        f = d[j]!;
        V[j * n + i] = f;
        g = e[j]! + V[j * n + j]! * f;
        for (let k = j + 1; k <= i - 1; k++) {
          g += V[k * n + j]! * d[k]!;
          e[k]! += V[k * n + j]! * f;
        }
        e[j] = g;
      }
      f = 0;
      for (let j = 0; j < i; j++) {
        e[j]! /= h;
        f += e[j]! * d[j]!;
      }
      const hh = f / (h + h);
      for (let j = 0; j < i; j++) e[j]! -= hh * d[j]!;
      for (let j = 0; j < i; j++) {
        f = d[j]!;
        g = e[j]!;
        for (let k = j; k <= i - 1; k++) V[k * n + j]! -= f * e[k]! + g * d[k]!;
        d[j] = V[(i - 1) * n + j]!;
        V[i * n + j] = 0;
      }
    }
    d[i] = h;
  }
  for (let i = 0; i < n - 1; i++) {
    V[(n - 1) * n + i] = V[i * n + i]!;
    V[i * n + i] = 1;
    const h = d[i + 1]!;
    if (h !== 0) {
      for (let k = 0; k <= i; k++) d[k] = V[k * n + i + 1]! / h;
      for (let j = 0; j <= i; j++) {
        let g = 0;
        for (let k = 0; k <= i; k++) g += V[k * n + i + 1]! * V[k * n + j]!;
        for (let k = 0; k <= i; k++) V[k * n + j]! -= g * d[k]!;
      }
    }
    for (let k = 0; k <= i; k++) V[k * n + i + 1] = 0;
  }
  for (let j = 0; j < n; j++) {
    d[j] = V[(n - 1) * n + j]!;
    V[(n - 1) * n + j] = 0;
  }
  V[(n - 1) * n + n - 1] = 1;
  e[0] = 0;
  // W = Vᵀ: the QL rotations then update two contiguous rows instead of two strided columns
  const W = new Float64Array(n * n);
  for (let i = 0; i < n; i++) for (let k = 0; k < n; k++) W[i * n + k] = V[k * n + i]!;
  // tql2: implicit QL on the tridiagonal (d, e)
  for (let i = 1; i < n; i++) e[i - 1] = e[i]!;
  e[n - 1] = 0;
  let f = 0;
  let tst1 = 0;
  const eps = 2 ** -52;
  for (let l = 0; l < n; l++) {
    tst1 = Math.max(tst1, Math.abs(d[l]!) + Math.abs(e[l]!));
    let m = l;
    while (m < n) {
      if (Math.abs(e[m]!) <= eps * tst1) break;
      m++;
    }
    if (m > l) {
      let iter = 0;
      do {
        iter++;
        if (iter > 60) throw new InvalidParameterError('a', 'a symmetric matrix on which QL converges within 60 sweeps', 'no convergence');
        let g = d[l]!;
        let p = (d[l + 1]! - g) / (2 * e[l]!);
        let r = Math.hypot(p, 1);
        if (p < 0) r = -r;
        d[l] = e[l]! / (p + r);
        d[l + 1] = e[l]! * (p + r);
        const dl1 = d[l + 1]!;
        let h = g - d[l]!;
        for (let i = l + 2; i < n; i++) d[i]! -= h;
        f += h;
        p = d[m]!;
        let c = 1;
        let c2 = c;
        let c3 = c;
        const el1 = e[l + 1]!;
        let s = 0;
        let s2 = 0;
        for (let i = m - 1; i >= l; i--) {
          c3 = c2;
          c2 = c;
          s2 = s;
          g = c * e[i]!;
          h = c * p;
          r = Math.hypot(p, e[i]!);
          e[i + 1] = s * r;
          s = e[i]! / r;
          c = p / r;
          p = c * d[i]! - s * g;
          d[i + 1] = h + s * (c * g + s * d[i]!);
          const r0 = i * n;
          const r1 = (i + 1) * n;
          for (let k = 0; k < n; k++) {
            h = W[r1 + k]!;
            const wi = W[r0 + k]!;
            W[r1 + k] = s * wi + c * h;
            W[r0 + k] = c * wi - s * h;
          }
        }
        p = (-s * s2 * c3 * el1 * e[l]!) / dl1;
        e[l] = s * p;
        d[l] = c * p;
      } while (Math.abs(e[l]!) > eps * tst1);
    }
    d[l] = d[l]! + f;
    e[l] = 0;
  }
  const order = Array.from(d.keys()).sort((x, y) => d[x]! - d[y]!);
  const values = Float64Array.from(order, (k) => d[k]!);
  const vectors = order.map((k) => W.slice(k * n, k * n + n));
  return { values, vectors };
}
