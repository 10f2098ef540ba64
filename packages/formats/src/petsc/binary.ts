/**
 * PETSc's binary format (what MatView/VecView write to a binary viewer and MatLoad/VecLoad
 * read), for the builds Debian ships (32-bit PetscInt, real float64 PetscScalar). Everything is
 * big-endian, whatever the machine. One file may hold several objects one after the other.
 *
 * Matrix (AIJ): int32 MAT_FILE_CLASSID, rows M, columns N, total non-zeros nz; then M int32 row
 * lengths; then nz int32 column indices (0-based, row after row); then nz float64 values.
 * Vector: int32 VEC_FILE_CLASSID, length n; then n float64 values.
 * Symmetric matrices are stored with both triangles (PETSc keeps no symmetric AIJ on disk).
 * @module
 */
import { GpuSparseError } from '../core/errors';

/** Class id that opens a matrix in a PETSc binary file. */
export const MAT_FILE_CLASSID = 1211216;
/** Class id that opens a vector in a PETSc binary file. */
export const VEC_FILE_CLASSID = 1211214;
/** Bytes of a matrix header (4 int32) and of a vector header (2 int32). */
export const MAT_HEADER_BYTES = 16;
export const VEC_HEADER_BYTES = 8;
/** Largest count a 32-bit PetscInt holds (rows, columns, nz). */
export const PETSC_INT32_MAX = 2147483647;

/**
 * A PETSc binary file that is not what it must be: the message names the file, the byte offset,
 * what was expected there and what was found (CLI exit code 3).
 * @example
 * throw new PetscBinaryError('A.petsc', 12, 'nz ≥ 0', '-5');
 * // "A.petsc, byte 12: expected nz ≥ 0, found -5"
 */
export class PetscBinaryError extends GpuSparseError {
  constructor(
    readonly file: string,
    readonly offset: number,
    readonly expected: string,
    readonly found: string,
  ) {
    super(`${file}, byte ${offset}: expected ${expected}, found ${found}`);
  }
}

/** What a matrix header says, checked only for signs (sizes are checked against the file). */
export interface PetscMatrixHeader {
  rows: number;
  cols: number;
  nnz: number;
}

/** Name of a class id for error messages. */
export function classIdName(id: number): string {
  if (id === MAT_FILE_CLASSID) return `${id} (MAT_FILE_CLASSID)`;
  if (id === VEC_FILE_CLASSID) return `${id} (VEC_FILE_CLASSID)`;
  return String(id);
}

/**
 * Explain a class id that is not one we read: a 64-bit-index file starts with 4 zero bytes and
 * then the 32-bit class id; a little-endian writer gives the byte-swapped id.
 */
export function unknownClassId(bytes: DataView, expected: string): string {
  const be = bytes.getInt32(0, false);
  if (be === 0 && bytes.byteLength >= 8 && (bytes.getInt32(4, false) === MAT_FILE_CLASSID || bytes.getInt32(4, false) === VEC_FILE_CLASSID)) {
    return `${be}, then ${classIdName(bytes.getInt32(4, false))}: a file written by a PETSc build with 64-bit indices (--with-64-bit-indices), which this reader does not take`;
  }
  const le = bytes.getInt32(0, true);
  if (le === MAT_FILE_CLASSID || le === VEC_FILE_CLASSID) return `${be}: the little-endian ${classIdName(le)} (PETSc binary files are big-endian)`;
  return `${be} (not ${expected})`;
}

/** Encode `src[from, to)` as big-endian int32 into `out` (length ≥ 4·(to − from)). */
export function encodeInt32(src: ArrayLike<number>, from: number, to: number, out: Uint8Array): Uint8Array {
  const dv = new DataView(out.buffer, out.byteOffset, out.byteLength);
  for (let k = from; k < to; k++) dv.setInt32(4 * (k - from), src[k]!, false);
  return out.subarray(0, 4 * (to - from));
}

/** Encode `src[from, to)` as big-endian float64 into `out` (bit-exact, −0 and NaN payloads kept). */
export function encodeFloat64(src: ArrayLike<number>, from: number, to: number, out: Uint8Array): Uint8Array {
  const dv = new DataView(out.buffer, out.byteOffset, out.byteLength);
  for (let k = from; k < to; k++) dv.setFloat64(8 * (k - from), src[k]!, false);
  return out.subarray(0, 8 * (to - from));
}

/** A matrix header as 16 bytes. */
export function matrixHeaderBytes(h: PetscMatrixHeader): Uint8Array {
  return encodeInt32([MAT_FILE_CLASSID, h.rows, h.cols, h.nnz], 0, 4, new Uint8Array(MAT_HEADER_BYTES));
}

/** A vector header as 8 bytes. */
export function vectorHeaderBytes(n: number): Uint8Array {
  return encodeInt32([VEC_FILE_CLASSID, n], 0, 2, new Uint8Array(VEC_HEADER_BYTES));
}

/** Bytes of a matrix with these sizes (header included). */
export function matrixBytes(h: PetscMatrixHeader): number {
  return MAT_HEADER_BYTES + 4 * h.rows + 12 * h.nnz;
}
