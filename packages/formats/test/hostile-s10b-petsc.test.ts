// Session 10: a PETSc binary file written by a single-precision PETSc (4-byte values) was
// reported as "a truncated file, or a header that is not true" — the user looks for a cut
// download. When exactly 4-byte values follow the header, the message now says which build
// wrote it. A file that really is cut keeps the old wording.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { PetscBinaryError, readPetscFile } from '../src/petsc/index';

const dir = mkdtempSync(join(tmpdir(), 'gpusparse-s10b-petsc-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** diag(4, 4) as MatView writes it, values of `width` bytes (8: double, 4: single), `cut` bytes removed. */
function diag2(name: string, width: 4 | 8, cut = 0): string {
  const b = Buffer.alloc(16 + 8 + 8 + 2 * width);
  const ints = [1211216, 2, 2, 2, 1, 1, 0, 1]; // class id, rows, cols, nz, row lengths, columns
  for (let k = 0; k < ints.length; k++) b.writeInt32BE(ints[k]!, 4 * k);
  for (let k = 0; k < 2; k++) {
    if (width === 8) b.writeDoubleBE(4, 32 + 8 * k);
    else b.writeFloatBE(4, 32 + 4 * k);
  }
  const path = join(dir, name);
  writeFileSync(path, b.subarray(0, b.length - cut));
  return path;
}

describe('PETSc binary files of a single-precision build', () => {
  it('a matrix with 4-byte values: PetscBinaryError naming the single-precision build (was "a truncated file")', async () => {
    const err = await readPetscFile(diag2('single.petsc', 4)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PetscBinaryError);
    expect((err as Error).message).toMatch(/byte 16: expected 4·rows \+ 12·nz = 32 bytes .*found 24 bytes before the end of the file \(exactly 4-byte values follow: a file of a single-precision PETSc \(--with-precision=single\)/);
  });

  it('a vector with 4-byte values: the same hint', async () => {
    const b = Buffer.alloc(8 + 12);
    b.writeInt32BE(1211214, 0);
    b.writeInt32BE(3, 4);
    for (let k = 0; k < 3; k++) b.writeFloatBE(1, 8 + 4 * k);
    const path = join(dir, 'single-vec.petsc');
    writeFileSync(path, b);
    await expect(readPetscFile(path)).rejects.toThrow(/8·n = 24 bytes of values \(n 3\), found 12 bytes before the end of the file \(exactly 4-byte values follow/);
  });

  it('a double-precision file cut short keeps "a truncated file"; the whole one reads', async () => {
    await expect(readPetscFile(diag2('cut.petsc', 8, 3))).rejects.toThrow(/found 29 bytes before the end of the file \(a truncated file, or a header that is not true\)/);
    const [m] = await readPetscFile(diag2('whole.petsc', 8));
    expect(m!.kind === 'matrix' && Array.from(m!.matrix.values)).toEqual([4, 4]);
  });
});
