/**
 * HM diagonal storage (Hossain & Mahmud), seed 002 §3.1 and §6.2 (diagonal-storage-spgemm.md).
 *
 * The occupied diagonals are stored whole (every matrix position of the diagonal, zeros included)
 * and back to back in one array `values` (the paper's Xlist), in the order
 * (A₀; Ā₁ … Ā_ku; A̲₁ … A̲_kl): the principal diagonal first when occupied, then the superdiagonals
 * by ascending index, then the subdiagonals by descending index (−1, −2, …) — the paper's DsX.
 * `starts[d]` (StartDgX) is where diagonal d begins in `values`. Entry (i, j) lives at
 * `values[starts[d] + min(i, j)]` where offsets[d] = j − i (the paper's rule A_c[i][j] → A[j−i][min(i,j)]).
 * No padding outside the matrix: for a dense n×n matrix the array has n(ku+kl+1) − ku(ku+1)/2 − kl(kl+1)/2
 * elements. A host-only bit mask `present` marks stored CSR entries among the diagonal slots.
 *
 * Extension (stated): the paper defines HM for n×n; here a rows × cols matrix is accepted, diagonal k
 * holding the positions (i, i + k) inside the matrix, still indexed by min(i, j).
 *
 * Storage: Σ|diagonal|·sizeof(value) + 2·ndiag·sizeof(index) (DsX and StartDgX).
 * @module
 */
import type { CsrMatrix, SparseMatrix, StorageInfo, StorageOptions } from '../core/types';
import { makeStorageInfo } from '../core/types';
import { InvalidMatrixError } from '../core/errors';
import { checkDiagonalOffsets, checkNnz, checkOffsetRange, checkPresentMask, requireShape, requireTyped } from '../core/validate';
import { csrFromTriplets, validateCsr } from '../csr/csr';
import { bitmaskCreate, bitmaskGet, bitmaskSet, checkSpmvArgs, requireInt } from '../dia/common';
import { checkDiagonalCount } from '../dia/dia';
import { diagonalLength, diagonalStats } from '../dia/stats';

/** A matrix in HM diagonal storage (seed 002 §3.1, §6.2). */
export interface HmMatrix extends SparseMatrix {
  readonly format: 'hm';
  /** dgX: number of stored diagonals. */
  readonly numDiagonals: number;
  /** DsX: diagonal indices j − i, in the order 0, +1, +2, …, −1, −2, … (occupied ones only). */
  readonly offsets: Int32Array;
  /** StartDgX: index in `values` of each diagonal's first element; length numDiagonals. */
  readonly starts: Int32Array;
  /** Xlist: the diagonals back to back, each indexed by min(i, j). */
  readonly values: Float64Array;
  /** Host-only bit mask over values: set where the slot holds a stored CSR entry. */
  readonly present: Uint32Array;
}

/** HM parameters. */
export interface HmParams {
  /** Refuse (InvalidParameterError) when the matrix has more occupied diagonals than this. Default 1024. */
  readonly maxDiagonals: number;
}

/** Default HM parameters. */
export const hmDefaultParams: HmParams = { maxDiagonals: 1024 };

/**
 * Sort diagonal offsets into the HM order: 0 first, superdiagonals ascending, subdiagonals
 * descending (−1, −2, …). O(d log d).
 * @example
 * hmOrder([-2, 3, 0, -1, 1]); // [0, 1, 3, -1, -2]
 */
export function hmOrder(offsets: ArrayLike<number>): Int32Array {
  const out = Int32Array.from(offsets);
  return out.sort((p, q) => hmRank(p) - hmRank(q));
}

/** Position key of the HM order: 0, 1, 2, …, then −1, −2, … (offsets lie in (−2³¹, 2³¹)). */
const hmRank = (k: number): number => (k >= 0 ? k : 2 ** 31 - k);

/**
 * Assemble an HM matrix for the given diagonal set (any order; stored in HM order), all slots
 * zero and absent. Used by conversions and by the SpGEMM, which fixes C's diagonals before any
 * arithmetic. Cost: O(Σ|diagonal|).
 * @example
 * const c = hmAllocate(4, 4, [0, 1, -1]); // c.values.length === 10
 */
