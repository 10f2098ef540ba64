/**
 * Test matrices for the eigensolvers with float64 reference spectra: dense random symmetric
 * (reference: ml-matrix's dense symmetric solver) and Laplacians (closed forms).
 * @module
 */
import type { CsrMatrix } from '@gpusparse/formats';
import { generators } from '@gpusparse/formats';
import { EigenvalueDecomposition, Matrix } from 'ml-matrix';

/** CSR from a dense row-major symmetric matrix (explicit zeros dropped). */
export function denseToCsr(a: number[][]): CsrMatrix {
  const n = a.length;
  const rowPtr = new Int32Array(n + 1);
  const cols: number[] = [];
  const vals: number[] = [];
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < n; j++) {
      if (a[i]![j] !== 0) {
        cols.push(j);
        vals.push(a[i]![j]!);
      }
    }
    rowPtr[i + 1] = cols.length;
  }
  return { format: 'csr', rows: n, cols: n, rowPtr, colIdx: Int32Array.from(cols), values: Float64Array.from(vals) };
}

/** CSR to dense rows. */
export function csrToDense(a: CsrMatrix): number[][] {
  const out = Array.from({ length: a.rows }, () => new Array<number>(a.cols).fill(0));
  for (let i = 0; i < a.rows; i++) for (let p = a.rowPtr[i]!; p < a.rowPtr[i + 1]!; p++) out[i]![a.colIdx[p]!] = a.values[p]!;
  return out;
}

/**
 * Dense random symmetric n×n: off-diagonal entries uniform in [−offScale, offScale), diagonal
 * `diag(i)` plus uniform noise in [−1, 1). offScale small with a spread diagonal gives a
 * diagonally dominant (CI-like) matrix.
 */
export function randomSymmetric(n: number, seed: number, opts: { offScale?: number; diag?: (i: number) => number } = {}): number[][] {
  const r = generators.rng(seed);
  const off = opts.offScale ?? 1;
  const a = Array.from({ length: n }, () => new Array<number>(n).fill(0));
  for (let i = 0; i < n; i++) {
    a[i]![i] = (opts.diag ? opts.diag(i) : 0) + (r() * 2 - 1);
    for (let j = 0; j < i; j++) {
      const v = (r() * 2 - 1) * off;
      a[i]![j] = v;
      a[j]![i] = v;
    }
  }
  return a;
}

/** All eigenvalues of a dense symmetric matrix, ascending (ml-matrix, float64). */
export function denseEigenvalues(a: number[][]): number[] {
  return new EigenvalueDecomposition(new Matrix(a), { assumeSymmetric: true }).realEigenvalues.slice().sort((x, y) => x - y);
}

/** Eigenvalues 2 − 2cos(jπ/(n+1)), j = 1..n, of tridiag(−1, 2, −1), ascending. */
export function laplacian1dEigenvalues(n: number): number[] {
  return Array.from({ length: n }, (_, j) => 2 - 2 * Math.cos(((j + 1) * Math.PI) / (n + 1)));
}

/** Eigenvalues μᵢ(nx) + μⱼ(ny) of the 5-point Laplacian on an nx × ny grid, ascending. */
export function poisson2dEigenvalues(nx: number, ny = nx): number[] {
  const a = laplacian1dEigenvalues(nx);
  const b = laplacian1dEigenvalues(ny);
  const out: number[] = [];
  for (const x of a) for (const y of b) out.push(x + y);
  return out.sort((x, y) => x - y);
}

/** ‖A·v − λ·v‖₂ / ‖v‖₂ in float64 on the host. */
export function residualF64(a: CsrMatrix, lambda: number, v: Float64Array): number {
  let s = 0;
  let nv = 0;
  for (let i = 0; i < a.rows; i++) {
    let y = 0;
    for (let p = a.rowPtr[i]!; p < a.rowPtr[i + 1]!; p++) y += a.values[p]! * v[a.colIdx[p]!]!;
    const r = y - lambda * v[i]!;
    s += r * r;
    nv += v[i]! * v[i]!;
  }
  return Math.sqrt(s / nv);
}

/** Largest |vᵢᵀvⱼ − δᵢⱼ| over the given (host) vectors. */
export function orthonormalityError(vs: Float64Array[]): number {
  let worst = 0;
  for (let i = 0; i < vs.length; i++) {
    for (let j = 0; j <= i; j++) {
      let d = 0;
      for (let t = 0; t < vs[i]!.length; t++) d += vs[i]![t]! * vs[j]![t]!;
      worst = Math.max(worst, Math.abs(d - (i === j ? 1 : 0)));
    }
  }
  return worst;
}

/** A diagonally dominant CI-like symmetric matrix: spread diagonal, a few random couplings per row. */
export function ciLike(n: number, seed: number): CsrMatrix {
  const r = generators.rng(seed);
  const a = Array.from({ length: n }, () => new Array<number>(n).fill(0));
  for (let i = 0; i < n; i++) {
    a[i]![i] = -5 + (8 * i) / n + 0.5 * r();
    for (let t = 0; t < 6; t++) {
      const j = Math.floor(r() * n);
      if (j === i) continue;
      const v = (r() * 2 - 1) * 0.15;
      a[i]![j] = v;
      a[j]![i] = v;
    }
  }
  return denseToCsr(a);
}
