/**
 * Davidson's convergence rules: PySCF's absolute one by default (|Δθ| < tol and ‖r‖ <
 * residualTol = √tol), the relative one of Lanczos and LOBPCG with `rtol`
 * (docs/guides/eigen-convergence.md).
 * @module
 */
import { InvalidParameterError } from '@gpusparse/formats';
import { eigenTolerance, residualThreshold, toleranceReport } from '../common/eigen-tolerance';
import type { EigenToleranceReport } from '../common/result';
import { checkPositive } from './common';

/** The tolerance options the rules read (a subset of DavidsonCoreOptions). */
export interface DavidsonRuleOptions {
  tol?: number;
  residualTol?: number;
  rtol?: number;
  atol?: number;
}

/** The residual and energy thresholds of a run, as functions of ‖A‖est, and their report. */
export interface DavidsonRule {
  residual(normA: number): number;
  energy(normA: number): number;
  report(normA: number): EigenToleranceReport;
}

/** Davidson's two convergence rules: absolute (PySCF) by default, relative with `rtol`. */
export function davidsonRule(name: string, o: DavidsonRuleOptions, f32: boolean, dMax: number): DavidsonRule {
  checkPositive(`${name} tol`, o.tol);
  if (o.rtol !== undefined) {
    if (o.residualTol !== undefined) throw new InvalidParameterError(`${name} residualTol`, 'undefined when rtol is given (rtol replaces the absolute rule)', o.residualTol);
    const t = eigenTolerance(name, { tol: o.rtol, atol: o.atol }, o.rtol);
    const energy = (normA: number) => o.tol ?? o.rtol! * normA;
    return {
      residual: (normA) => residualThreshold(t, normA),
      energy,
      report: (normA) => ({ ...toleranceReport(t, normA), rule: '‖A·v − λ·v‖ ≤ max(rtol·‖A‖est, atol) and |Δλ| < energyTol', energyTol: energy(normA) }),
    };
  }
  checkPositive(`${name} residualTol`, o.residualTol);
  if (o.atol !== undefined) throw new InvalidParameterError(`${name} atol`, 'undefined unless rtol is given (a floor of the relative rule)', o.atol);
  const tol = o.tol ?? (f32 ? 1e-6 * Math.max(1, dMax) : 1e-10);
  const residualTol = o.residualTol ?? (f32 ? 1e-4 * Math.max(1, dMax) : Math.sqrt(tol));
  // a default threshold is made for ‖A‖ ≳ 1 (Eh): on A·1e-15 every residual passed 1e-4 at the
  // first look and wrong pairs came back 'converged'; below ‖A‖ = 1 it shrinks with A's scale
  const small = (normA: number): number => (dMax <= 1 && normA > 0 && normA < 1 ? Math.max(dMax, normA) : 1);
  const res = (normA: number): number => (o.residualTol === undefined ? residualTol * small(normA) : residualTol);
  const energy = (normA: number): number => (o.tol === undefined ? tol * small(normA) : tol);
  return {
    residual: res,
    energy,
    report: (normA) => ({ rule: 'absolute: |Δλ| < energyTol and ‖A·v − λ·v‖ ≤ residualTol', atol: res(normA), threshold: res(normA), energyTol: energy(normA) }),
  };
}
