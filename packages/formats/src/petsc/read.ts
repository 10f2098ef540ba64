/**
 * Node-only PETSc binary reading with full validation: every size in a header is checked
 * against the bytes the file really has and against the memory available before anything is
 * allocated, so a hostile header cannot make the reader allocate; the file is then read in
 * 1 MiB pieces straight into the CSR arrays. Errors are {@link PetscBinaryError} (file, byte
 * offset, expected, found) or ResourceLimitError (valid, but does not fit).
 * @module
 */
import { type FileHandle, open } from 'node:fs/promises';
import { ResourceLimitError } from '../core/errors';
import type { CsrMatrix } from '../core/types';
import { availableMemoryBytes } from '../mtx/host-memory';
import { classIdName, MAT_FILE_CLASSID, MAT_HEADER_BYTES, PetscBinaryError, unknownClassId, VEC_FILE_CLASSID, VEC_HEADER_BYTES } from './binary';

const PIECE_BYTES = 1 << 20;

/** Options of the readers. */
export interface PetscReadOptions {
  /** Name used in messages (default: the path). */
  name?: string;
  /** Most bytes the arrays may take (default: the memory available now). */
  maxBytes?: number;
}

/** One object of a PETSc binary file. */
export type PetscObject = { kind: 'matrix'; matrix: CsrMatrix; offset: number; sortedRows: number } | { kind: 'vector'; values: Float64Array; offset: number };

/** A file handle, its size and a reusable piece buffer. */
class Source {
  readonly piece = new Uint8Array(PIECE_BYTES);
  constructor(
    readonly fh: FileHandle,
    readonly size: number,
    readonly name: string,
    readonly maxBytes: number,
  ) {}

  /** Exactly `len` (≤ 1 MiB) bytes at `at`, as a DataView on the piece buffer. */
  async view(at: number, len: number): Promise<DataView> {
    let done = 0;
    while (done < len) {
      const { bytesRead } = await this.fh.read(this.piece, done, len - done, at + done);
      if (bytesRead === 0) throw new PetscBinaryError(this.name, at + done, `${len - done} more bytes`, 'the end of the file');
      done += bytesRead;
    }
    return new DataView(this.piece.buffer, 0, len);
  }

  /** Visit `count` big-endian items of `width` bytes from `at`, piece by piece. */
  async each(at: number, count: number, width: 4 | 8, visit: (dv: DataView, k: number, byteInPiece: number) => void): Promise<void> {
    const per = PIECE_BYTES / width;
    for (let k0 = 0; k0 < count; k0 += per) {
      const n = Math.min(per, count - k0);
      const dv = await this.view(at + width * k0, width * n);
      for (let j = 0; j < n; j++) visit(dv, k0 + j, width * j);
    }
  }

  fail(offset: number, expected: string, found: string): PetscBinaryError {
    return new PetscBinaryError(this.name, offset, expected, found);
  }
}

/** Why a body holds exactly 4-byte values. */
const SINGLE_PRECISION = 'exactly 4-byte values follow: a file of a single-precision PETSc (--with-precision=single); write it from a double-precision build';

/** Check the sizes in a matrix header; returns rows, cols, nz. */
async function matrixHeader(src: Source, at: number): Promise<{ rows: number; cols: number; nnz: number }> {
  if (src.size - at < MAT_HEADER_BYTES) throw src.fail(src.size, `a ${MAT_HEADER_BYTES}-byte matrix header (class id, rows, columns, nz) from byte ${at}`, `the end of the file after ${src.size - at} bytes`);
  const dv = await src.view(at, MAT_HEADER_BYTES);
  const rows = dv.getInt32(4, false);
  const cols = dv.getInt32(8, false);
  const nnz = dv.getInt32(12, false);
  if (rows < 0) throw src.fail(at + 4, 'a row count ≥ 0', String(rows));
  if (cols < 0) throw src.fail(at + 8, 'a column count ≥ 0', String(cols));
  if (nnz === -1) throw src.fail(at + 12, 'nz ≥ 0 (sparse AIJ storage)', '-1, the marker of dense storage (MATDENSE), which this reader does not take: convert to AIJ before MatView');
  if (nnz < 0) throw src.fail(at + 12, 'nz ≥ 0', String(nnz));
  const body = 4 * rows + 12 * nnz;
  const left = src.size - at - MAT_HEADER_BYTES;
  if (body > left) {
    // exactly 4-byte values: a file of a PETSc built --with-precision=single, not a cut one
    const why = left === 4 * rows + 8 * nnz ? SINGLE_PRECISION : 'a truncated file, or a header that is not true';
    throw src.fail(at + MAT_HEADER_BYTES, `4·rows + 12·nz = ${body} bytes of row lengths, column indices and values (rows ${rows}, nz ${nnz})`, `${left} bytes before the end of the file (${why})`);
  }
  const need = 4 * (rows + 1) + 12 * nnz;
  if (need > src.maxBytes) throw new ResourceLimitError(`${src.name}: ${rows}×${cols} matrix with ${nnz} non-zeros (CSR)`, need, src.maxBytes, 'use a machine with more memory');
  return { rows, cols, nnz };
}

