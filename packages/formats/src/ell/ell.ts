/**
 * ELLPACK (ELL), seed 001 §3.2 (hybrid-ell-csr-ci-spmv.md) and survey §2.1.2: every row is
 * padded to the length of the longest row (MaxNonZeros, here `width`), giving two
 * rows × width arrays of values and column indices.
 *
 * Layout: column-major. Slot k of row i is at `k·rows + i`, so the threads of a
 * thread-per-row GPU kernel read consecutive addresses (coalesced). Padding follows the
 * ELL-family convention of {@link ./ell-layout}: value 0 and the row's last real column
 * (column 0 for an empty row) instead of the paper's −1, so a GPU kernel may multiply every
 * slot without a branch; empty rows are listed in `emptyRows` (host-side, for the exact
 * round trip; a GPU kernel never needs it).
 * @module
 */
import type { CsrMatrix, SparseMatrix, StorageInfo, StorageOptions } from '../core/types';
import { makeStorageInfo } from '../core/types';
import { validateCsr } from '../csr/csr';
import {
  checkLength,
  checkSlots,
  decodeRowLength,
  emptyFlags,
  emptyRowList,
  gatherCsr,
  packBlock,
  rowLengths,
  spmvArgs,
  tileLengths,
} from './ell-layout';

/**
 * An ELL matrix. `values` and `colIdx` have rows·width entries, column-major: slot k of row i
 * at k·rows + i. Padding slots hold value 0 and a repeated valid column.
 */
export interface EllMatrix extends SparseMatrix {
  readonly format: 'ell';
  /** Slots per row = the longest row (seed 001 MaxNonZeros). */
  readonly width: number;
  /** Column index of each slot, column-major (k·rows + i). */
  readonly colIdx: Int32Array;
  /** Value of each slot, column-major (k·rows + i); padding slots are 0. */
  readonly values: Float64Array;
  /** Rows without entries, ascending. Host-side round-trip metadata, not uploaded to a GPU. */
  readonly emptyRows: Int32Array;
}

/**
 * ELL from canonical CSR (validated). Cost: O(rows·width) time and memory, where width is
 * the longest row: one dense row makes every row that long (seed 001 §3.2).
 * Throws PaddingOverflowError when rows·width exceeds 2^31 − 1 slots.
 * @example
 * const e = ellFromCsr(csrFromDense([[1, 0], [2, 3]]));
 * // e.width 2, e.colIdx [0, 0, 0, 1], e.values [1, 2, 0, 3]
 */
export function ellFromCsr(a: CsrMatrix): EllMatrix {
  validateCsr(a, 'ellFromCsr');
  const { lengths, max, argmax } = rowLengths(a);
  const slots = a.rows * max;
  checkSlots('ellFromCsr', slots, () => `${a.rows} rows × width ${max} set by row ${argmax}`);
  const colIdx = new Int32Array(slots);
  const values = new Float64Array(slots);
  packBlock(a, (r) => r, a.rows, max, 0, colIdx, values);
  return {
    format: 'ell',
    rows: a.rows,
    cols: a.cols,
    nnz: a.rowPtr[a.rows] ?? 0,
    width: max,
    colIdx,
    values,
    emptyRows: emptyRowList(lengths),
  };
}

/**
 * The row lengths encoded by an ELL matrix, validating its arrays and padding on the way
 * (throws InvalidMatrixError naming the row and slot). Cost: O(rows·width).
 * @example
 * ellRowLengths(ellFromCsr(csrFromDense([[1, 0], [2, 3]]))); // [1, 2]
 */
