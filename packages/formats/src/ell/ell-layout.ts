/**
 * Shared layout machinery of the ELL family (ELL, ELL-R, sliced ELL, sliced ELL-R, SELL-C-σ
 * and the ELL part of the hybrid): column-major packing of padded rows, the padding
 * convention, and its decoder.
 *
 * Padding convention (every ELL-family format). A block of `height` rows and `width` slots is
 * stored column-major: slot k of local row r sits at `offset + k·height + r`, so consecutive
 * rows (GPU threads) read consecutive addresses. Slots past a row's length are padding:
 * value 0 and the column of the row's last real entry (column 0 for an empty row or a
 * phantom row past the matrix end). A padded slot is therefore always safe to multiply on a
 * GPU (its column is valid) and adds 0·x[c] to the row. Canonical CSR columns strictly
 * increase within a row, so the first slot whose column equals its predecessor's marks the
 * start of the padding; empty rows cannot be marked that way and are listed separately
 * (`emptyRows`) by the formats without a row-length array.
 * @module
 */
import { DimensionMismatchError, GpuSparseError, InvalidMatrixError } from '../core/errors';
import type { CsrMatrix } from '../core/types';

/** The most value slots one ELL-family matrix may hold: slot offsets are Int32 (2^31 − 1). */
export const MAX_ELL_SLOTS = 2 ** 31 - 1;

/**
 * Padding would make a matrix larger than the Int32 slot addressing allows (2^31 − 1 slots).
 * The message names the rows, the width and the row that forces the width.
 * @example
 * try { ellFromCsr(a); } catch (e) { if (e instanceof PaddingOverflowError) useHybrid(a); }
 */
export class PaddingOverflowError extends GpuSparseError {
  constructor(
    readonly where: string,
    readonly slots: number,
    detail: string,
  ) {
    super(`${where}: padding needs ${slots} slots, more than the ${MAX_ELL_SLOTS} an Int32 offset can address (${detail}); use the hybrid, SELL-C-σ or CSR format`);
  }
}

/** Throw {@link PaddingOverflowError} when `slots` exceeds {@link MAX_ELL_SLOTS}. */
export function checkSlots(where: string, slots: number, detail: () => string): void {
  if (slots > MAX_ELL_SLOTS) throw new PaddingOverflowError(where, slots, detail());
}

/** Row lengths of a CSR matrix (stored entries per row) and the index of the longest row. */
export function rowLengths(a: CsrMatrix): { lengths: Int32Array; max: number; argmax: number } {
  const lengths = new Int32Array(a.rows);
  let max = 0;
  let argmax = -1;
  for (let i = 0; i < a.rows; i++) {
    const len = a.rowPtr[i + 1]! - a.rowPtr[i]!;
    lengths[i] = len;
    if (len > max) {
      max = len;
      argmax = i;
    }
  }
  return { lengths, max, argmax };
}

/** Indices of the rows of length 0, ascending. */
export function emptyRowList(lengths: Int32Array): Int32Array {
  let n = 0;
  for (let i = 0; i < lengths.length; i++) if (lengths[i] === 0) n++;
  const out = new Int32Array(n);
  let w = 0;
  for (let i = 0; i < lengths.length; i++) if (lengths[i] === 0) out[w++] = i;
  return out;
}

/** Rows checked together by {@link tileLengths}, and its scratch. */
const TILE = 64;
const tileTake = new Int32Array(TILE);
const tilePrev = new Int32Array(TILE);

/**
 * Pack one block of rows column-major with the padding convention.
 * Local row r (0 ≤ r < height) holds CSR row `rowOf(r)` (or nothing when rowOf returns −1:
 * a phantom row); at most `width` entries of each row are taken, starting at its first entry.
 * Cost: O(height·width).
 */
export function packBlock(
  a: CsrMatrix,
  rowOf: (r: number) => number,
  height: number,
  width: number,
  offset: number,
  colIdx: Int32Array,
  values: Float64Array,
): void {
  for (let r = 0; r < height; r++) {
    const i = rowOf(r);
    let take = 0;
    let s = 0;
    if (i >= 0) {
      s = a.rowPtr[i]!;
      take = Math.min(width, a.rowPtr[i + 1]! - s);
    }
    let pad = 0;
    for (let k = 0; k < take; k++) {
      const p = offset + k * height + r;
      pad = a.colIdx[s + k]!;
      colIdx[p] = pad;
      values[p] = a.values[s + k]!;
    }
    // padding: value 0 (the arrays start zeroed), column = last real column (0 when none)
    for (let k = take; k < width; k++) colIdx[offset + k * height + r] = pad;
  }
}

