/**
 * `gpusparse ci FCIDUMP --space fci|cisd|cisdt|cas:N,M --nroots 4`: configuration-interaction
 * energies (ground and excited states) from an FCIDUMP file, with ⟨S²⟩ per root.
 * @module
 */
import { autoHamiltonian, buildCiSpace, type ChunkSink, type CiBackend, type CiDevicePolish, type CiProgress, ciEnergies, directHamiltonian, estimateCiEnergies, type Fcidump, gpuAutoHamiltonian, gpuDirectHamiltonian, type SpaceSpec } from '@gpusparse/chem';
import { readFcidump } from '@gpusparse/chem/node';
import { formatBytes } from '@gpusparse/formats';
import type { CsrMatrix } from '@gpusparse/formats';
import { ciWithEngine, engineCiOptions, parseEngineOptions } from '../engines/engine-ci';
import { hostThreads, openBackend, type Backend } from '../util/backend';
import { type Command, ExitCode, formatNameOption, info, integerOption, numberOption, out, printJson, UsageError } from '../util/context';
import { gpuChunkSink, gpuDevicePolish } from '../util/ci-device';
import { deviceMemoryOf, printEstimate } from '../util/ci-memory';
import { acceptColumns, parseAccept } from '../util/accept';
import { intOption } from '../util/int-option';
import { progressBar, stageLog } from '../util/progress';
import { formatTable } from '../util/table';

/**
 * Every irrep of an --irrep list checked before the first run: an empty block or more roots than
 * a block holds in the last irrep threw away the finished runs before it. Exact determinant
 * counts (the dry run's sizing); an empty block raises the space's own error, with its hint.
 */
async function preflightIrreps(fd: Fcidump, runs: Array<{ space: SpaceSpec; nroots: number; irrep?: number; ms2?: number }>): Promise<void> {
  for (const o of runs) {
    const e = await estimateCiEnergies(fd, { ...o, backend: 'host' });
    if (e.estimate.determinants === 0) buildCiSpace(fd, o.space, o);
  }
}

/** Parse --space: fci, cis, cisd, cisdt, ci:<level>, cas:<electrons>,<orbitals>. */
export function parseSpace(s: string): SpaceSpec {
  const levels: Record<string, number> = { cis: 1, cisd: 2, cisdt: 3, cisdtq: 4 };
  if (s === 'fci') return 'fci';
  if (Object.hasOwn(levels, s)) return { kind: 'ci', level: levels[s] }; // own keys: not 'constructor'
  const ci = /^ci:(\d+)$/.exec(s);
  if (ci) return { kind: 'ci', level: Number(ci[1]) };
  const cas = /^cas:(\d+),(\d+)$/.exec(s);
  if (cas) return { kind: 'cas', electrons: Number(cas[1]), orbitals: Number(cas[2]) };
  throw new UsageError(`--space: expected fci, cis, cisd, cisdt, ci:<level> or cas:<electrons>,<orbitals>, got '${s}'`);
}

