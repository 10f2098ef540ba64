/**
 * The PETSc/SLEPc engine behind `--engine petsc|slepc --np N`: finds mpiexec and a Python with
 * petsc4py (and slepc4py), writes the problem as PETSc binary files into a temporary folder,
 * runs the shipped driver (packages/cli/engines/petsc_driver.py) under `mpiexec -n N`, and
 * reads back result.json and the solution or eigenvectors. Nothing of PETSc is linked into
 * gpusparse: the engine is whatever PETSc the machine (or cluster) has.
 * @module
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type CsrMatrix, GpuSparseError, writePetscMatrix, writePetscVectors } from '@gpusparse/formats';
import { integerOption, UsageError } from '../util/context';

/** The engines `--engine` takes besides the built-in one. */
export type EngineName = 'petsc' | 'slepc';

/** What the Debian/Ubuntu packages are called (named in every "not installed" message). */
export const ENGINE_PACKAGES = 'python3-petsc4py python3-slepc4py openmpi-bin (apt-get install; petsc-dev and slepc-dev add the C headers)';

/**
 * The engine cannot run here: mpiexec, petsc4py or slepc4py is missing, or the driver failed to
 * start. The CLI maps it to exit code 4 (like a missing GPU: the input is fine, the machine lacks it).
 */
export class EngineUnavailableError extends GpuSparseError {}

/** A PETSc run that started but failed (PETSc's own error text, the driver's traceback with --debug). */
export class EngineRunError extends GpuSparseError {}

/** The options every engine command shares: --engine, --np and the pass-through options. */
export interface EngineOptions {
  engine: EngineName;
  np: number;
  /** -ksp_*, -eps_*, -st_*, -pc_*, -mat_*, -vec_* options given after `--`, passed to PETSc as they are. */
  passThrough: string[];
}

/** parseArgs options that the engine adds to solve, eigs and ci. */
export const engineArgOptions = {
  engine: { type: 'string' },
  np: { type: 'string' },
  'petsc-option': { type: 'string', multiple: true },
} as const;

/** --engine/--np/--petsc-option from parsed values; undefined for the built-in engine. */
export function parseEngineOptions(v: Record<string, unknown>, allowed: readonly EngineName[]): EngineOptions | undefined {
  const engine = v.engine as string | undefined;
  const passThrough = ((v['petsc-option'] as string[] | undefined) ?? []).flatMap((s) => s.split(/\s+/).filter(Boolean));
  if (engine === undefined || engine === 'builtin') {
    const stray = ['np', 'petsc-option', 'pc', 'eps-type'].find((k) => v[k] !== undefined);
    if (stray) throw new UsageError(`--${stray}: only with --engine ${allowed.join(' or ')}`);
    return undefined;
  }
  if (!(allowed as readonly string[]).includes(engine)) throw new UsageError(`--engine: expected builtin or ${allowed.join(' or ')}, got '${engine}'`);
  const np = integerOption('np', v.np as string | undefined, 1, 1, 4096);
  for (const p of passThrough) {
    if (p.startsWith('-') && !/^-\d|^-\./.test(p) && !/^-(ksp|eps|st|pc|mat|vec|bv|ds|rg|log|options|info|malloc|help)(_|$)/.test(p)) {
      throw new UsageError(`--petsc-option: expected PETSc options of the -ksp_, -pc_, -eps_, -st_, -mat_ or -vec_ families, got '${p}'`);
    }
  }
  return { engine: engine as EngineName, np, passThrough };
}

/** The shipped driver script (packages/cli/engines/petsc_driver.py, from src/ or dist/). */
export function driverPath(): string {
  return fileURLToPath(new URL('../../engines/petsc_driver.py', import.meta.url));
}

/** First executable named `name` on PATH. */
function onPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir && existsSync(join(dir, name))) return join(dir, name);
  }
  return undefined;
}

/**
 * PETSC_DIR/SLEPC_DIR for Debian's layout when unset: its petsc4py.pth looks under
 * /usr/lib/petsc, a link that only petsc-dev installs; the runtime packages live in
 * /usr/lib/petscdir/petscX.Y/<arch>-real.
 */
function debianDirs(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, base, pkg] of [['PETSC_DIR', '/usr/lib/petscdir', 'petsc'], ['SLEPC_DIR', '/usr/lib/slepcdir', 'slepc']] as const) {
    if (process.env[name] || existsSync(`/usr/lib/${pkg}`) || !existsSync(base)) continue;
    const versions = readdirSync(base).filter((d) => d.startsWith(pkg)).sort();
    const v = versions[versions.length - 1];
    if (!v) continue;
    const arch = readdirSync(join(base, v)).find((d) => d.endsWith('-real'));
    if (arch) env[name] = join(base, v, arch);
  }
  return env;
}

/** How to run the engine here. */
export interface EngineSetup {
  mpiexec: string;
  python: string;
  env: NodeJS.ProcessEnv;
  versions: string;
}

const setups = new Map<string, EngineSetup>();

/**
 * Find mpiexec and a Python that imports petsc4py (and slepc4py for 'slepc'): GPUSPARSE_PYTHON,
 * else /usr/bin/python3 (where Debian's packages go), else python3 on PATH. Throws
 * {@link EngineUnavailableError} naming the packages when something is missing.
 */
