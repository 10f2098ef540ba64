/**
 * Diagonal statistics of a CSR matrix, for the autotuner and for the diagonal formats
 * (DIA, HM, CDM) that size their arrays from them.
 * @module
 */
import type { CsrMatrix } from '../core/types';

/** What {@link diagonalStats} reports. */
export interface DiagonalStats {
  /** Number of occupied diagonals (diagonals with at least one stored entry). */
  readonly count: number;
  /** Their offsets j − i, ascending. */
  readonly offsets: Int32Array;
  /** Stored entries on each occupied diagonal (same order as offsets). */
  readonly nnzPerDiagonal: Int32Array;
  /** Stored entries of the matrix. */
  readonly nnz: number;
  /** Matrix positions on the occupied diagonals (what HM stores): Σ diagonal lengths. */
  readonly inMatrixSlots: number;
  /** Slots DIA allocates: rows × count (out-of-matrix padding included). */
  readonly diaSlots: number;
  /** DIA fill ratio β = nnz / diaSlots (1 for an empty matrix). */
  readonly fillRatio: number;
  /** HM fill ratio nnz / inMatrixSlots (1 for an empty matrix). */
  readonly diagonalFill: number;
}

/**
 * Length of diagonal `offset` (j − i) of a rows × cols matrix: the number of positions (i, i + offset)
 * inside the matrix. O(1).
 * @example
 * diagonalLength(4, 4, -1); // 3
 */
export function diagonalLength(rows: number, cols: number, offset: number): number {
  return offset >= 0 ? Math.max(0, Math.min(rows, cols - offset)) : Math.max(0, Math.min(rows + offset, cols));
}

/**
 * Count the occupied diagonals of a CSR matrix, their offsets and how full they are.
 * Cost: O(nnz + rows + cols) time, O(rows + cols) memory.
 * @example
 * const s = diagonalStats(banded(100, 1, 1)); // s.count === 3, s.offsets = [-1, 0, 1]
 */
export function diagonalStats(a: CsrMatrix): DiagonalStats {
  const { rows, cols, rowPtr, colIdx } = a;
  const nnz = rowPtr[rows] ?? 0;
  const span = Math.max(0, rows + cols - 1);
  const perOffset = new Int32Array(span);
  for (let i = 0; i < rows; i++) {
    for (let k = rowPtr[i]; k < rowPtr[i + 1]; k++) perOffset[colIdx[k] - i + rows - 1]++;
  }
  let count = 0;
  for (let t = 0; t < span; t++) if (perOffset[t] > 0) count++;
  const offsets = new Int32Array(count);
  const nnzPerDiagonal = new Int32Array(count);
  let inMatrixSlots = 0;
  let d = 0;
  for (let t = 0; t < span; t++) {
    if (perOffset[t] === 0) continue;
    offsets[d] = t - (rows - 1);
    nnzPerDiagonal[d] = perOffset[t];
    inMatrixSlots += diagonalLength(rows, cols, offsets[d]);
    d++;
  }
  const diaSlots = rows * count;
  return {
    count,
    offsets,
    nnzPerDiagonal,
    nnz,
    inMatrixSlots,
    diaSlots,
    fillRatio: diaSlots === 0 ? 1 : nnz / diaSlots,
    diagonalFill: inMatrixSlots === 0 ? 1 : nnz / inMatrixSlots,
  };
}
