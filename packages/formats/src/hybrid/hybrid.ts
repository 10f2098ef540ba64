/**
 * The hybrid ELL + CSR format of seed 001 §4.1 (Algorithm 6): the first BOUNDARY stored
 * entries of every row go to an ELL part of width BOUNDARY (the dense Reference region of a
 * CI matrix), the rest of each row to a CSR part (the very sparse Expansion Space region),
 * addressed per row by StartArr/EndArr; AllNonZerosCount (`rowLength`) holds row lengths.
 *
 * Layout: the ELL part is column-major, slot k of row i at `k·rows + i` (coalesced), padded
 * with value 0 and the row's last real column (column 0 for an empty row). The CSR part holds
 * rows in order; row i's overflow is csrColIdx/csrValues[startArr[i] … endArr[i]).
 * Convention for rows with ≤ BOUNDARY entries (Algorithm 6 leaves their StartArr/EndArr
 * unset): startArr[i] = endArr[i] = the CSR position where row i's overflow would begin, an
 * empty range, so startArr/endArr are non-decreasing and a kernel that skips the
 * `AllNonZerosCount > BOUNDARY` test still loops zero times.
 * @module
 */
import { InvalidMatrixError, InvalidParameterError } from '../core/errors';
import type { CsrMatrix, SparseMatrix, StorageInfo, StorageOptions } from '../core/types';
import { makeStorageInfo } from '../core/types';
import { validateCsr } from '../csr/csr';
import { checkKnownRow, checkLength, checkSlots, packBlock, rowLengths, spmvArgs } from '../ell/ell-layout';
import { hybridAutoBoundary } from './auto-boundary';

/** Parameters of the hybrid format. */
export interface HybridParams {
  /** BOUNDARY (integer ≥ 0): stored entries per row kept in the ELL part; 'auto' = {@link hybridAutoBoundary}. */
  readonly boundary: number | 'auto';
}

/** Default hybrid parameters: BOUNDARY from Ginkgo's rule (33rd-percentile row length). */
export const hybridDefaults: HybridParams = { boundary: 'auto' };

/** A hybrid ELL + CSR matrix (seed 001 §4.1). */
export interface HybridMatrix extends SparseMatrix {
  readonly format: 'hybrid';
  /** BOUNDARY: the ELL part's width. */
  readonly boundary: number;
  /** ELL column indices (NonZerosEntries' ELLPACK_Column), rows·boundary, column-major k·rows + i. */
  readonly ellColIdx: Int32Array;
  /** ELL values (NonZerosEntries), rows·boundary, column-major k·rows + i; padding 0. */
  readonly ellValues: Float64Array;
  /** CSR part column indices (CSR_Column), length csrNnz. */
  readonly csrColIdx: Int32Array;
  /** CSR part values (Value), length csrNnz. */
  readonly csrValues: Float64Array;
  /** StartArr: first CSR position of row i's overflow. */
  readonly startArr: Int32Array;
  /** EndArr: one past the last CSR position of row i's overflow (= startArr[i] when none). */
  readonly endArr: Int32Array;
  /** AllNonZerosCount: stored entries of each row. */
  readonly rowLength: Int32Array;
  /** Entries in the ELL part (the Reference-region non-zeros of seed 001 Table 3). */
  readonly ellNnz: number;
  /** Entries in the CSR part (CSRNonZeros). */
  readonly csrNnz: number;
}

/** Resolve and check a BOUNDARY parameter (integer ≥ 0 or 'auto'). * @example
 * resolveBoundary(a, 'auto'); // hybridAutoBoundary(a)
 */
export function resolveBoundary(a: CsrMatrix, boundary: number | 'auto' | undefined): number {
  const b = boundary ?? hybridDefaults.boundary;
  if (b === 'auto') return hybridAutoBoundary(a);
  if (typeof b !== 'number' || !Number.isInteger(b) || b < 0) throw new InvalidParameterError('boundary', "an integer ≥ 0 or 'auto'", b);
  return b;
}

/**
 * Hybrid ELL + CSR from canonical CSR (validated), by seed 001 Algorithm 6: each row's first
 * `boundary` entries to ELL, the rest to CSR. Cost: O(rows·boundary + nnz).
 * Throws InvalidParameterError for a bad boundary, PaddingOverflowError past 2^31 − 1 ELL slots.
 * @example
 * const h = hybridFromCsr(csrFromDense([[1, 2, 3], [4, 0, 0]]), { boundary: 1 });
 * // ellValues [1, 4], csrValues [2, 3], startArr [0, 2], endArr [2, 2]
 */
