/**
 * CMRS (survey §2.3.1): compressed multi-row storage.
 * @module
 */
import type { FormatDescriptor } from '../core/types';
import { type CmrsMatrix, type CmrsParams, cmrsDefaultParams, cmrsFromCsr, cmrsSpmv, cmrsStorageBytes, cmrsToCsr } from './cmrs';

export * from './cmrs';

/**
 * CMRS as a {@link FormatDescriptor}.
 * @example
 * const c = cmrsFormat.fromCsr(a, { stripHeight: 4 });
 */
export const cmrsFormat: FormatDescriptor<CmrsMatrix, CmrsParams> = {
  name: 'cmrs',
  title: 'CMRS (compressed multi-row storage)',
  source: 'survey §2.3.1 (sparse-format-survey-zh.md); Koza et al. 2014',
  defaultParams: cmrsDefaultParams,
  fromCsr: cmrsFromCsr,
  toCsr: cmrsToCsr,
  spmvReference: cmrsSpmv,
  storageBytes: cmrsStorageBytes,
};
