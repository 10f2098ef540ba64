/**
 * DIA (diagonal format), survey §2.1.1 and Bell & Garland 2008: the occupied diagonals of the
 * matrix, each padded to `rows` slots, plus their offsets.
 *
 * Layout (what a one-thread-per-row kernel reads, coalesced): `data[d·rows + i] = A[i, i + offsets[d]]`,
 * diagonal-major, offsets ascending. Slots where `i + offsets[d]` falls outside [0, cols) are
 * out-of-matrix padding (+0). Slots inside the matrix that hold no stored entry are fill (+0);
 * the host-side bit mask `present` tells an explicit stored zero from fill, so toCsr is exact.
 * Rectangular matrices: offsets range over [−(rows − 1), cols − 1]; every diagonal has `rows` slots.
 *
 * Storage: rows·ndiag·sizeof(value) + ndiag·sizeof(index); β = nnz / (rows·ndiag).
 * @module
 */
import { InvalidMatrixError, InvalidParameterError } from '../core/errors';
import type { CsrMatrix, SparseMatrix, StorageInfo, StorageOptions } from '../core/types';
import { makeStorageInfo } from '../core/types';
import { checkDiagonalOffsets, checkNnz, checkPresentMask, requireShape, requireTyped } from '../core/validate';
import { csr, validateCsr } from '../csr/csr';
import { bitmaskCreate, bitmaskGet, checkSlots, checkSpmvArgs, requireInt } from './common';
import { diagonalStats } from './stats';

/** A matrix in DIA. */
export interface DiaMatrix extends SparseMatrix {
  readonly format: 'dia';
  /** Offsets j − i of the stored diagonals, ascending; length ndiag. */
  readonly offsets: Int32Array;
  /**
   * Padded diagonals, diagonal-major: data[d·rows + i] = A[i, i + offsets[d]]; length rows·ndiag.
   * Float64Array by default; a Float32Array (values rounded to float32) when converted with
   * `valueType: 'f32'`, the layout the float32 GPU kernels upload as is.
   */
  readonly data: Float64Array | Float32Array;
  /** Host-only bit mask over data: bit set where the slot holds a stored entry of the CSR input. */
  readonly present: Uint32Array;
}

/** DIA parameters. */
export interface DiaParams {
  /** Refuse (InvalidParameterError) when the matrix has more occupied diagonals than this. Default 1024. */
  readonly maxDiagonals: number;
  /**
   * Element type of `data`: 'f64' (default, exact) or 'f32' (each value rounded to float32 as it
   * is written: what a float32 device upload needs, with half the host memory and no second
   * float64 → float32 pass; diaToCsr then gives the rounded values).
   */
  readonly valueType: 'f64' | 'f32';
}

/** Default DIA parameters. */
export const diaDefaultParams: DiaParams = { maxDiagonals: 1024, valueType: 'f64' };

/**
 * Throw when `count` diagonals exceed `maxDiagonals` (shared by DIA, HM and CDM), naming the
 * count and the slots that would be allocated. O(1).
 * @example
 * checkDiagonalCount('dia', 2047, 1024, 1024 * 2047); // throws
 */
export function checkDiagonalCount(format: string, count: number, maxDiagonals: number, slots: number): void {
  if (count > maxDiagonals) {
    throw new InvalidParameterError(
      'maxDiagonals',
      `at least ${count} to store this matrix in ${format} (it has ${count} occupied diagonals, ${slots} slots)`,
      maxDiagonals,
    );
  }
  checkSlots(`${format}FromCsr`, slots, 'the matrix is too large for diagonal storage');
}

/**
 * Check a DIA matrix given as arrays: integer shape; offsets an Int32Array of diagonals inside the
 * matrix (−rows < k < cols), strictly ascending (no duplicates); data a Float64Array of rows·ndiag
 * slots; a presence mask covering them; nnz in [0, rows·ndiag]. O(ndiag). Throws
 * InvalidMatrixError naming the first bad offset, e.g. "DIA offsets[2] = 1000: expected a
 * diagonal offset inside the 4x4 matrix, in [-3, 3]" (such a diagonal used to be dropped).
 * @example
 * validateDia(diaFromCsr(a)); // passes
 */
export function validateDia(m: DiaMatrix, where = 'DIA'): void {
  requireShape(where, 'DIA', m.rows, m.cols);
  requireTyped(where, 'DIA offsets', m.offsets, 'Int32Array');
  if (!(m.data instanceof Float32Array)) requireTyped(where, 'DIA data', m.data, 'Float64Array');
  checkDiagonalOffsets(where, 'DIA', m.offsets, m.rows, m.cols, (k) => k, 'ascending');
  const slots = m.rows * m.offsets.length;
  if (m.data.length !== slots) {
    throw new InvalidMatrixError(where, `DIA data has ${m.data.length} slots: expected rows·ndiag = ${m.rows}·${m.offsets.length} = ${slots}`);
  }
  checkPresentMask(where, 'DIA', m.present, slots);
  checkNnz(where, 'DIA', m.nnz, slots);
}

/**
 * Convert canonical CSR to DIA. Cost: O(nnz + rows·ndiag) time and memory.
 * Throws InvalidParameterError when the number of occupied diagonals exceeds `maxDiagonals`.
 * @example
 * const d = diaFromCsr(laplacian1d(5)); // d.offsets = [-1, 0, 1], d.data.length = 15
 */