export function ellRowLengths(m: EllMatrix): Int32Array {
  const where = 'ELL';
  checkLength(where, 'colIdx', m.colIdx, m.rows * m.width);
  checkLength(where, 'values', m.values, m.rows * m.width);
  const empty = emptyFlags(m.emptyRows, m.rows, where);
  const lengths = new Int32Array(m.rows);
  // fast path: 64 rows at a time, slot by slot (consecutive reads of the column-major slots)
  const known = new Int32Array(64).fill(-1);
  let ok = true;
  for (let r0 = 0; ok && r0 < m.rows; r0 += 64) {
    const h = Math.min(64, m.rows - r0);
    ok = tileLengths(m.colIdx, m.values, r0, m.rows, h, m.width, m.cols, known, empty.subarray(r0, r0 + h), lengths, r0);
  }
  if (ok) return lengths;
  // some slot breaks the rules: row by row, for the exact error
  for (let i = 0; i < m.rows; i++) {
    lengths[i] = decodeRowLength(m.colIdx, m.values, i, m.rows, m.width, m.cols, empty[i] === 1, where, i);
  }
  return lengths;
}

/**
 * ELL → canonical CSR, exact: `ellToCsr(ellFromCsr(a))` equals `a` bit for bit (explicit
 * zeros kept). Validates the ELL arrays. Cost: O(rows·width).
 * @example
 * csrEquals(ellToCsr(ellFromCsr(a)), a); // true
 */
export function ellToCsr(m: EllMatrix): CsrMatrix {
  const lengths = ellRowLengths(m);
  return gatherCsr(m.rows, m.cols, lengths, m.colIdx, m.values, (i) => i, () => m.rows);
}

/**
 * y = A·x in float64, thread-per-row order of seed 001 Algorithm 2: each row sums its slots in
 * order and stops at the first padding slot (the paper's `Column = −1 → exit loop`). Columns and
 * padding are checked on the way (InvalidMatrixError). Cost: O(rows·width), 2·nnz flops.
 * @example
 * ellSpmv(ellFromCsr(csrFromDense([[1, 0], [2, 3]])), Float64Array.of(1, 1)); // [1, 5]
 */
export function ellSpmv(m: EllMatrix, x: Float64Array, y?: Float64Array): Float64Array {
  const out = spmvArgs('ellSpmv', m.rows, m.cols, x, y);
  const { rows, cols, width, colIdx, values } = m;
  checkLength('ellSpmv', 'colIdx', colIdx, rows * width);
  checkLength('ellSpmv', 'values', values, rows * width);
  const empty = emptyFlags(m.emptyRows, rows, 'ellSpmv');
  for (let i = 0; i < rows; i++) {
    // the row's length by the padding convention (validates columns and padding values)
    const len = decodeRowLength(colIdx, values, i, rows, width, cols, empty[i] === 1, 'ellSpmv', i);
    let sum = 0;
    for (let k = 0; k < len; k++) {
      const p = k * rows + i;
      sum += values[p]! * x[colIdx[p]!]!;
    }
    out[i] = sum;
  }
  return out;
}

/**
 * ELL storage by seed 001 §4.1 formula (1): rows·MaxNonZeros·(sizeof(value) + sizeof(index)).
 * `emptyRows` is host-side metadata and not counted. β = nnz / (rows·width).
 * @example
 * ellStorageFormula(6, 2, 7); // bytes 6·2·(8 + 4) = 144, β = 7/12
 */
export function ellStorageFormula(rows: number, width: number, nnz: number, opts: StorageOptions = {}): StorageInfo {
  const vb = opts.valueBytes ?? 8;
  const ib = opts.indexBytes ?? 4;
  const slots = rows * width;
  return makeStorageInfo(nnz, slots, { values: slots * vb, colIdx: slots * ib });
}

/** Storage of an ELL matrix, by {@link ellStorageFormula}. O(1). * @example
 * ellStorageBytes(ellFromCsr(a), { valueBytes: 4 }).beta; // nnz / (rows·width)
 */
export function ellStorageBytes(m: EllMatrix, opts: StorageOptions = {}): StorageInfo {
  return ellStorageFormula(m.rows, m.width, m.nnz, opts);
}
