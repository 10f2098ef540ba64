/**
 * CSR-VI with column windows (issue 20): 4-byte word entries (column offset in a window | value-table
 * index) for the values a matrix repeats, a raw stream for the rest. See ./csr-vi.ts.
 * @module
 */
import type { FormatDescriptor } from '../core/types';
import { type CsrViMatrix, type CsrViParams, csrViFromCsr, csrViSpmv, csrViStorageBytes, csrViToCsr } from './csr-vi';

export { type CsrViParallelOptions, csrViFromCsrParallel } from './parallel';
export { type CsrViMatrix, type CsrViParams, type CsrViPlan, csrViFromCsr, csrViPlan, csrViSpmv, csrViStorageBytes, csrViToCsr, validateCsrVi } from './csr-vi';

/**
 * CSR-VI with column windows as a {@link FormatDescriptor}; `valueBits` 0 (default) is chosen from the matrix.
 * @example const m = csrViFormat.fromCsr(a); csrViFormat.spmvReference(m, x);
 */
export const csrViFormat: FormatDescriptor<CsrViMatrix, CsrViParams> = {
  name: 'csr-vi',
  title: 'CSR-VI with column windows (32-bit words: window offset | value-table index; raw stream for the rest)',
  source: 'CSR-VI (Kourtis, Goumas, Koziris 2008) value indexing; column windows: issue 20 (bench/RESULTS.md session 13)',
  defaultParams: { valueBits: 0 },
  fromCsr: (a, p) => csrViFromCsr(a, p),
  toCsr: csrViToCsr,
  spmvReference: csrViSpmv,
  storageBytes: csrViStorageBytes,
};
