/**
 * The eigensolvers' residual rule, in one place (docs/guides/eigen-convergence.md):
 *
 *     ‖A·v − λ·v‖₂ ≤ max(tol·‖A‖est, atol)
 *
 * with ‖A‖est the largest |Ritz value| seen so far (a lower bound of ‖A‖₂ that reaches it within
 * a few iterations, since Krylov and block methods find both ends of the spectrum early). This is
 * PRIMME's default and a backward-error statement: a pair that passes is an exact eigenpair of
 * A + E with ‖E‖ ≤ tol·‖A‖. An absolute threshold (`residualTol`), when given, replaces the rule;
 * that is what chemists use for CI energies in Eh.
 * @module
 */
import { InvalidParameterError } from '@gpusparse/formats';
import type { EigenToleranceReport } from './result';

/** The rule resolved from a solver's options. */
export interface EigenTolerance {
  /** Relative residual tolerance (ignored when `absolute` is set). */
  tol: number;
  /** Absolute floor of the relative rule. */
  atol: number;
  /** An absolute threshold that replaces the relative rule (the caller's `residualTol`). */
  absolute: number | undefined;
}

/**
 * Validate and default the tolerance options of an eigensolver.
 * @example
 * const t = eigenTolerance('lanczos', { tol: 1e-10 }, 1e-8); // { tol: 1e-10, atol: 0, absolute: undefined }
 */
export function eigenTolerance(where: string, o: { tol?: number | undefined; atol?: number | undefined; residualTol?: number | undefined }, defaultTol: number): EigenTolerance {
  const positive = (name: string, x: number | undefined): void => {
    if (x !== undefined && !(Number.isFinite(x) && x > 0)) throw new InvalidParameterError(`${where} ${name}`, 'a finite number > 0', x);
  };
  positive('tol', o.tol);
  // a relative tolerance ≥ 1 accepts any unit vector (lanczos 'converged' to 2.24 and 6.30 for 0.40 and 0.95)
  if (o.tol !== undefined && o.tol >= 1) throw new InvalidParameterError(`${where} tol`, 'a relative tolerance below 1 (≥ 1 accepts any vector; residualTol is the absolute rule)', o.tol);
  positive('residualTol', o.residualTol);
  if (o.atol !== undefined && !(Number.isFinite(o.atol) && o.atol >= 0)) throw new InvalidParameterError(`${where} atol`, 'a finite number ≥ 0', o.atol);
  return { tol: o.tol ?? defaultTol, atol: o.atol ?? 0, absolute: o.residualTol };
}

/**
 * The residual threshold for the current ‖A‖ estimate.
 * @example
 * residualThreshold({ tol: 1e-8, atol: 0, absolute: undefined }, 6.7e7); // 0.67
 */
export function residualThreshold(t: EigenTolerance, normEstimate: number): number {
  return t.absolute ?? Math.max(t.tol * normEstimate, t.atol);
}

/**
 * The report stored in the result (`EigenResult.tolerance`).
 * @example
 * toleranceReport(t, 6.7e7); // { rule: '‖A·v − λ·v‖ ≤ max(tol·‖A‖est, atol)', tol: 1e-8, atol: 0, normEstimate: 6.7e7, threshold: 0.67 }
 */
export function toleranceReport(t: EigenTolerance, normEstimate: number): EigenToleranceReport {
  if (t.absolute !== undefined) return { rule: 'absolute: ‖A·v − λ·v‖ ≤ residualTol', atol: t.absolute, threshold: t.absolute };
  return { rule: '‖A·v − λ·v‖ ≤ max(tol·‖A‖est, atol)', tol: t.tol, atol: t.atol, normEstimate, threshold: residualThreshold(t, normEstimate) };
}
