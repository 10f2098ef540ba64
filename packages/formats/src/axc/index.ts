/**
 * AXC (seed 004 §2.2): matrix entries and the x values they multiply stored together in bricks
 * of 2·HBRs, with a row pointer to each row's first brick.
 * @module
 */
import type { FormatDescriptor } from '../core/types';
import { type AxcMatrix, type AxcParams, axcDefaultParams, axcFromCsr, axcToCsr } from './layout';
import { axcSpmvReference } from './spmv-reference';
import { axcStorageBytes } from './storage';

export * from './layout';
export * from './spmv-reference';
export * from './storage';

/**
 * AXC as a {@link FormatDescriptor}.
 * @example
 * const m = axcFormat.fromCsr(a, { hbrs: 8 }); const y = axcFormat.spmvReference(m, x);
 */
export const axcFormat: FormatDescriptor<AxcMatrix, AxcParams> = {
  name: 'axc',
  title: 'AXC',
  source: 'seed 004 §2.2, Listings 1–2 (axt-format.md)',
  defaultParams: axcDefaultParams,
  fromCsr: axcFromCsr,
  toCsr: axcToCsr,
  spmvReference: axcSpmvReference,
  storageBytes: axcStorageBytes,
};
