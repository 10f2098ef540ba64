/**
 * The `ax[]` array shared by AXC (seed 004 §2.2) and AXT (§2.3): matrix entries and the x values
 * they multiply, interleaved in runs of HW = HBRs = THW ("bricks" / tile rows): HW matrix entries,
 * then the HW x values of the same slots. Slot s (0-based, in storage order) therefore lives at
 * `ax[2·HW·⌊s/HW⌋ + s mod HW]` and its x value HW positions further. A 2-D tile of TH steps is TH
 * such runs in a row, so the formula holds for every variant.
 *
 * Since x changes between products, every layout also keeps `xIdx[s]`, the column of slot s
 * (−1 for padding): a product first gathers x into the x half of ax[] through xIdx, then
 * reads ax[] alone. Padding slots hold the value 0 and are loaded with x = 0, so a non-finite
 * x never reaches a padding product. xIdx is also what tells padding from an explicit zero.
 *
 * Internal to the axc/ and axt/ folders (not re-exported from the package index).
 * @module
 */
import { DimensionMismatchError, InvalidMatrixError, InvalidParameterError } from '../core/errors';
import type { CsrMatrix } from '../core/types';
import { validateCsr } from '../csr/csr';

/** Largest number of slots a layout may hold: ax[] has 2 per slot and must stay below 2^31 entries. */
export const AX_MAX_SLOTS = 2 ** 30 - 1;

/**
 * Check a half width (AXC's HBRs, AXT's THW): an integer power of two in [1, 64].
 * Cost O(1). Throws InvalidParameterError naming the parameter.
 * @example
 * axCheckHalfWidth('thw', 32); // 32
 */
export function axCheckHalfWidth(name: string, v: unknown): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > 64 || (v & (v - 1)) !== 0) {
    throw new InvalidParameterError(name, 'a power of two in 1…64 (the SIMD width: 8 for AVX-512 doubles, 32 for a warp)', v);
  }
  return v;
}

/**
 * Refuse a layout too large to allocate, before allocating it (so bad parameters raise an
 * error instead of exhausting memory). Cost O(1).
 * @example
 * axCheckSlots(1024, 'th', 4); // passes
 */
export function axCheckSlots(slots: number, parameter: string, got: unknown): void {
  if (!(slots <= AX_MAX_SLOTS)) {
    throw new InvalidParameterError(parameter, `a layout of at most 2^30 − 1 slots (this choice needs ${slots})`, got);
  }
}

/**
 * Position in ax[] of slot s's matrix entry; its x value is at the returned index + hw.
 * Cost O(1).
 * @example
 * axValuePos(5, 4); // 2·4·1 + 1 = 9
 */
export function axValuePos(s: number, hw: number): number {
  const g = Math.floor(s / hw);
  return 2 * hw * g + (s - g * hw);
}

/**
 * Write the slot values into a fresh ax[] (x halves left at 0). Cost O(slots).
 * @example
 * axInterleave(Float64Array.from([1, 2, 3, 4]), 2); // [1, 2, 0, 0, 3, 4, 0, 0]
 */
export function axInterleave(slotValues: Float64Array, hw: number): Float64Array {
  const ax = new Float64Array(2 * slotValues.length);
  for (let s = 0; s < slotValues.length; s++) ax[axValuePos(s, hw)] = slotValues[s]!;
  return ax;
}

/**
 * Gather x into the x slots of ax[]: `ax[pos(s) + hw] = xIdx[s] ≥ 0 ? x[xIdx[s]] : 0`.
 * This is the step a GPU kernel performs (one thread per slot) before the product.
 * Cost O(slots), one pass over xIdx.
 * @example
 * axGatherX(m.ax, m.xIdx, m.thw, x, m.cols, 'axtLoadX');
 */
export function axGatherX(ax: Float64Array, xIdx: Int32Array, hw: number, x: Float64Array, cols: number, where: string): void {
  if (x.length !== cols) throw new DimensionMismatchError(`${where} x`, cols, x.length);
  if (ax.length !== 2 * xIdx.length) throw new DimensionMismatchError(`${where} ax (2 per slot)`, 2 * xIdx.length, ax.length);
  for (let s = 0; s < xIdx.length; s++) {
    const c = xIdx[s]!;
    if (c >= cols) throw new InvalidMatrixError(where, `slot ${s}: column ${c} outside [0, ${cols})`);
    ax[axValuePos(s, hw) + hw] = c >= 0 ? x[c]! : 0;
  }
}

/** Accumulates (row, column, value) in row-major order and checks it while doing so. */
export interface AxCsrBuilder {
  /** Append entry (r, c, v); rows must not decrease. */
  push(r: number, c: number, v: number): void;
  /** The canonical CSR matrix; throws unless exactly `nnz` entries came with sorted columns. */
  finish(): CsrMatrix;
}

/**
 * A checked builder of canonical CSR from entries visited in row-major order (the order every
 * AXC/AXT layout stores them in). Cost O(nnz + rows). Errors name the format and the row.
 * @example
 * const b = axCsrBuilder(2, 2, 1, 'axcToCsr'); b.push(1, 0, 5); b.finish();
 */
export function axCsrBuilder(rows: number, cols: number, nnz: number, where: string): AxCsrBuilder {
  const rowPtr = new Int32Array(rows + 1);
  const colIdx = new Int32Array(nnz);
  const values = new Float64Array(nnz);
  let k = 0;
  let last = 0;
  return {
    push(r, c, v) {
      if (!(r >= 0 && r < rows)) throw new InvalidMatrixError(where, `entry ${k}: row ${r} outside [0, ${rows})`);
      if (r < last) throw new InvalidMatrixError(where, `entry ${k}: row ${r} stored after row ${last} (rows must not decrease)`);
      if (!(c >= 0 && c < cols)) throw new InvalidMatrixError(where, `row ${r}, entry ${k}: column ${c} outside [0, ${cols})`);
      if (k >= nnz) throw new InvalidMatrixError(where, `row ${r}: more stored entries than nnz = ${nnz}`);
      last = r;
      rowPtr[r + 1]!++;
      colIdx[k] = c;
      values[k] = v;
      k++;
    },
    finish() {
      if (k !== nnz) throw new InvalidMatrixError(where, `expected ${nnz} stored entries, found ${k}`);
      for (let i = 0; i < rows; i++) rowPtr[i + 1]! += rowPtr[i]!;
      const a: CsrMatrix = { format: 'csr', rows, cols, rowPtr, colIdx, values };
      validateCsr(a, where, true);
      return a;
    },
  };
}
