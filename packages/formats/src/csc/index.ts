/**
 * CSC (compressed sparse column), survey §2.1.5: CSR of the transpose.
 * Storage: nnz·sizeof(value) + nnz·sizeof(index) + (cols + 1)·sizeof(index).
 * @module
 */
import { DimensionMismatchError } from '../core/errors';
import type { CsrMatrix, FormatDescriptor, SparseMatrix } from '../core/types';
import { makeStorageInfo } from '../core/types';
import { csrNnz, csrTranspose } from '../csr/csr';

/** Compressed sparse column. */
export interface CscMatrix extends SparseMatrix {
  readonly format: 'csc';
  /** colPtr[j]..colPtr[j+1] is column j's range; length cols + 1. */
  readonly colPtr: Int32Array;
  /** Row index of each entry, sorted within a column. */
  readonly rowIdx: Int32Array;
  readonly values: Float64Array;
}

/** CSC from CSR. */
export function cscFromCsr(a: CsrMatrix): CscMatrix {
  const t = csrTranspose(a);
  return { format: 'csc', rows: a.rows, cols: a.cols, nnz: csrNnz(a), colPtr: t.rowPtr, rowIdx: t.colIdx, values: t.values };
}

/** CSC → canonical CSR. */
export function cscToCsr(m: CscMatrix): CsrMatrix {
  return csrTranspose({ format: 'csr', rows: m.cols, cols: m.rows, rowPtr: m.colPtr, colIdx: m.rowIdx, values: m.values });
}

/** y = A·x by columns (scatter), float64. */
export function cscSpmv(m: CscMatrix, x: Float64Array, y?: Float64Array): Float64Array {
  if (x.length !== m.cols) throw new DimensionMismatchError('cscSpmv x', m.cols, x.length);
  const out = y ?? new Float64Array(m.rows);
  out.fill(0);
  for (let j = 0; j < m.cols; j++) {
    const xj = x[j]!;
    for (let k = m.colPtr[j]!; k < m.colPtr[j + 1]!; k++) out[m.rowIdx[k]!]! += m.values[k]! * xj;
  }
  return out;
}

/** CSC as a {@link FormatDescriptor}. */
export const cscFormat: FormatDescriptor<CscMatrix, Record<string, never>> = {
  name: 'csc',
  title: 'CSC',
  source: 'survey §2.1.5 (sparse-format-survey-zh.md)',
  defaultParams: {},
  fromCsr: cscFromCsr,
  toCsr: cscToCsr,
  spmvReference: cscSpmv,
  storageBytes(m, opts = {}) {
    const vb = opts.valueBytes ?? 8;
    const ib = opts.indexBytes ?? 4;
    return makeStorageInfo(m.nnz, m.nnz, { values: m.nnz * vb, rowIdx: m.nnz * ib, colPtr: (m.cols + 1) * ib });
  },
};
