/**
 * Slice machinery shared by sliced ELL, sliced ELL-R (seed 001 §3.4–3.5) and SELL-C-σ
 * (survey §2.3.4): rows, in a given order, are cut into slices of `height` rows; each slice
 * is an ELL block of its own width, stored column-major at its slice pointer.
 *
 * Slot k of local row r of slice s sits at `slicePtr[s] + k·stride(s) + r`, where stride(s) is
 * `height`, except for a short last slice of sliced ELL (seed 001 stores each slice as an ELL
 * of its own rows), whose stride is its row count. SELL-C-σ pads the last chunk to C rows
 * with phantom rows (value 0, column 0), as in Kreutzer et al. and survey (2.60).
 * @module
 */
import { InvalidMatrixError } from '../core/errors';
import type { CsrMatrix, StorageInfo, StorageOptions } from '../core/types';
import { makeStorageInfo } from '../core/types';
import { checkKnownRow, checkLength, checkPadding, checkSlots, decodeRowLength, gatherCsr, packBlock } from '../ell/ell-layout';

/** The arrays every sliced format has. Row positions p map to matrix rows through an order. */
export interface SlicedArrays {
  readonly rows: number;
  readonly cols: number;
  /** Rows per slice (sliceHeight, or SELL's C). */
  readonly height: number;
  /** Whether a short last slice is padded to `height` rows (SELL-C-σ) or not (sliced ELL). */
  readonly padLast: boolean;
  /** Start slot of each slice, length numSlices + 1; slicePtr[numSlices] = stored slots. */
  readonly slicePtr: Int32Array;
  /** Slots per row in each slice (the slice's longest row). */
  readonly sliceWidth: Int32Array;
  readonly colIdx: Int32Array;
  readonly values: Float64Array;
}

/** Number of slices of `rows` rows cut `height` at a time. */
export function sliceCount(rows: number, height: number): number {
  return Math.ceil(rows / height);
}

/** Rows actually in slice s and its stride (height, or the row count for a short unpadded last slice). */
export function sliceRows(rows: number, height: number, padLast: boolean, s: number): { count: number; stride: number } {
  const count = Math.min(height, rows - s * height);
  return { count, stride: padLast ? height : count };
}

/**
 * Build the sliced arrays of a canonical CSR matrix. `order[p]` is the matrix row at position
 * p (null: identity). Cost: O(rows + stored slots). Throws PaddingOverflowError past 2^31 − 1 slots.
 */
export function buildSlices(
  a: CsrMatrix,
  lengths: Int32Array,
  order: Int32Array | null,
  height: number,
  padLast: boolean,
  where: string,
): Omit<SlicedArrays, 'rows' | 'cols' | 'height' | 'padLast'> {
  const ns = sliceCount(a.rows, height);
  const sliceWidth = new Int32Array(ns);
  const ptr = new Float64Array(ns + 1); // float64: detect overflow before allocating
  const rowAt = order ? (p: number) => order[p]! : (p: number) => p;
  for (let s = 0; s < ns; s++) {
    const { count, stride } = sliceRows(a.rows, height, padLast, s);
    let w = 0;
    for (let r = 0; r < count; r++) w = Math.max(w, lengths[rowAt(s * height + r)]!);
    sliceWidth[s] = w;
    ptr[s + 1] = ptr[s]! + stride * w;
  }
  checkSlots(where, ptr[ns]!, () => `${ns} slices of height ${height}, widest ${sliceWidth.reduce((x, y) => Math.max(x, y), 0)}`);
  const slicePtr = Int32Array.from(ptr);
  const colIdx = new Int32Array(slicePtr[ns]!);
  const values = new Float64Array(slicePtr[ns]!);
  for (let s = 0; s < ns; s++) {
    const { count, stride } = sliceRows(a.rows, height, padLast, s);
    const first = s * height;
    packBlock(a, (r) => (r < count ? rowAt(first + r) : -1), stride, sliceWidth[s]!, slicePtr[s]!, colIdx, values);
  }
  return { slicePtr, sliceWidth, colIdx, values };
}

