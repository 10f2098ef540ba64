/**
 * CMRS (compressed multi-row storage), survey §2.3.1 and Koza, Matyka, Szkoda & Mirosław 2014:
 * CSR with the row pointer replaced by strip pointers. Rows are cut into strips of h consecutive
 * rows (the height parameter); `values` and `colIdx` are exactly CSR's, `stripPtr[s]` is the first
 * non-zero of strip s and `rowInStrip[k]` the row of non-zero k inside its strip. A warp reads a
 * strip's non-zeros contiguously, whatever the individual row lengths: no padding, no reordering.
 *
 * Choice: the survey's storage count (3·NZV + Ns + 1) keeps `rowInStrip` as its own array, which is
 * what is done here (Koza et al. can pack it into the high bits of the column index).
 * Storage: nnz·(sizeof(value) + 2·sizeof(index)) + (Ns + 1)·sizeof(index); β = 1.
 * @module
 */
import type { CsrMatrix, SparseMatrix, StorageInfo, StorageOptions } from '../core/types';
import { makeStorageInfo } from '../core/types';
import { validateCsr } from '../csr/csr';
import { checkSpmvArgs, requireInt } from '../dia/common';

/** A matrix in CMRS. */
export interface CmrsMatrix extends SparseMatrix {
  readonly format: 'cmrs';
  /** Strip height h. */
  readonly stripHeight: number;
  /** Ns = ⌈rows / h⌉. */
  readonly numStrips: number;
  /** First non-zero of each strip; length Ns + 1. */
  readonly stripPtr: Int32Array;
  /** Row of each non-zero inside its strip (0 … h − 1). */
  readonly rowInStrip: Int32Array;
  /** CSR column indices. */
  readonly colIdx: Int32Array;
  /** CSR values. */
  readonly values: Float64Array;
}

/** CMRS parameters. */
export interface CmrsParams {
  /** Strip height h. Default 8; the survey's example uses 2. */
  readonly stripHeight: number;
}

/** Default CMRS parameters. */
export const cmrsDefaultParams: CmrsParams = { stripHeight: 8 };

/**
 * Convert canonical CSR to CMRS (copies the arrays, adds the strip data). Cost: O(nnz + rows).
 * @example
 * const c = cmrsFromCsr(a, { stripHeight: 2 });
 */
export function cmrsFromCsr(a: CsrMatrix, params: Partial<CmrsParams> = {}): CmrsMatrix {
  validateCsr(a, 'cmrsFromCsr');
  const h = requireInt('stripHeight', params.stripHeight ?? cmrsDefaultParams.stripHeight, 1, 1 << 20);
  const { rows, cols, rowPtr } = a;
  const ns = Math.ceil(rows / h);
  const stripPtr = new Int32Array(ns + 1);
  for (let s = 0; s <= ns; s++) stripPtr[s] = rowPtr[Math.min(rows, s * h)];
  const nnz = rowPtr[rows] ?? 0;
  const rowInStrip = new Int32Array(nnz);
  for (let i = 0; i < rows; i++) rowInStrip.fill(i % h, rowPtr[i], rowPtr[i + 1]);
  return { format: 'cmrs', rows, cols, nnz, stripHeight: h, numStrips: ns, stripPtr, rowInStrip, colIdx: a.colIdx.slice(), values: a.values.slice() };
}

/**
 * Convert CMRS back to canonical CSR (row pointers rebuilt from rowInStrip). Cost: O(nnz + rows).
 * @example
 * csrEquals(cmrsToCsr(cmrsFromCsr(a)), a); // true
 */
export function cmrsToCsr(m: CmrsMatrix): CsrMatrix {
  const { rows, cols, stripHeight: h, stripPtr, rowInStrip } = m;
  const rowPtr = new Int32Array(rows + 1);
  for (let s = 0; s < m.numStrips; s++) {
    for (let k = stripPtr[s]; k < stripPtr[s + 1]; k++) rowPtr[s * h + rowInStrip[k] + 1]++;
  }
  for (let i = 0; i < rows; i++) rowPtr[i + 1] += rowPtr[i];
  return { format: 'csr', rows, cols, rowPtr, colIdx: m.colIdx.slice(), values: m.values.slice() };
}

/**
 * y = A·x in float64 strip by strip: y_{s·h + rowInStrip[k]} += v_k·x_{col_k}. Cost: O(nnz + rows).
 * @example
 * cmrsSpmv(cmrsFromCsr(a), x); // equals csrSpmv(a, x)
 */
export function cmrsSpmv(m: CmrsMatrix, x: Float64Array, y?: Float64Array): Float64Array {
  const { rows, cols, stripHeight: h, stripPtr, rowInStrip, colIdx, values } = m;
  const out = checkSpmvArgs('cmrsSpmv', rows, cols, x, y);
  for (let s = 0; s < m.numStrips; s++) {
    const r0 = s * h;
    // y_{r0 + rowInStrip_k} += v_k·x_{col_k}
    for (let k = stripPtr[s]; k < stripPtr[s + 1]; k++) out[r0 + rowInStrip[k]] += values[k] * x[colIdx[k]];
  }
  return out;
}

/**
 * CMRS storage (survey eq. 2.35): 3·nnz (values, columns, rows in strip) + Ns + 1. β = 1. O(1).
 * @example
 * cmrsStorageBytes(cmrsFromCsr(a, { stripHeight: 2 })).bytes;
 */
export function cmrsStorageBytes(m: CmrsMatrix, opts: StorageOptions = {}): StorageInfo {
  const vb = opts.valueBytes ?? 8;
  const ib = opts.indexBytes ?? 4;
  return makeStorageInfo(m.nnz, m.nnz, { values: m.nnz * vb, colIdx: m.nnz * ib, rowInStrip: m.nnz * ib, stripPtr: (m.numStrips + 1) * ib });
}
