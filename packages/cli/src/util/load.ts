/**
 * Matrix loading for the CLI: a Matrix Market path (.mtx or .mtx.gz), or a generator spec
 * `gen:<name>:<args>` so commands can run without a file:
 * `gen:poisson2d:1000` (1000×1000 grid), `gen:poisson3d:64`, `gen:banded:1000000:8`,
 * `gen:uniform:1000000:16`, `gen:powerlaw:1000000`, `gen:cilike:100000`, `gen:laplacian1d:1000`.
 * A generator's rows and non-zeros must fit 32-bit indices (at most 2^31 − 1 each: e.g.
 * poisson2d n ≤ 20724) — outside that range the spec is a usage error (exit 2); within it, a
 * matrix whose arrays cannot fit the memory available is refused before allocation (exit 5).
 * @module
 */
import { stat } from 'node:fs/promises';
import { availableMemoryBytes, type CsrMatrix, checkStrictNumber, generators, isPetscBinaryFile, MatrixMarketError, PetscBinaryError, readMatrixMarket, readPetscFile, ResourceLimitError } from '@gpusparse/formats';
import { info, UsageError } from './context';

/** A loaded matrix and where it came from. */
export interface LoadedMatrix {
  matrix: CsrMatrix;
  name: string;
  symmetry: string;
  warnings: string[];
  /** A vector stored with the matrix (PETSc binary: the first vector after it), used as b by `solve`. */
  rhs?: { values: Float64Array; file: string };
}

const MAX_INT32 = 2147483647;

/** A generator: its argument names and defaults, its size before building, and the builder. */
interface Generator {
  args: readonly [string, number][];
  /** Rows and a lower bound of the stored entries, from the arguments alone. */
  size(a: number[]): { rows: number; nnz: number };
  build(a: number[]): CsrMatrix;
  symmetry: 'symmetric' | 'general';
}

const gens: Record<string, Generator> = {
  poisson2d: { args: [['n', 100]], size: ([n = 0]) => ({ rows: n * n, nnz: 5 * n * n - 4 * n }), build: ([n = 100]) => generators.poisson2d(n), symmetry: 'symmetric' },
  poisson3d: { args: [['n', 20]], size: ([n = 0]) => ({ rows: n ** 3, nnz: 7 * n ** 3 - 6 * n * n }), build: ([n = 20]) => generators.poisson3d(n), symmetry: 'symmetric' },
  laplacian1d: { args: [['n', 1000]], size: ([n = 0]) => ({ rows: n, nnz: 3 * n - 2 }), build: ([n = 1000]) => generators.laplacian1d(n), symmetry: 'symmetric' },
  banded: {
    args: [['n', 10000], ['w', 4]],
    size: ([n = 0, w = 0]) => ({ rows: n, nnz: n * (2 * Math.min(w, n) + 1) - Math.min(w, n) * (Math.min(w, n) + 1) }),
    build: ([n = 10000, w = 4]) => generators.banded(n, w, w, { spd: true }),
    symmetry: 'symmetric',
  },
  uniform: { args: [['n', 10000], ['k', 16]], size: ([n = 0, k = 0]) => ({ rows: n, nnz: n * Math.min(k, n) }), build: ([n = 10000, k = 16]) => generators.uniformRandom(n, n, k, 1), symmetry: 'general' },
  powerlaw: { args: [['n', 10000]], size: ([n = 0]) => ({ rows: n, nnz: n }), build: ([n = 10000]) => generators.powerLaw(n, n, { seed: 1 }), symmetry: 'general' },
  cilike: { args: [['n', 10000]], size: ([n = 0]) => ({ rows: n, nnz: n }), build: ([n = 10000]) => generators.ciLike(n, { maxPerRow: 2000 }), symmetry: 'general' },
};

/** Parse and check a `gen:` spec, refusing before allocation what cannot be built. */
function generate(spec: string): LoadedMatrix {
  const [, name, ...rest] = spec.split(':');
  // own keys only: gen:toString or gen:__proto__ found Object.prototype's and crashed (exit 70)
  const g = Object.hasOwn(gens, name ?? '') ? gens[name!] : undefined;
  if (!g) throw new UsageError(`unknown generator '${name}' in '${spec}': expected one of ${Object.keys(gens).join(', ')}`);
  if (rest.length > g.args.length) throw new UsageError(`'${spec}': ${name} takes at most ${g.args.length} argument(s) (${g.args.map(([n]) => n).join(', ')}), got ${rest.length}`);
  const args = g.args.map(([argName, fallback], k) => {
    const text = rest[k];
    if (text === undefined) return fallback;
    const r = checkStrictNumber(text, { integer: true, min: 0, max: MAX_INT32 });
    if (!r.ok) throw new UsageError(`generator argument ${argName} '${text}' in '${spec}': expected ${r.expected}`);
    return r.value;
  });
  const { rows, nnz } = g.size(args);
  if (rows > MAX_INT32 || nnz > MAX_INT32) {
    throw new UsageError(`'${spec}' has ${rows} rows and ${nnz} non-zeros: expected at most ${MAX_INT32} of each (32-bit indices)`);
  }
  // the build's peak: the column array growing by 1.5× (old and new), its trimmed copy and the
  // values, ≈ 18 bytes an entry. (The generators kept one small array per row on the V8 heap
  // before session 12 — ≈ 360 bytes a row, checked here against the heap limit — and now none,
  // so gen:poisson3d:440, 85 M rows, builds in the default heap.)
  const csrBytes = 18 * nnz + 4 * (rows + 1);
  const avail = availableMemoryBytes();
  if (csrBytes > avail) throw new ResourceLimitError(`'${spec}' (${rows} rows, ≥ ${nnz} non-zeros, CSR while building)`, csrBytes, avail, 'choose a smaller size');
  return { matrix: g.build(args), name: spec, symmetry: g.symmetry, warnings: [] };
}