export function hmAllocate(rows: number, cols: number, offsets: ArrayLike<number>): HmMatrix {
  requireShape('hmAllocate', 'HM', rows, cols);
  checkOffsetRange('hmAllocate', 'HM', offsets, rows, cols);
  const ordered = hmOrder(offsets);
  for (let d = 1; d < ordered.length; d++) {
    if (ordered[d] === ordered[d - 1]) throw new InvalidMatrixError('hmAllocate', `HM offset ${ordered[d]} given twice: expected each diagonal once`);
  }
  const starts = new Int32Array(ordered.length);
  let total = 0;
  for (let d = 0; d < ordered.length; d++) {
    starts[d] = total;
    total += diagonalLength(rows, cols, ordered[d]);
  }
  return {
    format: 'hm',
    rows,
    cols,
    nnz: 0,
    numDiagonals: ordered.length,
    offsets: ordered,
    starts,
    values: new Float64Array(total),
    present: bitmaskCreate(total),
  };
}

/**
 * Dense lookup from diagonal offset to diagonal number: `lookup[k + rows − 1]` is d with
 * offsets[d] = k, or −1. Cost: O(rows + cols).
 * @example
 * const lk = hmDiagonalLookup(m); const d = lk[j - i + m.rows - 1];
 */
export function hmDiagonalLookup(m: HmMatrix): Int32Array {
  const lookup = new Int32Array(Math.max(0, m.rows + m.cols - 1)).fill(-1);
  for (let d = 0; d < m.numDiagonals; d++) lookup[m.offsets[d] + m.rows - 1] = d;
  return lookup;
}

/**
 * Length of stored diagonal d of an HM matrix (the next start, or the end of values). O(1).
 * @example
 * hmDiagonalSize(m, 0); // min(rows, cols) when the principal diagonal is stored
 */
export function hmDiagonalSize(m: HmMatrix, d: number): number {
  return (d + 1 < m.numDiagonals ? m.starts[d + 1] : m.values.length) - m.starts[d];
}

/**
 * Index in `values` of entry (i, j) by the paper's rule A[j − i][min(i, j)], or −1 when its
 * diagonal is not stored. O(1) with a lookup from {@link hmDiagonalLookup}, O(ndiag) without.
 * @example
 * m.values[hmIndex(m, 2, 1)]; // a₂₁
 */
export function hmIndex(m: HmMatrix, i: number, j: number, lookup?: Int32Array): number {
  if (i < 0 || i >= m.rows || j < 0 || j >= m.cols) return -1;
  const k = j - i;
  const d = lookup ? lookup[k + m.rows - 1] : m.offsets.indexOf(k);
  return d < 0 ? -1 : m.starts[d] + Math.min(i, j);
}

/**
 * Check an HM matrix given as arrays: integer shape; numDiagonals = offsets.length =
 * starts.length; offsets (Int32Array) inside the matrix, each once, in HM order (0, +1, +2, …,
 * −1, −2, …); starts (Int32Array) the running sums of the diagonal lengths from 0; values a
 * Float64Array of exactly Σ|diagonal| slots; a presence mask covering them; nnz in [0, slots].
 * O(ndiag). Throws InvalidMatrixError naming the first bad index (an offset outside the matrix
 * used to be stored with length 0 and dropped).
 * @example
 * validateHm(hmFromCsr(a)); // passes
 */
export function validateHm(m: HmMatrix, where = 'HM'): void {
  requireShape(where, 'HM', m.rows, m.cols);
  requireTyped(where, 'HM offsets', m.offsets, 'Int32Array');
  requireTyped(where, 'HM starts', m.starts, 'Int32Array');
  requireTyped(where, 'HM values', m.values, 'Float64Array');
  const nd = m.offsets.length;
  if (m.numDiagonals !== nd || m.starts.length !== nd) {
    throw new InvalidMatrixError(where, `HM numDiagonals = ${m.numDiagonals}, offsets ${nd}, starts ${m.starts.length}: expected all equal`);
  }
  checkDiagonalOffsets(where, 'HM', m.offsets, m.rows, m.cols, hmRank, 'in HM order 0, +1, +2, …, −1, −2, …');
  let total = 0;
  for (let d = 0; d < nd; d++) {
    if (m.starts[d] !== total) throw new InvalidMatrixError(where, `HM starts[${d}] = ${m.starts[d]}: expected ${total} (the lengths of the diagonals before it)`);
    total += diagonalLength(m.rows, m.cols, m.offsets[d]);
  }
  if (m.values.length !== total) throw new InvalidMatrixError(where, `HM values has ${m.values.length} slots: expected Σ|diagonal| = ${total}`);
  checkPresentMask(where, 'HM', m.present, total);
  checkNnz(where, 'HM', m.nnz, total);
}

