/**
 * ELLPACK-R (ELL-R), seed 001 §3.3: ELL plus the row-length array rl[] (the paper's
 * NonZerosCount), so a thread-per-row kernel loops exactly over a row's real entries
 * (Algorithm 3) instead of testing every slot for padding.
 *
 * Layout: as {@link EllMatrix}, column-major (slot k of row i at k·rows + i), padding with
 * value 0 and a repeated valid column, so ELL kernels (Algorithm 2) also run on it.
 * @module
 */
import { InvalidMatrixError } from '../core/errors';
import type { CsrMatrix, SparseMatrix, StorageInfo, StorageOptions } from '../core/types';
import { makeStorageInfo } from '../core/types';
import { validateCsr } from '../csr/csr';
import { checkKnownRow, checkLength, checkRowLengths, checkSlots, gatherCsr, packBlock, rowLengths, spmvArgs, tileLengths } from '../ell/ell-layout';

/** An ELL-R matrix: ELL arrays (column-major, k·rows + i) plus rowLength[i] = entries of row i. */
export interface EllRMatrix extends SparseMatrix {
  readonly format: 'ell-r';
  /** Slots per row = the longest row. */
  readonly width: number;
  /** Column index of each slot, column-major (k·rows + i). */
  readonly colIdx: Int32Array;
  /** Value of each slot, column-major (k·rows + i); padding slots are 0. */
  readonly values: Float64Array;
  /** rl[]: real entries of each row (seed 001 NonZerosCount); length rows. */
  readonly rowLength: Int32Array;
}

/**
 * ELL-R from canonical CSR (validated). Cost: O(rows·width).
 * Throws PaddingOverflowError when rows·width exceeds 2^31 − 1 slots.
 * @example
 * const e = ellRFromCsr(csrFromDense([[1, 0], [2, 3]])); // e.rowLength [1, 2]
 */
export function ellRFromCsr(a: CsrMatrix): EllRMatrix {
  validateCsr(a, 'ellRFromCsr');
  const { lengths, max, argmax } = rowLengths(a);
  const slots = a.rows * max;
  checkSlots('ellRFromCsr', slots, () => `${a.rows} rows × width ${max} set by row ${argmax}`);
  const colIdx = new Int32Array(slots);
  const values = new Float64Array(slots);
  packBlock(a, (r) => r, a.rows, max, 0, colIdx, values);
  return { format: 'ell-r', rows: a.rows, cols: a.cols, nnz: a.rowPtr[a.rows] ?? 0, width: max, colIdx, values, rowLength: lengths };
}

/** Validate an ELL-R matrix: array sizes, rl[] in [0, width], columns, padding. O(rows·width). * @example
 * validateEllR(ellRFromCsr(a)); // passes; throws InvalidMatrixError on a corrupted copy
 */
export function validateEllR(m: EllRMatrix): void {
  const where = 'ELL-R';
  checkLength(where, 'colIdx', m.colIdx, m.rows * m.width);
  checkLength(where, 'values', m.values, m.rows * m.width);
  checkRowLengths(m.rowLength, m.rows, () => m.width, where);
  // fast path: 64 rows at a time, slot by slot (consecutive reads of the column-major slots)
  const empty = new Uint8Array(64);
  const out = new Int32Array(64);
  let ok = true;
  for (let r0 = 0; ok && r0 < m.rows; r0 += 64) {
    const h = Math.min(64, m.rows - r0);
    ok = tileLengths(m.colIdx, m.values, r0, m.rows, h, m.width, m.cols, m.rowLength.subarray(r0, r0 + h), empty, out, 0);
  }
  if (ok) return;
  // some slot breaks the rules: row by row, for the exact error
  for (let i = 0; i < m.rows; i++) checkKnownRow(m.colIdx, m.values, i, m.rows, m.width, m.rowLength[i]!, m.cols, -1, where, i);
}

/** ELL-R → canonical CSR, exact (bit-identical values, explicit zeros kept). O(rows·width). * @example
 * csrEquals(ellRToCsr(ellRFromCsr(a)), a); // true
 */
export function ellRToCsr(m: EllRMatrix): CsrMatrix {
  validateEllR(m);
  return gatherCsr(m.rows, m.cols, m.rowLength, m.colIdx, m.values, (i) => i, () => m.rows);
}

/**
 * y = A·x in float64 by seed 001 Algorithm 3: row i sums its first rl[i] slots.
 * Cost: 2·nnz flops plus O(rows).
 * @example
 * ellRSpmv(ellRFromCsr(csrFromDense([[1, 0], [2, 3]])), Float64Array.of(1, 1)); // [1, 5]
 */
export function ellRSpmv(m: EllRMatrix, x: Float64Array, y?: Float64Array): Float64Array {
  const out = spmvArgs('ellRSpmv', m.rows, m.cols, x, y);
  const { rows, cols, width, colIdx, values, rowLength } = m;
  checkLength('ellRSpmv', 'colIdx', colIdx, rows * width);
  checkRowLengths(rowLength, rows, () => width, 'ellRSpmv');
  for (let i = 0; i < rows; i++) {
    const end = rowLength[i]!;
    let sum = 0;
    for (let k = 0; k < end; k++) {
      const p = k * rows + i;
      const c = colIdx[p]!;
      if (!(c >= 0 && c < cols)) throw new InvalidMatrixError('ellRSpmv', `row ${i}, slot ${k}: column ${c} outside [0, ${cols})`);
      sum += values[p]! * x[c]!;
    }
    out[i] = sum;
  }
  return out;
}

/**
 * ELL-R storage: seed 001 §4.1 formula (1) plus rl[]:
 * rows·width·(sizeof(value) + sizeof(index)) + rows·sizeof(index). O(1).
 * @example
 * ellRStorageBytes(ellRFromCsr(a), { valueBytes: 4 }).bytes;
 */
export function ellRStorageBytes(m: EllRMatrix, opts: StorageOptions = {}): StorageInfo {
  const vb = opts.valueBytes ?? 8;
  const ib = opts.indexBytes ?? 4;
  const slots = m.rows * m.width;
  return makeStorageInfo(m.nnz, slots, { values: slots * vb, colIdx: slots * ib, rowLength: m.rows * ib });
}
