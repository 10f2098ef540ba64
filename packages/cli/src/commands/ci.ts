/**
 * `gpusparse ci FCIDUMP --space fci|cisd|cisdt|cas:N,M --nroots 4`: configuration-interaction
 * energies (ground and excited states) from an FCIDUMP file, with ⟨S²⟩ per root.
 * @module
 */
import { type CiBackend, type CiProgress, ciEnergies, type SpaceSpec } from '@gpusparse/chem';
import type { CsrMatrix } from '@gpusparse/formats';
import { openBackend, type Backend } from '../util/backend';
import { type Command, ExitCode, info, numberOption, out, printJson, UsageError } from '../util/context';
import { intOption } from '../util/int-option';
import { progressBar } from '../util/progress';
import { formatTable } from '../util/table';

/** Parse --space: fci, cis, cisd, cisdt, ci:<level>, cas:<electrons>,<orbitals>. */
export function parseSpace(s: string): SpaceSpec {
  const levels: Record<string, number> = { cis: 1, cisd: 2, cisdt: 3, cisdtq: 4 };
  if (s === 'fci') return 'fci';
  if (s in levels) return { kind: 'ci', level: levels[s] };
  const ci = /^ci:(\d+)$/.exec(s);
  if (ci) return { kind: 'ci', level: Number(ci[1]) };
  const cas = /^cas:(\d+),(\d+)$/.exec(s);
  if (cas) return { kind: 'cas', electrons: Number(cas[1]), orbitals: Number(cas[2]) };
  throw new UsageError(`--space: expected fci, cis, cisd, cisdt, ci:<level> or cas:<electrons>,<orbitals>, got '${s}'`);
}

/** A chem backend over a CLI backend: the format's first registered kernel, or the tuner for 'csr'. */
// biome-ignore lint/suspicious/noExplicitAny: either backend
export function ciBackendOf(b: Backend<any, any>): CiBackend<unknown, unknown> {
  return {
    space: b.space,
    async operator(matrix: CsrMatrix, format: string) {
      if (b.kind === 'cpu') return (await b.operator(matrix)).op;
      if (format === 'csr' || format === 'auto') return (await b.operator(matrix, { expectedProducts: 200 })).op;
      const gpu = await import('@gpusparse/gpu');
      const k = gpu.kernels.find((x) => x.format === format);
      if (!k) throw new UsageError(`--format ${format}: no WebGPU kernel for this format; formats with kernels: ${[...new Set(gpu.kernels.map((x) => x.format))].join(', ')}`);
      return (await b.operator(matrix, { kernel: k.id })).op;
    },
  };
}

export const ciCommand: Command = {
  summary: 'configuration-interaction energies from an FCIDUMP',
  usage: [
    'usage: gpusparse ci <FCIDUMP[.gz]> [--space fci|cis|cisd|cisdt|ci:L|cas:N,M] [--nroots 4] [--ms2 n] [--irrep n]',
    '                    [--multiplicity m [--penalty 0.2]] [--format csr|auto|<name>] [--solver davidson|dense|auto] [--tol 1e-8] [--maxit N]',
    '',
    'Energies include the core energy (the FCIDUMP constant line). ⟨S²⟩ is reported per root.',
    '--tol: absolute residual ‖H v − E v‖ in Eh, judged on the --nroots requested roots only (a guard root',
    'Davidson adds against skipped states does not hold the verdict). --maxit: most Davidson iterations (an integer ≥ 1, default 200).',
  ].join('\n'),
  options: {
    space: { type: 'string' },
    nroots: { type: 'string' },
    ms2: { type: 'string' },
    irrep: { type: 'string' },
    multiplicity: { type: 'string' },
    penalty: { type: 'string' },
    format: { type: 'string' },
    solver: { type: 'string' },
    tol: { type: 'string' },
    maxit: { type: 'string' },
  },
  async run(pos, v, common) {
    if (pos.length !== 1) throw new UsageError(`ci: expected one FCIDUMP argument, got ${pos.length}`);
    const space = parseSpace((v.space as string | undefined) ?? 'fci');
    const nroots = numberOption('nroots', v.nroots as string | undefined, 1);
    const solver = ((v.solver as string | undefined) ?? 'auto') as 'davidson' | 'dense' | 'auto';
    const maxIterations = intOption('maxit', v.maxit as string | undefined, undefined, 1);
    const backend = await openBackend(common.backend);
    if (backend.fallbackReason) info(`WebGPU unavailable (${backend.fallbackReason}): using the CPU backend`);
    const bar = progressBar('ci', { enabled: common.progress });
    try {
      const onProgress = (p: CiProgress) => {
        if (p.stage === 'assembly') bar.update(p.rowsDone, p.rows, 'assembling H');
        else if (p.stage === 'solve') bar.update(p.iteration, p.iteration + 5, `Davidson iter ${p.iteration}, max res ${Math.max(...p.residualNorms).toExponential(2)}`);
      };
      const r = await ciEnergies(pos[0]!, {
        space,
        nroots,
        solver,
        format: (v.format as string | undefined) ?? 'csr',
        backend: ciBackendOf(backend),
        tol: numberOption('tol', v.tol as string | undefined, 1e-8),
        ...(maxIterations === undefined ? {} : { maxIterations }),
        onProgress,
        ...(v.ms2 === undefined ? {} : { ms2: numberOption('ms2', v.ms2 as string, 0) }),
        ...(v.irrep === undefined ? {} : { irrep: numberOption('irrep', v.irrep as string, 1) }),
        ...(v.multiplicity === undefined ? {} : { spin: { multiplicity: numberOption('multiplicity', v.multiplicity as string, 1), penalty: numberOption('penalty', v.penalty as string | undefined, 0.2) } }),
      });
      bar.finish();
      const { vectors: _vectors, ...rest } = r;
      if (common.json) printJson({ file: pos[0], backend: backend.description, ...rest });
      else {
        out(`${pos[0]}: ${r.space}, ${r.determinants} determinants, H nnz ${r.nnz} (${r.format})`);
        out(`backend: ${backend.description}; solver: ${r.solver.method}, ${r.solver.converged ? 'converged' : 'NOT converged'} in ${r.solver.iterations} iterations`);
        out(`timings ms: read ${r.timings.read.toFixed(0)}, space ${r.timings.space.toFixed(0)}, assembly ${r.timings.assembly.toFixed(0)} (${(r.assembly.rate / 1e6).toFixed(2)} M nnz/s), solve ${r.timings.solve.toFixed(0)}`);
        out(formatTable(['root', 'energy (Eh)', '‖H v − E v‖', '<S^2>'], r.energies.map((e, j) => [j, e.toFixed(10), r.residualNorms[j]!, r.s2[j]!.toFixed(6)])));
        for (const n of r.notes) out(`note: ${n}`);
      }
      return r.solver.converged ? ExitCode.ok : ExitCode.notConverged;
    } finally {
      bar.finish();
      backend.dispose();
    }
  },
};