export function hybridFromCsr(a: CsrMatrix, params: Partial<HybridParams> = {}): HybridMatrix {
  validateCsr(a, 'hybridFromCsr');
  const B = resolveBoundary(a, params.boundary);
  const rows = a.rows;
  const slots = rows * B;
  checkSlots('hybridFromCsr', slots, () => `${rows} rows × BOUNDARY ${B}`);
  const { lengths } = rowLengths(a);
  const ellColIdx = new Int32Array(slots);
  const ellValues = new Float64Array(slots);
  packBlock(a, (r) => r, rows, B, 0, ellColIdx, ellValues);
  const startArr = new Int32Array(rows);
  const endArr = new Int32Array(rows);
  let csrNnz = 0;
  for (let i = 0; i < rows; i++) csrNnz += Math.max(0, lengths[i]! - B);
  const csrColIdx = new Int32Array(csrNnz);
  const csrValues = new Float64Array(csrNnz);
  let index = 0; // Algorithm 6's Index
  for (let i = 0; i < rows; i++) {
    startArr[i] = index;
    for (let k = a.rowPtr[i]! + B; k < a.rowPtr[i + 1]!; k++) {
      csrColIdx[index] = a.colIdx[k]!;
      csrValues[index] = a.values[k]!;
      index++;
    }
    endArr[i] = index;
  }
  const nnz = a.rowPtr[rows] ?? 0;
  return { format: 'hybrid', rows, cols: a.cols, nnz, boundary: B, ellColIdx, ellValues, csrColIdx, csrValues, startArr, endArr, rowLength: lengths, ellNnz: nnz - csrNnz, csrNnz };
}

/**
 * Validate a hybrid matrix: array sizes, row lengths, StartArr/EndArr contiguous and matching
 * the overflow of each row, columns strictly increasing across the ELL/CSR split, padding.
 * Throws InvalidMatrixError naming the row. Cost: O(rows·boundary + csrNnz).
 * @example
 * validateHybrid(hybridFromCsr(a, { boundary: 4 })); // passes
 */
export function validateHybrid(m: HybridMatrix): void {
  const where = 'hybrid';
  const { rows, cols, boundary: B } = m;
  if (!Number.isInteger(B) || B < 0) throw new InvalidMatrixError(where, `boundary must be an integer ≥ 0, got ${B}`);
  checkLength(where, 'ellColIdx', m.ellColIdx, rows * B);
  checkLength(where, 'ellValues', m.ellValues, rows * B);
  checkLength(where, 'rowLength', m.rowLength, rows);
  checkLength(where, 'startArr', m.startArr, rows);
  checkLength(where, 'endArr', m.endArr, rows);
  checkLength(where, 'csrValues', m.csrValues, m.csrColIdx.length);
  let index = 0;
  for (let i = 0; i < rows; i++) {
    const len = m.rowLength[i]!;
    if (!(len >= 0)) throw new InvalidMatrixError(where, `row ${i}: rowLength ${len} is negative`);
    const prev = checkKnownRow(m.ellColIdx, m.ellValues, i, rows, B, Math.min(len, B), cols, -1, where, i);
    const s = m.startArr[i]!;
    const e = m.endArr[i]!;
    const over = Math.max(0, len - B);
    if (s !== index || e - s !== over) {
      throw new InvalidMatrixError(where, `row ${i}: StartArr/EndArr = [${s}, ${e}) but the row's CSR part must be [${index}, ${index + over})`);
    }
    if (e > m.csrColIdx.length) throw new InvalidMatrixError(where, `row ${i}: EndArr ${e} past the CSR part (${m.csrColIdx.length} entries)`);
    let c0 = prev;
    for (let k = s; k < e; k++) {
      const c = m.csrColIdx[k]!;
      if (!(c > c0 && c < cols)) throw new InvalidMatrixError(where, `row ${i}, CSR entry ${k}: column ${c} must exceed ${c0} and be below ${cols}`);
      c0 = c;
    }
    index = e;
  }
  if (index !== m.csrColIdx.length) throw new InvalidMatrixError(where, `CSR part holds ${m.csrColIdx.length} entries but the rows use ${index}`);
}

/** Hybrid → canonical CSR, exact (bit-identical values, explicit zeros kept); validates first. * @example
 * csrEquals(hybridToCsr(hybridFromCsr(a, { boundary: 4 })), a); // true
 */
