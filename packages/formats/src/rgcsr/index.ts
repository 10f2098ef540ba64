/**
 * Row-grouped CSR (survey §2.2.2).
 * @module
 */
import type { FormatDescriptor } from '../core/types';
import { type RgcsrMatrix, type RgcsrParams, rgcsrDefaultParams, rgcsrFromCsr, rgcsrSpmv, rgcsrStorageBytes, rgcsrToCsr } from './rgcsr';

export * from './rgcsr';

/**
 * RgCSR as a {@link FormatDescriptor}.
 * @example
 * const g = rgcsrFormat.fromCsr(a, { groupSize: 64 });
 */
export const rgcsrFormat: FormatDescriptor<RgcsrMatrix, RgcsrParams> = {
  name: 'rgcsr',
  title: 'Row-grouped CSR',
  source: 'survey §2.2.2 (sparse-format-survey-zh.md); Heller & Oberhuber',
  defaultParams: rgcsrDefaultParams,
  fromCsr: rgcsrFromCsr,
  toCsr: rgcsrToCsr,
  spmvReference: rgcsrSpmv,
  storageBytes: rgcsrStorageBytes,
};
