/**
 * Streamed CSR and streamed BCSR (survey §2.3.3): two formats, two descriptors.
 * @module
 */
import type { FormatDescriptor } from '../core/types';
import { type SbcsrMatrix, type SbcsrParams, sbcsrDefaultParams, sbcsrFromCsr, sbcsrSpmv, sbcsrStorageBytes, sbcsrToCsr } from './sbcsr';
import { type ScsrMatrix, type ScsrParams, scsrDefaultParams, scsrFromCsr, scsrSpmv, scsrStorageBytes, scsrToCsr } from './scsr';

export * from './sbcsr';
export * from './scsr';

/**
 * Streamed CSR as a {@link FormatDescriptor}.
 * @example
 * const s = scsrFormat.fromCsr(a, { numStreams: 8 });
 */
export const scsrFormat: FormatDescriptor<ScsrMatrix, ScsrParams> = {
  name: 'scsr',
  title: 'Streamed CSR',
  source: 'survey §2.3.3.1 (sparse-format-survey-zh.md)',
  defaultParams: scsrDefaultParams,
  fromCsr: scsrFromCsr,
  toCsr: scsrToCsr,
  spmvReference: scsrSpmv,
  storageBytes: scsrStorageBytes,
};

/**
 * Streamed BCSR as a {@link FormatDescriptor}.
 * @example
 * const s = sbcsrFormat.fromCsr(a, { blockSize: 4 });
 */
export const sbcsrFormat: FormatDescriptor<SbcsrMatrix, SbcsrParams> = {
  name: 'sbcsr',
  title: 'Streamed BCSR',
  source: 'survey §2.3.3.2 (sparse-format-survey-zh.md)',
  defaultParams: sbcsrDefaultParams,
  fromCsr: sbcsrFromCsr,
  toCsr: sbcsrToCsr,
  spmvReference: sbcsrSpmv,
  storageBytes: sbcsrStorageBytes,
};
