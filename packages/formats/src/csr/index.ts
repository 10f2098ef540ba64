/**
 * CSR (compressed sparse row), seed 001 §3.1. Storage (seed 001 §4.1):
 * nnz·sizeof(value) + nnz·sizeof(index) + (rows + 1)·sizeof(index).
 * @module
 */
import type { CsrMatrix, FormatDescriptor, StorageInfo, StorageOptions } from '../core/types';
import { makeStorageInfo } from '../core/types';
import { InvalidMatrixError } from '../core/errors';
import { CANONICAL, csrFields, vouch } from '../core/validate';
import { csr, csrNnz, csrSpmv, validateCsr } from './csr';

export * from './csr';
export * from './wasm/index';
export * from './symmetry';

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
    validateCsr(a, 'csrFormat.fromCsr');
    const { rows, cols } = a;
    const out: CsrFormatMatrix = { format: 'csr', rows, cols, nnz: csrNnz(a), rowPtr: a.rowPtr.slice(), colIdx: a.colIdx.slice(), values: a.values.slice() };
    return vouch(out, csrFields(out), CANONICAL); // copies of a validated matrix
  },
  toCsr(m) {
    validateCsr(m, 'csrFormat.toCsr');
    if (m.nnz !== csrNnz(m)) throw new InvalidMatrixError('csrFormat.toCsr', `nnz = ${m.nnz} but rowPtr[rows] = ${csrNnz(m)}: expected them equal`);
    return csr(m.rows, m.cols, m.rowPtr.slice(), m.colIdx.slice(), m.values.slice(), { unchecked: true });
  },
  spmvReference: (m, x, y) => csrSpmv(m, x, y),
  storageBytes: csrStorageBytes,
};
