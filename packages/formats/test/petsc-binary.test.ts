import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ResourceLimitError } from '../src/core/errors';
import type { CsrMatrix } from '../src/core/types';
import { csrFromTriplets } from '../src/csr/csr';
import { uniformRandom } from '../src/generators/index';
import { formatMatrixMarket, readMatrixMarket, writeMatrixMarket } from '../src/mtx/index';
import {
  isPetscBinaryFile,
  MAT_FILE_CLASSID,
  PetscBinaryError,
  PetscMatrixWriter,
  readPetscFile,
  readPetscMatrix,
  readPetscVectors,
  VEC_FILE_CLASSID,
  writePetscMatrix,
  writePetscVectors,
} from '../src/petsc/index';

const dir = mkdtempSync(join(tmpdir(), 'gpusparse-petsc-'));
const file = (name: string) => join(dir, name);
const testdata = (name: string) => new URL(`../../../testdata/matrices/${name}`, import.meta.url);

/** Big-endian bytes from int32 and float64 fields: ['i', 3] or ['d', 1.5]. */
function bytes(fields: ReadonlyArray<readonly ['i' | 'd', number]>): Uint8Array {
  const out = new Uint8Array(fields.reduce((s, [t]) => s + (t === 'i' ? 4 : 8), 0));
  const dv = new DataView(out.buffer);
  let at = 0;
  for (const [t, x] of fields) {
    if (t === 'i') dv.setInt32(at, x, false);
    else dv.setFloat64(at, x, false);
    at += t === 'i' ? 4 : 8;
  }
  return out;
}
const ints = (...xs: number[]) => xs.map((x) => ['i', x] as const);
const dbls = (...xs: number[]) => xs.map((x) => ['d', x] as const);

/** [[1, 0, 2], [0, 0, 0], [0, −0, 3]] in PETSc binary, by hand. */
const small = () => bytes([...ints(MAT_FILE_CLASSID, 3, 3, 4), ...ints(2, 0, 2), ...ints(0, 2, 1, 2), ...dbls(1, 2, -0, 3)]);

function expectSameCsr(a: CsrMatrix, b: CsrMatrix): void {
  expect([b.rows, b.cols]).toEqual([a.rows, a.cols]);
  expect(Array.from(b.rowPtr)).toEqual(Array.from(a.rowPtr));
  expect(Array.from(b.colIdx)).toEqual(Array.from(a.colIdx));
  // bit-exact, −0 included
  expect(Buffer.from(new Float64Array(b.values).buffer).equals(Buffer.from(new Float64Array(a.values).buffer))).toBe(true);
}

async function petscError(content: Uint8Array, offset: number, re: RegExp): Promise<PetscBinaryError> {
  const path = file(`bad-${Math.random().toString(36).slice(2)}.petsc`);
  writeFileSync(path, content);
  const err = await readPetscFile(path).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(PetscBinaryError);
  const e = err as PetscBinaryError;
  expect(e.offset).toBe(offset);
  expect(e.message).toMatch(re);
  expect(e.message).toContain(`${path}, byte ${offset}: expected`);
  return e;
}

describe('PETSc binary: the format, by hand', () => {
  it('writes a 3×3 matrix byte for byte as MatView does (header, row lengths, columns, values; big-endian)', async () => {
    const a: CsrMatrix = { format: 'csr', rows: 3, cols: 3, rowPtr: Int32Array.of(0, 2, 2, 4), colIdx: Int32Array.of(0, 2, 1, 2), values: Float64Array.of(1, 2, -0, 3) };
    const s = await writePetscMatrix(file('small.petsc'), a);
    expect(s).toEqual({ path: file('small.petsc'), rows: 3, cols: 3, nnz: 4, bytes: 16 + 12 + 48 });
    expect(new Uint8Array(readFileSync(file('small.petsc')))).toEqual(small());
    expect(await isPetscBinaryFile(file('small.petsc'))).toBe(true);
    const { matrix } = await readPetscMatrix(file('small.petsc'));
    expectSameCsr(a, matrix);
    expect(Object.is(matrix.values[2], -0)).toBe(true);
  });

  it('vectors: several in one file, read back in order, bit-exact', async () => {
    const v1 = Float64Array.of(1.5, -0, 5e-324, -1.7976931348623157e308);
    const v2 = new Float64Array(0);
    await writePetscVectors(file('v.petsc'), [v1, v2]);
    expect(new Uint8Array(readFileSync(file('v.petsc')))).toEqual(bytes([...ints(VEC_FILE_CLASSID, 4), ...dbls(...v1), ...ints(VEC_FILE_CLASSID, 0)]));
    const back = await readPetscVectors(file('v.petsc'));
    expect(back.length).toBe(2);
    expect(Buffer.from(back[0]!.buffer).equals(Buffer.from(v1.buffer))).toBe(true);
    expect(back[1]!.length).toBe(0);
  });

  it('a matrix followed by a vector (a linear system in one file)', async () => {
    writeFileSync(file('system.petsc'), Buffer.concat([small(), bytes([...ints(VEC_FILE_CLASSID, 3), ...dbls(1, 2, 3)])]));
    const objs = await readPetscFile(file('system.petsc'));
    expect(objs.map((o) => [o.kind, o.offset])).toEqual([
      ['matrix', 0],
      ['vector', 76],
    ]);
  });

  it('rows stored unsorted (PETSc allows it) are sorted with their values', async () => {
    writeFileSync(file('unsorted.petsc'), bytes([...ints(MAT_FILE_CLASSID, 1, 4, 3), ...ints(3), ...ints(3, 0, 2), ...dbls(30, 0.5, 20)]));
    const { matrix, sortedRows } = await readPetscMatrix(file('unsorted.petsc'));
    expect(sortedRows).toBe(1);
    expect(Array.from(matrix.colIdx)).toEqual([0, 2, 3]);
    expect(Array.from(matrix.values)).toEqual([0.5, 20, 30]);
  });
});