/**
 * Convert canonical CSR to HM. Cost: O(nnz + rows + cols + Σ|diagonal|).
 * Throws InvalidParameterError when the occupied diagonals exceed `maxDiagonals`.
 * @example
 * const h = hmFromCsr(laplacian1d(4)); // offsets [0, 1, -1], starts [0, 4, 7]
 */
export function hmFromCsr(a: CsrMatrix, params: Partial<HmParams> = {}): HmMatrix {
  validateCsr(a, 'hmFromCsr');
  const maxDiagonals = requireInt('maxDiagonals', params.maxDiagonals ?? hmDefaultParams.maxDiagonals, 0);
  const stats = diagonalStats(a);
  checkDiagonalCount('hm', stats.count, maxDiagonals, stats.inMatrixSlots);
  const m = hmAllocate(a.rows, a.cols, stats.offsets);
  const lookup = hmDiagonalLookup(m);
  const { rows, rowPtr, colIdx, values } = a;
  for (let i = 0; i < rows; i++) {
    for (let k = rowPtr[i]; k < rowPtr[i + 1]; k++) {
      const j = colIdx[k];
      const s = m.starts[lookup[j - i + rows - 1]] + Math.min(i, j);
      m.values[s] = values[k];
      bitmaskSet(m.present, s);
    }
  }
  return { ...m, nnz: stats.nnz };
}

/**
 * Convert HM back to canonical CSR (stored entries only, bit-exact). Cost: O(Σ|diagonal| + rows).
 * @example
 * csrEquals(hmToCsr(hmFromCsr(a)), a); // true
 */
export function hmToCsr(m: HmMatrix): CsrMatrix {
  validateHm(m, 'hmToCsr');
  const ri: number[] = [];
  const ci: number[] = [];
  const v: number[] = [];
  for (let d = 0; d < m.numDiagonals; d++) {
    const k = m.offsets[d];
    const s0 = m.starts[d];
    const len = hmDiagonalSize(m, d);
    for (let p = 0; p < len; p++) {
      if (!bitmaskGet(m.present, s0 + p)) continue;
      ri.push(k >= 0 ? p : p - k);
      ci.push(k >= 0 ? p + k : p);
      v.push(m.values[s0 + p]);
    }
  }
  return csrFromTriplets(m.rows, m.cols, ri, ci, v);
}

/**
 * y = A·x in float64, diagonal by diagonal (stride-1 over values and x). Fill slots hold +0.
 * Cost: O(Σ|diagonal|).
 * @example
 * hmSpmv(hmFromCsr(laplacian1d(3)), Float64Array.from([1, 1, 1])); // [1, 0, 1]
 */
export function hmSpmv(m: HmMatrix, x: Float64Array, y?: Float64Array): Float64Array {
  validateHm(m, 'hmSpmv');
  const out = checkSpmvArgs('hmSpmv', m.rows, m.cols, x, y);
  const { values } = m;
  for (let d = 0; d < m.numDiagonals; d++) {
    const k = m.offsets[d];
    const s0 = m.starts[d];
    const len = hmDiagonalSize(m, d);
    // superdiagonal: y_p += v_p·x_{p+k}; subdiagonal: y_{p−k} += v_p·x_p
    if (k >= 0) for (let p = 0; p < len; p++) out[p] += values[s0 + p] * x[p + k];
    else for (let p = 0; p < len; p++) out[p - k] += values[s0 + p] * x[p];
  }
  return out;
}

/**
 * HM storage: Xlist values plus DsX and StartDgX (ndiag indices each); the mask is not counted.
 * β = nnz / Σ|diagonal|. O(1).
 * @example
 * hmStorageBytes(hmFromCsr(laplacian1d(4))).bytes; // 10·8 + 2·3·4 = 104
 */
export function hmStorageBytes(m: HmMatrix, opts: StorageOptions = {}): StorageInfo {
  const vb = opts.valueBytes ?? 8;
  const ib = opts.indexBytes ?? 4;
  const stored = m.values.length;
  return makeStorageInfo(m.nnz, stored, { values: stored * vb, offsets: m.numDiagonals * ib, starts: m.numDiagonals * ib });
}
