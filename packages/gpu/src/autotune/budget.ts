/**
 * The tuning budget: how much time a tuning run may spend (a share of the caller's work, at least
 * {@link MIN_BUDGET_MS}), set once the first product time is known, and — when a run spends more
 * than 1.2 × its budget — which fixed costs did it and why they could not be skipped.
 * @module
 */
import type { TuningReport } from './report';
import type { TrialSession } from './trials';
import type { AutotuneOptions } from './types';

/**
 * The smallest tuning budget (ms) when no budgetMs is stated: issue 16's overhead target is
 * "≤ 0.5 s or ≤ 10 % of the work it serves, whichever is larger", so the budget is that larger one.
 */
export const MIN_BUDGET_MS = 500;

/** The tuning budget once the first product time is known (and the expected products, when not stated). */
export function budgetFrom(opts: AutotuneOptions, s: TrialSession, report: TuningReport, firstMs: number): number {
  const fraction = opts.fraction ?? 0.1;
  const products = opts.expectedProducts ?? (opts.budgetMs !== undefined ? Math.max(1, Math.round(opts.budgetMs / firstMs)) : 1000);
  s.products = products;
  (report as { expectedProducts: number }).expectedProducts = products;
  if (opts.budgetMs !== undefined) return fraction * opts.budgetMs;
  return Math.max(fraction * products * firstMs, opts.minBudgetMs ?? MIN_BUDGET_MS);
}

/**
 * Over budget by more than 20 %: which fixed costs did it, and why they could not be skipped.
 * Undefined when within. O(1).
 */
export function budgetNote(r: TuningReport): string | undefined {
  const over = r.overheadMs ?? r.spentMs;
  if (!(over > 1.2 * r.budgetMs)) return undefined;
  const why: Record<string, string> = {
    statsMs: `statistics (${r.statsWhere === 'device' ? 'device kernels over the CSR upload and two readbacks' : 'one host pass over the matrix for row lengths and diagonals'}; candidate estimates)`,
    vectorsMs: 'the tuning vectors (creation and upload)',
    conversionMs: 'host conversions',
    uploadMs: `uploads (the CSR arrays once${r.csrUploadMs !== undefined ? `, ${r.csrUploadMs.toFixed(1)} ms with their validation,` : ''} needed whatever the budget: the statistics read them and a CSR operator reuses them)`,
    timingMs: 'timing (at least one round of the first candidate)',
    verifyMs: 'verification of the winner (one product, its readback and the float64 reference)',
  };
  const costs = { ...r.costs, uploadMs: r.costs.uploadMs - (r.spentMs - over) };
  const parts = Object.entries(costs)
    .sort((x, y) => y[1] - x[1])
    .filter(([, ms]) => ms > 0.05 * over)
    .map(([k, ms]) => `${why[k]} ${ms.toFixed(1)} ms`);
  const excluded = r.spentMs > over ? ` (plus the CSR upload, ${(r.spentMs - over).toFixed(1)} ms, that the operator reuses)` : '';
  return `spent ${over.toFixed(1)} ms${excluded} of a ${r.budgetMs.toFixed(1)} ms budget: the fixed costs that every tuning pays — ${parts.join('; ')} — exceed it`;
}
