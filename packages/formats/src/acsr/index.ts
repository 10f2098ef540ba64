/**
 * Adaptive CSR row blocks (survey §2.3.2, Greathouse & Daga 2014).
 * @module
 */
import type { FormatDescriptor } from '../core/types';
import { type AcsrMatrix, type AcsrParams, acsrDefaultParams, acsrFromCsr, acsrSpmv, acsrStorageBytes, acsrToCsr } from './acsr';

export * from './acsr';

/**
 * Adaptive CSR as a {@link FormatDescriptor}.
 * @example
 * const m = acsrFormat.fromCsr(a, { blockNnz: 512 });
 */
export const acsrFormat: FormatDescriptor<AcsrMatrix, AcsrParams> = {
  name: 'acsr',
  title: 'CSR-Adaptive (row blocks)',
  source: 'survey §2.3.2 (sparse-format-survey-zh.md); Greathouse & Daga 2014',
  defaultParams: acsrDefaultParams,
  fromCsr: acsrFromCsr,
  toCsr: acsrToCsr,
  spmvReference: acsrSpmv,
  storageBytes: acsrStorageBytes,
};
