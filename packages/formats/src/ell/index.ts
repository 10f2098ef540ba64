/**
 * ELLPACK (ELL), seed 001 §3.2 and survey §2.1.2. Storage (seed 001 §4.1 (1)):
 * rows·MaxNonZeros·(sizeof(value) + sizeof(index)). Column-major slots: k·rows + i.
 * @module
 */
import type { FormatDescriptor } from '../core/types';
import { type EllMatrix, ellFromCsr, ellSpmv, ellStorageBytes, ellToCsr } from './ell';

export { type EllMatrix, ellFromCsr, ellRowLengths, ellSpmv, ellStorageBytes, ellStorageFormula, ellToCsr } from './ell';
export { MAX_ELL_SLOTS, PaddingOverflowError } from './ell-layout';

/**
 * ELL as a {@link FormatDescriptor}; no parameters (the width is the longest row).
 * @example
 * const e = ellFormat.fromCsr(a); ellFormat.storageBytes(e, { valueBytes: 4 }).beta;
 */
export const ellFormat: FormatDescriptor<EllMatrix, Record<string, never>> = {
  name: 'ell',
  title: 'ELLPACK (ELL)',
  source: 'seed 001 §3.2, §4.1 (hybrid-ell-csr-ci-spmv.md); survey §2.1.2',
  defaultParams: {},
  fromCsr: (a) => ellFromCsr(a),
  toCsr: ellToCsr,
  spmvReference: ellSpmv,
  storageBytes: ellStorageBytes,
};