/** Read one AIJ matrix at `at` (its class id already checked). */
async function readMatrixAt(src: Source, at: number): Promise<{ matrix: CsrMatrix; end: number; sortedRows: number }> {
  const { rows, cols, nnz } = await matrixHeader(src, at);
  const lenAt = at + MAT_HEADER_BYTES;
  const colAt = lenAt + 4 * rows;
  const valAt = colAt + 4 * nnz;
  const rowPtr = new Int32Array(rows + 1);
  let sum = 0;
  await src.each(lenAt, rows, 4, (dv, i, b) => {
    const len = dv.getInt32(b, false);
    if (len < 0 || len > cols) throw src.fail(lenAt + 4 * i, `the length of row ${i} in 0..${cols}`, String(len));
    sum += len;
    if (sum > nnz) throw src.fail(lenAt + 4 * i, `row lengths that sum to nz = ${nnz}`, `a sum of ${sum} by row ${i}`);
    rowPtr[i + 1] = sum;
  });
  if (sum !== nnz) throw src.fail(colAt, `row lengths that sum to nz = ${nnz}`, `a sum of ${sum}`);
  const colIdx = new Int32Array(nnz);
  const unsorted: number[] = [];
  let row = 0;
  await src.each(colAt, nnz, 4, (dv, k, b) => {
    while (rowPtr[row + 1]! <= k) row++;
    const c = dv.getInt32(b, false);
    if (c < 0 || c >= cols) throw src.fail(colAt + 4 * k, `a column index of row ${row} in 0..${cols - 1}`, String(c));
    colIdx[k] = c;
    if (k > rowPtr[row]! && c <= colIdx[k - 1]! && unsorted[unsorted.length - 1] !== row) unsorted.push(row);
  });
  const values = new Float64Array(nnz);
  await src.each(valAt, nnz, 8, (dv, k, b) => {
    const x = dv.getFloat64(b, false);
    if (!Number.isFinite(x)) throw src.fail(valAt + 8 * k, 'a finite float64 value', String(x));
    values[k] = x;
  });
  for (const i of unsorted) sortRow(src, rowPtr, colIdx, values, i, colAt);
  return { matrix: { format: 'csr', rows, cols, rowPtr, colIdx, values }, end: valAt + 8 * nnz, sortedRows: unsorted.length };
}

/** Sort row i by column (PETSc may write rows unsorted); a repeated column is an error. */
function sortRow(src: Source, rowPtr: Int32Array, colIdx: Int32Array, values: Float64Array, i: number, colAt: number): void {
  const s = rowPtr[i]!;
  const e = rowPtr[i + 1]!;
  const order = Array.from({ length: e - s }, (_, j) => s + j).sort((p, q) => colIdx[p]! - colIdx[q]!);
  const c = order.map((k) => colIdx[k]!);
  const v = order.map((k) => values[k]!);
  for (let j = 0; j < c.length; j++) {
    if (j > 0 && c[j] === c[j - 1]) throw src.fail(colAt + 4 * order[j]!, `distinct column indices in row ${i}`, `column ${c[j]} twice`);
    colIdx[s + j] = c[j]!;
    values[s + j] = v[j]!;
  }
}

/** Read one vector at `at` (its class id already checked). */
async function readVectorAt(src: Source, at: number): Promise<{ values: Float64Array; end: number }> {
  if (src.size - at < VEC_HEADER_BYTES) throw src.fail(src.size, `an ${VEC_HEADER_BYTES}-byte vector header (class id, length) from byte ${at}`, `the end of the file after ${src.size - at} bytes`);
  const n = (await src.view(at, VEC_HEADER_BYTES)).getInt32(4, false);
  if (n < 0) throw src.fail(at + 4, 'a vector length ≥ 0', String(n));
  const left = src.size - at - VEC_HEADER_BYTES;
  if (8 * n > left) throw src.fail(at + VEC_HEADER_BYTES, `8·n = ${8 * n} bytes of values (n ${n})`, `${left} bytes before the end of the file${left === 4 * n && n > 0 ? ` (${SINGLE_PRECISION})` : ''}`);
  if (8 * n > src.maxBytes) throw new ResourceLimitError(`${src.name}: vector of ${n} entries`, 8 * n, src.maxBytes, 'use a machine with more memory');
  const values = new Float64Array(n);
  const valAt = at + VEC_HEADER_BYTES;
  await src.each(valAt, n, 8, (dv, k, b) => {
    const x = dv.getFloat64(b, false);
    if (!Number.isFinite(x)) throw src.fail(valAt + 8 * k, 'a finite float64 value', String(x));
    values[k] = x;
  });
  return { values, end: valAt + 8 * n };
}