export function hybridToCsr(m: HybridMatrix): CsrMatrix {
  validateHybrid(m);
  const { rows, boundary: B } = m;
  const rowPtr = new Int32Array(rows + 1);
  for (let i = 0; i < rows; i++) rowPtr[i + 1] = rowPtr[i]! + m.rowLength[i]!;
  const nnz = rowPtr[rows]!;
  const colIdx = new Int32Array(nnz);
  const values = new Float64Array(nnz);
  for (let i = 0; i < rows; i++) {
    let w = rowPtr[i]!;
    const e = Math.min(m.rowLength[i]!, B);
    for (let k = 0; k < e; k++, w++) {
      colIdx[w] = m.ellColIdx[k * rows + i]!;
      values[w] = m.ellValues[k * rows + i]!;
    }
    for (let k = m.startArr[i]!; k < m.endArr[i]!; k++, w++) {
      colIdx[w] = m.csrColIdx[k]!;
      values[w] = m.csrValues[k]!;
    }
  }
  return { format: 'csr', rows, cols: m.cols, rowPtr, colIdx, values };
}

/**
 * y = A·x in float64 in the order of seed 001 Algorithm 7: per row, the ELL part's sum (first
 * min(rl, BOUNDARY) slots) plus, when rl > BOUNDARY, the CSR part's sum over
 * [StartArr, EndArr). Cost: 2·nnz flops plus O(rows).
 * @example
 * hybridSpmv(hybridFromCsr(a, { boundary: 2 }), x); // equals csrSpmv(a, x) up to rounding
 */
export function hybridSpmv(m: HybridMatrix, x: Float64Array, y?: Float64Array): Float64Array {
  const out = spmvArgs('hybridSpmv', m.rows, m.cols, x, y);
  const { rows, cols, boundary: B, ellColIdx, ellValues, csrColIdx, csrValues, startArr, endArr, rowLength } = m;
  checkLength('hybridSpmv', 'ellColIdx', ellColIdx, rows * B);
  checkLength('hybridSpmv', 'rowLength', rowLength, rows);
  const bad = (i: number, c: number) => new InvalidMatrixError('hybridSpmv', `row ${i}: column ${c} outside [0, ${cols})`);
  for (let i = 0; i < rows; i++) {
    const len = rowLength[i]!;
    let ell = 0;
    const e = Math.min(len, B);
    for (let k = 0; k < e; k++) {
      const p = k * rows + i;
      const c = ellColIdx[p]!;
      if (!(c >= 0 && c < cols)) throw bad(i, c);
      ell += ellValues[p]! * x[c]!;
    }
    let tail = 0;
    if (len > B) {
      const s = startArr[i]!;
      const t = endArr[i]!;
      if (!(s >= 0 && t - s === len - B && t <= csrColIdx.length)) {
        throw new InvalidMatrixError('hybridSpmv', `row ${i}: [StartArr, EndArr) = [${s}, ${t}) must hold ${len - B} entries inside the CSR part (${csrColIdx.length})`);
      }
      for (let k = s; k < t; k++) {
        const c = csrColIdx[k]!;
        if (!(c >= 0 && c < cols)) throw bad(i, c);
        tail += csrValues[k]! * x[c]!;
      }
    }
    out[i] = ell + tail;
  }
  return out;
}

/**
 * Seed 001 §4.1 storage formula of the hybrid format:
 * 3·ROWS·sizeof(uint) + ROWS·BOUNDARY·(sizeof(value) + sizeof(int)) + CSRNonZeros·(sizeof(value) + sizeof(uint)).
 * The 3·ROWS indices are StartArr, EndArr and AllNonZerosCount. β = nnz / (ROWS·BOUNDARY + CSRNonZeros).
 * @example
 * // seed 001 Table 5, Matrix 1: 32 768 rows, BOUNDARY 655, 9 678 327 CSR non-zeros → 356.76 MiB
 * hybridStorageFormula(32768, 655, 9678327, 31141367).bytes / 2 ** 20;
 */
export function hybridStorageFormula(rows: number, boundary: number, csrNonZeros: number, nnz: number, opts: StorageOptions = {}): StorageInfo {
  const vb = opts.valueBytes ?? 8;
  const ib = opts.indexBytes ?? 4;
  const ellSlots = rows * boundary;
  return makeStorageInfo(nnz, ellSlots + csrNonZeros, {
    startArr: rows * ib,
    endArr: rows * ib,
    rowLength: rows * ib,
    ellValues: ellSlots * vb,
    ellColIdx: ellSlots * ib,
    csrValues: csrNonZeros * vb,
    csrColIdx: csrNonZeros * ib,
  });
}

/** Storage of a hybrid matrix by {@link hybridStorageFormula}. O(1). * @example
 * hybridStorageBytes(hybridFromCsr(a, { boundary: 4 }), { valueBytes: 4 }).bytes;
 */
export function hybridStorageBytes(m: HybridMatrix, opts: StorageOptions = {}): StorageInfo {
  return hybridStorageFormula(m.rows, m.boundary, m.csrNnz, m.nnz, opts);
}
