/**
 * Test oracle: cyclic Jacobi eigenvalues of a small dense symmetric matrix (float64),
 * independent of the package's solvers. O(sweeps · n³); use for n ≲ 300.
 */
import { type CsrMatrix, csrToDense } from '@gpusparse/formats';

/** All eigenvalues, ascending (and eigenvectors as columns of v when wanted). */
export function jacobiEigen(a0: number[][], wantVectors = false): { values: number[]; vectors?: number[][] } {
  const n = a0.length;
  const a = a0.map((r) => r.slice());
  const v: number[][] | undefined = wantVectors ? a0.map((_, i) => a0.map((_, j) => (i === j ? 1 : 0))) : undefined;
  for (let sweep = 0; sweep < 100; sweep++) {
    let off = 0;
    for (let p = 0; p < n; p++) for (let q = p + 1; q < n; q++) off += a[p]![q]! ** 2;
    if (off < 1e-30) break;
    for (let p = 0; p < n; p++) {
      for (let q = p + 1; q < n; q++) {
        const apq = a[p]![q]!;
        if (Math.abs(apq) < 1e-300) continue;
        const theta = (a[q]![q]! - a[p]![p]!) / (2 * apq);
        const t = Math.sign(theta || 1) / (Math.abs(theta) + Math.sqrt(theta * theta + 1));
        const c = 1 / Math.sqrt(t * t + 1);
        const s = t * c;
        for (let k = 0; k < n; k++) {
          const akp = a[k]![p]!;
          const akq = a[k]![q]!;
          a[k]![p] = c * akp - s * akq;
          a[k]![q] = s * akp + c * akq;
        }
        for (let k = 0; k < n; k++) {
          const apk = a[p]![k]!;
          const aqk = a[q]![k]!;
          a[p]![k] = c * apk - s * aqk;
          a[q]![k] = s * apk + c * aqk;
        }
        if (v) {
          for (let k = 0; k < n; k++) {
            const vkp = v[k]![p]!;
            const vkq = v[k]![q]!;
            v[k]![p] = c * vkp - s * vkq;
            v[k]![q] = s * vkp + c * vkq;
          }
        }
      }
    }
  }
  const order = a.map((_, i) => i).sort((i, j) => a[i]![i]! - a[j]![j]!);
  const values = order.map((i) => a[i]![i]!);
  if (!v) return { values };
  return { values, vectors: v.map((row) => order.map((i) => row[i]!)) };
}

/** Eigenvalues of a CSR matrix through its dense form. */
export function csrEigenvalues(m: CsrMatrix): number[] {
  return jacobiEigen(csrToDense(m)).values;
}
