/**
 * Sliced ELLPACK-R, seed 001 §3.5: sliced ELL plus the row-length array rl[]
 * (NonZerosCount), so a thread-per-row kernel (Algorithm 5) loops over real entries only.
 *
 * Layout: as {@link SlicedEllMatrix}: slot k of local row r of slice s at
 * `slicePtr[s] + k·h_s + r` (h_s = rows in the slice), padding value 0 with a repeated
 * valid column. rowLength is indexed by matrix row.
 * @module
 */
import type { CsrMatrix, SparseMatrix, StorageInfo, StorageOptions } from '../core/types';
import { validateCsr } from '../csr/csr';
import { rowLengths, spmvArgs } from '../ell/ell-layout';
import { buildSlices, slicesSpmv, slicesStorage, slicesToCsr, slicesValidate } from '../sliced-ell/slice-layout';
import { checkSliceHeight, type SlicedEllParams, slicedEllArrays, slicedEllDefaults } from '../sliced-ell/sliced-ell';

/** A sliced ELL-R matrix: sliced ELL arrays plus rowLength (entries per matrix row). */
export interface SlicedEllRMatrix extends SparseMatrix {
  readonly format: 'sliced-ell-r';
  readonly sliceHeight: number;
  /** ceil(rows / sliceHeight). */
  readonly numSlices: number;
  /** First slot of each slice; length numSlices + 1. */
  readonly slicePtr: Int32Array;
  /** Width of each slice; length numSlices. */
  readonly sliceWidth: Int32Array;
  readonly colIdx: Int32Array;
  readonly values: Float64Array;
  /** rl[]: entries of each row; length rows. */
  readonly rowLength: Int32Array;
}

/**
 * Sliced ELL-R from canonical CSR (validated). Cost: O(rows + stored slots).
 * Throws InvalidParameterError for a bad sliceHeight, PaddingOverflowError past 2^31 − 1 slots.
 * @example
 * const s = slicedEllRFromCsr(a, { sliceHeight: 2 }); // s.rowLength = CSR row lengths
 */
export function slicedEllRFromCsr(a: CsrMatrix, params: Partial<SlicedEllParams> = {}): SlicedEllRMatrix {
  const h = checkSliceHeight('sliceHeight', params.sliceHeight ?? slicedEllDefaults.sliceHeight);
  validateCsr(a, 'slicedEllRFromCsr');
  const { lengths } = rowLengths(a);
  const s = buildSlices(a, lengths, null, h, false, 'slicedEllRFromCsr');
  return {
    format: 'sliced-ell-r',
    rows: a.rows,
    cols: a.cols,
    nnz: a.rowPtr[a.rows] ?? 0,
    sliceHeight: h,
    numSlices: s.sliceWidth.length,
    ...s,
    rowLength: lengths,
  };
}

/** Sliced ELL-R → canonical CSR, exact; validates arrays, rl[] and padding. O(rows + stored slots). * @example
 * csrEquals(slicedEllRToCsr(slicedEllRFromCsr(a)), a); // true
 */
export function slicedEllRToCsr(m: SlicedEllRMatrix): CsrMatrix {
  checkSliceHeight('sliceHeight', m.sliceHeight);
  return slicesToCsr(slicedEllArrays(m), null, m.rowLength, null, 'sliced ELL-R');
}

/**
 * Validate a sliced ELL-R matrix as {@link slicedEllRToCsr} does (rl[] ≤ slice width, columns,
 * padding; same errors) without building the CSR matrix: what a GPU upload needs.
 * Cost: O(rows + stored slots).
 * @example
 * validateSlicedEllR(slicedEllRFromCsr(a)); // passes
 */
export function validateSlicedEllR(m: SlicedEllRMatrix): void {
  checkSliceHeight('sliceHeight', m.sliceHeight);
  slicesValidate(slicedEllArrays(m), null, m.rowLength, null, 'sliced ELL-R');
}

/**
 * y = A·x in float64, seed 001 Algorithm 5: row i sums its first rl[i] slots.
 * Cost: 2·nnz flops plus O(rows).
 * @example
 * slicedEllRSpmv(slicedEllRFromCsr(a, { sliceHeight: 2 }), x);
 */
export function slicedEllRSpmv(m: SlicedEllRMatrix, x: Float64Array, y?: Float64Array): Float64Array {
  const out = spmvArgs('slicedEllRSpmv', m.rows, m.cols, x, y);
  checkSliceHeight('sliceHeight', m.sliceHeight);
  return slicesSpmv(slicedEllArrays(m), null, m.rowLength, null, x, out, 'slicedEllRSpmv');
}

/**
 * Sliced ELL-R storage: sliced ELL storage (Σ_s h_s·w_s·(sizeof(value) + sizeof(index)) +
 * slice pointers and widths) plus rl[] rows·sizeof(index). O(1).
 * @example
 * slicedEllRStorageBytes(slicedEllRFromCsr(a), { valueBytes: 4 }).bytes;
 */
export function slicedEllRStorageBytes(m: SlicedEllRMatrix, opts: StorageOptions = {}): StorageInfo {
  return slicesStorage(slicedEllArrays(m), m.nnz, opts, { rowLength: true });
}
