/**
 * The float64 host product of two CSR matrices (Gustavson, row by row with a dense accumulator)
 * and the error measure the diagonal SpGEMM is checked with: per entry
 * |c − c_ref| / Σ_j |a_ij·b_jl| (the scale float32 rounding errors grow with), max over C's and
 * the reference's entries. Used by `gpusparse spgemm --check` and the tests; O(flops + rows·cols
 * bits) time, O(cols) extra memory.
 * @module
 */
import { DimensionMismatchError } from '../core/errors';
import type { CsrMatrix } from '../core/types';
import { validateCsr } from '../csr/csr';

/** C = A·B in float64 (entries in ascending column per row), and Σ|a·b| per entry. */
export interface CsrProduct {
  readonly c: CsrMatrix;
  /** Σ_j |a_ij·b_jl| for each stored entry of c (same order as c.values). */
  readonly absSum: Float64Array;
}

/**
 * C = A·B in float64 with C's structural pattern (every (i, l) some a_ij·b_jl reaches, kept
 * even when the sum cancels to 0). Throws DimensionMismatchError when columns of A ≠ rows of B.
 * @example csrSpgemmReference(a, b).c // A·B
 */
export function csrSpgemmReference(a: CsrMatrix, b: CsrMatrix): CsrProduct {
  validateCsr(a, 'csrSpgemmReference A');
  validateCsr(b, 'csrSpgemmReference B');
  if (a.cols !== b.rows) throw new DimensionMismatchError('csrSpgemmReference: rows of B (= columns of A)', a.cols, b.rows);
  const n = b.cols;
  const acc = new Float64Array(n);
  const abs = new Float64Array(n);
  const mark = new Int32Array(n).fill(-1);
  const rowPtr = new Int32Array(a.rows + 1);
  const cols: number[] = [];
  const vals: number[] = [];
  const sums: number[] = [];
  for (let i = 0; i < a.rows; i++) {
    const touched: number[] = [];
    for (let p = a.rowPtr[i]!; p < a.rowPtr[i + 1]!; p++) {
      const j = a.colIdx[p]!;
      const av = a.values[p]!;
      for (let q = b.rowPtr[j]!; q < b.rowPtr[j + 1]!; q++) {
        const l = b.colIdx[q]!;
        if (mark[l] !== i) {
          mark[l] = i;
          acc[l] = 0;
          abs[l] = 0;
          touched.push(l);
        }
        // c_il += a_ij·b_jl
        acc[l]! += av * b.values[q]!;
        abs[l]! += Math.abs(av * b.values[q]!);
      }
    }
    touched.sort((x, y) => x - y);
    for (const l of touched) {
      cols.push(l);
      vals.push(acc[l]!);
      sums.push(abs[l]!);
    }
    rowPtr[i + 1] = cols.length;
  }
  const c: CsrMatrix = { format: 'csr', rows: a.rows, cols: n, rowPtr, colIdx: Int32Array.from(cols), values: Float64Array.from(vals) };
  return { c, absSum: Float64Array.from(sums) };
}

/**
 * max over entries of |c − ref| / Σ|a·b| for a computed C against the float64 reference: an
 * entry of C missing from the reference, or of the reference missing from C with a non-zero
 * value, counts as its |value| over its scale (Infinity when the scale is 0). O(nnz(C) + nnz(ref)).
 * @example spgemmMaxRelError(c, csrSpgemmReference(a, b)) // ≈ 1e-7 for a float32 product
 */
export function spgemmMaxRelError(c: CsrMatrix, ref: CsrProduct): number {
  if (c.rows !== ref.c.rows || c.cols !== ref.c.cols) throw new DimensionMismatchError('spgemmMaxRelError: shape of C', `${ref.c.rows}x${ref.c.cols}`, `${c.rows}x${c.cols}`);
  const r = ref.c;
  let worst = 0;
  const rel = (diff: number, scale: number): number => (diff === 0 ? 0 : scale > 0 ? diff / scale : Number.POSITIVE_INFINITY);
  for (let i = 0; i < c.rows; i++) {
    let p = c.rowPtr[i]!;
    let q = r.rowPtr[i]!;
    const pe = c.rowPtr[i + 1]!;
    const qe = r.rowPtr[i + 1]!;
    // merge two ascending column lists
    while (p < pe || q < qe) {
      const cp = p < pe ? c.colIdx[p]! : Number.POSITIVE_INFINITY;
      const cq = q < qe ? r.colIdx[q]! : Number.POSITIVE_INFINITY;
      if (cp === cq) worst = Math.max(worst, rel(Math.abs(c.values[p++]! - r.values[q]!), ref.absSum[q++]!));
      else if (cp < cq) worst = Math.max(worst, rel(Math.abs(c.values[p++]!), 0));
      else worst = Math.max(worst, rel(Math.abs(r.values[q]!), ref.absSum[q++]!));
    }
  }
  return worst;
}
