/**
 * Row-grouped CSR (RgCSR), survey §2.2.2 and Heller & Oberhuber: rows are cut into groups of G
 * consecutive rows; inside a group the first non-zero of every row is stored, then the second, and
 * so on (column-major inside the group, so the G threads of a group read consecutive slots), rows
 * shorter than the group's longest row padded with +0 and column −1 (the survey's "*").
 * `rowLength` gives each row's non-zero count (the kernel's loop bound, which also tells padding
 * from explicit zeros), `groupPtr` each group's first slot.
 *
 * Choices: the group size is fixed (the survey's description; Heller & Oberhuber's adaptive variant
 * sizes groups by their work); the last group may be shorter and then uses its own height as stride;
 * `groupPtr` has Ng + 1 entries (the survey lists the Ng starts; the extra total saves a branch).
 *
 * Layout: slot k of row i (group g, local row l = i − g·G, group height h) is at groupPtr[g] + k·h + l.
 * Storage (survey eq. 2.25–2.26): 2X + m + Ng, X = Σ_g G·maxlen(g) → X values, X column indices,
 * m row lengths, Ng + 1 group pointers.
 * @module
 */
import type { CsrMatrix, SparseMatrix, StorageInfo, StorageOptions } from '../core/types';
import { makeStorageInfo } from '../core/types';
import { validateCsr } from '../csr/csr';
import { checkSlots, checkSpmvArgs, requireInt } from '../dia/common';

/** A matrix in row-grouped CSR. */
export interface RgcsrMatrix extends SparseMatrix {
  readonly format: 'rgcsr';
  /** Group size G. */
  readonly groupSize: number;
  /** Number of groups Ng = ⌈rows / G⌉. */
  readonly numGroups: number;
  /** First slot of each group; length Ng + 1. */
  readonly groupPtr: Int32Array;
  /** Non-zeros of each row; length rows. */
  readonly rowLength: Int32Array;
  /** Column of each slot, −1 for padding. */
  readonly colIdx: Int32Array;
  /** Value of each slot, +0 for padding. */
  readonly values: Float64Array;
}

/** RgCSR parameters. */
export interface RgcsrParams {
  /** Rows per group G. Default 32 (one warp / subgroup); the survey's example uses 3. */
  readonly groupSize: number;
}

/** Default RgCSR parameters. */
export const rgcsrDefaultParams: RgcsrParams = { groupSize: 32 };

/**
 * Convert canonical CSR to RgCSR. Cost: O(X + rows).
 * @example
 * const g = rgcsrFromCsr(a, { groupSize: 3 });
 */
export function rgcsrFromCsr(a: CsrMatrix, params: Partial<RgcsrParams> = {}): RgcsrMatrix {
  validateCsr(a, 'rgcsrFromCsr');
  const G = requireInt('groupSize', params.groupSize ?? rgcsrDefaultParams.groupSize, 1, 1 << 20);
  const { rows, cols, rowPtr, colIdx: aci, values: av } = a;
  const ng = Math.ceil(rows / G);
  const rowLength = new Int32Array(rows);
  for (let i = 0; i < rows; i++) rowLength[i] = rowPtr[i + 1] - rowPtr[i];
  const groupPtr = new Int32Array(ng + 1);
  for (let g = 0; g < ng; g++) {
    const h = Math.min(G, rows - g * G);
    let w = 0;
    for (let l = 0; l < h; l++) w = Math.max(w, rowLength[g * G + l]);
    groupPtr[g + 1] = groupPtr[g] + h * w;
  }
  const X = groupPtr[ng];
  checkSlots('rgcsrFromCsr', X, 'a long row pads its whole group: use a smaller groupSize');
  const colIdx = new Int32Array(X).fill(-1);
  const values = new Float64Array(X);
  for (let g = 0; g < ng; g++) {
    const h = Math.min(G, rows - g * G);
    for (let l = 0; l < h; l++) {
      const i = g * G + l;
      for (let k = 0; k < rowLength[i]; k++) {
        const s = groupPtr[g] + k * h + l;
        colIdx[s] = aci[rowPtr[i] + k];
        values[s] = av[rowPtr[i] + k];
      }
    }
  }
  return { format: 'rgcsr', rows, cols, nnz: rowPtr[rows] ?? 0, groupSize: G, numGroups: ng, groupPtr, rowLength, colIdx, values };
}

/**
 * Convert RgCSR back to canonical CSR (bit-exact). Cost: O(nnz + rows).
 * @example
 * csrEquals(rgcsrToCsr(rgcsrFromCsr(a)), a); // true
 */
export function rgcsrToCsr(m: RgcsrMatrix): CsrMatrix {
  const { rows, cols, groupSize: G, groupPtr, rowLength } = m;
  const rowPtr = new Int32Array(rows + 1);
  for (let i = 0; i < rows; i++) rowPtr[i + 1] = rowPtr[i] + rowLength[i];
  const colIdx = new Int32Array(rowPtr[rows]);
  const values = new Float64Array(rowPtr[rows]);
  for (let i = 0; i < rows; i++) {
    const g = Math.floor(i / G);
    const h = Math.min(G, rows - g * G);
    for (let k = 0; k < rowLength[i]; k++) {
      const s = groupPtr[g] + k * h + (i - g * G);
      colIdx[rowPtr[i] + k] = m.colIdx[s];
      values[rowPtr[i] + k] = m.values[s];
    }
  }
  return { format: 'csr', rows, cols, rowPtr, colIdx, values };
}

/**
 * y = A·x in float64, one row per (virtual) thread, k < rowLength. Cost: O(nnz + rows).
 * @example
 * rgcsrSpmv(rgcsrFromCsr(a), x); // equals csrSpmv(a, x)
 */
export function rgcsrSpmv(m: RgcsrMatrix, x: Float64Array, y?: Float64Array): Float64Array {
  const { rows, cols, groupSize: G, groupPtr, rowLength, colIdx, values } = m;
  const out = checkSpmvArgs('rgcsrSpmv', rows, cols, x, y);
  for (let g = 0; g < m.numGroups; g++) {
    const h = Math.min(G, rows - g * G);
    for (let l = 0; l < h; l++) {
      const i = g * G + l;
      let acc = 0;
      // y_i = Σ_k v[g, k, l]·x[col[g, k, l]]
      for (let k = 0, s = groupPtr[g] + l; k < rowLength[i]; k++, s += h) acc += values[s] * x[colIdx[s]];
      out[i] = acc;
    }
  }
  return out;
}

/**
 * RgCSR storage (survey eq. 2.25): X values and columns, m row lengths, Ng + 1 group pointers.
 * β = nnz / X. O(1).
 * @example
 * rgcsrStorageBytes(rgcsrFromCsr(a, { groupSize: 3 })).storedElements; // X
 */
export function rgcsrStorageBytes(m: RgcsrMatrix, opts: StorageOptions = {}): StorageInfo {
  const vb = opts.valueBytes ?? 8;
  const ib = opts.indexBytes ?? 4;
  const X = m.values.length;
  return makeStorageInfo(m.nnz, X, { values: X * vb, colIdx: X * ib, rowLength: m.rows * ib, groupPtr: (m.numGroups + 1) * ib });
}