export function diaFromCsr(a: CsrMatrix, params: Partial<DiaParams> = {}): DiaMatrix {
  validateCsr(a, 'diaFromCsr');
  const maxDiagonals = requireInt('maxDiagonals', params.maxDiagonals ?? diaDefaultParams.maxDiagonals, 0);
  const valueType = params.valueType ?? diaDefaultParams.valueType;
  if (valueType !== 'f64' && valueType !== 'f32') throw new InvalidParameterError('valueType', "'f64' or 'f32'", valueType);
  const { rows, cols } = a;
  const stats = diagonalStats(a);
  const ndiag = stats.count;
  checkDiagonalCount('dia', ndiag, maxDiagonals, rows * ndiag);
  const data = valueType === 'f32' ? new Float32Array(rows * ndiag) : new Float64Array(rows * ndiag);
  const present = bitmaskCreate(rows * ndiag);
  fillDiagonals(a, stats.offsets, data, present);
  return { format: 'dia', rows, cols, nnz: stats.nnz, offsets: stats.offsets, data, present };
}

/**
 * Scatter the CSR entries into the padded diagonals, one pass over the CSR: the slot of entry
 * (i, j) is base[j − i + rows − 1] + i, base a typed table over the whole offset range
 * (O(rows + cols), no per-entry allocation); a Float32Array target rounds on store.
 * Cost: O(nnz + rows + cols).
 */
function fillDiagonals(a: CsrMatrix, offsets: Int32Array, data: Float64Array | Float32Array, present: Uint32Array): void {
  const { rows, cols, rowPtr, colIdx, values } = a;
  // slot of row 0 on the diagonal of each offset (shifted by rows − 1): d·rows
  const base = new Int32Array(Math.max(0, rows + cols - 1)); // rows·ndiag ≤ 2²⁸ (checkSlots)
  for (let d = 0; d < offsets.length; d++) base[offsets[d] + rows - 1] = d * rows;
  const shift = rows - 1;
  let k = rowPtr[0] ?? 0;
  for (let i = 0; i < rows; i++) {
    const end = rowPtr[i + 1];
    for (; k < end; k++) {
      const s = base[colIdx[k] - i + shift] + i;
      data[s] = values[k];
      present[s >>> 5] |= 1 << (s & 31);
    }
  }
}

/**
 * Convert DIA back to canonical CSR (stored entries only, explicit zeros kept, values bit-exact;
 * float32 data, from `valueType: 'f32'`, gives the rounded values widened exactly).
 * Cost: O(rows·ndiag).
 * @example
 * csrEquals(diaToCsr(diaFromCsr(a)), a); // true
 */
export function diaToCsr(m: DiaMatrix): CsrMatrix {
  validateDia(m, 'diaToCsr');
  const { rows, cols, offsets, data, present } = m;
  const ndiag = offsets.length;
  const rowPtr = new Int32Array(rows + 1);
  for (let i = 0; i < rows; i++) {
    let c = 0;
    for (let d = 0; d < ndiag; d++) {
      if (!bitmaskGet(present, d * rows + i)) continue;
      const j = i + offsets[d];
      if (j < 0 || j >= cols) throw new InvalidMatrixError('diaToCsr', `DIA present bit of slot ${d * rows + i} (row ${i}, offset ${offsets[d]}) marks column ${j}, outside [0, ${cols}): padding cannot hold an entry`);
      c++;
    }
    rowPtr[i + 1] = rowPtr[i] + c;
  }
  const nnz = rowPtr[rows];
  const colIdx = new Int32Array(nnz);
  const values = new Float64Array(nnz);
  let w = 0;
  for (let i = 0; i < rows; i++) {
    // offsets ascending, so columns come out ascending
    for (let d = 0; d < ndiag; d++) {
      const s = d * rows + i;
      if (!bitmaskGet(present, s)) continue;
      colIdx[w] = i + offsets[d];
      values[w++] = data[s];
    }
  }
  // ascending offsets in range give sorted, unique, in-range columns
  return csr(rows, cols, rowPtr, colIdx, values, { unchecked: true });
}

/**
 * y = A·x in float64, diagonal by diagonal over the in-matrix range of each diagonal (what a DIA
 * kernel does; fill slots hold +0, so for finite x the result equals the CSR product up to
 * summation order). Cost: O(rows·ndiag).
 * @example
 * const y = diaSpmv(diaFromCsr(laplacian1d(3)), Float64Array.from([1, 1, 1])); // [1, 0, 1]
 */
export function diaSpmv(m: DiaMatrix, x: Float64Array, y?: Float64Array): Float64Array {
  validateDia(m, 'diaSpmv');
  const { rows, cols, offsets, data } = m;
  const out = checkSpmvArgs('diaSpmv', rows, cols, x, y);
  for (let d = 0; d < offsets.length; d++) {
    const off = offsets[d];
    const base = d * rows;
    const i0 = Math.max(0, -off);
    const i1 = Math.min(rows, cols - off);
    // y_i += data[d, i]·x_{i+off} for the rows whose column i + off lies inside the matrix
    for (let i = i0; i < i1; i++) out[i] += data[base + i] * x[i + off];
  }
  return out;
}

/**
 * DIA storage: data rows·ndiag values and ndiag offsets (the host-only mask is not counted).
 * β = nnz / (rows·ndiag). O(1).
 * @example
 * diaStorageBytes(diaFromCsr(laplacian1d(4)), { valueBytes: 4 }).bytes; // 4·12 + 4·3 = 60
 */
export function diaStorageBytes(m: DiaMatrix, opts: StorageOptions = {}): StorageInfo {
  const vb = opts.valueBytes ?? 8;
  const ib = opts.indexBytes ?? 4;
  const stored = m.rows * m.offsets.length;
  return makeStorageInfo(m.nnz, stored, { data: stored * vb, offsets: m.offsets.length * ib });
}
