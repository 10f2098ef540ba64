/**
 * `gpusparse solve A.mtx [b.mtx] --method cg|gmres|bicgstab|bicg --rtol ...`: solve A·x = b on
 * WebGPU (float32 Krylov, with float64 iterative refinement when --refine or rtol < 1e-6) or
 * on the CPU (float64), print the result object, optionally plot the convergence history.
 * @module
 */
import { type CsrMatrix, HostOperator, InvalidMatrixError, type LinearOperator, type VectorSpace } from '@gpusparse/formats';
import { bicg, bicgstab, cg, gmres, jacobi, refinedSolve, type SolveResult } from '@gpusparse/solvers';
import { engineSolveOptions, parseEngineOptions, solveWithEngine } from '../engines/engine-solve';
import { linePlot } from '../plots/svg';
import { type Command, type CommonOptions, ExitCode, info, integerOption, numberOption, out, printJson, printJsonWithArray, UsageError } from '../util/context';
import { checkKernelIds, openBackend } from '../util/backend';
import { cgAsymmetryHint } from '../util/hints';
import { writeOutputFile } from '../util/output';
import { loadMatrix, withInputWarnings } from '../util/load';
import { progressBar } from '../util/progress';
import { relativeResidual, solveRhs } from '../util/rhs';
import { formatTable } from '../util/table';
import { writeSolution } from '../util/vector-output';

const methods = { cg, gmres, bicgstab, bicg } as const;
type Method = keyof typeof methods;

