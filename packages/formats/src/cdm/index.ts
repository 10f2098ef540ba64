/**
 * CDM compact diagonal storage (seed 002 §3.2) and its reverse compact diagonals (§4).
 * @module
 */
import type { FormatDescriptor } from '../core/types';
import { type CdmMatrix, type CdmParams, cdmDefaultParams, cdmFromCsr, cdmSpmv, cdmStorageBytes, cdmToCsr } from './cdm';

export * from './cdm';
export * from './reverse';

/**
 * CDM as a {@link FormatDescriptor} (square matrices only).
 * @example
 * const c = cdmFormat.fromCsr(banded(64, 2, 2));
 */
export const cdmFormat: FormatDescriptor<CdmMatrix, CdmParams> = {
  name: 'cdm',
  title: 'CDM compact diagonal storage',
  source: 'seed 002 §3.2, §4, §6.1 (diagonal-storage-spgemm.md)',
  defaultParams: cdmDefaultParams,
  fromCsr: cdmFromCsr,
  toCsr: cdmToCsr,
  spmvReference: cdmSpmv,
  storageBytes: cdmStorageBytes,
};
