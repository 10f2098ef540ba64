/**
 * BCSR (survey §2.2.1): CSR over dense r×c blocks.
 * @module
 */
import type { FormatDescriptor } from '../core/types';
import { type BcsrMatrix, type BcsrParams, bcsrDefaultParams, bcsrFromCsr, bcsrSpmv, bcsrStorageBytes, bcsrToCsr } from './bcsr';

export * from './bcsr';

/**
 * BCSR as a {@link FormatDescriptor}.
 * @example
 * const b = bcsrFormat.fromCsr(a, { blockRows: 2, blockCols: 4 });
 */
export const bcsrFormat: FormatDescriptor<BcsrMatrix, BcsrParams> = {
  name: 'bcsr',
  title: 'BCSR (blocked CSR)',
  source: 'survey §2.2.1 (sparse-format-survey-zh.md); Im, Yelick & Vuduc 2004',
  defaultParams: bcsrDefaultParams,
  fromCsr: bcsrFromCsr,
  toCsr: bcsrToCsr,
  spmvReference: bcsrSpmv,
  storageBytes: bcsrStorageBytes,
};
