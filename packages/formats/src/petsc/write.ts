/**
 * Node-only PETSc binary writing. {@link PetscMatrixWriter} takes a matrix in row chunks, in
 * row order, and never holds more than one chunk's encoding (1 MiB pieces): the header and the
 * row lengths are written in place, the column indices follow as they come, and the values go
 * straight to their place when nz is known up front, else to a side file that is appended at
 * the end (PETSc puts every column index before the first value, so an unknown nz cannot be
 * written in one pass).
 * @module
 */
import { randomBytes } from 'node:crypto';
import { type FileHandle, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InvalidMatrixError, InvalidParameterError, ResourceLimitError } from '../core/errors';
import type { CsrMatrix } from '../core/types';
import { encodeFloat64, encodeInt32, MAT_HEADER_BYTES, matrixHeaderBytes, PETSC_INT32_MAX, vectorHeaderBytes } from './binary';

/** Entries encoded per write (1 MiB of float64). */
const PIECE = 1 << 17;

/** Write all of `data` at `position` (a short write is retried, not ignored). */
async function writeAll(fh: FileHandle, data: Uint8Array, position: number): Promise<void> {
  let done = 0;
  while (done < data.length) {
    const { bytesWritten } = await fh.write(data, done, data.length - done, position + done);
    done += bytesWritten;
  }
}

/** Options of {@link PetscMatrixWriter.open}. */
export interface PetscMatrixWriterOptions {
  /** Total non-zeros when known (values then go straight to their place: no side file). */
  nnz?: number;
}

/** What a finished write produced. */
export interface PetscWriteSummary {
  path: string;
  rows: number;
  cols: number;
  nnz: number;
  bytes: number;
}

/**
 * A PETSc binary matrix written in row chunks: `add(chunk, rowStart)` with chunk-local row
 * pointers and global columns, in row order, then `finish()`. Memory: one 1 MiB piece at a time.
 * @example
 * const w = await PetscMatrixWriter.open('H.petsc', n, n);
 * for (const [chunk, start] of chunks) await w.add(chunk, start);
 * await w.finish();
 */
export class PetscMatrixWriter {
  private nextRow = 0;
  private nnz = 0;
  private closed = false;
  private readonly piece = new Uint8Array(8 * PIECE);

  private constructor(
    readonly path: string,
    readonly rows: number,
    readonly cols: number,
    private readonly fh: FileHandle,
    private readonly knownNnz: number | undefined,
    private side: { path: string; fh: FileHandle } | undefined,
    /** The output is a regular file: truncated at the end, removed on abort (never /dev/null, a pipe, …). */
    private readonly regular: boolean,
  ) {}

  /** Create (truncate) `path` for a rows×cols matrix. */
  static async open(path: string, rows: number, cols: number, opts: PetscMatrixWriterOptions = {}): Promise<PetscMatrixWriter> {
    for (const [name, x] of [['rows', rows], ['cols', cols]] as const) {
      if (!Number.isInteger(x) || x < 0 || x > PETSC_INT32_MAX) throw new InvalidParameterError(name, `an integer in 0..${PETSC_INT32_MAX} (PETSc binary, 32-bit indices)`, x);
    }
    const nnz = opts.nnz;
    if (nnz !== undefined && (!Number.isInteger(nnz) || nnz < 0)) throw new InvalidParameterError('nnz', 'an integer ≥ 0', nnz);
    if (nnz !== undefined && nnz > PETSC_INT32_MAX) throw tooManyNonZeros(path, nnz);
    const fh = await open(path, 'w+');
    let side: { path: string; fh: FileHandle } | undefined;
    let regular = false;
    try {
      regular = (await fh.stat()).isFile();
      await writeAll(fh, matrixHeaderBytes({ rows, cols, nnz: nnz ?? 0 }), 0);
      if (nnz === undefined) {
        const sidePath = sideFilePath(path, regular, 'values');
        side = { path: sidePath, fh: await open(sidePath, 'w+') };
      }
    } catch (e) {
      await fh.close();
      throw e;
    }
    return new PetscMatrixWriter(path, rows, cols, fh, nnz, side, regular);
  }

  private get colsOffset(): number {
    return MAT_HEADER_BYTES + 4 * this.rows;
  }