export const solveCommand: Command = {
  summary: 'solve A x = b',
  usage: [
    'usage: gpusparse solve <A.mtx | gen:...> [b.mtx] [--method cg|gmres|bicgstab|bicg] [--rtol 1e-8] [--atol 0]',
    '                       [--maxit N] [--restart 30] [--precond none|jacobi] [--refine | --no-refine] [--kernel id] [--plot conv.svg]',
    '                       [--check-every N] [-o x.mtx] [--json [--with-x]]',
    '',
    'Without b, solves A x = A·1. On WebGPU the Krylov loop runs in float32 with scalars on the device;',
    '--refine (default when rtol < 1e-6 on WebGPU) wraps it in float64 iterative refinement; --no-refine turns that off.',
    '--check-every N: read the residual back every N iterations (default 32 on WebGPU, 1 on the CPU; the solve stops at most N − 1 late).',
    '-o x.mtx writes x (float64) as a Matrix Market array file (n × 1); --with-x adds x to the --json output.',
    'Exit code 1 when the solve does not converge (x is still written when finite).',
    '--engine petsc --np N [--pc none|jacobi|bjacobi|gamg|hypre] [--petsc-option "-ksp_..."]: PETSc KSP under mpiexec (docs/guides/scaling-out.md).',
  ].join('\n'),
  options: {
    method: { type: 'string' },
    rtol: { type: 'string' },
    atol: { type: 'string' },
    maxit: { type: 'string' },
    restart: { type: 'string' },
    precond: { type: 'string' },
    refine: { type: 'boolean' },
    'no-refine': { type: 'boolean' },
    kernel: { type: 'string' },
    plot: { type: 'string' },
    'check-every': { type: 'string' },
    ...engineSolveOptions,
    output: { type: 'string', short: 'o' },
    'with-x': { type: 'boolean' },
  },
  async run(pos, v, common: CommonOptions) {
    if (pos.length < 1 || pos.length > 2) throw new UsageError(`solve: expected A and optionally b, got ${pos.length} arguments`);
    const { method, rtol, atol, maxIterations, restart, precond, checkEvery } = solveOptions(v);
    if (typeof v.kernel === 'string') await checkKernelIds([v.kernel], '--kernel');
    if (v['with-x'] && !common.json) throw new UsageError('--with-x: adds x to the --json output; give --json too (or -o x.mtx for a file)');

    const engine = parseEngineOptions(v, ['petsc', 'slepc']);

    const m = await loadMatrix(pos[0]!);
    const a = m.matrix;
    // the file is wrong for the command, not the command line: bad input (exit 3), named
    if (a.rows !== a.cols) throw new InvalidMatrixError(m.name, `expected a square matrix for solve, got ${a.rows}×${a.cols}`);
    const { b, source } = await solveRhs(a, pos[1], m.rhs);
    // --engine petsc: PETSc's KSP under mpiexec, same result table and JSON (docs/guides/scaling-out.md)
    if (engine) return solveWithEngine({ name: m.name, a, b, source, method, rtol, atol, maxIterations, restart, pc: (v.pc as string | undefined) ?? precond, plot: v.plot as string | undefined, output: v.output as string | undefined, withX: Boolean(v['with-x']) }, engine, common);
    const backend = await openBackend(common.backend);
    if (backend.fallbackReason) info(`WebGPU unavailable (${backend.fallbackReason}): using the CPU backend`);
    const bar = progressBar(`${method}`, { enabled: common.progress });
    try {
      const t0 = performance.now();
      const built = await backend.operator(a, { kernel: v.kernel as string | undefined, expectedProducts: maxIterations ?? 1000 });
      const setupMs = performance.now() - t0;
      const refine = backend.kind === 'webgpu' && !v['no-refine'] && (Boolean(v.refine) || rtol < 1e-6);
      const space = backend.space;
      const pre = precond === 'jacobi' ? jacobi(space, a.rows === a.cols ? (built.op.diagonal?.() ?? HostOperator.fromCsr(a).diagonal!()) : new Float64Array()) : undefined;
      const onIteration = (it: { iteration: number; relativeResidual: number }) => {
        bar.update(Math.min(1, Math.log10(Math.max(it.relativeResidual, 1e-300)) / Math.log10(rtol)), 1, `iter ${it.iteration} rel.res ${it.relativeResidual.toExponential(2)}`);
      };
      // float32 (and df64, whose parts are float32) cannot hold b outside ~1e±38, nor float64 the squares in ‖b‖ beyond
      // ~1e±154: solve for b/s, s a power of two (exact), and scale x back
      const s = rhsScale(b);
      const t1 = performance.now();
      const { result, xHost } = await solveScaled({ a, b, s, method, rtol, atol, maxIterations, restart, checkEvery, refine, space, op: built.op, pre, onIteration });
      const solveMs = performance.now() - t1;
      bar.finish();
      // the true residual in float64 on the host, whatever the backend
      const check = relativeResidual(a, xHost, b);
      const trueRel = check.rel;
      demoteUnmetConvergence(result, check, rtol, atol);
      if (typeof v.plot === 'string') writePlot(v.plot, m.name, result, backend.kind, refine);
      const summary = {
        matrix: m.name,
        rows: a.rows,
        nnz: a.rowPtr[a.rows],
        rhs: source,
        backend: backend.description,
        operator: built.label,
        tuning: built.tuning,
        method: result.method,
        refined: refine,
        converged: result.converged,
        reason: result.reason,
        iterations: result.iterations,
        innerIterations: result.innerIterations,
        relativeResidualFloat64: trueRel,
        setupMs,
        solveMs,
        stats: withInputWarnings(result.stats, m.warnings),
        detail: result.detail,
      };
      const xFile = typeof v.output === 'string' ? await writeSolution(v.output, xHost, `${m.name}: ${result.method}, relative residual (float64) ${trueRel.toExponential(3)}`) : undefined;
      if (common.json && v['with-x']) printJsonWithArray({ ...summary, ...(xFile ? { xFile } : {}), history: result.history }, 'x', xHost);
      else if (common.json) printJson({ ...summary, ...(xFile ? { xFile } : {}), history: result.history });
      else printSolveTable(m.name, a, source, backend.description, built, result, { refine, trueRel, setupMs, solveMs, xFile, given: { ...(maxIterations === undefined ? {} : { maxit: maxIterations }), precond, method } });
      return result.converged ? ExitCode.ok : ExitCode.notConverged;
    } finally {
      bar.finish();
      backend.dispose();
    }
  },
};

