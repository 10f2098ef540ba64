/**
 * `gpusparse eigs A.mtx --k 4 --method lanczos|davidson|lobpcg [--which smallest|largest]`:
 * extreme eigenpairs of a symmetric matrix. On WebGPU the fast phase runs in float32 and a
 * float64 host polish brings eigenvalues to ~1e-10 relative and residuals to ~1e-8
 * (`eigsMixed`); on the CPU the method runs in float64 directly.
 * @module
 */
import { writeFileSync } from 'node:fs';
import { csrDiagonal, HostOperator, HostVectorSpace } from '@gpusparse/formats';
import { davidson, type EigenResult, eigsMixed, lanczos, lobpcg } from '@gpusparse/solvers';
import { linePlot } from '../plots/svg';
import { openBackend } from '../util/backend';
import { type Command, ExitCode, info, numberOption, out, printJson, UsageError } from '../util/context';
import { loadMatrix } from '../util/load';
import { progressBar } from '../util/progress';
import { formatTable } from '../util/table';

export const eigsCommand: Command = {
  summary: 'extreme eigenpairs of a symmetric matrix',
  usage: [
    'usage: gpusparse eigs <A.mtx | gen:...> [--k 4] [--method lanczos|davidson|lobpcg] [--which smallest|largest]',
    '                      [--tol 1e-10] [--residual-tol 1e-8] [--maxit N] [--kernel id] [--plot history.svg]',
    '',
    "Davidson uses the diagonal preconditioner. 'largest' is available with lanczos.",
  ].join('\n'),
  options: {
    k: { type: 'string' },
    method: { type: 'string' },
    which: { type: 'string' },
    tol: { type: 'string' },
    'residual-tol': { type: 'string' },
    maxit: { type: 'string' },
    kernel: { type: 'string' },
    plot: { type: 'string' },
  },
  async run(pos, v, common) {
    if (pos.length !== 1) throw new UsageError(`eigs: expected one matrix argument, got ${pos.length}`);
    const k = numberOption('k', v.k as string | undefined, 4);
    const method = ((v.method as string | undefined) ?? 'lanczos') as 'lanczos' | 'davidson' | 'lobpcg';
    if (!['lanczos', 'davidson', 'lobpcg'].includes(method)) throw new UsageError(`--method: expected lanczos, davidson or lobpcg, got '${method}'`);
    const which = ((v.which as string | undefined) ?? 'smallest') as 'smallest' | 'largest';
    if (which !== 'smallest' && which !== 'largest') throw new UsageError(`--which: expected smallest or largest, got '${which}'`);
    if (which === 'largest' && method !== 'lanczos') throw new UsageError(`--which largest: only with --method lanczos`);
    const tol = numberOption('tol', v.tol as string | undefined, 1e-10);
    const residualTol = numberOption('residual-tol', v['residual-tol'] as string | undefined, 1e-8);
    const maxIterations = v.maxit === undefined ? undefined : numberOption('maxit', v.maxit as string, 0);
    const m = await loadMatrix(pos[0]!);
    const a = m.matrix;
    if (a.rows !== a.cols) throw new UsageError(`eigs: expected a square (symmetric) matrix, got ${a.rows}×${a.cols}`);
    const backend = await openBackend(common.backend);
    if (backend.fallbackReason) info(`WebGPU unavailable (${backend.fallbackReason}): using the CPU backend`);
    const bar = progressBar(method, { enabled: common.progress });
    try {
      const t0 = performance.now();
      const built = await backend.operator(a, { kernel: v.kernel as string | undefined, expectedProducts: 500 });
      const setupMs = performance.now() - t0;
      const diagonal = csrDiagonal(a);
      const onIteration = (it: { iteration: number; residualNorms: readonly number[] }) => {
        bar.update(it.iteration, maxIterations ?? it.iteration + 10, `iter ${it.iteration} max res ${Math.max(...it.residualNorms).toExponential(2)}`);
      };
      const t1 = performance.now();
      let r: EigenResult<unknown> & { phases?: unknown[] };
      if (backend.kind === 'webgpu') {
        r = await eigsMixed({ method, k, which, fastOperator: built.op, fastSpace: backend.space, hostOperator: HostOperator.fromCsr(a), diagonal, tol, residualTol, fastMaxIterations: maxIterations, onIteration });
      } else {
        const space = new HostVectorSpace();
        if (method === 'lanczos') r = await lanczos(built.op, space, { k, which, residualTol, maxIterations, onIteration });
        else if (method === 'davidson') r = await davidson(built.op, space, { k, diagonal, tol, residualTol, maxIterations, onIteration });
        else r = await lobpcg(built.op, space, { k, residualTol, maxIterations, onIteration });
      }
      const solveMs = performance.now() - t1;
      bar.finish();
      if (typeof v.plot === 'string') {
        const series = Array.from({ length: r.values.length }, (_, j) => ({
          name: `λ${j}`,
          x: r.history.map((h) => h.iteration),
          y: r.history.map((h) => h.residualNorms[j] ?? Number.NaN),
        }));
        writeFileSync(v.plot, linePlot(series, { title: `${m.name}: ${r.method}`, xLabel: 'iteration', yLabel: '‖A v − λ v‖', logY: true }));
        info(`residual history written to ${v.plot}`);
      }
      const summary = {
        matrix: m.name,
        rows: a.rows,
        nnz: a.rowPtr[a.rows],
        backend: backend.description,
        operator: built.label,
        method: r.method,
        which,
        converged: r.converged,
        reason: r.reason,
        iterations: r.iterations,
        values: r.values,
        residualNorms: r.residualNorms,
        setupMs,
        solveMs,
        stats: r.stats,
        phases: r.phases,
      };
      if (common.json) printJson(summary);
      else {
        out(`${m.name}: ${a.rows}×${a.cols}, nnz ${a.rowPtr[a.rows]}; backend: ${backend.description}; operator: ${built.label}`);
        out(`${r.method}: ${r.converged ? 'converged' : `not converged (${r.reason})`} in ${r.iterations} iterations, ${solveMs.toFixed(1)} ms, ${r.stats.matvecs} matvecs`);
        out(formatTable(['#', 'eigenvalue', '‖A v − λ v‖'], r.values.map((x, j) => [j, x.toPrecision(15), r.residualNorms[j]!])));
      }
      return r.converged ? ExitCode.ok : ExitCode.notConverged;
    } finally {
      bar.finish();
      backend.dispose();
    }
  },
};