  /** Rows [rowStart, rowStart + chunk.rows): the next rows in order. */
  async add(chunk: CsrMatrix, rowStart: number): Promise<void> {
    if (this.closed) throw new InvalidParameterError('PetscMatrixWriter.add', 'a writer not yet finished', 'a finished writer');
    if (rowStart !== this.nextRow) throw new InvalidParameterError('rowStart', `${this.nextRow} (chunks come in row order)`, rowStart);
    if (chunk.cols !== this.cols) throw new InvalidMatrixError(`${this.path}: chunk at row ${rowStart}`, `expected ${this.cols} columns, got ${chunk.cols}`);
    if (rowStart + chunk.rows > this.rows) throw new InvalidMatrixError(`${this.path}: chunk at row ${rowStart}`, `${chunk.rows} rows pass the matrix's ${this.rows}`);
    const { rowPtr, colIdx, values } = chunk;
    const base = rowPtr[0]!;
    const count = rowPtr[chunk.rows]! - base;
    if (this.nnz + count > PETSC_INT32_MAX || (this.knownNnz !== undefined && this.nnz + count > this.knownNnz)) {
      if (this.knownNnz === undefined) throw tooManyNonZeros(this.path, this.nnz + count);
      throw new InvalidMatrixError(`${this.path}: chunk at row ${rowStart}`, `the non-zeros pass the nnz announced (${this.knownNnz})`);
    }
    const lengths = new Int32Array(Math.min(chunk.rows, PIECE));
    for (let i0 = 0; i0 < chunk.rows; i0 += PIECE) {
      const i1 = Math.min(chunk.rows, i0 + PIECE);
      for (let i = i0; i < i1; i++) lengths[i - i0] = rowPtr[i + 1]! - rowPtr[i]!;
      await writeAll(this.fh, encodeInt32(lengths, 0, i1 - i0, this.piece), MAT_HEADER_BYTES + 4 * (rowStart + i0));
    }
    for (let k0 = 0; k0 < count; k0 += PIECE) {
      const k1 = Math.min(count, k0 + PIECE);
      for (let k = base + k0; k < base + k1; k++) {
        const c = colIdx[k]!;
        if (!(c >= 0 && c < this.cols)) throw new InvalidMatrixError(`${this.path}: chunk at row ${rowStart}`, `entry ${k}: column ${c} outside [0, ${this.cols})`);
      }
      await writeAll(this.fh, encodeInt32(colIdx, base + k0, base + k1, this.piece), this.colsOffset + 4 * (this.nnz + k0));
    }
    for (let k0 = 0; k0 < count; k0 += PIECE) {
      const k1 = Math.min(count, k0 + PIECE);
      const bytes = encodeFloat64(values, base + k0, base + k1, this.piece);
      if (this.side) await writeAll(this.side.fh, bytes, 8 * (this.nnz + k0));
      else await writeAll(this.fh, bytes, this.colsOffset + 4 * this.knownNnz! + 8 * (this.nnz + k0));
    }
    this.nnz += count;
    this.nextRow += chunk.rows;
  }

  /** Write the header's nz (and the side file's values), close; fails when rows are missing. */
  async finish(): Promise<PetscWriteSummary> {
    if (this.nextRow !== this.rows) {
      await this.abort();
      throw new InvalidMatrixError(this.path, `expected ${this.rows} rows written, got ${this.nextRow} (the file was removed)`);
    }
    if (this.knownNnz !== undefined && this.nnz !== this.knownNnz) {
      await this.abort();
      throw new InvalidMatrixError(this.path, `expected ${this.knownNnz} non-zeros (as announced), got ${this.nnz} (the file was removed)`);
    }
    try {
      if (this.side) await this.appendSide(this.side);
      await writeAll(this.fh, matrixHeaderBytes({ rows: this.rows, cols: this.cols, nnz: this.nnz }), 0);
      if (this.regular) await this.fh.truncate(MAT_HEADER_BYTES + 4 * this.rows + 12 * this.nnz); // ftruncate fails on /dev/null
    } catch (e) {
      await this.abort();
      throw e;
    }
    this.closed = true;
    await this.fh.close();
    return { path: this.path, rows: this.rows, cols: this.cols, nnz: this.nnz, bytes: MAT_HEADER_BYTES + 4 * this.rows + 12 * this.nnz };
  }

