/**
 * `pnpm start` / `gpusparse start`: the main job on the embedded defaults — the CI energies
 * (ground and excited states) of a shipped small molecule, and a linear solve on a generated
 * 2-D Poisson matrix — on WebGPU when an adapter exists and on the CPU otherwise, saying which
 * and how long each took.
 * @module
 */
import { fileURLToPath } from 'node:url';
import { ciEnergies } from '@gpusparse/chem';
import { csrSpmv, HostOperator } from '@gpusparse/formats';
import { refinedSolve } from '@gpusparse/solvers';
import { openBackend } from '../util/backend';
import { type Command, ExitCode, info, integerOption, out, printJson } from '../util/context';
import { loadMatrix } from '../util/load';
import { formatTable } from '../util/table';
import { ciBackendOf } from './ci';

/** The shipped molecule and its reference energies (HANDE benchmark, FCI in the A1 sector). */
export const H2O_STO2G = {
  path: fileURLToPath(new URL('../../../chem/data/H2O_sto2g_hande.FCIDUMP', import.meta.url)),
  label: 'H2O / STO-2G, FCI, A1 symmetry, Ms = 0',
  groundState: -72.786196191345,
};

export const startCommand: Command = {
  summary: 'the main job: CI energies of a shipped molecule and a Poisson solve',
  usage: 'usage: gpusparse start [--grid 128] [--nroots 4] [--json] [--backend webgpu|cpu|auto]',
  options: { grid: { type: 'string' }, nroots: { type: 'string' } },
  async run(_pos, v, common) {
    // grid² rows and ~5·grid² non-zeros must fit 32-bit indices
    const grid = integerOption('grid', v.grid as string | undefined, 128, 2, 20724);
    const nroots = integerOption('nroots', v.nroots as string | undefined, 4, 1);
    // built first through gen:'s memory checks: --grid 20724 (4.3e8 rows) ran the CI part, then
    // died in the generator with a V8 heap-limit abort (exit 134) instead of exit 5
    const a = (await loadMatrix(`gen:poisson2d:${grid}`)).matrix;
    const tOpen = performance.now();
    const backend = await openBackend(common.backend);
    const openMs = performance.now() - tOpen;
    const say = (s: string) => (common.json ? info(s) : out(s));
    say(`gpusparse main job on ${backend.description}${backend.fallbackReason ? ` — WebGPU unavailable: ${backend.fallbackReason}` : ''} (opened in ${openMs.toFixed(0)} ms)`);
    try {
      // 1. CI energies of the shipped molecule
      const t0 = performance.now();
      const ci = await ciEnergies(H2O_STO2G.path, { space: 'fci', irrep: 'isym', nroots, backend: ciBackendOf(backend), solver: 'davidson' });
      const ciMs = performance.now() - t0;
      const ciError = Math.abs(ci.energies[0]! - H2O_STO2G.groundState);
      say('');
      say(`1. ${H2O_STO2G.label}: ${ci.determinants} determinants, H nnz ${ci.nnz}, ${ci.solver.method}, ${ciMs.toFixed(0)} ms`);
      if (!common.json) {
        out(formatTable(['root', 'energy (Eh)', '‖H v − E v‖', '<S^2>'], ci.energies.map((e, j) => [j, e.toFixed(10), ci.residualNorms[j]!, ci.s2[j]!.toFixed(4)])));
        out(`   ground state vs HANDE's FCI reference ${H2O_STO2G.groundState}: |ΔE| = ${ciError.toExponential(2)} Eh`);
      }

      // 2. A linear solve on a generated 2-D Poisson matrix, to float64 accuracy
      const x = new Float64Array(a.rows);
      for (let i = 0; i < x.length; i++) x[i] = Math.sin(i * 0.001) + 1;
      const b = csrSpmv(a, x);
      const t1 = performance.now();
      const built = await backend.operator(a, { expectedProducts: 2000 });
      const setupMs = performance.now() - t1;
      const t2 = performance.now();
      const sol = await refinedSolve({ hostOperator: HostOperator.fromCsr(a), innerOperator: built.op, innerSpace: backend.space, b, rtol: 1e-10, inner: { method: 'cg', rtol: backend.kind === 'webgpu' ? 1e-4 : 1e-10 } });
      const solveMs = performance.now() - t2;
      let err = 0;
      for (let i = 0; i < x.length; i++) err = Math.max(err, Math.abs(sol.x[i]! - x[i]!));
      say('');
      say(`2. Poisson 2-D, ${grid}×${grid} grid (${a.rows} rows, nnz ${a.rowPtr[a.rows]}), CG with float64 refinement on ${built.label}`);
      if (!common.json) {
        out(
          formatTable(
            ['converged', 'outer', 'inner CG iters', 'rel. residual (f64)', 'max |x − x*|', 'setup ms', 'solve ms'],
            [[sol.converged, sol.outerIterations, sol.innerIterations, sol.trueResidual / sol.bNorm, err, setupMs, solveMs]],
          ),
        );
      }
      const ok = ci.solver.converged && ciError < 1e-6 && sol.converged;
      if (common.json) {
        printJson({
          backend: backend.description,
          fallbackReason: backend.fallbackReason,
          ci: { system: H2O_STO2G.label, determinants: ci.determinants, nnz: ci.nnz, energies: ci.energies, residualNorms: ci.residualNorms, s2: ci.s2, reference: H2O_STO2G.groundState, error: ciError, ms: ciMs, solver: ci.solver, timings: ci.timings, ...(ci.bounds ? { bounds: ci.bounds } : {}) },
          poisson: { grid, rows: a.rows, nnz: a.rowPtr[a.rows], operator: built.label, converged: sol.converged, outer: sol.outerIterations, inner: sol.innerIterations, relativeResidual: sol.trueResidual / sol.bNorm, maxError: err, setupMs, solveMs, stats: sol.stats },
          openMs,
          totalMs: performance.now() - tOpen,
          ok,
        });
      } else out(`\n${ok ? 'ok' : 'FAILED'}: total ${(performance.now() - tOpen).toFixed(0)} ms on ${backend.kind === 'webgpu' ? 'WebGPU' : 'the CPU'}`);
      return ok ? ExitCode.ok : ExitCode.notConverged;
    } finally {
      backend.dispose();
    }
  },
};
