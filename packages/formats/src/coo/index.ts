/**
 * COO (coordinate), survey §2.1.3: one (row, column, value) triplet per non-zero, sorted by row
 * then column when converted from CSR. Storage: nnz·(sizeof(value) + 2·sizeof(index)).
 * @module
 */
import { DimensionMismatchError } from '../core/errors';
import type { CsrMatrix, FormatDescriptor, SparseMatrix } from '../core/types';
import { makeStorageInfo } from '../core/types';
import { csrFromTriplets, csrNnz } from '../csr/csr';

/** Coordinate format: parallel arrays of row index, column index and value. */
export interface CooMatrix extends SparseMatrix {
  readonly format: 'coo';
  readonly rowIdx: Int32Array;
  readonly colIdx: Int32Array;
  readonly values: Float64Array;
}

/** COO from CSR (row-major order). */
export function cooFromCsr(a: CsrMatrix): CooMatrix {
  const nnz = csrNnz(a);
  const rowIdx = new Int32Array(nnz);
  for (let i = 0; i < a.rows; i++) rowIdx.fill(i, a.rowPtr[i]!, a.rowPtr[i + 1]!);
  return { format: 'coo', rows: a.rows, cols: a.cols, nnz, rowIdx, colIdx: a.colIdx.slice(), values: a.values.slice() };
}

/** COO → canonical CSR (duplicates summed). */
export function cooToCsr(m: CooMatrix): CsrMatrix {
  return csrFromTriplets(m.rows, m.cols, m.rowIdx, m.colIdx, m.values);
}

/** y = A·x over triplets, float64. */
export function cooSpmv(m: CooMatrix, x: Float64Array, y?: Float64Array): Float64Array {
  if (x.length !== m.cols) throw new DimensionMismatchError('cooSpmv x', m.cols, x.length);
  const out = y ?? new Float64Array(m.rows);
  out.fill(0);
  for (let k = 0; k < m.nnz; k++) out[m.rowIdx[k]!]! += m.values[k]! * x[m.colIdx[k]!]!;
  return out;
}

/** COO as a {@link FormatDescriptor}. */
export const cooFormat: FormatDescriptor<CooMatrix, Record<string, never>> = {
  name: 'coo',
  title: 'COO',
  source: 'survey §2.1.3 (sparse-format-survey-zh.md)',
  defaultParams: {},
  fromCsr: cooFromCsr,
  toCsr: cooToCsr,
  spmvReference: cooSpmv,
  storageBytes(m, opts = {}) {
    const vb = opts.valueBytes ?? 8;
    const ib = opts.indexBytes ?? 4;
    return makeStorageInfo(m.nnz, m.nnz, { values: m.nnz * vb, rowIdx: m.nnz * ib, colIdx: m.nnz * ib });
  },
};