async function withSource<T>(path: string, opts: PetscReadOptions, body: (src: Source) => Promise<T>): Promise<T> {
  const fh = await open(path, 'r');
  try {
    const { size } = await fh.stat();
    return await body(new Source(fh, size, opts.name ?? path, opts.maxBytes ?? availableMemoryBytes()));
  } finally {
    await fh.close();
  }
}

/**
 * Every object of a PETSc binary file, in order (matrices and vectors). A byte sequence that is
 * neither (a complex-scalar or 64-bit-index file, trailing garbage) is an error at its offset.
 * @example
 * const objs = await readPetscFile('system.petsc'); // [{ kind: 'matrix', ... }, { kind: 'vector', ... }]
 */
export async function readPetscFile(path: string, opts: PetscReadOptions = {}): Promise<PetscObject[]> {
  return withSource(path, opts, async (src) => {
    const objects: PetscObject[] = [];
    let at = 0;
    if (src.size === 0) throw src.fail(0, 'a PETSc binary object (class id 1211216 or 1211214)', 'an empty file');
    while (at < src.size) {
      if (src.size - at < 4) throw src.fail(at, 'a 4-byte class id or the end of the file', `${src.size - at} trailing bytes`);
      const id = (await src.view(at, Math.min(8, src.size - at))).getInt32(0, false);
      if (id === MAT_FILE_CLASSID) {
        const m = await readMatrixAt(src, at);
        objects.push({ kind: 'matrix', matrix: m.matrix, offset: at, sortedRows: m.sortedRows });
        at = m.end;
      } else if (id === VEC_FILE_CLASSID) {
        const v = await readVectorAt(src, at);
        objects.push({ kind: 'vector', values: v.values, offset: at });
        at = v.end;
      } else {
        // a file of PETSc built --with-64-bit-indices reads as a 0-row matrix (the high word of M), then
        // garbage: said "a complex-scalar file, or not PETSc binary", which sent the user the wrong way
        const first = objects[0];
        const wide = at === 16 && first?.kind === 'matrix' && first.matrix.rows === 0 && first.matrix.values.length === 0;
        const extra = wide ? 'a file written by PETSc configured --with-64-bit-indices (its 64-bit header reads as a 0-row matrix here): not supported, write it from a 32-bit-index PETSc or as Matrix Market' : 'a complex-scalar file, or not PETSc binary';
        const what = at === 0 ? `${classIdName(MAT_FILE_CLASSID)} or ${classIdName(VEC_FILE_CLASSID)}` : `the end of the file or the class id of a next object (extra bytes: ${extra})`;
        throw src.fail(at, what, unknownClassId(await src.view(at, Math.min(8, src.size - at)), 'a PETSc class id'));
      }
    }
    return objects;
  });
}

/**
 * The first matrix of a PETSc binary file as canonical CSR (rows sorted by column when the
 * file's were not). Cost O(bytes); memory the CSR arrays.
 * @example
 * const { matrix } = await readPetscMatrix('A.petsc');
 */
export async function readPetscMatrix(path: string, opts: PetscReadOptions = {}): Promise<{ matrix: CsrMatrix; sortedRows: number; objects: number }> {
  const objs = await readPetscFile(path, opts);
  const m = objs.find((o) => o.kind === 'matrix');
  if (m?.kind !== 'matrix') throw new PetscBinaryError(opts.name ?? path, 0, `a matrix (${classIdName(MAT_FILE_CLASSID)})`, `${objs.length} vector(s) and no matrix`);
  return { matrix: m.matrix, sortedRows: m.sortedRows, objects: objs.length };
}

/**
 * Every vector of a PETSc binary file, in order.
 * @example
 * const [x] = await readPetscVectors('x.petsc');
 */
export async function readPetscVectors(path: string, opts: PetscReadOptions = {}): Promise<Float64Array[]> {
  const objs = await readPetscFile(path, opts);
  const vs = objs.flatMap((o) => (o.kind === 'vector' ? [o.values] : []));
  if (vs.length === 0) throw new PetscBinaryError(opts.name ?? path, 0, `a vector (${classIdName(VEC_FILE_CLASSID)})`, `${objs.length} matrix object(s) and no vector`);
  return vs;
}

/**
 * True when the file starts with a PETSc class id (matrix or vector): how a matrix path is
 * recognised whatever its extension. False for a missing, short or other file.
 */
export async function isPetscBinaryFile(path: string): Promise<boolean> {
  let fh: FileHandle | undefined;
  try {
    fh = await open(path, 'r');
    const b = new Uint8Array(4);
    const { bytesRead } = await fh.read(b, 0, 4, 0);
    if (bytesRead < 4) return false;
    const id = new DataView(b.buffer).getInt32(0, false);
    return id === MAT_FILE_CLASSID || id === VEC_FILE_CLASSID;
  } catch {
    return false;
  } finally {
    await fh?.close();
  }
}
