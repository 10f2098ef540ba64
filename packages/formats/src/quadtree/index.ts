/**
 * Quad-tree CSR (survey §2.2.3) and the minimal quadtree (survey §2.2.4): two formats, two descriptors.
 * @module
 */
import type { FormatDescriptor } from '../core/types';
import { type MqtMatrix, type MqtParams, mqtFromCsr, mqtSpmv, mqtStorageBytes, mqtToCsr } from './mqt';
import { type QcsrMatrix, type QcsrParams, qcsrDefaultParams, qcsrFromCsr, qcsrSpmv, qcsrStorageBytes, qcsrToCsr } from './qcsr';

export * from './mqt';
export * from './qcsr';

/**
 * Quad-tree CSR as a {@link FormatDescriptor}.
 * @example
 * const q = qcsrFormat.fromCsr(a, { leafSize: 64 });
 */
export const qcsrFormat: FormatDescriptor<QcsrMatrix, QcsrParams> = {
  name: 'qcsr',
  title: 'Quad-tree CSR',
  source: 'survey §2.2.3 (sparse-format-survey-zh.md); Zhang et al. 2013',
  defaultParams: qcsrDefaultParams,
  fromCsr: qcsrFromCsr,
  toCsr: qcsrToCsr,
  spmvReference: qcsrSpmv,
  storageBytes: qcsrStorageBytes,
};

/**
 * Minimal quadtree as a {@link FormatDescriptor}.
 * @example
 * const q = mqtFormat.fromCsr(a);
 */
export const mqtFormat: FormatDescriptor<MqtMatrix, MqtParams> = {
  name: 'mqt',
  title: 'Minimal quadtree',
  source: 'survey §2.2.4 (sparse-format-survey-zh.md); Šimeček, Langr & Tvrdík',
  defaultParams: {},
  fromCsr: mqtFromCsr,
  toCsr: mqtToCsr,
  spmvReference: mqtSpmv,
  storageBytes: mqtStorageBytes,
};
