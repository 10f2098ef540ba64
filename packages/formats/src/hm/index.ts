/**
 * HM diagonal storage (seed 002 §3.1): the occupied diagonals back to back without padding.
 * @module
 */
import type { FormatDescriptor } from '../core/types';
import { type HmMatrix, type HmParams, hmDefaultParams, hmFromCsr, hmSpmv, hmStorageBytes, hmToCsr } from './hm';

export * from './hm';

/**
 * HM as a {@link FormatDescriptor}.
 * @example
 * const h = hmFormat.fromCsr(a);
 */
export const hmFormat: FormatDescriptor<HmMatrix, HmParams> = {
  name: 'hm',
  title: 'HM diagonal storage (Hossain & Mahmud)',
  source: 'seed 002 §3.1, §6.2 (diagonal-storage-spgemm.md)',
  defaultParams: hmDefaultParams,
  fromCsr: hmFromCsr,
  toCsr: hmToCsr,
  spmvReference: hmSpmv,
  storageBytes: hmStorageBytes,
};
