/**
 * SELL-C-σ (sliced ELLPACK with sorting), survey §2.3.4 (Kreutzer et al.): rows are sorted by
 * length, descending, within windows of σ consecutive rows, then cut into chunks of C rows;
 * each chunk is an ELL block of its own width, padded to C rows. Sorting inside a window
 * groups rows of similar length (less padding) while keeping rows near their place (x
 * locality). σ = 1 means no sorting (sliced ELL with full-height chunks).
 *
 * Layout: chunk c starts at slot chunkPtr[c]; slot k of local row r (sorted position
 * p = c·C + r) is at `chunkPtr[c] + k·C + r` (column-major inside the chunk; every chunk has
 * C rows, the last padded with phantom rows of value 0 and column 0). Matrix row
 * rowPerm[p] sits at position p; products are written back in matrix-row order. Padding:
 * value 0 and the row's last real column; empty rows listed in `emptyRows` (host-side).
 * @module
 */
import { InvalidParameterError } from '../core/errors';
import type { CsrMatrix, SparseMatrix, StorageInfo, StorageOptions } from '../core/types';
import { validateCsr } from '../csr/csr';
import { emptyFlags, emptyRowList, rowLengths, spmvArgs } from '../ell/ell-layout';
import { buildSlices, isPositiveInt, type SlicedArrays, slicesSpmv, slicesStorage, slicesToCsr, slicesValidate } from '../sliced-ell/slice-layout';

/** Parameters of SELL-C-σ. */
export interface SellParams {
  /** Chunk height C (rows per chunk, ≥ 1); a multiple of the GPU subgroup size is natural. */
  readonly C: number;
  /** Sorting scope σ (≥ 1): rows are sorted within windows of σ rows; σ % C = 0 unless σ = 1. */
  readonly sigma: number;
}

/** Default SELL-C-σ parameters: C = 32 (a warp), σ = 128 (4 chunks per sorting window). */
export const sellDefaults: SellParams = { C: 32, sigma: 128 };

/** A SELL-C-σ matrix. */
export interface SellMatrix extends SparseMatrix {
  readonly format: 'sell';
  readonly C: number;
  readonly sigma: number;
  /** ceil(rows / C). */
  readonly numChunks: number;
  /** First slot of each chunk; length numChunks + 1, last entry = stored slots. */
  readonly chunkPtr: Int32Array;
  /** Width (longest row) of each chunk; length numChunks. */
  readonly chunkWidth: Int32Array;
  /** Column index of each slot: chunkPtr[c] + k·C + r. */
  readonly colIdx: Int32Array;
  /** Value of each slot: chunkPtr[c] + k·C + r; padding slots are 0. */
  readonly values: Float64Array;
  /** rowPerm[p] = matrix row stored at sorted position p (identity when σ = 1). */
  readonly rowPerm: Int32Array;
  /** Matrix rows without entries, ascending. Host-side round-trip metadata. */
  readonly emptyRows: Int32Array;
}

/**
 * Validate SELL-C-σ parameters: C ≥ 1 and σ ≥ 1 integers, σ a multiple of C unless σ = 1.
 * Throws InvalidParameterError naming the parameter.
 * @example
 * checkSellParams({ C: 32, sigma: 48 }); // throws: σ must be 1 or a multiple of C
 */
export function checkSellParams(params: Partial<SellParams>): SellParams {
  const C = params.C ?? sellDefaults.C;
  const sigma = params.sigma ?? sellDefaults.sigma;
  if (!isPositiveInt(C)) throw new InvalidParameterError('C', 'an integer ≥ 1 (SELL chunk height)', C);
  if (!isPositiveInt(sigma)) throw new InvalidParameterError('sigma', 'an integer ≥ 1 (SELL sorting scope)', sigma);
  if (sigma !== 1 && sigma % C !== 0) throw new InvalidParameterError('sigma', `1 or a multiple of C = ${C}`, sigma);
  return { C, sigma };
}

/**
 * The SELL-C-σ row order: within each window of σ rows, rows by length descending, ties in
 * matrix-row order (a stable sort, so the order is deterministic). σ = 1 gives the identity.
 * Cost: O(rows + longest row): two stable counting sorts (by length, descending, then by window).
 * @example
 * sellRowOrder(Int32Array.of(2, 3, 1, 1, 2, 3), 4); // [1, 0, 2, 3, 5, 4]
 */