describe('PETSc binary: round trips', () => {
  it('.mtx (symmetric storage) → PETSc binary → .mtx is bit-exact; PETSc holds both triangles', async () => {
    for (const name of ['bcsstk01.mtx', '1138_bus.mtx', 'west0067.mtx']) {
      const src = await readMatrixMarket(testdata(name));
      await writePetscMatrix(file(`${name}.petsc`), src.matrix);
      const stored = (await readPetscMatrix(file(`${name}.petsc`))).matrix;
      expectSameCsr(src.matrix, stored);
      if (src.header.symmetry === 'symmetric') {
        // both triangles on disk: the transpose of every stored entry is stored too
        const lower = Array.from(stored.rowPtr).slice(1).reduce((s, _e, i) => s + [...stored.colIdx.subarray(stored.rowPtr[i]!, stored.rowPtr[i + 1]!)].filter((c) => c < i).length, 0);
        const upper = Array.from(stored.rowPtr).slice(1).reduce((s, _e, i) => s + [...stored.colIdx.subarray(stored.rowPtr[i]!, stored.rowPtr[i + 1]!)].filter((c) => c > i).length, 0);
        expect(lower).toBe(upper);
        expect(lower).toBeGreaterThan(0);
      }
      // and back to Matrix Market with the original symmetry: the same text as written from the source
      const sym = src.header.symmetry === 'symmetric' ? 'symmetric' : 'general';
      await writeMatrixMarket(file(`${name}.back.mtx`), stored, { symmetry: sym });
      expect(readFileSync(file(`${name}.back.mtx`), 'utf8')).toBe(formatMatrixMarket(src.matrix, { symmetry: sym }));
      expectSameCsr(src.matrix, (await readMatrixMarket(file(`${name}.back.mtx`))).matrix);
    }
  });

  it('the streaming writer (nz unknown, row chunks) gives the same bytes as the one-shot writer, and leaves no side file', async () => {
    const a = uniformRandom(1000, 700, 9, 3);
    await writePetscMatrix(file('whole.petsc'), a);
    const w = await PetscMatrixWriter.open(file('chunks.petsc'), a.rows, a.cols);
    for (let s = 0; s < a.rows; s += 137) {
      const e = Math.min(a.rows, s + 137);
      const rowPtr = a.rowPtr.slice(s, e + 1).map((x) => x - a.rowPtr[s]!);
      await w.add({ format: 'csr', rows: e - s, cols: a.cols, rowPtr, colIdx: a.colIdx.slice(a.rowPtr[s], a.rowPtr[e]), values: a.values.slice(a.rowPtr[s], a.rowPtr[e]) }, s);
    }
    const summary = await w.finish();
    expect(summary.nnz).toBe(a.rowPtr[a.rows]);
    expect(readFileSync(file('chunks.petsc')).equals(readFileSync(file('whole.petsc')))).toBe(true);
    expect(readdirSync(dir).filter((f) => f.includes('partial'))).toEqual([]);
  });

  it('the streaming writer refuses chunks out of order and a missing row range (and removes the file)', async () => {
    const a = csrFromTriplets(4, 4, [0, 1, 2, 3], [0, 1, 2, 3], [1, 2, 3, 4]);
    const w = await PetscMatrixWriter.open(file('order.petsc'), 4, 4);
    await expect(w.add(a, 1)).rejects.toThrow(/rowStart: expected 0 \(chunks come in row order\), got 1/);
    await w.add({ ...a, rows: 2, rowPtr: Int32Array.of(0, 1, 2) }, 0);
    await expect(w.finish()).rejects.toThrow(/expected 4 rows written, got 2/);
    expect(readdirSync(dir).filter((f) => f.startsWith('order.petsc'))).toEqual([]);
  });
});