/** The checked numeric options of `solve`. */
function solveOptions(v: Record<string, unknown>) {
  const method = ((v.method as string | undefined) ?? 'cg') as Method;
  if (!Object.hasOwn(methods, method)) throw new UsageError(`--method: expected cg, gmres, bicgstab or bicg, got '${method}'`);
  const rtol = numberOption('rtol', v.rtol as string | undefined, 1e-8, { min: 0 });
  const atol = numberOption('atol', v.atol as string | undefined, 0, { min: 0 });
  const maxIterations = v.maxit === undefined ? undefined : integerOption('maxit', v.maxit as string, 0);
  const restart = integerOption('restart', v.restart as string | undefined, 30, 1);
  // cg, bicgstab and bicg never restart: '--restart 5' with them was accepted and did nothing
  if (v.restart !== undefined && method !== 'gmres') throw new UsageError(`--restart: only with --method gmres (${method} does not restart)`);
  const precond = (v.precond as string | undefined) ?? 'none';
  if (!['none', 'jacobi'].includes(precond)) throw new UsageError(`--precond: expected none or jacobi, got '${precond}'`);
  const checkEvery = v['check-every'] === undefined ? undefined : integerOption('check-every', v['check-every'] as string, 8, 1);
  return { method, rtol, atol, maxIterations, restart, precond, checkEvery };
}

type SolveOut = SolveResult<unknown> & { outerIterations?: number; innerIterations?: number };

/** The solve of A·x = b/s (refined in float64 or plain), x and the residuals scaled back by s. */
async function solveScaled(o: {
  a: CsrMatrix;
  b: Float64Array;
  s: number;
  method: Method;
  rtol: number;
  atol: number;
  maxIterations: number | undefined;
  restart: number;
  checkEvery: number | undefined;
  refine: boolean;
  space: VectorSpace<unknown, unknown>;
  op: LinearOperator<unknown>;
  pre: LinearOperator<unknown> | undefined;
  onIteration: (it: { iteration: number; relativeResidual: number }) => void;
}): Promise<{ result: SolveOut; xHost: Float64Array }> {
  const { a, b, s, method, rtol, atol, maxIterations, restart, checkEvery, space, pre, onIteration } = o;
  const bs = s === 1 ? b : b.map((x) => x / s);
  let result: SolveOut;
  let xHost: Float64Array;
  if (o.refine) {
    const r = await refinedSolve({
      hostOperator: HostOperator.fromCsr(a),
      innerOperator: o.op,
      innerSpace: space,
      b: bs,
      rtol,
      atol: atol / s,
      inner: { method, rtol: 1e-4, restart, preconditioner: pre, checkEvery, maxIterations },
      onOuterIteration: (it) => onIteration({ iteration: it.outer, relativeResidual: it.relativeResidual }),
    });
    result = r;
    xHost = r.x;
  } else {
    const bv = space.fromArray(bs);
    result = await methods[method](space, o.op, bv, { rtol, atol: atol / s, maxIterations, preconditioner: pre, checkEvery, onIteration, restart });
    xHost = await space.toArray(result.x);
  }
  if (s !== 1) unscale(result, xHost, s);
  return { result, xHost };
}

/** --plot: the convergence history as an SVG line plot. */
function writePlot(file: string, name: string, result: SolveOut, backendKind: string, refine: boolean): void {
  writeOutputFile(
    file,
    linePlot([{ name: `${result.method} (${backendKind})`, x: result.history.map((h) => h.iteration), y: result.history.map((h) => h.residual / (result.bNorm || 1)) }], {
      title: `${name}: ${result.method}`,
      xLabel: refine ? 'outer iteration' : 'iteration',
      yLabel: 'relative residual',
      logY: true,
    }),
  );
  info(`convergence plot written to ${file}`);
}

