/**
 * `gpusparse ci --export-petsc H.petsc` and `gpusparse ci --engine slepc --np N`: the CI
 * Hamiltonian assembled in row chunks straight into a PETSc binary file (never whole in
 * memory; its diagonal beside it, for a Davidson preconditioner in the user's own SLEPc code),
 * then, with the engine, SLEPc's Davidson on it under MPI. Energies, residuals and ⟨S²⟩ come back
 * in the same CiResult, table and JSON as the built-in driver.
 * @module
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { assembleChunked, buildCiSpace, type CiResult, type ChunkSink, type SpaceSpec, spinSquaredExpectations } from '@gpusparse/chem';
import { readFcidump } from '@gpusparse/chem/node';
import { formatBytes, NotSupportedError, PetscMatrixWriter, readPetscVectors, writePetscVectors } from '@gpusparse/formats';
import { type CommonOptions, ExitCode, info, integerOption, numberOption, out, printJson, UsageError } from '../util/context';
import { asOutputError } from '../util/output';
import { formatTable } from '../util/table';
import { eigenResultOf, EPS_TYPES } from './engine-eigs';
import { engineArgOptions, type EngineOptions, runEngine } from './petsc-engine';

export { parseEngineOptions } from './petsc-engine';

/** Options `ci` gains: --engine, --np, --petsc-option, --eps-type and --export-petsc. */
export const engineCiOptions = { ...engineArgOptions, 'eps-type': { type: 'string' }, 'export-petsc': { type: 'string' } } as const;

/** What the ci command hands over. */
export interface EngineCiInput {
  file: string;
  space: SpaceSpec;
  nroots: number;
  maxIterations: number | undefined;
  /** Parsed option values of the ci command (ms2, irrep, tol, ...). */
  v: Record<string, unknown>;
}

/** `H.petsc` → `H.diag.petsc` (the diagonal beside the matrix). */
export function diagonalPath(matrixPath: string): string {
  return matrixPath.endsWith('.petsc') ? `${matrixPath.slice(0, -'.petsc'.length)}.diag.petsc` : `${matrixPath}.diag`;
}

/** Non-zeros per chunk of the export (2^22: 50 MB of chunk on the host, whatever the size of H). */
const EXPORT_CHUNK_NNZ = 2 ** 22;

/** Assemble H of the space into `path` in row chunks; its diagonal into diagonalPath(path). */
async function exportHamiltonian(c: EngineCiInput, path: string) {
  const t0 = performance.now();
  const fd0 = await readFcidump(c.file, {
    ...(c.v['allow-missing-core'] === true ? { allowMissingCoreEnergy: true } : {}),
    ...(c.v.ms2 === undefined ? {} : { ms2: numberOption('ms2', c.v.ms2 as string, 0, { integer: true }) }),
  });
  const read = performance.now() - t0;
  const opts = {
    // the same usage checks as the built-in driver's (exit 2, not the space builder's exit 3)
    ...(c.v.ms2 === undefined ? {} : { ms2: numberOption('ms2', c.v.ms2 as string, 0, { integer: true }) }),
    ...(c.v.irrep === undefined ? {} : { irrep: integerOption('irrep', c.v.irrep as string, 1, 1, 8) }),
  };
  const t1 = performance.now();
  const { fcidump: fd, space } = buildCiSpace(fd0, c.space, opts);
  const spaceMs = performance.now() - t1;
  if (c.nroots > space.size) throw new UsageError(`--nroots: expected an integer in 1..${space.size} (the space size), got ${c.nroots}`);
  let writer: PetscMatrixWriter;
  try {
    writer = await PetscMatrixWriter.open(path, space.size, space.size);
  } catch (e) {
    throw asOutputError(path, e); // /dev/full fails at the header
  }
  const sink: ChunkSink<Float64Array> = {
    add: (chunk, rowStart) => writer.add(chunk, rowStart),
    finish: () => {
      throw new NotSupportedError('the PETSc export sink has no operator: the matrix is in the file');
    },
  };
  try {
    // perRow only sizes the chunks (rows per chunk = chunk non-zeros / perRow)
    const chunkNnz = c.v['chunk-nnz'] === undefined ? EXPORT_CHUNK_NNZ : integerOption('chunk-nnz', c.v['chunk-nnz'] as string, EXPORT_CHUNK_NNZ, 1);
    const h = await assembleChunked(fd, space, sink, { perRow: Math.min(space.size, 2000), chunkNnz, keepHost: false });
    const written = await writer.finish();
    // the diagonal beside a regular file only (not /dev/null.diag)
    const diagonal = (await stat(path)).isFile() ? diagonalPath(path) : undefined;
    if (diagonal) await writePetscVectors(diagonal, [h.diagonal]);
    let minDiagonal = Number.POSITIVE_INFINITY;
    for (const d of h.diagonal) minDiagonal = Math.min(minDiagonal, d);
    return { fd, space, written, diagonal, chunks: h.chunks, minDiagonal, timings: { read, space: spaceMs, assembly: h.stats.ms } };
  } catch (e) {
    await writer.abort();
    throw asOutputError(path, e); // a full disk names the path (was a bare "ENOSPC: …, write")
  }
}

