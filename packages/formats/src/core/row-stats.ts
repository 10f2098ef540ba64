/**
 * Row-length statistics of a CSR matrix: the numbers of seed 004 Table 1 (RMIN, RAVE, RMAX,
 * RSD, RSDP; axt-format.md §3.2) plus percentiles, empty rows, occupied diagonals and
 * bandwidth. The autotuner and the `info` command read them to pick a format and its
 * parameters (ELL width, SELL chunk height, hybrid BOUNDARY, DIA suitability).
 * @module
 */
import type { CsrMatrix } from './types';

/** What {@link rowLengthStats} returns. Row lengths count stored entries, explicit zeros included. */
export interface RowLengthStats {
  readonly rows: number;
  readonly cols: number;
  /** Stored entries (rowPtr[rows]). */
  readonly nnz: number;
  /** RMIN: shortest row (0 for a matrix without rows). */
  readonly min: number;
  /** RMAX: longest row; the ELL width (seed 001 MaxNonZeros). */
  readonly max: number;
  /** RAVE: nnz / rows (0 for a matrix without rows). */
  readonly mean: number;
  /** RSD: population standard deviation of the row lengths, sqrt(Σ(len − mean)² / rows). */
  readonly rsd: number;
  /** RSDP = 100·RSD / RAVE, the normalised standard deviation in percent (0 when RAVE = 0). */
  readonly rsdp: number;
  /** Row length at sorted position floor(rows/3): about one third of the rows are shorter. */
  readonly p33: number;
  /** Median row length, sorted position floor(rows/2). */
  readonly p50: number;
  /** Sorted position floor(0.9·rows). */
  readonly p90: number;
  /** Sorted position floor(0.99·rows). */
  readonly p99: number;
  /** Number of rows with no stored entry. */
  readonly emptyRows: number;
  /** Number of distinct diagonals j − i that hold at least one stored entry (what DIA stores). */
  readonly occupiedDiagonals: number;
  /** max |i − j| over stored entries (0 for an empty or diagonal matrix). */
  readonly bandwidth: number;
  /** max (i − j) over stored entries below the diagonal (0 when none). */
  readonly lowerBandwidth: number;
  /** max (j − i) over stored entries above the diagonal (0 when none). */
  readonly upperBandwidth: number;
}

/**
 * The q-quantile of ascending row lengths by the lower nearest rank: sorted[min(n − 1,
 * floor(q·n))], the rule Ginkgo's hybrid strategies use (`imbalance_limit`). Returns 0 for
 * n = 0. q is clamped to [0, 1]. O(1).
 * @example
 * rowLengthPercentile(Int32Array.from([1, 2, 3]), 1 / 3); // 2 (one row of three is shorter)
 */
export function rowLengthPercentile(sortedAscending: Int32Array, q: number): number {
  const n = sortedAscending.length;
  if (n === 0) return 0;
  const qq = Math.min(1, Math.max(0, q));
  // float64 1/3 · 3 is exactly 1, so floor() lands on the intended rank for multiples of 3
  const pos = Math.min(n - 1, Math.floor(n * qq));
  return sortedAscending[pos]!;
}

/** Row lengths of a CSR matrix, sorted ascending (a copy), by a counting sort. O(rows + longest row). * @example
 * sortedRowLengths(csrFromDense([[1, 1], [0, 1], [0, 0]])); // Int32Array [0, 1, 2]
 */
export function sortedRowLengths(a: CsrMatrix): Int32Array {
  const { rows, rowPtr } = a;
  let max = 0;
  for (let i = 0; i < rows; i++) max = Math.max(max, rowPtr[i + 1]! - rowPtr[i]!);
  const count = new Int32Array(max + 1);
  for (let i = 0; i < rows; i++) count[rowPtr[i + 1]! - rowPtr[i]!]!++;
  const out = new Int32Array(rows);
  let p = 0;
  for (let len = 0; len <= max; len++) {
    out.fill(len, p, p + count[len]!);
    p += count[len]!;
  }
  return out;
}

/**
 * Row-length statistics, diagonal occupancy and bandwidth of a CSR matrix.
 * Cost: O(nnz + rows + longest row) time, O(rows + cols) memory.
 * @example
 * const s = rowLengthStats(csrFromDense([[1, 0], [2, 3]]));
 * // s.min 1, s.max 2, s.mean 1.5, s.rsd 0.5, s.rsdp 33.3…, s.occupiedDiagonals 2, s.bandwidth 1
 */
export function rowLengthStats(a: CsrMatrix): RowLengthStats {
  const { rows, cols, rowPtr, colIdx } = a;
  const nnz = rowPtr[rows] ?? 0;
  let min = rows > 0 ? Number.POSITIVE_INFINITY : 0;
  let max = 0;
  let empty = 0;
  for (let i = 0; i < rows; i++) {
    const len = rowPtr[i + 1]! - rowPtr[i]!;
    if (len < min) min = len;
    if (len > max) max = len;
    if (len === 0) empty++;
  }
  const mean = rows > 0 ? nnz / rows : 0;
  // two-pass variance: Σ(len − mean)² / rows, stable for long rows
  let ss = 0;
  for (let i = 0; i < rows; i++) {
    const d = rowPtr[i + 1]! - rowPtr[i]! - mean;
    ss += d * d;
  }
  const rsd = rows > 0 ? Math.sqrt(ss / rows) : 0;
  const sorted = sortedRowLengths(a);
  // diagonal offset d = j − i ∈ [−(rows−1), cols−1], stored at d + rows − 1
  const seen = new Uint8Array(Math.max(0, rows + cols - 1));
  let occupied = 0;
  let lower = 0;
  let upper = 0;
  for (let i = 0; i < rows; i++) {
    for (let k = rowPtr[i]!; k < rowPtr[i + 1]!; k++) {
      const d = colIdx[k]! - i;
      if (d < 0 && -d > lower) lower = -d;
      if (d > upper) upper = d;
      const slot = d + rows - 1;
      if (seen[slot] === 0) {
        seen[slot] = 1;
        occupied++;
      }
    }
  }
  return {
    rows,
    cols,
    nnz,
    min,
    max,
    mean,
    rsd,
    rsdp: mean > 0 ? (100 * rsd) / mean : 0,
    p33: rowLengthPercentile(sorted, 1 / 3),
    p50: rowLengthPercentile(sorted, 0.5),
    p90: rowLengthPercentile(sorted, 0.9),
    p99: rowLengthPercentile(sorted, 0.99),
    emptyRows: empty,
    occupiedDiagonals: occupied,
    bandwidth: Math.max(lower, upper),
    lowerBandwidth: lower,
    upperBandwidth: upper,
  };
}
