/**
 * `gpusparse solve --engine petsc --np N`: the same solve through PETSc's KSP under MPI, read
 * back into the same result object, table and JSON as the built-in backends (with PETSc's own
 * iteration count and converged reason, and the true residual recomputed here in float64).
 * @module
 */
import { type CsrMatrix, readPetscVectors } from '@gpusparse/formats';
import type { SolveResult, StopReason } from '@gpusparse/solvers';
import { linePlot } from '../plots/svg';
import { type CommonOptions, ExitCode, info, out, printJson, printJsonWithArray, UsageError } from '../util/context';
import { writeOutputFile } from '../util/output';
import { relativeResidual } from '../util/rhs';
import { formatTable } from '../util/table';
import { writeSolution } from '../util/vector-output';
import { engineArgOptions, type EngineOptions, EngineRunError, runEngine } from './petsc-engine';

export { parseEngineOptions } from './petsc-engine';

/** Options `solve` gains: --engine, --np, --petsc-option and --pc. */
export const engineSolveOptions = { ...engineArgOptions, pc: { type: 'string' } } as const;

/** Our method names → PETSc KSP types. */
const KSP_TYPES: Record<string, string> = { cg: 'cg', gmres: 'gmres', bicgstab: 'bcgs', bicg: 'bicg' };

/** Preconditioners `--pc` takes (hypre only where the PETSc build has it: Debian's does). */
export const PC_TYPES = ['none', 'jacobi', 'bjacobi', 'gamg', 'hypre'] as const;

/** A PETSc reason (KSP or EPS ConvergedReason name) as one of our stop reasons. */
export function stopReasonOf(name: string, code: number): StopReason {
  if (code > 0) return 'converged';
  if (name === 'DIVERGED_ITS' || name === 'DIVERGED_MAX_IT') return 'max-iterations'; // EPS and KSP spellings
  if (name === 'DIVERGED_NANORINF') return 'non-finite';
  if (/BREAKDOWN|INDEFINITE/.test(name)) return 'breakdown';
  return 'stopped';
}

/** What the solve command hands over (already parsed and checked). */
export interface EngineSolveInput {
  name: string;
  a: CsrMatrix;
  b: Float64Array;
  source: string;
  method: string;
  rtol: number;
  atol: number;
  maxIterations: number | undefined;
  restart: number;
  /** --pc, else --precond (none|jacobi). */
  pc: string;
  plot: string | undefined;
  /** -o x.mtx: write x (Matrix Market array). */
  output?: string | undefined;
  /** --with-x: x in the JSON output. */
  withX?: boolean;
}

/**
 * Solve through PETSc and print like `solve` does. Returns the exit code (1 when PETSc did not
 * converge).
 */
export async function solveWithEngine(s: EngineSolveInput, eo: EngineOptions, common: CommonOptions): Promise<number> {
  if (!(PC_TYPES as readonly string[]).includes(s.pc)) throw new UsageError(`--pc: expected one of ${PC_TYPES.join(', ')}, got '${s.pc}'`);
  const ksp = { type: KSP_TYPES[s.method]!, pc: s.pc, rtol: s.rtol, atol: s.atol, maxit: s.maxIterations ?? 10000, restart: s.restart };
  return runEngine({ ...eo, engine: 'petsc' }, { task: 'solve', matrix: s.a, rhs: s.b, ksp }, async ({ result: p, dir, wallMs, writeMs }) => {
    const [x] = await readPetscVectors(`${dir}/x.petsc`);
    if (x!.length !== s.a.rows) throw new EngineRunError(`--engine petsc: PETSc returned x of length ${x!.length}, expected ${s.a.rows}`);
    const check = relativeResidual(s.a, x!, s.b);
    const history = (p.history as [number, number][]).map(([iteration, residual]) => ({ iteration, residual }));
    const result: SolveResult<Float64Array> = {
      x: x!,
      converged: p.reasonCode > 0,
      reason: stopReasonOf(p.reason, p.reasonCode),
      iterations: p.iterations,
      trueResidual: check.r,
      bNorm: check.bNorm,
      history,
      stats: { matvecs: p.matMults, precondApplies: Number(p.pcApplies ?? 0), readbacks: 0, ms: p.solveSeconds * 1000 },
      method: `${p.kspType}${p.kspType === 'gmres' ? `(${s.restart})` : ''} (PETSc KSP)`,
      detail: `PETSc KSP_${p.reason} (${p.reasonCode}); pc ${p.pcType}; ${p.normType}`,
    };
    const backend = `PETSc ${p.petsc} over MPI, ${p.np} process${p.np === 1 ? '' : 'es'}`;
    const setupMs = writeMs + p.loadSeconds * 1000;
    const engine = { name: 'petsc', np: p.np, petsc: p.petsc, ksp: p.kspType, pc: p.pcType, reason: `KSP_${p.reason}`, reasonCode: p.reasonCode, residualNorm: p.residualNorm, normType: p.normType, matType: p.matType, wallMs, passThrough: eo.passThrough };
    if (s.plot) {
      writeOutputFile(s.plot, linePlot([{ name: result.method, x: history.map((h) => h.iteration), y: history.map((h) => h.residual / (check.bNorm || 1)) }], { title: `${s.name}: ${result.method}`, xLabel: 'iteration', yLabel: 'relative residual', logY: true }));
      info(`convergence plot written to ${s.plot}`);
    }
    const nnz = s.a.rowPtr[s.a.rows];
    const summary = { matrix: s.name, rows: s.a.rows, nnz, rhs: s.source, backend, operator: `PETSc ${p.matType}`, method: result.method, refined: false, converged: result.converged, reason: result.reason, iterations: result.iterations, relativeResidualFloat64: check.rel, setupMs, solveMs: result.stats.ms, stats: result.stats, detail: result.detail, engine };
    const xFile = s.output ? await writeSolution(s.output, x!, `${s.name}: ${result.method}, relative residual (float64) ${check.rel.toExponential(3)}`) : undefined;
    if (common.json && s.withX) printJsonWithArray({ ...summary, ...(xFile ? { xFile } : {}), history }, 'x', x!);
    else if (common.json) printJson({ ...summary, ...(xFile ? { xFile } : {}), history });
    else {
      out(`${s.name}: ${s.a.rows}×${s.a.cols}, nnz ${nnz}, b = ${s.source}`);
      out(`backend: ${backend}; operator: PETSc ${p.matType}, pc ${p.pcType}`);
      out(
        formatTable(
          ['method', 'converged', 'reason', 'iterations', 'rel. residual (f64)', 'setup ms', 'solve ms', 'matvecs', 'readbacks'],
          [[result.method, result.converged, result.reason, result.iterations, check.rel, setupMs, result.stats.ms, result.stats.matvecs, 0]],
        ),
      );
      out(`detail: ${result.detail}; mpiexec wall ${wallMs.toFixed(0)} ms`);
      if (xFile) out(`x written to ${xFile}`);
    }
    return result.converged ? ExitCode.ok : ExitCode.notConverged;
  });
}
