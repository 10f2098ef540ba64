/**
 * `gpusparse export A.mtx -o A.petsc [--rhs b.mtx|ones]`: a matrix to PETSc's binary format
 * (what MatLoad reads), with an optional right-hand side appended as a vector (the layout of
 * PETSc's `-f` examples: MatLoad, then VecLoad from the same file). The other way too: a PETSc
 * binary matrix to Matrix Market when the output ends in .mtx or .mtx.gz (symmetric storage when
 * the matrix is exactly symmetric, so a symmetric .mtx comes back as it went).
 * @module
 */
import { open, rm, stat } from 'node:fs/promises';
import { type CsrMatrix, csrEquals, csrTranspose, sideFilePath, writeMatrixMarket, writePetscMatrix, writePetscVectors } from '@gpusparse/formats';
import { type Command, ExitCode, out, printJson, UsageError } from '../util/context';
import { loadMatrix } from '../util/load';
import { onesRhs, readRhsFile } from '../util/rhs';
import { asOutputError } from '../util/output';

/** Append `more` (a file's bytes) to `path`. */
async function append(path: string, more: string): Promise<void> {
  const src = await open(more, 'r');
  const dst = await open(path, 'a');
  try {
    const buf = new Uint8Array(1 << 20);
    for (;;) {
      const { bytesRead } = await src.read(buf, 0, buf.length, null);
      if (bytesRead === 0) break;
      await dst.write(buf, 0, bytesRead);
    }
  } finally {
    await src.close();
    await dst.close();
  }
}

/** True when a equals its transpose bit for bit. */
function exactlySymmetric(a: CsrMatrix): boolean {
  return a.rows === a.cols && csrEquals(a, csrTranspose(a));
}

export const exportCommand: Command = {
  summary: 'write a matrix in PETSc binary format (or a PETSc matrix as Matrix Market)',
  usage: [
    'usage: gpusparse export <A.mtx | A.petsc | gen:...> -o <out.petsc | out.mtx[.gz]> [--rhs b.mtx|ones]',
    '',
    'To PETSc binary (any output name not ending in .mtx/.mtx.gz): header, row lengths, column indices,',
    'values, big-endian int32/float64, as MatLoad reads it; symmetric Matrix Market storage is expanded',
    '(PETSc stores both triangles). --rhs appends b as a vector to the same file (MatLoad then VecLoad).',
    'To Matrix Market (.mtx): symmetric storage when the matrix is exactly symmetric, else general.',
    'The CI Hamiltonian: gpusparse ci FCIDUMP --export-petsc H.petsc.',
  ].join('\n'),
  options: {
    output: { type: 'string', short: 'o' },
    rhs: { type: 'string' },
  },
  async run(pos, v, common) {
    if (pos.length !== 1) throw new UsageError(`export: expected one matrix argument, got ${pos.length}`);
    const output = v.output as string | undefined;
    if (!output) throw new UsageError('export: expected -o <output file>');
    const m = await loadMatrix(pos[0]!);
    const a = m.matrix;
    const toMtx = /\.mtx(\.gz)?$/.test(output);
    if (toMtx && v.rhs !== undefined) throw new UsageError('--rhs: only with PETSc binary output');
    const b = v.rhs === undefined ? undefined : v.rhs === 'ones' ? onesRhs(a).b : await readRhsFile(a, v.rhs as string, '--rhs');
    const t0 = performance.now();
    let bytes: number;
    let symmetry = 'general';
    try {
      if (toMtx) {
        symmetry = exactlySymmetric(a) ? 'symmetric' : 'general';
        await writeMatrixMarket(output, a, { symmetry: symmetry as 'general' | 'symmetric' });
        bytes = (await stat(output)).size;
      } else {
        bytes = (await writePetscMatrix(output, a)).bytes;
        if (b) {
          const tmp = sideFilePath(output, (await stat(output)).isFile(), 'rhs'); // never /dev/null.rhs.partial
          bytes += (await writePetscVectors(tmp, [b])).bytes;
          await append(output, tmp);
          await rm(tmp, { force: true });
        }
      }
    } catch (e) {
      throw asOutputError(output, e);
    }
    const ms = performance.now() - t0;
    const summary = { input: m.name, output, format: toMtx ? `Matrix Market (${symmetry})` : 'PETSc binary', rows: a.rows, cols: a.cols, nnz: a.rowPtr[a.rows], rhs: b ? (v.rhs as string) : undefined, bytes, ms };
    if (common.json) printJson(summary);
    else out(`${m.name} → ${output}: ${summary.format}, ${a.rows}×${a.cols}, nnz ${summary.nnz}${b ? `, b (${v.rhs}) appended` : ''}, ${bytes} bytes, ${ms.toFixed(0)} ms`);
    return ExitCode.ok;
  },
};
