/**
 * ELLPACK-R (ELL-R), seed 001 §3.3: ELL plus the row-length array rl[].
 * Storage: rows·width·(sizeof(value) + sizeof(index)) + rows·sizeof(index).
 * @module
 */
import type { FormatDescriptor } from '../core/types';
import { type EllRMatrix, ellRFromCsr, ellRSpmv, ellRStorageBytes, ellRToCsr } from './ell-r';

export { type EllRMatrix, ellRFromCsr, ellRSpmv, ellRStorageBytes, ellRToCsr, validateEllR } from './ell-r';

/**
 * ELL-R as a {@link FormatDescriptor}; no parameters.
 * @example
 * const m = ellRFormat.fromCsr(a); ellRFormat.spmvReference(m, x);
 */
export const ellRFormat: FormatDescriptor<EllRMatrix, Record<string, never>> = {
  name: 'ell-r',
  title: 'ELLPACK-R (ELL-R)',
  source: 'seed 001 §3.3 (hybrid-ell-csr-ci-spmv.md)',
  defaultParams: {},
  fromCsr: (a) => ellRFromCsr(a),
  toCsr: ellRToCsr,
  spmvReference: ellRSpmv,
  storageBytes: ellRStorageBytes,
};