describe('PETSc binary: hostile files (file, byte offset, expected, found; no allocation from a header)', () => {
  it('empty, truncated header, unknown class id', async () => {
    await petscError(new Uint8Array(0), 0, /an empty file/);
    await petscError(bytes(ints(MAT_FILE_CLASSID, 3)), 8, /16-byte matrix header .* the end of the file after 8 bytes/);
    await petscError(bytes(ints(42, 3, 3, 0)), 0, /expected 1211216 \(MAT_FILE_CLASSID\) or 1211214 \(VEC_FILE_CLASSID\), found 42/);
  });

  it('a little-endian file and a 64-bit-index file are named as such', async () => {
    const le = new Uint8Array(16);
    new DataView(le.buffer).setInt32(0, MAT_FILE_CLASSID, true);
    await petscError(le, 0, /little-endian 1211216 \(MAT_FILE_CLASSID\) \(PETSc binary files are big-endian\)/);
    await petscError(bytes(ints(0, MAT_FILE_CLASSID, 0, 3)), 0, /64-bit indices/);
  });

  it('negative sizes, the dense marker nz = −1', async () => {
    await petscError(bytes(ints(MAT_FILE_CLASSID, -3, 3, 0)), 4, /a row count ≥ 0, found -3/);
    await petscError(bytes(ints(MAT_FILE_CLASSID, 3, -1, 0)), 8, /a column count ≥ 0, found -1/);
    await petscError(bytes(ints(MAT_FILE_CLASSID, 3, 3, -1)), 12, /dense storage \(MATDENSE\)/);
    await petscError(bytes(ints(VEC_FILE_CLASSID, -2)), 4, /a vector length ≥ 0, found -2/);
  });

  it('a header promising 2^31 − 1 rows and non-zeros in a 28-byte file: refused from the file size, nothing allocated', async () => {
    const before = process.memoryUsage().arrayBuffers;
    await petscError(bytes([...ints(MAT_FILE_CLASSID, 2147483647, 2147483647, 2147483647), ...ints(1, 2, 3)]), 16, /expected 4·rows \+ 12·nz = \d+ bytes .* found 12 bytes before the end of the file/);
    await petscError(bytes([...ints(VEC_FILE_CLASSID, 2147483647), ...dbls(1)]), 8, /8·n = 17179869176 bytes of values .* found 8 bytes/);
    expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(64 << 20);
  });

  it('a valid file larger than the memory allowed: ResourceLimitError before allocation', async () => {
    writeFileSync(file('fits.petsc'), small());
    await expect(readPetscMatrix(file('fits.petsc'), { maxBytes: 40 })).rejects.toBeInstanceOf(ResourceLimitError);
  });

  it('row lengths: negative, longer than the row, summing past or short of nz', async () => {
    await petscError(bytes([...ints(MAT_FILE_CLASSID, 2, 2, 1), ...ints(-1, 2), ...ints(0), ...dbls(1)]), 16, /the length of row 0 in 0\.\.2, found -1/);
    await petscError(bytes([...ints(MAT_FILE_CLASSID, 2, 2, 3), ...ints(0, 3), ...ints(0, 1, 1), ...dbls(1, 2, 3)]), 20, /the length of row 1 in 0\.\.2, found 3/);
    await petscError(bytes([...ints(MAT_FILE_CLASSID, 2, 2, 1), ...ints(1, 1), ...ints(0), ...dbls(1)]), 20, /row lengths that sum to nz = 1, found a sum of 2 by row 1/);
    await petscError(bytes([...ints(MAT_FILE_CLASSID, 2, 2, 2), ...ints(1, 0), ...ints(0, 1), ...dbls(1, 2)]), 24, /row lengths that sum to nz = 2, found a sum of 1/);
  });

  it('column indices out of range or repeated; non-finite values', async () => {
    await petscError(bytes([...ints(MAT_FILE_CLASSID, 2, 2, 2), ...ints(1, 1), ...ints(0, 2), ...dbls(1, 2)]), 28, /a column index of row 1 in 0\.\.1, found 2/);
    await petscError(bytes([...ints(MAT_FILE_CLASSID, 1, 3, 3), ...ints(3), ...ints(2, 0, 2), ...dbls(1, 2, 3)]), 28, /distinct column indices in row 0, found column 2 twice/);
    await petscError(bytes([...ints(MAT_FILE_CLASSID, 1, 2, 2), ...ints(2), ...ints(0, 1), ...dbls(1, Number.NaN)]), 36, /a finite float64 value, found NaN/);
  });

  it('trailing bytes after the matrix (e.g. a complex-scalar file) are not taken silently', async () => {
    await petscError(Buffer.concat([small(), bytes(dbls(7))]), 76, /the end of the file or the class id of a next object .* found 1075576832 \(not a PETSc class id\)/);
    await petscError(Buffer.concat([small(), new Uint8Array(2)]), 76, /a 4-byte class id or the end of the file, found 2 trailing bytes/);
  });
});
