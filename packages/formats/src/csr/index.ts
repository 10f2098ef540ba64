/**
 * CSR (compressed sparse row), seed 001 §3.1. Storage (seed 001 §4.1):
 * nnz·sizeof(value) + nnz·sizeof(index) + (rows + 1)·sizeof(index).
 * @module
 */
import type { CsrMatrix, FormatDescriptor, StorageInfo, StorageOptions } from '../core/types';
import { makeStorageInfo } from '../core/types';
import { csrNnz, csrSpmv } from './csr';

export * from './csr';
export * from './wasm/index';

/** The CSR data type with its non-zero count (CSR is also the hub type {@link CsrMatrix}). */
export type CsrFormatMatrix = CsrMatrix & { readonly nnz: number };

/** CSR storage per seed 001 §4.1. */
export function csrStorageBytes(a: CsrMatrix, opts: StorageOptions = {}): StorageInfo {
  const vb = opts.valueBytes ?? 8;
  const ib = opts.indexBytes ?? 4;
  const nnz = csrNnz(a);
  return makeStorageInfo(nnz, nnz, { values: nnz * vb, colIdx: nnz * ib, rowPtr: (a.rows + 1) * ib });
}

/** CSR as a {@link FormatDescriptor}: conversions are copies. */
export const csrFormat: FormatDescriptor<CsrFormatMatrix, Record<string, never>> = {
  name: 'csr',
  title: 'CSR',
  source: 'seed 001 §3.1 (hybrid-ell-csr-ci-spmv.md); survey §2.1.4',
  defaultParams: {},
  fromCsr(a) {
    return {
      format: 'csr',
      rows: a.rows,
      cols: a.cols,
      nnz: csrNnz(a),
      rowPtr: a.rowPtr.slice(),
      colIdx: a.colIdx.slice(),
      values: a.values.slice(),
    };
  },
  toCsr(m) {
    return { format: 'csr', rows: m.rows, cols: m.cols, rowPtr: m.rowPtr.slice(), colIdx: m.colIdx.slice(), values: m.values.slice() };
  },
  spmvReference: (m, x, y) => csrSpmv(m, x, y),
  storageBytes: csrStorageBytes,
};
