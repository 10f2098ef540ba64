/**
 * The first asymmetric pair of a CSR matrix. Rows sorted without repeats (the common case): each
 * entry's mirror is found by binary search in its row, O(nnz·log(row length)) time and no memory
 * (a transpose of a 6.4·10^8-entry matrix is 7.7 GB more). Otherwise one transpose and two dense
 * work arrays, O(nnz + cols). Never a map per row (minutes on 10^8 rows).
 * @module
 */
import type { CsrMatrix } from '../core/types';
import { csrTranspose } from './csr';

/** One pair A(row, col) ≠ A(col, row), 0-based; a missing entry counts as 0. */
export interface Asymmetry {
  readonly row: number;
  readonly col: number;
  readonly aij: number;
  readonly aji: number;
}

/** The default test of two mirrored entries: a relative difference above 1e-12. */
export const differsRelative = (x: number, y: number): boolean => Math.abs(x - y) > 1e-12 * Math.max(Math.abs(x), Math.abs(y));

/**
 * The first pair (by row of A) with `differ(A(i, j), A(j, i))`, or undefined when A is
 * symmetric under that test; a non-square A gives its first entry outside the square part.
 * Rows need not be sorted; repeated positions are not summed (one stored value counts).
 * Cost: O(nnz·log(row length)) and no memory for sorted rows, else O(nnz + cols) with one transpose.
 * @example firstAsymmetry(generators.poisson2d(4)) // undefined
 */
export function firstAsymmetry(a: CsrMatrix, differ: (x: number, y: number) => boolean = differsRelative): Asymmetry | undefined {
  return sortedRows(a) ? bySearch(a, differ) : byTranspose(a, differ);
}

/** Every row's columns strictly increasing. O(nnz). */
function sortedRows(a: CsrMatrix): boolean {
  for (let i = 0; i < a.rows; i++) {
    for (let k = a.rowPtr[i]! + 1; k < a.rowPtr[i + 1]!; k++) if (a.colIdx[k]! <= a.colIdx[k - 1]!) return false;
  }
  return true;
}

/** Position of column `c` in row `r` (sorted), or −1. O(log(row length)). */
function find(a: CsrMatrix, r: number, c: number): number {
  let lo = a.rowPtr[r]!;
  let hi = a.rowPtr[r + 1]! - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const m = a.colIdx[mid]!;
    if (m === c) return mid;
    if (m < c) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

/** Sorted rows: each off-diagonal A(i, j) against its mirror found by binary search (a missing one is 0). */
function bySearch(a: CsrMatrix, differ: (x: number, y: number) => boolean): Asymmetry | undefined {
  for (let i = 0; i < a.rows; i++) {
    for (let k = a.rowPtr[i]!; k < a.rowPtr[i + 1]!; k++) {
      const j = a.colIdx[k]!;
      if (j === i) continue;
      const m = j < a.rows ? find(a, j, i) : -1;
      const aji = m < 0 ? 0 : a.values[m]!;
      if (differ(a.values[k]!, aji)) return { row: i, col: j, aij: a.values[k]!, aji };
    }
  }
  return undefined;
}

/** Any rows: A's row i scattered into a dense array and compared with Aᵀ's row i. */
function byTranspose(a: CsrMatrix, differ: (x: number, y: number) => boolean): Asymmetry | undefined {
  const t = csrTranspose(a);
  const w = new Float64Array(a.cols);
  const mark = new Int32Array(a.cols); // i + 1: A(i, c) scattered; −(i + 1): also seen in Aᵀ's row i
  for (let i = 0; i < a.rows; i++) {
    for (let k = a.rowPtr[i]!; k < a.rowPtr[i + 1]!; k++) {
      w[a.colIdx[k]!] = a.values[k]!;
      mark[a.colIdx[k]!] = i + 1;
    }
    for (let k = t.rowPtr[i]!; k < t.rowPtr[i + 1]!; k++) {
      const c = t.colIdx[k]!;
      const aic = mark[c] === i + 1 ? w[c]! : 0;
      if (differ(aic, t.values[k]!)) return { row: i, col: c, aij: aic, aji: t.values[k]! };
      mark[c] = -(i + 1);
    }
    for (let k = a.rowPtr[i]!; k < a.rowPtr[i + 1]!; k++) {
      const c = a.colIdx[k]!;
      if (mark[c] === i + 1 && differ(a.values[k]!, 0)) return { row: i, col: c, aij: a.values[k]!, aji: 0 };
    }
  }
  return undefined;
}