/**
 * Length of one packed row under the padding convention, checking the row on the way: real
 * columns in [0, cols) and strictly increasing, padding slots with value 0 and the repeated
 * column. `isEmpty` says the row is listed as empty (all its slots must then be padding).
 * Throws InvalidMatrixError naming `where`, the row and the slot. Cost: O(width).
 */
export function decodeRowLength(
  colIdx: Int32Array,
  values: Float64Array,
  base: number,
  stride: number,
  width: number,
  cols: number,
  isEmpty: boolean,
  where: string,
  row: number,
): number {
  if (isEmpty) {
    for (let k = 0; k < width; k++) {
      const p = base + k * stride;
      checkPadding(colIdx[p]!, values[p]!, cols, where, row, k);
    }
    return 0;
  }
  if (width === 0) throw new InvalidMatrixError(where, `row ${row}: not listed as empty but its block has width 0`);
  let prev = colIdx[base]!;
  if (!(prev >= 0 && prev < cols)) throw new InvalidMatrixError(where, `row ${row}, slot 0: column ${prev} outside [0, ${cols})`);
  for (let k = 1; k < width; k++) {
    const p = base + k * stride;
    const c = colIdx[p]!;
    if (c === prev) {
      for (let t = k; t < width; t++) {
        const q = base + t * stride;
        if (colIdx[q] !== prev || values[q] !== 0) {
          throw new InvalidMatrixError(
            where,
            `row ${row}, slot ${t}: padding (from slot ${k}) must repeat column ${prev} with value 0, got column ${colIdx[q]} value ${values[q]}`,
          );
        }
      }
      return k;
    }
    if (!(c > prev && c < cols)) {
      throw new InvalidMatrixError(where, `row ${row}, slot ${k}: column ${c} must exceed ${prev} and be below ${cols}`);
    }
    prev = c;
  }
  return width;
}

/**
 * Fast path of {@link decodeRowLength} / {@link checkKnownRow} for `h` ≤ 64 consecutive packed
 * rows at once, slot by slot, so the reads of one slot run through consecutive addresses (a
 * column-major block read row by row jumps `stride` elements per slot). Row t's slot k is at
 * `base + k·stride + t`. `known[t]` ≥ 0 gives a row's length (the -R formats; slots past it
 * must be padding with a valid column; prevCol −1); `known[t]` = −1 lets the padding
 * convention decide, with `empty[t]` = 1 for a row that must be all padding (listed as empty,
 * or a phantom row). Writes the lengths to out[at + t] and returns true; returns false as soon
 * as a slot breaks the rules of those two functions, whose row-by-row rerun then throws the
 * exact error. Cost: O(h·width).
 */
export function tileLengths(
  colIdx: Int32Array,
  values: Float64Array,
  base: number,
  stride: number,
  h: number,
  width: number,
  cols: number,
  known: Int32Array,
  empty: Uint8Array,
  out: Int32Array,
  at: number,
): boolean {
  for (let t = 0; t < h; t++) {
    tilePrev[t] = -1;
    // −1: still in the real entries (padding convention); a non-empty row needs a slot
    tileTake[t] = known[t]! >= 0 ? known[t]! : empty[t] === 1 ? 0 : -1;
    if (tileTake[t] === -1 && width === 0) return false;
  }
  for (let k = 0, q0 = base; k < width; k++, q0 += stride) {
    for (let t = 0; t < h; t++) {
      const q = q0 + t;
      const c = colIdx[q]!;
      const len = tileTake[t]!;
      const prev = tilePrev[t]!;
      if (len < 0) {
        // padding convention, still in the real entries: the first repeated column starts the padding
        if (k > 0 && c === prev) {
          if (values[q] !== 0) return false;
          tileTake[t] = k;
        } else if (c > prev && c < cols) tilePrev[t] = c;
        else return false;
      } else if (known[t]! >= 0 && k < len) {
        if (!(c > prev && c < cols)) return false;
        tilePrev[t] = c;
      } else if (known[t]! < 0 && empty[t] !== 1) {
        if (c !== prev || values[q] !== 0) return false; // padding repeats the last column
      } else if (!(values[q] === 0 && c >= 0 && (c < cols || (cols === 0 && c === 0)))) return false;
    }
  }
  for (let t = 0; t < h; t++) out[at + t] = tileTake[t]! < 0 ? width : tileTake[t]!;
  return true;
}