/** The text report of `solve` (without --json). */
function printSolveTable(
  name: string,
  a: CsrMatrix,
  source: string,
  backendDescription: string,
  built: { label: string; tuning?: { spentMs: number; cacheHit?: boolean } },
  result: SolveOut,
  o: { refine: boolean; trueRel: number; setupMs: number; solveMs: number; xFile: string | undefined; given: { maxit?: number; precond: string; method: string } },
): void {
  out(`${name}: ${a.rows}×${a.cols}, nnz ${a.rowPtr[a.rows]}, b = ${source}`);
  out(`backend: ${backendDescription}; operator: ${built.label}${built.tuning ? ` (tuned in ${built.tuning.spentMs.toFixed(0)} ms${built.tuning.cacheHit ? ', cache hit' : ''})` : ''}`);
  out(
    formatTable(
      ['method', 'converged', 'reason', 'iterations', 'rel. residual (f64)', 'setup ms', 'solve ms', 'matvecs', 'readbacks'],
      [[result.method + (o.refine ? ' + f64 refinement' : ''), result.converged, result.reason, result.iterations, o.trueRel, o.setupMs, o.solveMs, result.stats.matvecs, result.stats.readbacks]],
    ),
  );
  if (result.detail) out(`detail: ${result.detail}`);
  const asym = !result.converged && o.given.method === 'cg' ? cgAsymmetryHint(a) : undefined; // O(nnz), after a failure only
  if (asym) out(`hint: ${asym.replace('use gmres or bicgstab', '--method gmres or bicgstab')}`);
  if (result.reason === 'max-iterations') out(`hint: ${maxitHint(a.rows, o.given)}`);
  // e.g. the tuned kernel disagreeing with the verified one at the final check
  for (const w of result.stats.warnings ?? []) out(`warning: ${w}`);
  if (o.xFile) out(`x written to ${o.xFile}`);
}

/** What to try when a solve stopped at its iteration limit: what was not given already. */
export function maxitHint(n: number, given: { maxit?: number; precond: string; method: string }): string {
  const limit = given.maxit === undefined ? `--maxit, default max(100, 10·n) = ${Math.max(100, 10 * n)}` : `--maxit ${given.maxit}`;
  const tries = [...(given.precond === 'jacobi' ? [] : ['--precond jacobi']), 'a larger --maxit', ...(given.method === 'gmres' ? [] : ['--method gmres'])];
  return `the iteration limit was reached (${limit}); ${tries.slice(0, -1).join(', ')}${tries.length > 1 ? ' or ' : ''}${tries.at(-1)} may converge`;
}

/** 1, or the power of two nearest max|b| when that lies outside [2^-60, 2^60] (float32 holds ~1e±38). */
export function rhsScale(b: Float64Array): number {
  let m = 0;
  for (const v of b) m = Math.max(m, Math.abs(v));
  if (!(m > 0) || !Number.isFinite(m) || (m >= 2 ** -60 && m <= 2 ** 60)) return 1;
  return 2 ** Math.round(Math.log2(m));
}

/** Slack on the float64 check of a "converged" result: rounding of the float64 residual itself. */
const CHECK_SLACK = 1.1;

/**
 * "converged" promises the documented rule in float64, ‖b − A·x‖ ≤ max(rtol·‖b‖, atol). A float32
 * solve (--no-refine) meets rtol on its own float32 residual, which may be far from the float64
 * one (`--rtol 0`: converged with 2.7e-8): such a result becomes not converged ('breakdown', the
 * refinement's word for "the inner precision cannot reach it") with a detail saying why.
 */
function demoteUnmetConvergence(result: SolveResult<unknown>, check: { r: number; bNorm: number; rel: number }, rtol: number, atol: number): void {
  if (!result.converged || check.bNorm === 0) return;
  const tol = Math.max(rtol * check.bNorm, atol);
  if (check.r <= CHECK_SLACK * tol) return;
  result.converged = false;
  result.reason = 'breakdown';
  const why = `the solver met its tolerance on its own (${result.method}) residual, but the float64 residual ‖b − A·x‖/‖b‖ = ${check.rel.toExponential(2)} does not meet rtol ${rtol}${atol > 0 ? ` / atol ${atol}` : ''}: this precision cannot reach it; drop --no-refine (float64 refinement) or use --backend cpu`;
  result.detail = result.detail ? `${result.detail}; ${why}` : why;
}

/** Back from the solve for b/s: x, residual norms and ‖b‖ times s (exact: s is a power of two). */
function unscale(result: SolveResult<unknown>, x: Float64Array, s: number): void {
  for (let i = 0; i < x.length; i++) x[i]! *= s;
  for (const h of result.history) h.residual *= s;
  result.bNorm *= s;
  result.trueResidual *= s;
}
