/**
 * CDM compact diagonal storage, seed 002 §3.2 and §6.1 (diagonal-storage-spgemm.md).
 *
 * For an n×n matrix the k-th compact diagonal (0 ≤ k < n) stacks the k-th superdiagonal on top of
 * the (n − k)-th subdiagonal: A_k = (Ā_k ; A̲_{n−k}), a vector of length n whose element t is
 * a(t, (t + k) mod n). A_0 is the principal diagonal. Only occupied compact diagonals are stored,
 * as rows of a dgX × n array (`values[d·n + t]`, the paper's Xlist of length dgX·n), with their
 * indices k ascending in `offsets` (the paper's DsX). Entry (i, j) is at values[d·n + i] with
 * k = (j − i) mod n. Slots of a stored compact diagonal that hold no CSR entry are fill (+0); the
 * host-only bit mask `present` tells them from explicit zeros.
 *
 * CDM is defined for square matrices only; fromCsr throws InvalidMatrixError otherwise.
 * Storage: dgX·n·sizeof(value) + dgX·sizeof(index).
 * @module
 */
import { InvalidMatrixError } from '../core/errors';
import type { CsrMatrix, SparseMatrix, StorageInfo, StorageOptions } from '../core/types';
import { makeStorageInfo } from '../core/types';
import { checkDiagonalOffsets, checkNnz, checkPresentMask, requireShape, requireTyped } from '../core/validate';
import { csrFromTriplets, validateCsr } from '../csr/csr';
import { bitmaskCreate, bitmaskGet, bitmaskSet, checkSpmvArgs, requireInt } from '../dia/common';
import { checkDiagonalCount } from '../dia/dia';

/** A square matrix in CDM compact diagonal storage (seed 002 §3.2). */
export interface CdmMatrix extends SparseMatrix {
  readonly format: 'cdm';
  /** dgX: number of stored compact diagonals. */
  readonly numDiagonals: number;
  /** DsX: compact diagonal indices k ∈ [0, n), ascending. */
  readonly offsets: Int32Array;
  /** Xlist: values[d·n + t] = a(t, (t + offsets[d]) mod n); length numDiagonals·n. */
  readonly values: Float64Array;
  /** Host-only bit mask over values: set where the slot holds a stored CSR entry. */
  readonly present: Uint32Array;
}

/** CDM parameters. */
export interface CdmParams {
  /** Refuse (InvalidParameterError) when more compact diagonals are occupied. Default 1024. */
  readonly maxDiagonals: number;
}

/** Default CDM parameters. */
export const cdmDefaultParams: CdmParams = { maxDiagonals: 1024 };

/**
 * Assemble a CDM matrix of order n for the given compact diagonal indices (any order, each once,
 * in [0, n); stored ascending), all slots zero and absent. Throws InvalidMatrixError naming a bad
 * or repeated index. Cost: O(dgX·n).
 * @example
 * const c = cdmAllocate(4, [0, 1, 3]); // c.values.length === 12
 */
export function cdmAllocate(n: number, compactIndices: ArrayLike<number>): CdmMatrix {
  requireShape('cdmAllocate', 'CDM', n, n);
  for (let d = 0; d < compactIndices.length; d++) {
    const k = compactIndices[d];
    if (!(Number.isInteger(k) && k >= 0 && k < n)) throw new InvalidMatrixError('cdmAllocate', `compact diagonal index [${d}] = ${k}: expected an integer in [0, ${n})`);
  }
  const offsets = Int32Array.from(compactIndices).sort();
  for (let d = 1; d < offsets.length; d++) {
    if (offsets[d] === offsets[d - 1]) throw new InvalidMatrixError('cdmAllocate', `compact diagonal index ${offsets[d]} given twice: expected each once`);
  }
  const slots = offsets.length * n;
  return { format: 'cdm', rows: n, cols: n, nnz: 0, numDiagonals: offsets.length, offsets, values: new Float64Array(slots), present: bitmaskCreate(slots) };
}

/**
 * Dense lookup from compact index k ∈ [0, n) to the stored row d, or −1. Cost: O(n).
 * @example
 * const lk = cdmDiagonalLookup(m); const d = lk[(j - i + n) % n];
 */
export function cdmDiagonalLookup(m: CdmMatrix): Int32Array {
  const lookup = new Int32Array(m.rows).fill(-1);
  for (let d = 0; d < m.numDiagonals; d++) lookup[m.offsets[d]] = d;
  return lookup;
}

/**
 * Check a CDM matrix given as arrays: square integer shape; numDiagonals = offsets.length;
 * offsets (Int32Array) compact indices in [0, n), strictly ascending (no duplicates); values a
 * Float64Array of numDiagonals·n slots; a presence mask covering them; nnz in [0, slots]. O(ndiag).
 * Throws InvalidMatrixError naming the first bad index.
 * @example
 * validateCdm(cdmFromCsr(a)); // passes
 */
