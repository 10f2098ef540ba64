/**
 * A starting BOUNDARY for the hybrid ELL + CSR format, after Ginkgo's hybrid strategies
 * (`gko::matrix::Hybrid::imbalance_limit`, used by `automatic` with percent 1/3): sort the
 * row lengths ascending and take the one at position floor(rows · percent).
 * @module
 */
import { InvalidParameterError } from '../core/errors';
import { rowLengthPercentile, sortedRowLengths } from '../core/row-stats';
import type { CsrMatrix } from '../core/types';

/** Options of {@link hybridAutoBoundary}. */
export interface HybridAutoBoundaryOptions {
  /** Quantile of the row lengths, in [0, 1]; default 1/3 (Ginkgo `automatic`). */
  readonly percent?: number;
  /**
   * Optional cap BOUNDARY ≤ floor(rows · ratio) (Ginkgo `imbalance_bounded_limit`; its
   * `automatic` uses 0.001, which empties the ELL part below 1000 rows, so we apply no cap
   * unless asked).
   */
  readonly ratio?: number;
}

/**
 * BOUNDARY = the row length at sorted position floor(rows · percent) (default percent 1/3:
 * about a third of the rows are shorter, so at least two thirds fill the ELL part without
 * padding). This is a starting point; the autotuner refines it by measurement.
 * Cost: O(rows + longest row) (a counting sort of the row lengths).
 * @example
 * hybridAutoBoundary(csrFromDense([[1, 0, 0], [1, 1, 0], [1, 1, 1]])); // 2 (lengths 1, 2, 3)
 */
export function hybridAutoBoundary(a: CsrMatrix, opts: HybridAutoBoundaryOptions = {}): number {
  const percent = opts.percent ?? 1 / 3;
  if (!(percent >= 0 && percent <= 1)) throw new InvalidParameterError('percent', 'a number in [0, 1]', percent);
  let b = rowLengthPercentile(sortedRowLengths(a), percent);
  if (opts.ratio !== undefined) {
    if (!(opts.ratio >= 0)) throw new InvalidParameterError('ratio', 'a number ≥ 0', opts.ratio);
    b = Math.min(b, Math.floor(a.rows * opts.ratio));
  }
  return b;
}