/**
 * The reader's warnings on stderr, for every command: only info and solve printed them, so
 * eigs, convert, tune, bench, export and spgemm used a matrix rounded past 2^53 (or with summed
 * repeats) without a word.
 */
function printWarnings(warnings: readonly string[]): void {
  for (const w of warnings) info(`warning: ${w}`);
}

/** '-' names standard input: /dev/stdin where the system has it (a usage error elsewhere). */
function stdinPath(): string {
  if (process.platform === 'win32') throw new UsageError("'-' (standard input) is not read on Windows: give the matrix file's path");
  return '/dev/stdin';
}

/** True for a path that exists and is not a regular file or a directory (a named pipe, /dev/stdin, a device). */
async function isStream(path: string): Promise<boolean> {
  try {
    const s = await stat(path);
    return !s.isFile() && !s.isDirectory();
  } catch {
    return false; // the reader names the missing file
  }
}

/**
 * A result's `stats` with the reader's warnings first in `stats.warnings` (a pattern file taken as
 * ones, summed repeats…), as the one-call API does: under --json they reached only stderr.
 */
export function withInputWarnings<S extends { warnings?: string[] }>(stats: S, read: readonly string[]): S {
  return read.length === 0 ? stats : { ...stats, warnings: [...read, ...(stats.warnings ?? [])] };
}

/**
 * The reader's "(pass strictCount: false …)" is API advice; on the command line: `--lenient` where
 * the command has it (`info`), else the file's count to correct.
 */
function cliCountHint(e: unknown, lenientOption: boolean): unknown {
  const api = ' (pass strictCount: false to accept extra entries)';
  if (!(e instanceof MatrixMarketError) || !e.got.endsWith(api)) return e;
  const cli = lenientOption ? ' (--lenient keeps them, with a warning)' : ' (correct the count on the size line; gpusparse info --lenient reads the file with a warning)';
  return new MatrixMarketError(e.file, e.line, e.expected, e.got.slice(0, -api.length) + cli, e.code);
}

/** Load a matrix from a path or a `gen:` spec (the reader's warnings are printed on stderr). */
export async function loadMatrix(spec0: string, opts: { strictCount?: boolean; lenientOption?: boolean } = {}): Promise<LoadedMatrix> {
  if (spec0.startsWith('gen:')) return generate(spec0);
  const spec = spec0 === '-' ? stdinPath() : spec0;
  const warnings: string[] = [];
  const stream = await isStream(spec);
  // PETSc binary (gpusparse export, MatView): by its class id whatever the name, or by the name
  // (then a wrong class id is reported as such, not as a missing Matrix Market banner). A pipe is
  // not sniffed: the bytes read to look would be gone for the reader (Matrix Market only there).
  if (stream && /\.petsc$/i.test(spec)) throw new UsageError(`${spec} is a pipe or device: the PETSc reader needs a regular file (it seeks); write it to a file first`);
  if (/\.petsc$/i.test(spec) || (!stream && (await isPetscBinaryFile(spec)))) {
    const objs = await readPetscFile(spec);
    const at = objs.findIndex((o) => o.kind === 'matrix');
    const mat = objs[at];
    if (mat?.kind !== 'matrix') throw new PetscBinaryError(spec, 0, 'a matrix (class id 1211216)', `${objs.length} vector(s) and no matrix`);
    if (mat.sortedRows > 0) warnings.push(`${spec}: ${mat.sortedRows} row(s) stored with unsorted columns, sorted on reading`);
    const vec = objs.slice(at + 1).find((o) => o.kind === 'vector');
    if (objs.length > 2 || (objs.length === 2 && !vec)) warnings.push(`${spec}: ${objs.length} objects; using the first matrix${vec ? ' and the vector after it' : ''}`);
    printWarnings(warnings);
    return { matrix: mat.matrix, name: spec, symmetry: 'general', warnings, ...(vec?.kind === 'vector' ? { rhs: { values: vec.values, file: spec } } : {}) };
  }
  const r = await readMatrixMarket(spec, { strictCount: opts.strictCount ?? true, onWarning: (w) => warnings.push(`${w.file}:${w.line}: ${w.message}`) }).catch((e: unknown) => {
    throw cliCountHint(e, opts.lenientOption === true);
  });
  // the values are not in the file: a solve or eigs answers for A with ones, say so
  if (r.header.field === 'pattern') warnings.push(`${spec}: a pattern file (structure only, no values): every stored entry is taken as 1`);
  printWarnings(warnings);
  return { matrix: r.matrix, name: spec, symmetry: r.header.symmetry, warnings };
}
