/**
 * Small helpers shared by the diagonal formats (DIA, HM, CDM) and the survey formats (BCSR,
 * CSB, RgCSR, CMRS, quad trees, streamed, adaptive CSR): structure bit masks, parameter checks
 * and SpMV argument checks.
 * @module
 */
import { DimensionMismatchError, InvalidParameterError, ResourceLimitError } from '../core/errors';

/**
 * A bit mask with one bit per stored slot, in 32-bit words (bit s of slot s is word s >>> 5,
 * bit s & 31). Formats that pad with zeros keep one to tell an explicit stored zero from
 * padding, so that toCsr is exact. The mask is host-side bookkeeping: a kernel never reads it
 * (padding holds +0 and contributes nothing), so storageBytes does not count it.
 * Cost: ⌈slots / 32⌉ words.
 * @example
 * const m = bitmaskCreate(70); bitmaskSet(m, 69); bitmaskGet(m, 69); // true
 */
export function bitmaskCreate(slots: number): Uint32Array {
  return new Uint32Array(Math.ceil(slots / 32));
}

/** Set bit s of a mask made by {@link bitmaskCreate}. O(1). */
export function bitmaskSet(mask: Uint32Array, s: number): void {
  mask[s >>> 5] |= 1 << (s & 31);
}

/** Read bit s of a mask made by {@link bitmaskCreate}. O(1). */
export function bitmaskGet(mask: Uint32Array, s: number): boolean {
  return ((mask[s >>> 5] >>> (s & 31)) & 1) === 1;
}

/**
 * Check that a format parameter is an integer in [min, max]; throws InvalidParameterError
 * naming the parameter, the range and the value. O(1).
 * @example
 * const r = requireInt('blockSize', params.blockSize, 1, 64);
 */
export function requireInt(name: string, value: unknown, min: number, max = Number.MAX_SAFE_INTEGER): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `an integer >= ${min}` : `an integer in [${min}, ${max}]`;
    throw new InvalidParameterError(name, range, value);
  }
  return value;
}

/**
 * Check x (length cols) and y (length rows, allocated when omitted) for y = A·x; returns y
 * zero-filled. Throws DimensionMismatchError naming the function. O(rows).
 * @example
 * const out = checkSpmvArgs('diaSpmv', m.rows, m.cols, x, y);
 */
export function checkSpmvArgs(where: string, rows: number, cols: number, x: Float64Array, y?: Float64Array): Float64Array {
  if (x.length !== cols) throw new DimensionMismatchError(`${where} x`, cols, x.length);
  const out = y ?? new Float64Array(rows);
  if (out.length !== rows) throw new DimensionMismatchError(`${where} y`, rows, out.length);
  out.fill(0);
  return out;
}

/**
 * Row index of every stored entry of a CSR matrix (the COO row array). O(nnz + rows).
 * @example
 * const ri = csrRowIndices(a); // ri[k] is the row of colIdx[k]
 */
export function csrRowIndices(rowPtr: Int32Array, rows: number): Int32Array {
  const out = new Int32Array(rowPtr[rows] ?? 0);
  for (let i = 0; i < rows; i++) out.fill(i, rowPtr[i], rowPtr[i + 1]);
  return out;
}

/** Most slots one padded array may hold (2²⁸: 2 GiB of float64), see {@link checkSlots}. */
export const MAX_SLOTS = 2 ** 28;

/**
 * Refuse a conversion whose padded arrays would exceed {@link MAX_SLOTS} slots, before allocating:
 * throws ResourceLimitError (the matrix is valid, its padded form does not fit) naming the
 * format, the slot count, the bytes (12 per slot: a float64 value and an int32 index) and what to
 * change. O(1).
 * @example
 * checkSlots('bcsrFromCsr', numBlocks * r * c, 'use a smaller block size');
 */
export function checkSlots(where: string, slots: number, hint: string): void {
  if (slots > MAX_SLOTS) {
    throw new ResourceLimitError(`${where}: ${slots} padded slots (12 B each), more than the ${MAX_SLOTS} slots one array may hold`, 12 * slots, 12 * MAX_SLOTS, hint);
  }
}
