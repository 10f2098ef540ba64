/**
 * CSB (seed 001 §3.6): compressed sparse blocks of size z.
 * @module
 */
import type { FormatDescriptor } from '../core/types';
import { type CsbMatrix, type CsbParams, csbDefaultParams, csbFromCsr, csbSpmv, csbStorageBytes, csbToCsr } from './csb';

export * from './csb';

/**
 * CSB as a {@link FormatDescriptor}.
 * @example
 * const b = csbFormat.fromCsr(a, { blockSize: 16 });
 */
export const csbFormat: FormatDescriptor<CsbMatrix, CsbParams> = {
  name: 'csb',
  title: 'CSB (compressed sparse blocks)',
  source: 'seed 001 §3.6 (hybrid-ell-csr-ci-spmv.md); Buluç et al. 2009',
  defaultParams: csbDefaultParams,
  fromCsr: csbFromCsr,
  toCsr: csbToCsr,
  spmvReference: csbSpmv,
  storageBytes: csbStorageBytes,
};
