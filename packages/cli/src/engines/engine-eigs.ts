/**
 * `gpusparse eigs --engine slepc --np N`: the same eigenproblem through SLEPc's EPS
 * (Krylov–Schur, generalized Davidson, Jacobi–Davidson or LOBPCG) under MPI, read back into the
 * same result object, table and JSON as the built-in backends.
 * @module
 */
import type { CsrMatrix } from '@gpusparse/formats';
import type { EigenResult } from '@gpusparse/solvers';
import { linePlot } from '../plots/svg';
import { type CommonOptions, ExitCode, info, out, printJson, UsageError } from '../util/context';
import { writeOutputFile } from '../util/output';
import { formatTable } from '../util/table';
import { stopReasonOf } from './engine-solve';
import { type DriverResult, engineArgOptions, type EngineOptions, runEngine } from './petsc-engine';

export { parseEngineOptions } from './petsc-engine';

/** Options `eigs` gains: --engine, --np, --petsc-option and --eps-type. */
export const engineEigsOptions = { ...engineArgOptions, 'eps-type': { type: 'string' } } as const;

/** EPS types `--eps-type` takes. */
export const EPS_TYPES = ['krylovschur', 'gd', 'jd', 'lobpcg', 'lanczos'] as const;

/** Our eigen method → the SLEPc solver of the same family. */
const EPS_OF_METHOD: Record<string, string> = { lanczos: 'krylovschur', davidson: 'gd', lobpcg: 'lobpcg' };

/** The options of `eigs` the engine uses (as parseEigsOptions gives them). */
export interface EngineEigsInput {
  name: string;
  a: CsrMatrix;
  k: number;
  method: string;
  which: 'smallest' | 'largest';
  tol: number;
  maxIterations: number | undefined;
  /** 'on': shift-invert at 0 (SPD, smallest) with a Cholesky factorisation (MUMPS when np > 1). */
  shiftInvert: string;
  /** --eps-type, when given (else from the method). */
  epsType: string | undefined;
  /** --plot: the residual history of every pair (SLEPc's monitor) as SVG. */
  plot: string | undefined;
  /** --residual-tol (SLEPc's absolute test) or --atol (no SLEPc equivalent: refused). */
  abs: { atol?: number; residualTol?: number };
}

/** SLEPc's answer as our EigenResult (vectors not read back: eigs prints values and residuals). */
export function eigenResultOf(p: DriverResult, k: number, tol: number, conv: 'norm' | 'abs'): EigenResult<Float64Array> {
  const values = p.values as number[];
  const residualNorms = p.residualNorms as number[];
  const enough = values.length >= k;
  const normInf = Number(p.normInf);
  return {
    values,
    vectors: [],
    residualNorms,
    converged: enough,
    reason: enough ? 'converged' : stopReasonOf(p.reason, p.reasonCode <= 0 ? p.reasonCode : -1),
    iterations: p.iterations,
    history: (p.history as [number, number, number[], number[]][]).map(([iteration, , vals, res]) => ({ iteration, values: vals, residualNorms: res })),
    stats: { matvecs: p.matMults, precondApplies: Number(p.pcApplies ?? 0), readbacks: 0, ms: p.solveSeconds * 1000 },
    method: `${p.epsType} (SLEPc EPS, st ${p.stType})`,
    detail: `SLEPc EPS_${p.reason} (${p.reasonCode}); ${p.converged} pairs converged of ${k} asked`,
    tolerance:
      conv === 'abs'
        ? { rule: 'SLEPc EPS_CONV_ABS: ‖A·v − λ·v‖ ≤ tol', atol: tol, threshold: tol }
        : { rule: `SLEPc EPS_CONV_NORM: ‖A·v − λ·v‖ ≤ tol·‖A‖ (‖A‖∞ from PETSc)${p.stType === 'sinvert' ? ', tested by SLEPc on the shift-inverted operator (ST sinvert), not on A' : ''}`, tol, atol: 0, normEstimate: normInf, threshold: tol * normInf },
  };
}

/**
 * A note naming the pairs whose recomputed ‖A v − λ v‖ is above the rule's threshold: with ST
 * sinvert SLEPc tests the shift-inverted operator, so a pair it calls converged can be (1138_bus,
 * k = 6: 0.071 against tol·‖A‖ = 4.0e-4, while λ is right to 5e-10).
 */