/** Check sizes and pointer consistency of sliced arrays (throws InvalidMatrixError). O(slices). */
export function checkSlices(m: SlicedArrays, where: string): void {
  const ns = sliceCount(m.rows, m.height);
  checkLength(where, 'slicePtr', m.slicePtr, ns + 1);
  checkLength(where, 'sliceWidth', m.sliceWidth, ns);
  if (m.slicePtr[0] !== 0) throw new InvalidMatrixError(where, `slicePtr[0] must be 0, got ${m.slicePtr[0]}`);
  for (let s = 0; s < ns; s++) {
    const { stride } = sliceRows(m.rows, m.height, m.padLast, s);
    const w = m.sliceWidth[s]!;
    if (!(w >= 0) || m.slicePtr[s + 1]! - m.slicePtr[s]! !== stride * w) {
      throw new InvalidMatrixError(where, `slice ${s}: slicePtr step ${m.slicePtr[s + 1]! - m.slicePtr[s]!} must be ${stride} rows × width ${w}`);
    }
  }
  checkLength(where, 'colIdx', m.colIdx, m.slicePtr[ns]!);
  checkLength(where, 'values', m.values, m.slicePtr[ns]!);
}

/** Check an order array is a permutation of 0..rows−1; returns its inverse (row → position). */
export function invertOrder(order: Int32Array, rows: number, where: string): Int32Array {
  checkLength(where, 'rowPerm', order, rows);
  const inv = new Int32Array(rows).fill(-1);
  for (let p = 0; p < rows; p++) {
    const i = order[p]!;
    if (!(i >= 0 && i < rows) || inv[i] !== -1) throw new InvalidMatrixError(where, `rowPerm[${p}] = ${i}: not a permutation of 0..${rows - 1}`);
    inv[i] = p;
  }
  return inv;
}

/**
 * Validate sliced arrays completely (slice pointers, the order a permutation, row lengths,
 * columns, padding) without building a CSR matrix; what a GPU upload needs. Row lengths come
 * from `rowLength` (the -R formats, indexed by matrix row) or, when null, from the padding
 * convention with `empty` flags (indexed by matrix row). Returns, per matrix row, the first
 * slot, the stride and the length. Throws InvalidMatrixError naming the row and slot.
 * Cost: O(rows + stored slots); row by row, which suits a slice's small contiguous block.
 */
export function slicesValidate(
  m: SlicedArrays,
  order: Int32Array | null,
  rowLength: Int32Array | null,
  empty: Uint8Array | null,
  where: string,
): { base: Int32Array; strideOf: Int32Array; lengths: Int32Array } {
  checkSlices(m, where);
  if (rowLength) checkLength(where, 'rowLength', rowLength, m.rows);
  const rows = m.rows;
  if (order) invertOrder(order, rows, where);
  const base = new Int32Array(rows);
  const strideOf = new Int32Array(rows);
  const lengths = new Int32Array(rows);
  const ns = sliceCount(rows, m.height);
  for (let s = 0; s < ns; s++) {
    const { count, stride } = sliceRows(rows, m.height, m.padLast, s);
    const w = m.sliceWidth[s]!;
    for (let r = 0; r < stride; r++) {
      const b = m.slicePtr[s]! + r;
      if (r >= count) {
        for (let k = 0; k < w; k++) checkPadding(m.colIdx[b + k * stride]!, m.values[b + k * stride]!, m.cols, where, s * m.height + r, k);
        continue;
      }
      const p = s * m.height + r;
      const i = order ? order[p]! : p;
      base[i] = b;
      strideOf[i] = stride;
      if (rowLength) {
        if (!(rowLength[i]! >= 0 && rowLength[i]! <= w)) throw new InvalidMatrixError(where, `row ${i}: rowLength ${rowLength[i]} outside [0, ${w}]`);
        lengths[i] = rowLength[i]!;
        checkKnownRow(m.colIdx, m.values, b, stride, w, lengths[i]!, m.cols, -1, where, i);
      } else {
        lengths[i] = decodeRowLength(m.colIdx, m.values, b, stride, w, m.cols, empty![i] === 1, where, i);
      }
    }
  }
  return { base, strideOf, lengths };
}

