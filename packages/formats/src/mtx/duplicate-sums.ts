/**
 * Integer Matrix Market files may repeat an entry; the repeats are summed in float64. Each
 * value may be exact while their sum passes 2^53 and is rounded: the matrix is then silently not
 * the file's. This check finds such sums exactly (BigInt, only for entries whose summed value
 * reaches 2^53, so a file without huge values costs one pass over the stored values).
 * @module
 */
import type { CsrMatrix } from '../core/types';
import type { TripletBuffer } from './assemble';
import type { MatrixMarketSymmetry } from './types';

const BIG = 2 ** 53;

/** A summed entry float64 rounded: 1-based row and column, exact sum, stored value. */
export interface RoundedSum {
  readonly row: number;
  readonly col: number;
  readonly exact: bigint;
  readonly stored: number;
}

/**
 * The summed entries of `a` (assembled from `t`) that are not the exact sum of the file's
 * values, with their count; none when no entry reaches 2^53 in magnitude. O(nnz) plus
 * O(entries) when one does.
 */
export function roundedDuplicateSums(a: CsrMatrix, t: TripletBuffer, symmetry: MatrixMarketSymmetry): { count: number; first?: RoundedSum } {
  const big = new Map<string, bigint>();
  const bigRows = new Set<number>();
  for (let i = 0; i < a.rows; i++) {
    for (let k = a.rowPtr[i]!; k < a.rowPtr[i + 1]!; k++) {
      if (Math.abs(a.values[k]!) < BIG) continue;
      big.set(`${i},${a.colIdx[k]}`, 0n);
      bigRows.add(i);
    }
  }
  if (big.size === 0) return { count: 0 };
  const sign = symmetry === 'skew-symmetric' ? -1n : 1n;
  const add = (i: number, j: number, v: bigint) => {
    if (!bigRows.has(i)) return;
    const key = `${i},${j}`;
    const s = big.get(key);
    if (s !== undefined) big.set(key, s + v);
  };
  for (let k = 0; k < t.length; k++) {
    const i = t.rows[k]!;
    const j = t.cols[k]!;
    // every value of an integer file is an integer float64 (rounded ones were warned about)
    const v = BigInt(t.values[k]!);
    add(i, j, v);
    if (symmetry !== 'general' && i !== j) add(j, i, sign * v);
  }
  let count = 0;
  let first: RoundedSum | undefined;
  for (let i = 0; i < a.rows; i++) {
    if (!bigRows.has(i)) continue;
    for (let k = a.rowPtr[i]!; k < a.rowPtr[i + 1]!; k++) {
      const exact = big.get(`${i},${a.colIdx[k]}`);
      if (exact === undefined || BigInt(a.values[k]!) === exact) continue;
      count++;
      first ??= { row: i + 1, col: a.colIdx[k]! + 1, exact, stored: a.values[k]! };
    }
  }
  return { count, first };
}

/**
 * The distinct positions of the file's terms that a CSR matrix assembled from it fills: its
 * stored entries, halved for a symmetric kind (the diagonal counted once). O(nnz).
 */
export function distinctPositions(matrix: CsrMatrix, symmetry: MatrixMarketSymmetry): number {
  const nnz = matrix.rowPtr[matrix.rows]!;
  if (symmetry === 'general') return nnz;
  if (symmetry === 'skew-symmetric') return nnz / 2;
  let diag = 0;
  for (let i = 0; i < matrix.rows; i++) for (let k = matrix.rowPtr[i]!; k < matrix.rowPtr[i + 1]!; k++) if (matrix.colIdx[k] === i) diag++;
  return (nnz + diag) / 2;
}
