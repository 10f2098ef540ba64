/**
 * SELL-C-σ, survey §2.3.4: chunks of C rows, rows sorted by length within windows of σ rows.
 * Storage: C·Σ chunk widths slots of (value + index), chunk pointers and widths, and the row
 * permutation when σ > 1.
 * @module
 */
import type { FormatDescriptor } from '../core/types';
import { type SellMatrix, type SellParams, sellDefaults, sellFromCsr, sellSpmv, sellStorageBytes, sellToCsr } from './sell';

export { checkSellParams, type SellMatrix, type SellParams, sellDefaults, sellFromCsr, sellRowOrder, sellSpmv, sellStorageBytes, sellToCsr, validateSell } from './sell';

/**
 * SELL-C-σ as a {@link FormatDescriptor}; parameters `C` (default 32) and `sigma` (default 128).
 * @example
 * const m = sellFormat.fromCsr(a, { C: 32, sigma: 1 }); // no sorting
 */
export const sellFormat: FormatDescriptor<SellMatrix, SellParams> = {
  name: 'sell',
  title: 'SELL-C-σ',
  source: 'survey §2.3.4 (sparse-format-survey-zh.md), Kreutzer et al. 2014',
  defaultParams: sellDefaults,
  fromCsr: sellFromCsr,
  toCsr: sellToCsr,
  spmvReference: sellSpmv,
  storageBytes: sellStorageBytes,
};