export function locateEngine(engine: EngineName): EngineSetup {
  // cached per engine and environment (a changed PATH or GPUSPARSE_PYTHON is looked at again)
  const key = [engine, process.env.PATH, process.env.GPUSPARSE_MPIEXEC, process.env.GPUSPARSE_PYTHON].join('\0');
  const cached = setups.get(key);
  if (cached) return cached;
  const mpiexec = process.env.GPUSPARSE_MPIEXEC ?? onPath('mpiexec');
  if (mpiexec && !existsSync(mpiexec)) throw new EngineUnavailableError(`--engine ${engine}: GPUSPARSE_MPIEXEC names ${mpiexec}, which does not exist; install ${ENGINE_PACKAGES}`);
  if (!mpiexec) throw new EngineUnavailableError(`--engine ${engine}: mpiexec not found on PATH; install ${ENGINE_PACKAGES}, or set GPUSPARSE_MPIEXEC`);
  const env: NodeJS.ProcessEnv = { ...process.env, ...debianDirs() };
  // OpenMPI refuses root (containers, CI) unless told; more ranks than cores are allowed (a test of np = 2 on one core)
  if (process.getuid?.() === 0) Object.assign(env, { OMPI_ALLOW_RUN_AS_ROOT: '1', OMPI_ALLOW_RUN_AS_ROOT_CONFIRM: '1' });
  env.OMPI_MCA_rmaps_base_oversubscribe ??= '1';
  const modules = engine === 'slepc' ? 'petsc4py, slepc4py' : 'petsc4py';
  const probe = `import ${modules}; from petsc4py import PETSc; print(".".join(map(str, PETSc.Sys.getVersion())))`;
  const candidates = [process.env.GPUSPARSE_PYTHON, '/usr/bin/python3', onPath('python3')].filter((p): p is string => Boolean(p) && existsSync(p!));
  const tried: string[] = [];
  for (const python of [...new Set(candidates)]) {
    const r = spawnSync(python, ['-c', probe], { env, encoding: 'utf8', timeout: 60_000 });
    if (r.status === 0) {
      const setup = { mpiexec, python, env, versions: `PETSc ${r.stdout.trim()}` };
      setups.set(key, setup);
      return setup;
    }
    tried.push(`${python}: ${(r.stderr || r.error?.message || '').trim().split('\n').pop()}`);
  }
  throw new EngineUnavailableError(`--engine ${engine}: no Python with ${modules} (tried ${tried.join('; ') || 'no python3 found'}); install ${ENGINE_PACKAGES}, or set GPUSPARSE_PYTHON`);
}

/** The driver's result.json (fields per task; see petsc_driver.py). */
export interface DriverResult {
  ok: boolean;
  np: number;
  petsc: string;
  slepc?: string;
  error?: string;
  trace?: string;
  loadSeconds: number;
  solveSeconds: number;
  iterations: number;
  reason: string;
  reasonCode: number;
  matMults: number;
  matType: string;
  [key: string]: unknown;
}

/** A job for the driver: what to solve, written into a temporary folder. */
export interface EngineJob {
  task: 'solve' | 'eigs';
  matrix: CsrMatrix | { petscFile: string };
  rhs?: Float64Array;
  ksp?: Record<string, unknown>;
  eps?: Record<string, unknown>;
}

/** What a run gives back: the result, the folder's files while `use` runs, the wall time. */
export interface EngineRun {
  result: DriverResult;
  dir: string;
  wallMs: number;
  writeMs: number;
  command: string;
}

/**
 * Run one job under `mpiexec -n np`; `use` reads what it needs from the output folder, which is
 * removed afterwards. Throws EngineUnavailableError (setup) or EngineRunError (PETSc failed).
 */
export async function runEngine<T>(o: EngineOptions, job: EngineJob, use: (run: EngineRun) => Promise<T>): Promise<T> {
  const setup = locateEngine(o.engine);
  const dir = mkdtempSync(join(tmpdir(), 'gpusparse-engine-'));
  try {
    const t0 = performance.now();
    const matrix = 'petscFile' in job.matrix ? job.matrix.petscFile : join(dir, 'A.petsc');
    if (!('petscFile' in job.matrix)) await writePetscMatrix(matrix, job.matrix);
    const spec: Record<string, unknown> = { task: job.task, matrix, out: dir, ksp: job.ksp, eps: job.eps };
    if (job.rhs) {
      spec.rhs = join(dir, 'b.petsc');
      await writePetscVectors(spec.rhs as string, [job.rhs]);
    }
    writeFileSync(join(dir, 'job.json'), JSON.stringify(spec));
    const writeMs = performance.now() - t0;
    const args = ['-n', String(o.np), setup.python, driverPath(), join(dir, 'job.json'), ...o.passThrough];
    const command = `${setup.mpiexec} ${args.join(' ')}`;
    const t1 = performance.now();
    const { code, stderr } = await spawnCollect(setup.mpiexec, args, setup.env);
    const wallMs = performance.now() - t1;
    const resultPath = join(dir, 'result.json');
    if (!existsSync(resultPath)) {
      throw new EngineUnavailableError(`--engine ${o.engine}: the driver exited with ${code} and wrote no result (${command}): ${lastLines(stderr, 6)}`);
    }
    const result = JSON.parse(readFileSync(resultPath, 'utf8')) as DriverResult;
    if (!result.ok) throw new EngineRunError(`--engine ${o.engine}: PETSc failed (${command}): ${result.error ?? 'no message'}`);
    return await use({ result, dir, wallMs, writeMs, command });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function lastLines(text: string, n: number): string {
  return text.trim().split('\n').slice(-n).join(' | ') || '(no output)';
}

/** Run and collect stderr (stdout goes to our stderr: PETSc's -ksp_monitor and -log_view are diagnostics). */
function spawnCollect(cmd: string, args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => process.stderr.write(d));
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
      if (stderr.length > 1 << 16) stderr = stderr.slice(-(1 << 15));
    });
    child.on('error', (e) => reject(new EngineUnavailableError(`cannot start ${cmd}: ${e.message}; install ${ENGINE_PACKAGES}`)));
    child.on('close', (code) => resolve({ code, stderr }));
  });
}
