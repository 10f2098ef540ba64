/**
 * DIA (survey §2.1.1): offsets plus padded diagonals; also the diagonal statistics used by the
 * autotuner and the helpers shared by the diagonal and survey formats.
 * @module
 */
import type { FormatDescriptor } from '../core/types';
import { type DiaMatrix, type DiaParams, diaDefaultParams, diaFromCsr, diaSpmv, diaStorageBytes, diaToCsr } from './dia';

export * from './dia';
export * from './stats';

/**
 * DIA as a {@link FormatDescriptor}.
 * @example
 * const d = diaFormat.fromCsr(a, { maxDiagonals: 64 });
 */
export const diaFormat: FormatDescriptor<DiaMatrix, DiaParams> = {
  name: 'dia',
  title: 'DIA (diagonal)',
  source: 'survey §2.1.1 (sparse-format-survey-zh.md); Bell & Garland 2008',
  defaultParams: diaDefaultParams,
  fromCsr: diaFromCsr,
  toCsr: diaToCsr,
  spmvReference: diaSpmv,
  storageBytes: diaStorageBytes,
};
