/**
 * Storage estimates from row statistics, before a format is built. Most formats store O(nnz +
 * rows) slots, but the ELL family pads every row (or slice) to its longest row and DIA-like
 * formats store whole diagonals, so one long row or a few scattered diagonals can make a tiny
 * matrix need gigabytes (4 194 304² with 64 entries in one row: ELL 3.2 GB). `formatReport`
 * and `gpusparse convert` ask here first and refuse past a limit instead of allocating.
 * @module
 */
import { type RowLengthStats, rowLengthStats } from '../core/row-stats';
import type { CsrMatrix } from '../core/types';

/** Upper bounds of what building a format would store. */
export interface StorageEstimate {
  /** Value slots stored (padding included): the length of the values array (or arrays). */
  readonly storedElements: number;
  /** Bytes with float64 values and 32-bit indices. */
  readonly bytesF64: number;
  /** How the figure was obtained, for messages. */
  readonly basis: string;
}

/** Longest row of each slice of `h` consecutive rows, summed and times `h`: Σ h·max(slice). O(rows). */
function slicedSlots(a: CsrMatrix, h: number): number {
  const { rows, rowPtr } = a;
  const height = Math.max(1, Math.floor(h));
  let total = 0;
  for (let s = 0; s < rows; s += height) {
    const e = Math.min(rows, s + height);
    let m = 0;
    for (let i = s; i < e; i++) m = Math.max(m, rowPtr[i + 1]! - rowPtr[i]!);
    total += height * m;
  }
  return total;
}

function param(params: Record<string, unknown>, key: string, fallback: number): number {
  const v = params[key];
  return typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : fallback;
}

/**
 * Upper bound of the storage of format `name` for `a` with `params`, for the formats whose
 * storage can exceed O(nnz + rows): ell, ell-r, sliced-ell, sliced-ell-r, sell, rgcsr (padding
 * to the longest row of the matrix or of a slice; SELL's σ-sorting only lowers it), dia, cdm, hm
 * (occupied diagonals × rows). Returns undefined for every other format (O(nnz + rows)).
 * Cost O(rows + nnz) (row statistics, unless `stats` is given), no allocation beyond them.
 * @example
 * estimateFormatStorage(a, 'ell', {}); // { storedElements: rows·RMAX, bytesF64: 12·rows·RMAX, ... }
 */
export function estimateFormatStorage(
  a: CsrMatrix,
  name: string,
  params: Record<string, unknown> = {},
  stats?: RowLengthStats,
): StorageEstimate | undefined {
  const rows = a.rows;
  const st = () => stats ?? rowLengthStats(a);
  switch (name) {
    case 'ell':
    case 'ell-r': {
      const max = st().max;
      const slots = rows * max;
      return { storedElements: slots, bytesF64: 12 * slots + (name === 'ell-r' ? 4 * rows : 0), basis: `${rows} rows × longest row ${max}` };
    }
    case 'sliced-ell':
    case 'sliced-ell-r':
    case 'sell':
    case 'rgcsr': {
      const key = name === 'sell' ? 'C' : name === 'rgcsr' ? 'groupSize' : 'sliceHeight';
      const h = param(params, key, 32);
      const slots = slicedSlots(a, h);
      return { storedElements: slots, bytesF64: 12 * slots + 4 * rows, basis: `slices of ${h} rows padded to their longest row` };
    }
    case 'dia':
    case 'cdm':
    case 'hm': {
      const d = st().occupiedDiagonals;
      // past maxDiagonals the format refuses the matrix itself, with its own message
      if (d > param(params, 'maxDiagonals', Number.POSITIVE_INFINITY)) return undefined;
      const slots = d * rows;
      return { storedElements: slots, bytesF64: 8 * slots + 4 * d, basis: `${d} occupied diagonals × ${rows} rows` };
    }
    default:
      return undefined;
  }
}

/**
 * Default ceiling of one format's storage in a memory report: 16 × the CSR bytes, at least
 * 64 MiB — generous for real matrices (ELL of a well-balanced matrix is ≲ 2× CSR) while a
 * report of a hostile matrix stays in the hundreds of megabytes.
 */
export function defaultReportMaxBytes(a: CsrMatrix): number {
  const nnz = a.rowPtr[a.rows] ?? 0;
  return Math.max(64 * 2 ** 20, 16 * (12 * nnz + 4 * (a.rows + 1)));
}
