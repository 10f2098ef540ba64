/**
 * Session 7 hardening: PETSc binary writers given a device instead of a file. Before the fix a
 * write to /dev/null failed at ftruncate (EINVAL) and the error path then removed the output
 * path — as root, `gpusparse export A.mtx -o /dev/null` deleted the /dev/null device node — and
 * the streaming writer put its side file beside the output (/dev/null.values.partial). The
 * devices here are made with mknod in a temporary folder (root only; skipped otherwise), so a
 * regression removes only those.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { generators } from '../src/index';
import { PetscMatrixWriter, sideFilePath, writePetscMatrix, writePetscVectors } from '../src/petsc/write';

const dir = mkdtempSync(join(tmpdir(), 'gpusparse-s7-petsc-'));
afterAll(() => rmSync(dir, { recursive: true, force: true })); // the device nodes too
/** A character device in `dir` (1,3 = null, 1,7 = full), or undefined when mknod is not allowed. */
function device(name: string, minor: number): string | undefined {
  const path = join(dir, name);
  const r = spawnSync('mknod', [path, 'c', '1', String(minor)]);
  return r.status === 0 ? path : undefined;
}
const canMknod = device('probe', 3) !== undefined;
const isDevice = (p: string) => existsSync(p) && statSync(p).isCharacterDevice();

describe.skipIf(!canMknod)('PETSc writers on a device', () => {
  it('writePetscMatrix to a null device succeeds and leaves the device (was EINVAL at ftruncate, then the device node removed)', async () => {
    const nul = device('null1', 3)!;
    const a = generators.laplacian1d(50);
    await expect(writePetscMatrix(nul, a)).resolves.toMatchObject({ rows: 50, nnz: 148 });
    expect(isDevice(nul)).toBe(true);
  });
  it('the streaming writer (nz unknown) keeps its side file in the temporary folder, not beside the device', async () => {
    const nul = device('null2', 3)!;
    const w = await PetscMatrixWriter.open(nul, 4, 4);
    await w.add(generators.laplacian1d(4), 0);
    await w.finish();
    expect(readdirSync(dir).filter((f) => f.includes('partial'))).toEqual([]);
    expect(isDevice(nul)).toBe(true);
  });
  it('abort after an error and a full device: the device stays', async () => {
    const nul = device('null3', 3)!;
    const w = await PetscMatrixWriter.open(nul, 4, 4);
    await w.abort();
    expect(isDevice(nul)).toBe(true);
    const full = device('full1', 7)!;
    await expect(writePetscVectors(full, [new Float64Array(10)])).rejects.toMatchObject({ code: 'ENOSPC' });
    await expect(writePetscMatrix(full, generators.laplacian1d(50))).rejects.toMatchObject({ code: 'ENOSPC' });
    expect(isDevice(full)).toBe(true);
  });
});

describe('PETSc writers on regular files', () => {
  it('a failed write still removes the partial regular file (unchanged)', async () => {
    const path = join(dir, 'partial.petsc');
    writeFileSync(path, 'old');
    const w = await PetscMatrixWriter.open(path, 3, 3);
    await w.abort();
    expect(existsSync(path)).toBe(false);
  });
  it('sideFilePath: beside a regular file, in the temporary folder otherwise', () => {
    expect(sideFilePath('/data/H.petsc', true, 'values')).toBe('/data/H.petsc.values.partial');
    const t = sideFilePath('/dev/null', false, 'values');
    expect(t.startsWith(tmpdir())).toBe(true);
    expect(t).toMatch(/gpusparse-\d+-[0-9a-f]{12}-values\.partial$/);
  });
});
