/**
 * Sliced ELLPACK, seed 001 §3.4: the rows are cut into slices of `sliceHeight` consecutive
 * rows and each slice is stored as an ELL of its own width (its longest row), so one long
 * row pads only its slice.
 *
 * Layout: slice s starts at slot slicePtr[s]; inside it, column-major: slot k of local row r
 * at `slicePtr[s] + k·h_s + r`, where h_s = sliceHeight except for a short last slice, whose
 * h_s is its row count (no phantom rows: each slice is the ELL of its own rows, as in the
 * seed). Padding: value 0 and the row's last real column (column 0 for an empty row);
 * empty rows are listed in `emptyRows` (host-side, for the exact round trip).
 * @module
 */
import { InvalidParameterError } from '../core/errors';
import type { CsrMatrix, SparseMatrix, StorageInfo, StorageOptions } from '../core/types';
import { validateCsr } from '../csr/csr';
import { emptyFlags, emptyRowList, rowLengths, spmvArgs } from '../ell/ell-layout';
import { buildSlices, isPositiveInt, type SlicedArrays, slicesSpmv, slicesStorage, slicesToCsr, slicesValidate } from './slice-layout';

/** Parameters of sliced ELL. */
export interface SlicedEllParams {
  /** Rows per slice (≥ 1). 1 stores each row at its own length (CSR-like); rows gives ELL. */
  readonly sliceHeight: number;
}

/** Default sliced-ELL parameters: one slice per 32-thread warp / subgroup. */
export const slicedEllDefaults: SlicedEllParams = { sliceHeight: 32 };

/**
 * A sliced ELL matrix. Slice s covers rows s·sliceHeight … and its slot k of local row r is
 * at slicePtr[s] + k·h_s + r (h_s = rows in the slice).
 */
export interface SlicedEllMatrix extends SparseMatrix {
  readonly format: 'sliced-ell';
  readonly sliceHeight: number;
  /** ceil(rows / sliceHeight). */
  readonly numSlices: number;
  /** First slot of each slice; length numSlices + 1, last entry = stored slots. */
  readonly slicePtr: Int32Array;
  /** Width (longest row) of each slice; length numSlices. */
  readonly sliceWidth: Int32Array;
  readonly colIdx: Int32Array;
  readonly values: Float64Array;
  /** Rows without entries, ascending. Host-side round-trip metadata, not uploaded to a GPU. */
  readonly emptyRows: Int32Array;
}

/** Check a slice height, throwing InvalidParameterError. * @example
 * checkSliceHeight('sliceHeight', 0); // throws InvalidParameterError
 */
export function checkSliceHeight(name: string, h: unknown): number {
  if (!isPositiveInt(h)) throw new InvalidParameterError(name, 'an integer ≥ 1', h);
  return h;
}

/** The {@link SlicedArrays} view of a sliced ELL matrix (no copy). */
export function slicedEllArrays(m: { rows: number; cols: number; sliceHeight: number; slicePtr: Int32Array; sliceWidth: Int32Array; colIdx: Int32Array; values: Float64Array }): SlicedArrays {
  return { rows: m.rows, cols: m.cols, height: m.sliceHeight, padLast: false, slicePtr: m.slicePtr, sliceWidth: m.sliceWidth, colIdx: m.colIdx, values: m.values };
}

/**
 * Sliced ELL from canonical CSR (validated). Cost: O(rows + stored slots).
 * Throws InvalidParameterError for a bad sliceHeight, PaddingOverflowError past 2^31 − 1 slots.
 * @example
 * const s = slicedEllFromCsr(a, { sliceHeight: 2 }); // seed 001 §3.4 example: widths [2, 2, 1]
 */
export function slicedEllFromCsr(a: CsrMatrix, params: Partial<SlicedEllParams> = {}): SlicedEllMatrix {
  const h = checkSliceHeight('sliceHeight', params.sliceHeight ?? slicedEllDefaults.sliceHeight);
  validateCsr(a, 'slicedEllFromCsr');
  const { lengths } = rowLengths(a);
  const s = buildSlices(a, lengths, null, h, false, 'slicedEllFromCsr');
  return {
    format: 'sliced-ell',
    rows: a.rows,
    cols: a.cols,
    nnz: a.rowPtr[a.rows] ?? 0,
    sliceHeight: h,
    numSlices: s.sliceWidth.length,
    ...s,
    emptyRows: emptyRowList(lengths),
  };
}

/** Sliced ELL → canonical CSR, exact; validates the arrays and padding. O(rows + stored slots). * @example
 * csrEquals(slicedEllToCsr(slicedEllFromCsr(a, { sliceHeight: 4 })), a); // true
 */
export function slicedEllToCsr(m: SlicedEllMatrix): CsrMatrix {
  checkSliceHeight('sliceHeight', m.sliceHeight);
  return slicesToCsr(slicedEllArrays(m), null, null, emptyFlags(m.emptyRows, m.rows, 'sliced ELL'), 'sliced ELL');
}

/**
 * Validate a sliced ELL matrix as {@link slicedEllToCsr} does (slice pointers, columns, padding,
 * emptyRows; same errors) without building the CSR matrix: what a GPU upload needs.
 * Cost: O(rows + stored slots).
 * @example
 * validateSlicedEll(slicedEllFromCsr(a, { sliceHeight: 4 })); // passes
 */
export function validateSlicedEll(m: SlicedEllMatrix): void {
  checkSliceHeight('sliceHeight', m.sliceHeight);
  slicesValidate(slicedEllArrays(m), null, null, emptyFlags(m.emptyRows, m.rows, 'sliced ELL'), 'sliced ELL');
}

/**
 * y = A·x in float64, seed 001 Algorithm 4 (thread per row, stop at the first padding slot).
 * Cost: ≤ 2·stored slots flops.
 * @example
 * slicedEllSpmv(slicedEllFromCsr(a, { sliceHeight: 2 }), x);
 */
export function slicedEllSpmv(m: SlicedEllMatrix, x: Float64Array, y?: Float64Array): Float64Array {
  const out = spmvArgs('slicedEllSpmv', m.rows, m.cols, x, y);
  checkSliceHeight('sliceHeight', m.sliceHeight);
  return slicesSpmv(slicedEllArrays(m), null, null, emptyFlags(m.emptyRows, m.rows, 'slicedEllSpmv'), x, out, 'slicedEllSpmv');
}

/**
 * Sliced ELL storage: the sum of the slices' ELL storage (seed 001 §4.1),
 * Σ_s h_s·w_s·(sizeof(value) + sizeof(index)), plus slicePtr (numSlices + 1)·sizeof(index)
 * (survey (2.60)) and sliceWidth numSlices·sizeof(index). emptyRows is not counted. O(1).
 * @example
 * slicedEllStorageBytes(slicedEllFromCsr(a, { sliceHeight: 32 })).bytes;
 */
export function slicedEllStorageBytes(m: SlicedEllMatrix, opts: StorageOptions = {}): StorageInfo {
  return slicesStorage(slicedEllArrays(m), m.nnz, opts, {});
}