/** --export-petsc alone: write H and its diagonal, print what was written. */
async function exportOnly(c: EngineCiInput, path: string, common: CommonOptions): Promise<number> {
  const x = await exportHamiltonian(c, path);
  const summary = { file: c.file, space: x.space.label, determinants: x.space.size, matrix: x.written, diagonal: x.diagonal ?? null, ecore: x.fd.ecore, chunks: x.chunks, timings: x.timings };
  if (common.json) printJson(summary);
  else {
    out(`${c.file}: ${x.space.label}, ${x.space.size} determinants`);
    out(`H (electronic, without the core energy ${x.fd.ecore}) → ${path}: ${x.written.nnz} non-zeros, ${formatBytes(x.written.bytes)}, written in ${x.chunks} row chunks`);
    out(x.diagonal ? `diagonal of H → ${x.diagonal}` : `diagonal of H not written (${path} is not a regular file)`);
  }
  return ExitCode.ok;
}

/**
 * The ci command's engine branch: export H (to --export-petsc or a temporary file), and with an
 * engine run SLEPc's Davidson (or --eps-type) on it. Returns the exit code.
 */
export async function ciWithEngine(c: EngineCiInput, eo: EngineOptions | undefined, common: CommonOptions): Promise<number> {
  for (const flag of ['multiplicity', 'dry-run', 'format', 'solver', 'assembly']) {
    if (c.v[flag] !== undefined) throw new UsageError(`--${flag}: not with --engine or --export-petsc (the built-in driver only)`);
  }
  const exportPath = c.v['export-petsc'] as string | undefined;
  if (!eo) return exportOnly(c, exportPath!, common);
  const epsType = (c.v['eps-type'] as string | undefined) ?? 'gd';
  if (!(EPS_TYPES as readonly string[]).includes(epsType)) throw new UsageError(`--eps-type: expected one of ${EPS_TYPES.join(', ')}, got '${epsType}'`);
  const tol = numberOption('tol', c.v.tol as string | undefined, 1e-8, { min: 0 });
  const tmp = exportPath ? undefined : mkdtempSync(join(tmpdir(), 'gpusparse-ci-'));
  try {
    const path = exportPath ?? join(tmp!, 'H.petsc');
    const x = await exportHamiltonian(c, path);
    info(`ci: H written to ${path} (${x.written.nnz} non-zeros); SLEPc ${epsType} on ${eo.np} process(es)`);
    // the Davidson preconditioner (D − τ)⁻¹ at τ = min diag(H) − 0.1 Eh: near the ground state (an
    // upper bound on it, the correlation energy below), never singular
    const eps = { type: epsType, which: 'smallest', nev: c.nroots, tol, maxit: c.maxIterations ?? 200, vectors: true, shiftInvert: false, conv: 'abs', shift: x.minDiagonal - 0.1 };
    return await runEngine({ ...eo, engine: 'slepc' }, { task: 'eigs', matrix: { petscFile: path }, eps }, async ({ result: p, dir, wallMs }) => {
      const r = eigenResultOf(p, c.nroots, tol, 'abs');
      const vectors = r.values.length > 0 ? await readPetscVectors(`${dir}/vectors.petsc`) : [];
      const result: CiResult = {
        energies: r.values.map((e) => e + x.fd.ecore),
        residualNorms: r.residualNorms,
        s2: spinSquaredExpectations(x.space, vectors),
        timings: { ...x.timings, solve: r.stats.ms, polish: 0 },
        determinants: x.space.size,
        nnz: x.written.nnz,
        format: 'PETSc aij',
        space: x.space.label,
        solver: { method: r.method, converged: r.converged, iterations: r.iterations, matvecs: r.stats.matvecs },
        assembly: { rate: x.written.nnz / Math.max(x.timings.assembly / 1000, 1e-9), bytesPerNnz: 12, workers: 0 },
        vectors,
        notes: [`${r.detail}`, `H streamed to ${exportPath ?? 'a temporary PETSc binary file'} in ${x.chunks} row chunks`],
      };
      return printCi(c.file, result, `SLEPc ${p.slepc} / PETSc ${p.petsc} over MPI, ${p.np} process${p.np === 1 ? '' : 'es'}`, { name: 'slepc', np: p.np, eps: p.epsType, st: p.stType, reason: `EPS_${p.reason}`, wallMs }, common);
    });
  } finally {
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  }
}

/** The ci command's table or JSON for a result. */
function printCi(file: string, r: CiResult, backend: string, engine: Record<string, unknown>, common: CommonOptions): number {
  const { vectors: _vectors, ...rest } = r;
  if (common.json) printJson({ file, backend, ...rest, engine });
  else {
    out(`${file}: ${r.space}, ${r.determinants} determinants, H nnz ${r.nnz} (${r.format})`);
    out(`backend: ${backend}; solver: ${r.solver.method}, ${r.solver.converged ? 'converged' : 'NOT converged'} in ${r.solver.iterations} iterations`);
    out(`timings ms: read ${r.timings.read.toFixed(0)}, space ${r.timings.space.toFixed(0)}, assembly + write ${r.timings.assembly.toFixed(0)}, solve ${r.timings.solve.toFixed(0)}`);
    out(formatTable(['root', 'energy (Eh)', '‖H v − E v‖', '<S^2>'], r.energies.map((e, j) => [j, e.toFixed(10), r.residualNorms[j]!, r.s2[j]!.toFixed(6)])));
    for (const n of r.notes) out(`note: ${n}`);
  }
  return r.solver.converged ? ExitCode.ok : ExitCode.notConverged;
}