/** Check one padding slot: value 0 and a column a GPU may read. */
export function checkPadding(c: number, v: number, cols: number, where: string, row: number, slot: number): void {
  if (v !== 0) throw new InvalidMatrixError(where, `row ${row}, slot ${slot}: padding value must be 0, got ${v}`);
  if (!(c >= 0 && (c < cols || (cols === 0 && c === 0)))) throw new InvalidMatrixError(where, `row ${row}, slot ${slot}: padding column ${c} outside [0, ${cols})`);
}

/**
 * Check the real slots of a row whose length is known (the -R formats and the hybrid):
 * columns in range and strictly increasing after `prevCol`; padding slots value 0 with a
 * valid column. Returns the last real column (or prevCol when the row has no real slot).
 */
export function checkKnownRow(
  colIdx: Int32Array,
  values: Float64Array,
  base: number,
  stride: number,
  width: number,
  len: number,
  cols: number,
  prevCol: number,
  where: string,
  row: number,
): number {
  let prev = prevCol;
  for (let k = 0; k < width; k++) {
    const p = base + k * stride;
    const c = colIdx[p]!;
    if (k < len) {
      if (!(c > prev && c < cols)) throw new InvalidMatrixError(where, `row ${row}, slot ${k}: column ${c} must exceed ${prev} and be below ${cols}`);
      prev = c;
    } else checkPadding(c, values[p]!, cols, where, row, k);
  }
  return prev;
}

/** A Uint8Array flag per row, 1 for the rows listed in `emptyRows`; validates the list. */
export function emptyFlags(emptyRows: Int32Array, rows: number, where: string): Uint8Array {
  const flags = new Uint8Array(rows);
  let prev = -1;
  for (let t = 0; t < emptyRows.length; t++) {
    const i = emptyRows[t]!;
    if (!(i > prev && i < rows)) throw new InvalidMatrixError(where, `emptyRows[${t}] = ${i}: expected ascending rows in [0, ${rows})`);
    flags[i] = 1;
    prev = i;
  }
  return flags;
}

/** Check that a row-length array has the right size and entries in [0, width]. */
export function checkRowLengths(rowLength: Int32Array, rows: number, widthOf: (i: number) => number, where: string): void {
  if (rowLength.length !== rows) throw new InvalidMatrixError(where, `rowLength: expected ${rows} entries, got ${rowLength.length}`);
  for (let i = 0; i < rows; i++) {
    const len = rowLength[i]!;
    const w = widthOf(i);
    if (!(len >= 0 && len <= w)) throw new InvalidMatrixError(where, `row ${i}: rowLength ${len} outside [0, ${w}]`);
  }
}

/** Throw InvalidMatrixError when an array does not have the length its shape implies. */
export function checkLength(where: string, name: string, arr: ArrayLike<number>, expected: number): void {
  if (arr.length !== expected) throw new InvalidMatrixError(where, `${name}: expected ${expected} entries, got ${arr.length}`);
}

/** Check the x and y of a reference product and return y (allocated when omitted). */
export function spmvArgs(where: string, rows: number, cols: number, x: Float64Array, y?: Float64Array): Float64Array {
  if (x.length !== cols) throw new DimensionMismatchError(`${where} x`, cols, x.length);
  const out = y ?? new Float64Array(rows);
  if (out.length !== rows) throw new DimensionMismatchError(`${where} y`, rows, out.length);
  return out;
}

/**
 * Canonical CSR from packed rows: row i has `lengths[i]` real slots at
 * `baseOf(i) + k·strideOf(i)`. Values are copied bit for bit. Cost: O(nnz + rows).
 */
export function gatherCsr(
  rows: number,
  cols: number,
  lengths: Int32Array,
  colIdx: Int32Array,
  values: Float64Array,
  baseOf: (i: number) => number,
  strideOf: (i: number) => number,
): CsrMatrix {
  const rowPtr = new Int32Array(rows + 1);
  for (let i = 0; i < rows; i++) rowPtr[i + 1] = rowPtr[i]! + lengths[i]!;
  const nnz = rowPtr[rows]!;
  const outCol = new Int32Array(nnz);
  const outVal = new Float64Array(nnz);
  for (let i = 0; i < rows; i++) {
    const base = baseOf(i);
    const stride = strideOf(i);
    const s = rowPtr[i]!;
    const len = lengths[i]!;
    for (let k = 0; k < len; k++) {
      outCol[s + k] = colIdx[base + k * stride]!;
      outVal[s + k] = values[base + k * stride]!;
    }
  }
  return { format: 'csr', rows, cols, rowPtr, colIdx: outCol, values: outVal };
}
