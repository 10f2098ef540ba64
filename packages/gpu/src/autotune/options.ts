/**
 * The options of a tuning run checked (a bad one is an InvalidParameterError naming the option,
 * what was expected and the value)
 * and the empty report the run fills in.
 * @module
 */
import { type CsrMatrix, InvalidParameterError } from '@gpusparse/formats';
import { REPORT_GLOSSARY, type TuningReport } from './report';
import type { AutotuneOptions } from './types';

/**
 * Check the numeric options; throws InvalidParameterError ('autotune <option>': what was expected
 * and what came; the CLI's bad-input exit, not a bug). O(1).
 * @example validateOptions({ fraction: 2 }, kernels) // InvalidParameterError "parameter autotune fraction: expected a number in (0, 1], got 2"
 */
export function validateOptions(opts: AutotuneOptions, ks: readonly { readonly id: string }[]): void {
  // a candidate id outside the kernels tuned over was dropped without a word ('no candidate', or a
  // tuning over the others only): a typo in a list of candidates must not change what is tuned
  const unknown = (opts.candidates ?? []).map((c) => (typeof c === 'string' ? c : c.kernel)).filter((id) => !ks.some((k) => k.id === id));
  if (unknown.length > 0) throw new InvalidParameterError('autotune candidates', `ids of the kernels tuned over (${ks.map((k) => k.id).join(', ')})`, unknown.map((id) => `'${id}'`).join(', '));
  const fraction = opts.fraction ?? 0.1;
  if (!(fraction > 0 && fraction <= 1)) throw new InvalidParameterError('autotune fraction', 'a number in (0, 1]', fraction);
  for (const f of ['budgetMs', 'expectedProducts'] as const) {
    const v = opts[f];
    if (v !== undefined && !(v > 0)) throw new InvalidParameterError(`autotune ${f}`, 'a number > 0', v);
  }
  for (const f of ['reps', 'rounds', 'maxTimed'] as const) {
    const v = opts[f];
    if (v !== undefined && !(Number.isInteger(v) && v >= 1)) throw new InvalidParameterError(`autotune ${f}`, 'an integer ≥ 1', v);
  }
}

/** The report of a run before anything is measured. O(1). */
export function newReport(a: CsrMatrix, opts: AutotuneOptions, warnings: string[]): TuningReport {
  return {
    rows: a.rows,
    cols: a.cols,
    nnz: a.rowPtr[a.rows] ?? 0,
    key: '',
    source: 'tuned',
    cacheWhere: 'none',
    expectedProducts: opts.expectedProducts ?? 0,
    budgetMs: opts.budgetMs !== undefined ? (opts.fraction ?? 0.1) * opts.budgetMs : Number.POSITIVE_INFINITY,
    spentMs: 0,
    statsMs: 0,
    costs: { statsMs: 0, vectorsMs: 0, conversionMs: 0, uploadMs: 0, timingMs: 0, verifyMs: 0, compileMs: 0 },
    method: 'none',
    trials: [],
    timed: 0,
    pruned: 0,
    failed: 0,
    rejected: 0,
    warnings,
    glossary: REPORT_GLOSSARY,
  };
}