/**
 * Canonical CSR from sliced arrays, validating everything ({@link slicesValidate}).
 * Cost: O(rows + stored slots).
 */
export function slicesToCsr(
  m: SlicedArrays,
  order: Int32Array | null,
  rowLength: Int32Array | null,
  empty: Uint8Array | null,
  where: string,
): CsrMatrix {
  const { base, strideOf, lengths } = slicesValidate(m, order, rowLength, empty, where);
  return gatherCsr(m.rows, m.cols, lengths, m.colIdx, m.values, (i) => base[i]!, (i) => strideOf[i]!);
}

/**
 * y = A·x in float64 over sliced arrays, thread-per-row order (seed 001 Algorithms 4/5):
 * each row sums its slots in order, stopping at rowLength (the -R formats) or at the first
 * padding slot (padding validated). y is written in matrix-row order through `order` (checked
 * to be a permutation). Cost: O(rows + stored slots), 2·nnz flops.
 */
export function slicesSpmv(
  m: SlicedArrays,
  order: Int32Array | null,
  rowLength: Int32Array | null,
  empty: Uint8Array | null,
  x: Float64Array,
  out: Float64Array,
  where: string,
): Float64Array {
  checkSlices(m, where);
  if (rowLength) checkLength(where, 'rowLength', rowLength, m.rows);
  if (order) invertOrder(order, m.rows, where); // a repeated row would leave another row unwritten
  const { rows, cols, colIdx, values } = m;
  const ns = sliceCount(rows, m.height);
  for (let s = 0; s < ns; s++) {
    const { count, stride } = sliceRows(rows, m.height, m.padLast, s);
    const w = m.sliceWidth[s]!;
    const off = m.slicePtr[s]!;
    for (let r = 0; r < count; r++) {
      const p = s * m.height + r;
      const i = order ? order[p]! : p;
      let end: number;
      if (rowLength) {
        end = rowLength[i]!;
        if (!(end >= 0 && end <= w)) throw new InvalidMatrixError(where, `row ${i}: rowLength ${end} outside [0, ${w}]`);
      } else {
        // the row's length by the padding convention (validates columns and padding values)
        end = decodeRowLength(colIdx, values, off + r, stride, w, cols, empty![i] === 1, where, i);
      }
      let sum = 0;
      for (let k = 0; k < end; k++) {
        const q = off + k * stride + r;
        const c = colIdx[q]!;
        if (!(c >= 0 && c < cols)) throw new InvalidMatrixError(where, `row ${i}, slot ${k}: column ${c} outside [0, ${cols})`);
        sum += values[q]! * x[c]!;
      }
      out[i] = sum;
    }
  }
  return out;
}

/**
 * Storage of sliced arrays: the slices' ELL storage (seed 001 §4.1: the sum of the slices'
 * ELL formulas, Σ stride_s·width_s·(sizeof(value) + sizeof(index))), the slice pointers of
 * survey (2.60) and the per-slice widths, plus any extra per-row arrays (`extraRowArrays`:
 * name → counted or not). O(1).
 */
export function slicesStorage(m: SlicedArrays, nnz: number, opts: StorageOptions, extraRowArrays: Record<string, boolean>): StorageInfo {
  const vb = opts.valueBytes ?? 8;
  const ib = opts.indexBytes ?? 4;
  const ns = m.sliceWidth.length;
  const slots = m.slicePtr[ns] ?? 0;
  const arrays: Record<string, number> = {
    values: slots * vb,
    colIdx: slots * ib,
    slicePtr: (ns + 1) * ib,
    sliceWidth: ns * ib,
  };
  for (const [name, counted] of Object.entries(extraRowArrays)) if (counted) arrays[name] = m.rows * ib;
  return makeStorageInfo(nnz, slots, arrays);
}

/** Validate a slice height / chunk height parameter: an integer ≥ 1. */
export function isPositiveInt(v: unknown): v is number {
  return typeof v === 'number' && Number.isInteger(v) && v >= 1;
}