  /** Copy the side file's values after the column indices, 1 MiB at a time, and remove it. */
  private async appendSide(side: { path: string; fh: FileHandle }): Promise<void> {
    const at = this.colsOffset + 4 * this.nnz;
    const total = 8 * this.nnz;
    for (let off = 0; off < total; off += this.piece.length) {
      const len = Math.min(this.piece.length, total - off);
      const { bytesRead } = await side.fh.read(this.piece, 0, len, off);
      if (bytesRead !== len) throw new InvalidMatrixError(side.path, `expected ${len} bytes at ${off}, read ${bytesRead}`);
      await writeAll(this.fh, this.piece.subarray(0, len), at + off);
    }
    await side.fh.close();
    await rm(side.path, { force: true });
    this.side = undefined;
  }

  /** Close and remove what was written (after an error). */
  async abort(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.fh.close().catch(() => {});
    // a device or a pipe is not ours to remove: as root, rm('/dev/null') deleted the device node
    if (this.regular) await rm(this.path, { force: true });
    if (this.side) {
      await this.side.fh.close().catch(() => {});
      await rm(this.side.path, { force: true });
    }
  }
}

/**
 * Where a writer keeps a temporary piece of `path`: beside it for a regular file, in the temporary
 * folder for a device or a pipe (no `/dev/null.values.partial`). O(1).
 * @example sideFilePath('/dev/null', false, 'values') // '/tmp/gpusparse-…-values.partial'
 */
export function sideFilePath(path: string, regular: boolean, what: string): string {
  return regular ? `${path}.${what}.partial` : join(tmpdir(), `gpusparse-${process.pid}-${randomBytes(6).toString('hex')}-${what}.partial`);
}

function tooManyNonZeros(path: string, nnz: number): ResourceLimitError {
  return new ResourceLimitError(`${path}: PETSc binary with 32-bit indices (${nnz} non-zeros)`, nnz, PETSC_INT32_MAX, 'the format counts non-zeros in an int32: at most 2^31 − 1 (a PETSc build with 64-bit indices reads larger files, which this writer does not produce)');
}

/**
 * Write `a` (canonical CSR) as a PETSc binary matrix. Cost O(nnz), memory one 1 MiB piece.
 * @example
 * await writePetscMatrix('A.petsc', a);
 */
export async function writePetscMatrix(path: string, a: CsrMatrix): Promise<PetscWriteSummary> {
  const nnz = a.rowPtr[a.rows]! - a.rowPtr[0]!;
  const w = await PetscMatrixWriter.open(path, a.rows, a.cols, { nnz });
  try {
    await w.add(a, 0);
  } catch (e) {
    await w.abort();
    throw e;
  }
  return w.finish();
}

/**
 * Write vectors as PETSc binary vectors, one after the other in one file (VecLoad reads them in
 * that order). Cost O(Σ length).
 * @example
 * await writePetscVectors('b.petsc', [b]);
 */
export async function writePetscVectors(path: string, vectors: readonly ArrayLike<number>[]): Promise<{ path: string; bytes: number }> {
  const fh = await open(path, 'w');
  const piece = new Uint8Array(8 * PIECE);
  let at = 0;
  let regular = false;
  try {
    regular = (await fh.stat()).isFile();
    for (const v of vectors) {
      if (v.length > PETSC_INT32_MAX) throw new ResourceLimitError(`${path}: PETSc binary vector of ${v.length} entries`, v.length, PETSC_INT32_MAX, 'a 32-bit PetscInt holds the length');
      await writeAll(fh, vectorHeaderBytes(v.length), at);
      at += 8;
      for (let k0 = 0; k0 < v.length; k0 += PIECE) {
        const k1 = Math.min(v.length, k0 + PIECE);
        await writeAll(fh, encodeFloat64(v, k0, k1, piece), at);
        at += 8 * (k1 - k0);
      }
    }
  } catch (e) {
    await fh.close();
    if (regular) await rm(path, { force: true }); // never a device or a pipe
    throw e;
  }
  await fh.close();
  return { path, bytes: at };
}