/** A chem backend over a CLI backend: the format's first registered kernel, or the tuner for 'csr'. */
// biome-ignore lint/suspicious/noExplicitAny: either backend
export function ciBackendOf(b: Backend<any, any>, deviceMemoryGb?: number): CiBackend<unknown, unknown> {
  const name = b.ctx ? Object.values(b.ctx.describe().adapter).join(' ') : '';
  const deviceMemory = b.kind === 'webgpu' ? deviceMemoryOf(name, deviceMemoryGb) : undefined;
  return {
    space: b.space,
    ...(deviceMemory ? { deviceMemory } : {}),
    ...(b.kind === 'webgpu' && b.ctx
      ? {
          chunkSink: (rows: number, perRow: number, o?: { keepLo?: boolean }) => gpuChunkSink(b.ctx!, rows, perRow, undefined, undefined, o) as Promise<ChunkSink<unknown>>,
          devicePolish: () => gpuDevicePolish(b.ctx!) as Promise<CiDevicePolish<unknown> | undefined>,
        }
      : {}),
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

/** --assembly: how H is built (see CiOptions.assembly). */
function parseAssembly(s: string): 'auto' | 'chunked' | 'whole' {
  if (s === 'auto' || s === 'chunked' || s === 'whole') return s;
  throw new UsageError(`--assembly: expected auto, chunked or whole, got '${s}'`);
}

/**
 * Flags the run would ignore, refused as `solve --restart` without gmres is (session 12):
 * `--penalty` without `--multiplicity` (the penalty acts on the unwanted spin states),
 * `--chunk-nnz` with `--assembly whole`, `--polish` with `--backend cpu` (no float32 phase to
 * polish). s14-harden-e: each ran with the flag silently dropped, exit 0.
 */
function refuseIgnoredFlags(v: Record<string, unknown>, backend: string): void {
  if (v.penalty !== undefined && v.multiplicity === undefined) throw new UsageError('--penalty: only with --multiplicity (the penalty acts on the states of other spins)');
  if (v['chunk-nnz'] !== undefined && v.assembly === 'whole') throw new UsageError('--chunk-nnz: not with --assembly whole (H is assembled in one piece)');
  if (v.polish !== undefined && backend === 'cpu') throw new UsageError('--polish: not with --backend cpu (the CPU backend solves in float64: there is no float32 phase to polish)');
}

/**
 * A number option that must be > 0 (a tolerance, a memory size, the spin penalty: 0 or less is
 * meaningless, and a negative penalty would lower the unwanted spin states below the wanted).
 */
function positiveOption(name: string, v: unknown, fallback: number): number {
  const x = numberOption(name, v as string | undefined, fallback, { min: 0 });
  if (x === 0) throw new UsageError(`--${name}: expected a number > 0, got '${String(v)}'`);
  return x;
}

/** --polish: where the float64 phase runs (see CiOptions.polish). */
function parsePolish(s: string): 'auto' | 'device' | 'host' {
  if (s === 'auto' || s === 'device' || s === 'host') return s;
  throw new UsageError(`--polish: expected auto, device or host, got '${s}'`);
}

/**
 * --sigma: explicit H (default), the direct σ (FCI/CAS: float32 on the GPU with a float64
 * polish, or float64 on the host), or the cost model's choice (docs/guides/ci-direct.md).
 * --multiplicity at MS2 = 0: the direct σ (host or device) keeps that spin parity (time reversal)
 * instead of a penalty.
 */
function sigmaOptions(s: string | undefined, nroots: number, backend: Backend<unknown, unknown>, deviceBytes: number | undefined, multiplicity?: number) {
  if (s === undefined || s === 'explicit') return {};
  if (s !== 'direct' && s !== 'auto') throw new UsageError(`--sigma: expected explicit, direct or auto, got '${s}'`);
  const threads = sigmaThreads();
  if (backend.space.precision === 'f32' && backend.ctx) {
    // float32 products: Davidson's and the polish's corrections, ≈ 50 per root solved (N2 CAS(10e,16o): 203 + 106 for 7)
    const o = { threads, roots: nroots + (nroots > 1 ? 1 : 0), ...(deviceBytes === undefined ? {} : { deviceBytes }), ...(multiplicity === undefined ? {} : { multiplicity }) };
    return { hamiltonian: s === 'direct' ? gpuDirectHamiltonian(backend.ctx, o) : gpuAutoHamiltonian(backend.ctx, { ...o, products: 50 * (nroots + (nroots > 1 ? 1 : 0)) }) };
  }
  const d = { threads, ...(multiplicity === undefined ? {} : { multiplicity }) };
  return { hamiltonian: s === 'direct' ? directHamiltonian(d) : autoHamiltonian({ ...d, products: 20 * (nroots + (nroots > 1 ? 1 : 0)) }) };
}

/**
 * Threads of the host direct σ (and of the GPU path's host polish): GPUSPARSE_THREADS when set
 * (checked as for the CPU backend: an integer in [1, 64], else InvalidParameterError, exit 3),
 * else every core. The σ used to take every core whatever the variable said.
 */
function sigmaThreads(): number | 'auto' {
  const raw = process.env.GPUSPARSE_THREADS;
  return raw === undefined || raw.trim() === '' ? 'auto' : hostThreads();
}

/**
 * Worker threads of the explicit-H assembly: GPUSPARSE_THREADS − 1 when the variable is set (the
 * main thread assembles rows too, so the assembly uses that many threads; checked as for the CPU
 * backend), else chem's own choice (a thread per core past 20 000 determinants). The assembly
 * used to take every core whatever the variable said.
 */
function assemblyWorkers(): { workers?: number } {
  return sigmaThreads() === 'auto' ? {} : { workers: hostThreads() - 1 };
}

/** The progress of a CI run as a bar (TTY) and stage lines (log). */
function ciProgressHandler(bar: ReturnType<typeof progressBar>, log: ReturnType<typeof stageLog>): (p: CiProgress) => void {
  return (p) => {
    if (p.stage === 'read') log.stage('FCIDUMP read');
    else if (p.stage === 'estimate') {
      const e = p.estimate;
      log.stage(`sized: ${e.determinants} determinants, ${e.nnz.rowsSampled === 0 && e.determinants > 0 ? 'H not stored' : `H ≈ ${e.nnz.nnz.toExponential(2)} non-zeros`}, peak host ${formatBytes(e.peakHost)} of ${formatBytes(e.host.bytes)} available, device ${formatBytes(e.peakDevice)}`);
    } else if (p.stage === 'space') log.stage('determinant space built');
    else if (p.stage === 'assembly') {
      bar.update(p.rowsDone, p.rows, 'assembling H');
      log.tick('assembly', `assembly: ${p.rowsDone}/${p.rows} rows (${((100 * p.rowsDone) / Math.max(1, p.rows)).toFixed(0)}%)`);
    } else if (p.stage === 'solve-start') log.stage('H assembled; solving');
    else if (p.stage === 'solve' || p.stage === 'polish') {
      const what = p.stage === 'solve' ? 'Davidson' : 'float64 polish';
      const res = Math.max(...p.residualNorms).toExponential(2);
      bar.update(p.iteration, p.iteration + 5, `${what} iter ${p.iteration}, max res ${res}`);
      log.tick(p.stage, `${what}: iteration ${p.iteration}, lowest ${p.values[0]?.toFixed(8)}, max residual ${res}`);
    }
  };
}

/**
 * --irrep: one irrep (1..8) or a comma list of distinct ones (a run each, in one process);
 * absent: the driver's default.
 */
export function parseIrreps(s: string | undefined): (number | undefined)[] {
  if (s === undefined) return [undefined];
  const list = s.split(',').map((x) => integerOption('irrep', x.trim(), 1, 1, 8));
  if (new Set(list).size !== list.length) throw new UsageError(`--irrep: expected distinct irreps, got '${s}'`);
  return list;
}

/** One run's table (text output); `irrep` titles it when the command ran several. */
function printRun(file: string, backend: string, r: Awaited<ReturnType<typeof ciEnergies>>, irrep: number | undefined): void {
  out(`${file}${irrep === undefined ? '' : ` irrep ${irrep}`}: ${r.space}, ${r.determinants} determinants, ${r.nnz === 0 ? 'H not stored' : `H nnz ${r.nnz}`} (${r.format})`);
  out(`backend: ${backend}; solver: ${r.solver.method}, ${r.solver.converged ? 'converged' : 'NOT converged'} in ${r.solver.iterations} iterations`);
  out(`timings ms: read ${r.timings.read.toFixed(0)}, space ${r.timings.space.toFixed(0)}, assembly ${r.timings.assembly.toFixed(0)} (${r.nnz === 0 ? 'σ tables; H not stored' : `${(r.assembly.rate / 1e6).toFixed(2)} M nnz/s`}), solve ${r.timings.solve.toFixed(0)}${r.timings.polish > 0 ? ` (float64 phase ${r.timings.polish.toFixed(0)})` : ''}`);
  // after a float64 polish: how each root was accepted and its certified bound (--accept)
  const extra = r.bounds ? ['accepted by', 'bound (Eh)'] : [];
  out(formatTable(['root', 'energy (Eh)', '‖H v − E v‖', '<S^2>', ...extra], r.energies.map((e, j) => [j, e.toFixed(10), r.residualNorms[j]!, r.s2[j]!.toFixed(6), ...(r.bounds ? acceptColumns(r.bounds, j) : [])])));
  for (const n of r.notes) out(`note: ${n}`);
  const short = r.spinShortfall;
  if (short) out(`WARNING: the roots do not answer --multiplicity:${short.otherSpin.length > 0 ? ` roots ${short.otherSpin.join(', ')} have another spin (<S^2> above);` : ''}${short.missing > 0 ? ` ${short.missing} root(s) of the multiplicity missing;` : ''} reported as NOT converged`);
}

/**
 * --tol, --tol-residual and --accept: the tolerance (> 0: 0 would never be met in floating point)
 * and the acceptance rule; undefined leaves the driver's default (bound on a float64 backend).
 */
function stopOptions(v: Record<string, unknown>): { tol: number; accept: 'residual' | 'bound' | undefined } {
  const accept = v.accept === undefined ? undefined : parseAccept(v.accept as string);
  if (v['tol-residual'] === undefined) return { tol: positiveOption('tol', v.tol, 1e-8), accept };
  if (v.tol !== undefined) throw new UsageError('--tol-residual: not with --tol (it is the tolerance of the residual rule)');
  if (accept === 'bound') throw new UsageError('--tol-residual: not with --accept bound (it asks for the residual rule)');
  if (v['energy-change'] !== undefined) throw new UsageError('--tol-residual: not with --energy-change (two stop rules)');
  return { tol: positiveOption('tol-residual', v['tol-residual'], 1e-8), accept: 'residual' };
}

/** What `ci` has parsed before it runs: the file, its integrals, the irreps and the per-irrep options. */
interface CiJob {
  file: string;
  fd: Fcidump | string;
  irreps: (number | undefined)[];
  // biome-ignore lint/suspicious/noExplicitAny: the driver's common options, built per irrep
  common0: (irrep: number | undefined) => any;
  backend: Backend<unknown, unknown>;
  ciBackend: CiBackend<unknown, unknown>;
  v: Record<string, unknown>;
  json: boolean;
}

/** `ci --dry-run`: the memory estimate and plan per irrep; exit `resource` when a run would be refused. */
async function ciDryRun(job: CiJob): Promise<number> {
  const { file, fd, irreps, common0, backend, ciBackend, v } = job;
  const kind = backend.space.precision === 'f32' ? 'device' : 'host';
  // on a device the driver assembles in chunks (of 2^24 non-zeros) when H is large
  // the float64 polish runs on the device (df64) unless --polish host, a spin penalty or a device without df64
  const devicePolish = kind === 'device' && (v.polish === undefined ? 'auto' : parsePolish(v.polish as string)) !== 'host' && v.multiplicity === undefined && (await ciBackend.devicePolish?.()) !== undefined;
  const rows = [];
  for (const irrep of irreps) {
    const e = await estimateCiEnergies(fd, { ...common0(irrep), backend: kind, polish: devicePolish ? 'device' : 'host', ...(kind === 'device' ? { chunkNnz: 2 ** 24 } : {}), ...(ciBackend.deviceMemory ? { deviceMemory: ciBackend.deviceMemory } : {}) });
    const fits = e.estimate.peakHost <= e.estimate.host.bytes && (!e.estimate.device || e.estimate.peakDevice <= e.estimate.device.bytes);
    rows.push({ ...(irrep === undefined ? {} : { irrep }), file, backend: backend.description, space: e.label, fits, ...e.estimate, plan: e.plan });
    if (!job.json) printEstimate(file, e.label, e.estimate, backend.description);
    if (!fits) info(`ci --dry-run: this run would be refused (peak host ${formatBytes(e.estimate.peakHost)}, device ${formatBytes(e.estimate.peakDevice)}): see the table`);
  }
  if (job.json) printJson(irreps.length > 1 ? { irreps: rows } : rows[0]);
  return rows.every((x) => x.fits) ? ExitCode.ok : ExitCode.resource;
}

/** The runs of `ci`, one per irrep, printed (or one JSON document); exit `notConverged` if any did not converge. */
async function ciRuns(
  job: CiJob,
  o: { solver: 'davidson' | 'dense' | 'auto'; tol: number; accept: 'residual' | 'bound' | undefined; maxIterations: number | undefined; nroots: number; bar: ReturnType<typeof progressBar>; log: ReturnType<typeof stageLog> },
): Promise<number> {
  const { file, fd, irreps, common0, backend, ciBackend, v } = job;
  const { solver, tol, accept, maxIterations, nroots, bar, log } = o;
  if (irreps.length > 1) await preflightIrreps(fd as Fcidump, irreps.map(common0));
  const runs = [];
  for (const irrep of irreps) {
    if (irreps.length > 1) log.stage(`irrep ${irrep}`);
    const r = await ciEnergies(fd, {
      ...common0(irrep),
      solver,
      format: formatNameOption('format', v.format, 'csr', ['auto']),
      backend: ciBackend,
      tol,
      ...(accept === undefined ? {} : { accept }),
      ...(maxIterations === undefined ? {} : { maxIterations }),
      ...(v['energy-change'] === undefined ? {} : { energyChange: numberOption('energy-change', v['energy-change'] as string, 1e-8, { min: 1e-15, max: 0.1 }) }),
      onProgress: ciProgressHandler(bar, log),
      ...(v.assembly === undefined ? {} : { assembly: parseAssembly(v.assembly as string) }),
      ...(v.polish === undefined ? {} : { polish: parsePolish(v.polish as string) }),
      ...(v['chunk-nnz'] === undefined ? {} : { chunkNnz: integerOption('chunk-nnz', v['chunk-nnz'] as string, 2 ** 24, 1) }),
      ...assemblyWorkers(),
      ...sigmaOptions(v.sigma as string | undefined, nroots, backend, ciBackend.deviceMemory?.bytes, v.multiplicity === undefined ? undefined : integerOption('multiplicity', v.multiplicity as string, 1, 1)),
    });
    bar.finish();
    log.stage(`done: ${r.solver.converged ? 'converged' : 'NOT converged'} after ${r.solver.iterations} iterations`);
    const { vectors: _vectors, ...rest } = r;
    runs.push({ ...(irrep === undefined ? {} : { irrep }), ...rest });
    if (!job.json) printRun(file, backend.description, r, irreps.length > 1 ? irrep : undefined);
  }
  // the rule the driver applied (its default depends on the backend)
  const applied = runs[0]?.bounds?.accept ?? accept ?? 'residual';
  if (job.json) printJson(irreps.length > 1 ? { file, backend: backend.description, accept: applied, irreps: runs } : { file, backend: backend.description, accept: applied, ...runs[0]! });
  return runs.every((r) => r.solver.converged) ? ExitCode.ok : ExitCode.notConverged;
}

export const ciCommand: Command = {
  summary: 'configuration-interaction energies from an FCIDUMP',
  usage: [
    'usage: gpusparse ci <FCIDUMP[.gz]> [--space fci|cis|cisd|cisdt|ci:L|cas:N,M] [--nroots 1] [--ms2 n] [--irrep n|n,m,…]',
    '                    [--multiplicity m [--penalty 0.2]] [--format csr|auto|<name>] [--solver davidson|dense|auto] [--tol 1e-8] [--maxit N]',
    '                    [--tol-residual r | --energy-change Eh]',
    '                    [--allow-missing-core] [--dry-run] [--host-memory GB] [--device-memory GB] [--assembly auto|chunked|whole] [--chunk-nnz N]',
    '                    [--polish auto|device|host] [--accept residual|bound]',
    '                    [--sigma explicit|direct|auto]',
    '',
    'Energies include the core energy (the FCIDUMP constant line). ⟨S²⟩ is reported per root.',
    '--irrep 1,2,3,4: one run per irrep in one process (the FCIDUMP read once), --nroots roots in each; --json then',
    'prints { irreps: [ { irrep, …one run\'s result } ] }. The exit code is the worst of the runs.',
    'A file without the constant line is refused (it is what a truncated file looks like);',
    '--allow-missing-core accepts it and uses 0.',
    'The run is sized before the space is built (determinants exact, H non-zeros sampled, bytes per stage)',
    'and refused with exit 5 when it cannot fit; --dry-run prints that estimate and stops.',
    'Off a terminal, progress is a line per stage on stderr with the elapsed time.',
    '--tol: energy tolerance in Eh. On the CPU backend a root stops when its certified bound 0 ≤ E − λ ≤ ε²/gap is ≤ --tol',
    '(gap from a guard root above the wanted ones) and ‖H v − E v‖ ≤ √tol (1e-4 at 1e-8), or when ‖H v − E v‖ ≤ --tol;',
    'the table shows per root how it stopped and its bound (docs/guides/ci.md). Judged on the --nroots requested roots only.',
    '--tol-residual r: the residual rule instead, ‖H v − E v‖ ≤ r Eh for every requested root: no assumption on the',
    'spectrum, vectors converged to r, more iterations. --maxit: most Davidson iterations (an integer ≥ 1, default 200).',
    '--energy-change e: stop instead when every root\'s energy moved by < e Eh in one Davidson iteration and ‖H v − E v‖ ≤ √e',
    '(OpenMolcas-style; float64 backends). Not a certified error: E − λ ≈ ‖r‖²/gap; the table shows ‖r‖ (docs/guides/ci-direct.md).',
    '--polish: where the float64 phase after the float32 GPU solve runs: device (df64 on the GPU, no float64 H',
    'on the host), host, or auto (default: device when the GPU passes the df64 self-test and no --multiplicity).',
    '--accept: how that float64 phase accepts a root: residual (default there: ‖H v − E v‖ ≤ --tol) or bound (also when the',
    'certified bound 0 ≤ E − λ ≤ ε²/gap is ≤ --tol Eh: usually no correction solve, residuals stay ≈ 1e-5 and are',
    'reported as they are). The bound assumes Davidson missed no state below its guard root (docs/guides/ci.md).',
    'The table and JSON (bounds) say per root how it was accepted and its bound. On the CPU backend bound is the default.',
    '--export-petsc H.petsc: write H (streamed in row chunks) and its diagonal (H.diag.petsc) in PETSc binary and stop;',
    'with --engine slepc --np N [--eps-type gd|jd|krylovschur] [--petsc-option "-eps_..."] SLEPc solves it under mpiexec (docs/guides/scaling-out.md).',
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
    'tol-residual': { type: 'string' },
    maxit: { type: 'string' },
    'energy-change': { type: 'string' },
    'allow-missing-core': { type: 'boolean' },
    'dry-run': { type: 'boolean' },
    'host-memory': { type: 'string' },
    'device-memory': { type: 'string' },
    assembly: { type: 'string' },
    polish: { type: 'string' },
    accept: { type: 'string' },
    'chunk-nnz': { type: 'string' },
    ...engineCiOptions,
    sigma: { type: 'string' },
  },
  async run(pos, v, common) {
    if (pos.length !== 1) throw new UsageError(`ci: expected one FCIDUMP argument, got ${pos.length}`);
    const space = parseSpace((v.space as string | undefined) ?? 'fci');
    const nroots = integerOption('nroots', v.nroots as string | undefined, 1, 1);
    const solver = ((v.solver as string | undefined) ?? 'auto') as 'davidson' | 'dense' | 'auto';
    if (!['davidson', 'dense', 'auto'].includes(solver)) throw new UsageError(`--solver: expected davidson, dense or auto, got '${solver}'`);
    const { tol, accept } = stopOptions(v);
    refuseIgnoredFlags(v, common.backend);
    const maxIterations = intOption('maxit', v.maxit as string | undefined, undefined, 1);
    // --export-petsc H.petsc and --engine slepc: H streamed to PETSc binary, SLEPc under mpiexec (docs/guides/scaling-out.md)
    const engine = parseEngineOptions(v, ['slepc', 'petsc']);
    if ((engine || v['export-petsc'] !== undefined) && v['energy-change'] !== undefined) throw new UsageError('--energy-change: not with --engine or --export-petsc (the external solver has its own stop rule)');
    if (engine || v['export-petsc'] !== undefined) return ciWithEngine({ file: pos[0]!, space, nroots, maxIterations, v }, engine, common);
    // --backend cpu --sigma direct: σ runs on its own worker threads (every core); Davidson's vector
    // operations split over threads only above 5·10^5 entries, so a second pool would idle and
    // cost its start-up (≈ 0.1 CPU s on a 61 441-determinant run). GPUSPARSE_THREADS still rules.
    const directOnCpu = common.backend === 'cpu' && v.sigma === 'direct' && process.env.GPUSPARSE_THREADS === undefined;
    const backend = await openBackend(common.backend, directOnCpu ? 1 : undefined);
    if (backend.fallbackReason) info(`WebGPU unavailable (${backend.fallbackReason}): using the CPU backend`);
    const bar = progressBar('ci', { enabled: common.progress, lines: false }); // off a terminal: the stage log below
    const log = stageLog('ci', { enabled: common.progress });
    log.stage(`reading ${pos[0]}`);
    try {
      const memory = {
        ...(v['host-memory'] === undefined ? {} : { hostBytes: positiveOption('host-memory', v['host-memory'], 0) * 1e9 }),
      };
      // the flag needs a reader option: read here, the driver takes the parsed integrals
      const ms2 = v.ms2 === undefined ? undefined : numberOption('ms2', v.ms2 as string, 0, { integer: true });
      const readOpts = ms2 === undefined ? {} : { ms2 };
      const input = v['allow-missing-core'] === true ? await readFcidump(pos[0]!, { ...readOpts, allowMissingCoreEnergy: true }) : pos[0]!;
      const deviceGb = v['device-memory'] === undefined ? undefined : positiveOption('device-memory', v['device-memory'], 0);
      const ciBackend = ciBackendOf(backend, deviceGb);
      const irreps = parseIrreps(v.irrep as string | undefined);
      // a list of irreps reads the file once (the driver takes the parsed integrals)
      const fd = irreps.length > 1 && typeof input === 'string' ? await readFcidump(input, readOpts) : input;
      const common0 = (irrep: number | undefined) => ({
        space,
        nroots,
        ...(v.ms2 === undefined ? {} : { ms2: numberOption('ms2', v.ms2 as string, 0, { integer: true }) }),
        ...(irrep === undefined ? {} : { irrep }),
        ...(v.multiplicity === undefined ? {} : { spin: { multiplicity: integerOption('multiplicity', v.multiplicity as string, 1, 1), penalty: positiveOption('penalty', v.penalty, 0.2) } }),
        memory,
      });
      const job: CiJob = { file: pos[0]!, fd, irreps, common0, backend, ciBackend, v, json: common.json };
      if (v['dry-run']) return await ciDryRun(job);
      return await ciRuns(job, { solver, tol, accept, maxIterations, nroots, bar, log });
    } finally {
      bar.finish();
      backend.dispose();
    }
  },
};