export function sellRowOrder(lengths: Int32Array, sigma: number): Int32Array {
  const rows = lengths.length;
  const order = new Int32Array(rows);
  if (sigma <= 1) {
    for (let i = 0; i < rows; i++) order[i] = i;
    return order;
  }
  let max = 0;
  for (let i = 0; i < rows; i++) if (lengths[i]! > max) max = lengths[i]!;
  // pass 1: rows by length, descending, ties in row order (start[max − len] = first position)
  const start = new Int32Array(max + 2);
  for (let i = 0; i < rows; i++) start[max - lengths[i]! + 1]!++;
  for (let b = 1; b <= max + 1; b++) start[b]! += start[b - 1]!;
  const byLength = new Int32Array(rows);
  for (let i = 0; i < rows; i++) byLength[start[max - lengths[i]!]!++] = i;
  // pass 2: stable by window ⌊i/σ⌋ (window w starts at position w·σ), keeping pass 1's order inside
  const next = new Int32Array(Math.ceil(rows / sigma));
  for (let w = 0; w < next.length; w++) next[w] = w * sigma;
  for (let p = 0; p < rows; p++) {
    const i = byLength[p]!;
    order[next[Math.floor(i / sigma)]!++] = i;
  }
  return order;
}

function sellArrays(m: SellMatrix): SlicedArrays {
  return { rows: m.rows, cols: m.cols, height: m.C, padLast: true, slicePtr: m.chunkPtr, sliceWidth: m.chunkWidth, colIdx: m.colIdx, values: m.values };
}

/**
 * SELL-C-σ from canonical CSR (validated). Cost: O(rows log σ + stored slots).
 * Throws InvalidParameterError for bad C or σ, PaddingOverflowError past 2^31 − 1 slots.
 * @example
 * const s = sellFromCsr(a, { C: 2, sigma: 4 });
 */
export function sellFromCsr(a: CsrMatrix, params: Partial<SellParams> = {}): SellMatrix {
  const { C, sigma } = checkSellParams(params);
  validateCsr(a, 'sellFromCsr');
  const { lengths } = rowLengths(a);
  const rowPerm = sellRowOrder(lengths, sigma);
  const s = buildSlices(a, lengths, rowPerm, C, true, 'sellFromCsr');
  return {
    format: 'sell',
    rows: a.rows,
    cols: a.cols,
    nnz: a.rowPtr[a.rows] ?? 0,
    C,
    sigma,
    numChunks: s.sliceWidth.length,
    chunkPtr: s.slicePtr,
    chunkWidth: s.sliceWidth,
    colIdx: s.colIdx,
    values: s.values,
    rowPerm,
    emptyRows: emptyRowList(lengths),
  };
}

/** SELL-C-σ → canonical CSR in matrix-row order, exact; validates everything. O(rows + slots). * @example
 * csrEquals(sellToCsr(sellFromCsr(a, { C: 4, sigma: 16 })), a); // true
 */
export function sellToCsr(m: SellMatrix): CsrMatrix {
  checkSellParams(m);
  return slicesToCsr(sellArrays(m), m.rowPerm, null, emptyFlags(m.emptyRows, m.rows, 'SELL'), 'SELL');
}

/**
 * Validate a SELL-C-σ matrix as {@link sellToCsr} does (C and σ, chunk pointers, rowPerm a
 * permutation, columns, padding; same errors) without building the CSR matrix: what a GPU
 * upload needs. Cost: O(rows + stored slots).
 * @example
 * validateSell(sellFromCsr(a, { C: 4, sigma: 16 })); // passes
 */
export function validateSell(m: SellMatrix): void {
  checkSellParams(m);
  slicesValidate(sellArrays(m), m.rowPerm, null, emptyFlags(m.emptyRows, m.rows, 'SELL'), 'SELL');
}

/**
 * y = A·x in float64, y in matrix-row order (y[rowPerm[p]] = row at position p · x).
 * Thread-per-row order; each row stops at its first padding slot. Cost: ≤ 2·stored slots flops.
 * @example
 * sellSpmv(sellFromCsr(a, { C: 2, sigma: 4 }), x); // equals csrSpmv(a, x)
 */
export function sellSpmv(m: SellMatrix, x: Float64Array, y?: Float64Array): Float64Array {
  const out = spmvArgs('sellSpmv', m.rows, m.cols, x, y);
  checkSellParams(m);
  return slicesSpmv(sellArrays(m), m.rowPerm, null, emptyFlags(m.emptyRows, m.rows, 'sellSpmv'), x, out, 'sellSpmv');
}

/**
 * SELL-C-σ storage: values and column indices of C·Σ_c width_c slots (survey (2.60):
 * N_s + 1 slice pointers + 2·C·Σ N_nzv(i) elements), plus chunkWidth (numChunks indices) and,
 * for σ > 1, the row permutation (rows indices; for σ = 1 it is the identity and never
 * uploaded). emptyRows is not counted. O(1).
 * @example
 * sellStorageBytes(sellFromCsr(a), { valueBytes: 4 }).beta; // occupancy after sorting
 */
export function sellStorageBytes(m: SellMatrix, opts: StorageOptions = {}): StorageInfo {
  const info = slicesStorage(sellArrays(m), m.nnz, opts, { rowPerm: m.sigma > 1 });
  const { slicePtr, sliceWidth, ...rest } = info.arrays;
  return { ...info, arrays: { ...rest, chunkPtr: slicePtr ?? 0, chunkWidth: sliceWidth ?? 0 } };
}