export function residualsAboveThreshold(r: EigenResult<Float64Array>): string[] {
  const t = r.tolerance?.threshold;
  if (t === undefined) return [];
  const over = r.residualNorms.flatMap((x, j) => (x > t ? [`${j} (${x.toExponential(3)})`] : []));
  if (over.length === 0) return [];
  return [`‖A v − λ v‖ above the threshold ${t.toExponential(3)} for pair(s) ${over.join(', ')}: SLEPc's test passed on the operator it iterated with; --shift-invert off judges A's own residual`];
}

/** Which EPS type a run uses, checked. */
function epsTypeOf(e: EngineEigsInput): string {
  const t = e.epsType ?? EPS_OF_METHOD[e.method] ?? 'krylovschur';
  if (!(EPS_TYPES as readonly string[]).includes(t)) throw new UsageError(`--eps-type: expected one of ${EPS_TYPES.join(', ')}, got '${t}'`);
  if (e.shiftInvert === 'on' && t !== 'krylovschur' && t !== 'lanczos') throw new UsageError(`--shift-invert on with --engine slepc: only with Krylov–Schur or Lanczos, got --eps-type ${t}`);
  return t;
}

/** Solve through SLEPc and print like `eigs` does; returns the exit code. */
export async function eigsWithEngine(e: EngineEigsInput, eo: EngineOptions, common: CommonOptions): Promise<number> {
  if (e.abs.atol !== undefined) throw new UsageError('--atol with --engine slepc: SLEPc has no floor on its relative test; use --tol, or --residual-tol for an absolute threshold');
  const conv = e.abs.residualTol === undefined ? 'norm' : 'abs';
  const tol = e.abs.residualTol ?? e.tol;
  const eps = { type: epsTypeOf(e), which: e.which, nev: e.k, tol, maxit: e.maxIterations ?? 10000, vectors: false, shiftInvert: e.shiftInvert === 'on', conv };
  // eigensolvers are SLEPc's, whichever name was given
  return runEngine({ ...eo, engine: 'slepc' }, { task: 'eigs', matrix: e.a, eps }, async ({ result: p, wallMs, writeMs }) => {
    const r = eigenResultOf(p, e.k, tol, conv);
    if (e.plot) {
      const series = Array.from({ length: e.k }, (_, j) => ({ name: `λ${j}`, x: r.history.map((h) => h.iteration), y: r.history.map((h) => h.residualNorms[j] ?? Number.NaN) }));
      writeOutputFile(e.plot, linePlot(series, { title: `${e.name}: ${r.method}`, xLabel: 'iteration', yLabel: 'SLEPc error estimate', logY: true }));
      info(`residual history written to ${e.plot}`);
    }
    const backend = `SLEPc ${p.slepc} / PETSc ${p.petsc} over MPI, ${p.np} process${p.np === 1 ? '' : 'es'}`;
    const setupMs = writeMs + p.loadSeconds * 1000;
    const solveMs = r.stats.ms;
    const engine = { name: 'slepc', np: p.np, slepc: p.slepc, petsc: p.petsc, eps: p.epsType, st: p.stType, reason: `EPS_${p.reason}`, reasonCode: p.reasonCode, pairsConverged: p.converged, matType: p.matType, wallMs, passThrough: eo.passThrough };
    const nnz = e.a.rowPtr[e.a.rows];
    const summary = { matrix: e.name, rows: e.a.rows, nnz, backend, operator: `PETSc ${p.matType}`, method: r.method, which: e.which, converged: r.converged, reason: r.reason, detail: r.detail, tolerance: r.tolerance, iterations: r.iterations, values: r.values, residualNorms: r.residualNorms, setupMs, solveMs, stats: r.stats, notes: residualsAboveThreshold(r), engine };
    if (common.json) printJson(summary);
    else {
      out(`${e.name}: ${e.a.rows}×${e.a.cols}, nnz ${nnz}; backend: ${backend}; operator: PETSc ${p.matType}`);
      out(`${r.method}: ${r.converged ? 'converged' : `not converged (${r.reason})`} in ${r.iterations} iterations, ${solveMs.toFixed(1)} ms, ${r.stats.matvecs} matvecs`);
      out(`rule: ${r.tolerance!.rule}; threshold ${r.tolerance!.threshold.toExponential(3)}`);
      out(formatTable(['#', 'eigenvalue', '‖A v − λ v‖'], r.values.map((x, j) => [j, x.toPrecision(15), r.residualNorms[j]!])));
      out(`detail: ${r.detail}; mpiexec wall ${wallMs.toFixed(0)} ms`);
      for (const n of summary.notes) out(`note: ${n}`);
    }
    return r.converged ? ExitCode.ok : ExitCode.notConverged;
  });
}
