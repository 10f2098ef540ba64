/**
 * Session 12 sweep of user files. Fixed: a PETSc file written with 64-bit indices (PETSc
 * --with-64-bit-indices, common at scale) was blamed on "a complex-scalar file, or not PETSc
 * binary"; the Matrix Market size-line message read "a entry count". Found fine (kept here so
 * they stay so): size lines past int32 or 2^53, array files (general, symmetric, skew-symmetric,
 * short and long), skew-symmetric coordinate files with a diagonal entry, complex/hermitian
 * refused, duplicates summed with a warning, rows out of order, comments and blank lines between
 * entries, CRLF, Fortran D exponents, truncated and concatenated gzip streams.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { type CsrMatrix, MatrixMarketError, parseMatrixMarket, PetscBinaryError, readMatrixMarket, readPetscMatrix } from '../src/index';

const dir = mkdtempSync(join(tmpdir(), 'gpusparse-s12b-inputs-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const dense = (a: CsrMatrix): number[][] => {
  const d = Array.from({ length: a.rows }, () => new Array<number>(a.cols).fill(0));
  for (let i = 0; i < a.rows; i++) for (let k = a.rowPtr[i]!; k < a.rowPtr[i + 1]!; k++) d[i]![a.colIdx[k]!] = a.values[k]!;
  return d;
};
const H = '%%MatrixMarket matrix coordinate real general\n';
const read = (text: string): CsrMatrix => parseMatrixMarket(text).matrix;

describe('PETSc binary', () => {
  it('a 64-bit-index file is named as such (was "a complex-scalar file, or not PETSc binary")', async () => {
    const b = Buffer.alloc(4 + 24 + 16 + 16 + 16);
    b.writeInt32BE(1211216, 0);
    for (const [i, v] of [2n, 2n, 2n, 1n, 1n, 0n, 1n].entries()) b.writeBigInt64BE(v, 4 + 8 * i);
    b.writeDoubleBE(4, 60);
    b.writeDoubleBE(5, 68);
    const path = join(dir, 'wide.petsc');
    writeFileSync(path, b);
    await expect(readPetscMatrix(path)).rejects.toThrow(PetscBinaryError);
    await expect(readPetscMatrix(path)).rejects.toThrow(/byte 16: .*a file written by PETSc configured --with-64-bit-indices .*not supported/);
  });
});

describe('Matrix Market (found fine, and one message)', () => {
  it('size lines past int32 or 2^53 are refused at the size line, naming the count ("an entry count")', () => {
    expect(() => read(`${H}2147483648 2 1\n1 1 1\n`)).toThrow(/:2: expected a row count of at most 2147483647 .*got "2147483648" \(too large for 32-bit indices\)/);
    expect(() => read(`${H}3 9007199254740993 1\n1 1 1\n`)).toThrow(/:2: expected a column count of at most 2147483647/);
    expect(() => read(`${H}3 3 3000000000\n1 1 1\n`)).toThrow(/:2: expected an entry count of at most 2147483647 .*got "3000000000"/);
  });
  it('array files: general column-major, symmetric and skew-symmetric triangles, short and long', () => {
    expect(dense(read('%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n'))).toEqual([[1, 3], [2, 4]]);
    expect(dense(read('%%MatrixMarket matrix array real symmetric\n3 3\n1\n2\n3\n4\n5\n6\n'))).toEqual([[1, 2, 3], [2, 4, 5], [3, 5, 6]]);
    expect(dense(read('%%MatrixMarket matrix array real skew-symmetric\n3 3\n2\n3\n5\n'))).toEqual([[0, -2, -3], [2, 0, -5], [3, 5, 0]]);
    expect(() => read('%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n')).toThrow(/expected 4 entries .*got end of file after 3/);
    expect(() => read('%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n5\n')).toThrow(/expected 4 values .*got value number 5/);
  });
  it('skew-symmetric with a diagonal entry, complex and hermitian files are refused; duplicates summed; rows out of order, comments mid-file, CRLF, D exponents read right', () => {
    expect(dense(read('%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 2\n2 1 5\n3 2 7\n'))).toEqual([[0, -5, 0], [5, 0, -7], [0, 7, 0]]);
    expect(() => read('%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 1\n1 1 5\n')).toThrow(/strictly below the diagonal/);
    expect(() => read('%%MatrixMarket matrix coordinate complex hermitian\n2 2 1\n1 1 2 0\n')).toThrow(MatrixMarketError);
    expect(dense(read(`${H}3 3 4\n1 1 1\n1 1 2\n2 2 3\n3 3 4\n`))).toEqual([[3, 0, 0], [0, 3, 0], [0, 0, 4]]);
    expect(dense(read(`${H}3 3 3\n3 3 1\n% a comment\n\n1 1 2\n2 2 3\n`))).toEqual([[2, 0, 0], [0, 3, 0], [0, 0, 1]]);
    expect(dense(read(`${H}2 2 2\r\n1 1 1.5D+03\r\n2 2 -2.5d-1\r\n`.replace('\n2 2 2', '\r\n2 2 2')))).toEqual([[1500, 0], [0, -0.25]]);
  });
  it('gzip: a truncated stream is an error naming it; two concatenated members are one file', async () => {
    const text = `${H}3 3 3\n1 1 1\n2 2 2\n3 3 3\n`;
    const gz = gzipSync(text);
    writeFileSync(join(dir, 'cut.mtx.gz'), gz.subarray(0, 30));
    await expect(readMatrixMarket(join(dir, 'cut.mtx.gz'))).rejects.toThrow(/expected a valid gzip stream of Matrix Market text, got Z_BUF_ERROR/);
    writeFileSync(join(dir, 'two.mtx.gz'), Buffer.concat([gzipSync(text.slice(0, 40)), gzipSync(text.slice(40))]));
    expect(dense((await readMatrixMarket(join(dir, 'two.mtx.gz'))).matrix)).toEqual([[1, 0, 0], [0, 2, 0], [0, 0, 3]]);
  });
});