export function validateCdm(m: CdmMatrix, where = 'CDM'): void {
  requireShape(where, 'CDM', m.rows, m.cols);
  if (m.rows !== m.cols) throw new InvalidMatrixError(where, `CDM shape ${m.rows}x${m.cols}: expected a square matrix`);
  requireTyped(where, 'CDM offsets', m.offsets, 'Int32Array');
  requireTyped(where, 'CDM values', m.values, 'Float64Array');
  const n = m.rows;
  const nd = m.offsets.length;
  if (m.numDiagonals !== nd) throw new InvalidMatrixError(where, `CDM numDiagonals = ${m.numDiagonals} but offsets has ${nd}: expected them equal`);
  for (let d = 0; d < nd; d++) {
    const k = m.offsets[d];
    if (!(k >= 0 && k < n)) throw new InvalidMatrixError(where, `CDM offsets[${d}] = ${k}: expected a compact diagonal index in [0, ${n})`);
  }
  // range checked above (a 1×n shape makes [0, n) the valid range); this checks the order
  checkDiagonalOffsets(where, 'CDM', m.offsets, 1, n, (k) => k, 'ascending in [0, n)');
  if (m.values.length !== nd * n) throw new InvalidMatrixError(where, `CDM values has ${m.values.length} slots: expected numDiagonals·n = ${nd}·${n} = ${nd * n}`);
  checkPresentMask(where, 'CDM', m.present, nd * n);
  checkNnz(where, 'CDM', m.nnz, nd * n);
}

/**
 * Convert canonical CSR (square) to CDM. Cost: O(nnz + dgX·n).
 * Throws InvalidMatrixError for a non-square matrix and InvalidParameterError when the occupied
 * compact diagonals exceed `maxDiagonals`.
 * @example
 * const c = cdmFromCsr(laplacian1d(4)); // offsets [0, 1, 3]: super 1 and sub 1 (= compact 3)
 */
export function cdmFromCsr(a: CsrMatrix, params: Partial<CdmParams> = {}): CdmMatrix {
  validateCsr(a, 'cdmFromCsr');
  const maxDiagonals = requireInt('maxDiagonals', params.maxDiagonals ?? cdmDefaultParams.maxDiagonals, 0);
  const { rows: n, cols, rowPtr, colIdx, values } = a;
  if (cols !== n) throw new InvalidMatrixError('cdmFromCsr', `compact diagonal storage needs a square matrix, got ${n}x${cols}`);
  const used = new Uint8Array(n);
  for (let i = 0; i < n; i++) for (let k = rowPtr[i]; k < rowPtr[i + 1]; k++) used[(colIdx[k] - i + n) % n] = 1;
  let count = 0;
  for (let k = 0; k < n; k++) count += used[k];
  checkDiagonalCount('cdm', count, maxDiagonals, count * n);
  const ks: number[] = [];
  for (let k = 0; k < n; k++) if (used[k]) ks.push(k);
  const m = cdmAllocate(n, ks);
  const lookup = cdmDiagonalLookup(m);
  for (let i = 0; i < n; i++) {
    for (let k = rowPtr[i]; k < rowPtr[i + 1]; k++) {
      const s = lookup[(colIdx[k] - i + n) % n] * n + i;
      m.values[s] = values[k];
      bitmaskSet(m.present, s);
    }
  }
  return { ...m, nnz: rowPtr[n] };
}

/**
 * Convert CDM back to canonical CSR (stored entries only, bit-exact). Cost: O(dgX·n + nnz).
 * @example
 * csrEquals(cdmToCsr(cdmFromCsr(a)), a); // true
 */
export function cdmToCsr(m: CdmMatrix): CsrMatrix {
  validateCdm(m, 'cdmToCsr');
  const n = m.rows;
  const ri: number[] = [];
  const ci: number[] = [];
  const v: number[] = [];
  for (let d = 0; d < m.numDiagonals; d++) {
    const k = m.offsets[d];
    for (let t = 0; t < n; t++) {
      const s = d * n + t;
      if (!bitmaskGet(m.present, s)) continue;
      ri.push(t);
      ci.push((t + k) % n);
      v.push(m.values[s]);
    }
  }
  return csrFromTriplets(n, n, ri, ci, v);
}

/**
 * y = A·x in float64 by compact diagonals: y_t += A_k[t]·x_{(t+k) mod n}, split at t = n − k so
 * that no modulo is taken. Cost: O(dgX·n).
 * @example
 * cdmSpmv(cdmFromCsr(laplacian1d(3)), Float64Array.from([1, 1, 1])); // [1, 0, 1]
 */
export function cdmSpmv(m: CdmMatrix, x: Float64Array, y?: Float64Array): Float64Array {
  validateCdm(m, 'cdmSpmv');
  const n = m.rows;
  const out = checkSpmvArgs('cdmSpmv', n, n, x, y);
  const { values } = m;
  for (let d = 0; d < m.numDiagonals; d++) {
    const k = m.offsets[d];
    const base = d * n;
    // superdiagonal part: y_t += A_k[t]·x_{t+k} for t < n − k
    for (let t = 0; t < n - k; t++) out[t] += values[base + t] * x[t + k];
    // subdiagonal part (wrapped): y_t += A_k[t]·x_{t+k−n} for t ≥ n − k
    for (let t = n - k; t < n; t++) out[t] += values[base + t] * x[t + k - n];
  }
  return out;
}

/**
 * CDM storage: dgX·n values plus dgX indices (the mask is not counted). β = nnz / (dgX·n). O(1).
 * @example
 * cdmStorageBytes(cdmFromCsr(laplacian1d(4))).bytes; // 12·8 + 3·4 = 108
 */
export function cdmStorageBytes(m: CdmMatrix, opts: StorageOptions = {}): StorageInfo {
  const vb = opts.valueBytes ?? 8;
  const ib = opts.indexBytes ?? 4;
  const stored = m.values.length;
  return makeStorageInfo(m.nnz, stored, { values: stored * vb, offsets: m.numDiagonals * ib });
}
