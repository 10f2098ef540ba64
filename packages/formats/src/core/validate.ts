/**
 * Validation of matrices given as raw arrays (CSR, CSC, COO, diagonal offsets), shared by every
 * constructor, conversion and product that takes them. Every check is O(n + nnz) and throws
 * {@link InvalidMatrixError} naming the first bad index, what it holds and what was expected.
 *
 * A matrix object that passed a check is remembered (a WeakMap keyed by the object, holding its
 * shape and array references), so that the next function that receives the same object pays
 * O(1): a product called a thousand times validates once. Callers who validated already (or built
 * the arrays by construction) vouch for a matrix with `{ unchecked: true }` on the constructor,
 * which records it without looking. Editing an array in place after the first check is not seen
 * (build a new object instead) — the same rule as the wasm copy of `csrSpmvFast`.
 * @module
 */
import { InvalidMatrixError } from './errors';

/** Option of every constructor and factory that takes raw arrays. */
export interface CheckOptions {
  /**
   * Skip the O(n + nnz) checks: the caller vouches that the arrays are valid (validated already,
   * or valid by construction). Invalid arrays passed this way give undefined results.
   */
  readonly unchecked?: boolean;
}

/** Largest dimension or index a matrix may hold: indices are Int32Array. */
export const MAX_INDEX = 2 ** 31 - 1;

/** How much a check established: structure only, or structure plus sorted unique minor indices. */
export const STRUCTURE = 1;
/** Structure plus columns (CSR) / rows (CSC) sorted and unique within each row (column). */
export const CANONICAL = 2;

interface Stamp {
  readonly refs: readonly unknown[];
  readonly level: number;
}

const stamps = new WeakMap<object, Stamp>();

/**
 * True when `m` was checked (or vouched for) at `level` or higher with exactly these fields
 * (shape numbers and array references). O(fields).
 */
export function isVouched(m: object, refs: readonly unknown[], level: number): boolean {
  const s = stamps.get(m);
  if (s === undefined || s.level < level || s.refs.length !== refs.length) return false;
  for (let i = 0; i < refs.length; i++) if (s.refs[i] !== refs[i]) return false;
  return true;
}

/**
 * {@link isVouched} for a CSR matrix with the fields of {@link csrFields}, without allocating:
 * products call it on every apply. O(1).
 */
export function isVouchedCsr(a: { rows: number; cols: number; rowPtr: unknown; colIdx: unknown; values: unknown }, level: number): boolean {
  const s = stamps.get(a);
  if (s === undefined || s.level < level) return false;
  const r = s.refs;
  return r.length === 5 && r[0] === a.rows && r[1] === a.cols && r[2] === a.rowPtr && r[3] === a.colIdx && r[4] === a.values;
}

/** Record that `m` with these fields is valid at `level` (see {@link isVouched}). O(1). */
export function vouch<T extends object>(m: T, refs: readonly unknown[], level: number): T {
  stamps.set(m, { refs, level });
  return m;
}

/** The fields a CSR validation covers: shape and array references (see {@link isVouched}). */
export function csrFields(a: { rows: number; cols: number; rowPtr: unknown; colIdx: unknown; values: unknown }): unknown[] {
  return [a.rows, a.cols, a.rowPtr, a.colIdx, a.values];
}

/** The type name of a value, for messages ("Array", "Float32Array", "undefined"). */
function typeName(x: unknown): string {
  if (x === null || x === undefined) return String(x);
  const tag = (x as { [Symbol.toStringTag]?: string })[Symbol.toStringTag];
  return tag ?? (x as object).constructor?.name ?? typeof x;
}

/**
 * Require a typed array of the given kind (checked by its tag, so arrays from another realm, e.g.
 * a worker, pass too). Throws InvalidMatrixError naming the array. O(1).
 * @example
 * requireTyped('csrSpmv', 'CSR colIdx', a.colIdx, 'Int32Array');
 */
export function requireTyped(where: string, name: string, x: unknown, kind: 'Int32Array' | 'Float64Array' | 'Uint32Array'): void {
  if (!ArrayBuffer.isView(x) || typeName(x) !== kind) {
    throw new InvalidMatrixError(where, `${name}: expected an ${kind}, got ${typeName(x)}`);
  }
}

/**
 * Require rows × cols to be integer dimensions in [0, 2^31 − 1]. O(1).
 * @example
 * requireShape('csr()', 'CSR', 3, 4);
 */
export function requireShape(where: string, label: string, rows: unknown, cols: unknown): void {
  const ok = (v: unknown) => typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= MAX_INDEX;
  if (!ok(rows) || !ok(cols)) {
    throw new InvalidMatrixError(where, `${label} shape ${String(rows)}x${String(cols)}: expected integer dimensions in [0, ${MAX_INDEX}]`);
  }
}

/**
 * Convert an index array to Int32Array, refusing (rather than truncating or wrapping) any entry
 * that is not an integer in [0, 2^31 − 1]. An Int32Array is returned as is. O(n).
 * @example
 * toIndexArray('csr()', 'CSR colIdx', [0, 2, 1.5]); // throws: CSR colIdx[2] = 1.5: expected an integer index
 */
export function toIndexArray(where: string, name: string, a: ArrayLike<number>): Int32Array {
  if (a instanceof Int32Array) return a;
  if (a === null || typeof a !== 'object' || typeof a.length !== 'number') {
    throw new InvalidMatrixError(where, `${name}: expected an array of indices, got ${typeName(a)}`);
  }
  const out = new Int32Array(a.length);
  for (let k = 0; k < a.length; k++) {
    const v = a[k]!;
    if (!(typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= MAX_INDEX)) {
      throw new InvalidMatrixError(where, `${name}[${k}] = ${String(v)}: expected an integer index in [0, ${MAX_INDEX}]`);
    }
    out[k] = v;
  }
  return out;
}

/** Convert values to Float64Array (a Float64Array is returned as is). O(n). */
export function toValueArray(where: string, name: string, a: ArrayLike<number>): Float64Array {
  if (a instanceof Float64Array) return a;
  if (a === null || typeof a !== 'object' || typeof a.length !== 'number') {
    throw new InvalidMatrixError(where, `${name}: expected an array of numbers, got ${typeName(a)}`);
  }
  return Float64Array.from(a);
}

/** The arrays of a compressed format (CSR, or CSC read as the CSR of the transpose). */
export interface Compressed {
  /** 'CSR' or 'CSC', for messages. */
  readonly label: string;
  /** Names of the pointer and index arrays ('rowPtr', 'colIdx'), and what a major/minor index is. */
  readonly ptrName: string;
  readonly idxName: string;
  readonly major: 'row' | 'column';
  readonly minor: 'row' | 'column';
  readonly majorCount: number;
  readonly minorCount: number;
  readonly ptr: unknown;
  readonly idx: unknown;
  readonly values: unknown;
}

/**
 * Check a compressed structure: typed arrays, ptr of length majors + 1 starting at 0 and never
 * decreasing, ptr[majors] = idx.length = values.length, every minor index in [0, minors) and,
 * at {@link CANONICAL}, strictly increasing within a major. O(majors + nnz).
 */
export function checkCompressed(where: string, c: Compressed, level: number): void {
  const { label, ptrName: pn, idxName: xn, majorCount: n } = c;
  requireTyped(where, `${label} ${pn}`, c.ptr, 'Int32Array');
  requireTyped(where, `${label} ${xn}`, c.idx, 'Int32Array');
  requireTyped(where, `${label} values`, c.values, 'Float64Array');
  const ptr = c.ptr as Int32Array;
  const idx = c.idx as Int32Array;
  const values = c.values as Float64Array;
  if (ptr.length !== n + 1) {
    throw new InvalidMatrixError(where, `${label} ${pn} has length ${ptr.length}: expected ${c.major}s + 1 = ${n + 1}`);
  }
  if (ptr[0] !== 0) throw new InvalidMatrixError(where, `${label} ${pn}[0] = ${ptr[0]}: expected 0`);
  for (let i = 0; i < n; i++) {
    if (ptr[i + 1]! < ptr[i]!) {
      throw new InvalidMatrixError(where, `${label} ${pn}[${i + 1}] = ${ptr[i + 1]} < ${pn}[${i}] = ${ptr[i]}: ${c.major} pointers must not decrease`);
    }
  }
  const nnz = ptr[n]!;
  if (idx.length !== nnz || values.length !== nnz) {
    throw new InvalidMatrixError(
      where,
      `${label} ${pn}[${n}] = ${nnz} but ${xn} has ${idx.length} entries and values ${values.length}: expected ${pn}[${c.major}s] = ${xn}.length = values.length`,
    );
  }
  checkMinorIndices(where, c, ptr, idx, level === CANONICAL);
}

/** The per-entry pass of {@link checkCompressed}: range, and order when `sorted`. O(majors + nnz). */
function checkMinorIndices(where: string, c: Compressed, ptr: Int32Array, idx: Int32Array, sorted: boolean): void {
  const m = c.minorCount;
  const n = c.majorCount;
  for (let i = 0; i < n; i++) {
    const e = ptr[i + 1]!;
    let prev = -1;
    for (let k = ptr[i]!; k < e; k++) {
      const j = idx[k]!;
      if (j < 0 || j >= m) {
        throw new InvalidMatrixError(where, `${c.label} ${c.idxName}[${k}] = ${j} in ${c.major} ${i}: expected a ${c.minor} in [0, ${m})`);
      }
      if (sorted && j <= prev) {
        const what = j === prev ? 'duplicate' : 'not sorted';
        throw new InvalidMatrixError(
          where,
          `${c.label} ${c.idxName}[${k}] = ${j} in ${c.major} ${i} after ${c.minor} ${prev}: ${c.minor}s must be sorted and unique within a ${c.major} (${what}; csrFromTriplets sorts and sums duplicates)`,
        );
      }
      prev = j;
    }
  }
}

/**
 * Check coordinate triplets: typed arrays of length nnz each, rows in [0, rows), columns in
 * [0, cols). Order and duplicates are free (products and conversions sum duplicates). O(nnz).
 */
export function checkTriplets(
  where: string,
  m: { rows: number; cols: number; nnz: number; rowIdx: unknown; colIdx: unknown; values: unknown },
): void {
  requireShape(where, 'COO', m.rows, m.cols);
  requireTyped(where, 'COO rowIdx', m.rowIdx, 'Int32Array');
  requireTyped(where, 'COO colIdx', m.colIdx, 'Int32Array');
  requireTyped(where, 'COO values', m.values, 'Float64Array');
  const ri = m.rowIdx as Int32Array;
  const ci = m.colIdx as Int32Array;
  const v = m.values as Float64Array;
  if (!Number.isInteger(m.nnz) || ri.length !== m.nnz || ci.length !== m.nnz || v.length !== m.nnz) {
    throw new InvalidMatrixError(where, `COO nnz = ${m.nnz} but rowIdx, colIdx and values have ${ri.length}, ${ci.length}, ${v.length} entries: expected all equal to nnz`);
  }
  for (let k = 0; k < m.nnz; k++) {
    const r = ri[k]!;
    const c = ci[k]!;
    if (r < 0 || r >= m.rows) throw new InvalidMatrixError(where, `COO rowIdx[${k}] = ${r}: expected a row in [0, ${m.rows})`);
    if (c < 0 || c >= m.cols) throw new InvalidMatrixError(where, `COO colIdx[${k}] = ${c} in row ${r}: expected a column in [0, ${m.cols})`);
  }
}

/**
 * Check that every diagonal offset (j − i) is an integer in [−(rows − 1), cols − 1], i.e. names
 * a diagonal that lies inside the rows × cols matrix. O(ndiag).
 * @example
 * checkOffsetRange('hmAllocate', 'HM', [0, 1, 1000], 4, 4); // throws: HM offsets[2] = 1000: ...
 */
export function checkOffsetRange(where: string, label: string, offsets: ArrayLike<number>, rows: number, cols: number): void {
  const lo = -(rows - 1);
  const hi = cols - 1;
  for (let d = 0; d < offsets.length; d++) {
    const k = offsets[d]!;
    if (!(Number.isInteger(k) && k >= lo && k <= hi)) {
      const range = rows > 0 && cols > 0 ? `[${lo}, ${hi}]` : 'none (the matrix is empty)';
      throw new InvalidMatrixError(where, `${label} offsets[${d}] = ${k}: expected a diagonal offset inside the ${rows}x${cols} matrix, in ${range}`);
    }
  }
}

/**
 * Check stored diagonal offsets: each inside the matrix ({@link checkOffsetRange}), each at most
 * once, in the order the format stores them (`rank` strictly increasing). O(ndiag).
 * @example
 * checkDiagonalOffsets('diaSpmv', 'DIA', m.offsets, m.rows, m.cols, (k) => k, 'ascending');
 */
export function checkDiagonalOffsets(
  where: string,
  label: string,
  offsets: ArrayLike<number>,
  rows: number,
  cols: number,
  rank: (k: number) => number,
  order: string,
): void {
  checkOffsetRange(where, label, offsets, rows, cols);
  for (let d = 1; d < offsets.length; d++) {
    const k = offsets[d]!;
    const p = offsets[d - 1]!;
    if (rank(k) <= rank(p)) {
      const what = k === p ? 'duplicate offset' : 'out of order';
      throw new InvalidMatrixError(where, `${label} offsets[${d}] = ${k} after offsets[${d - 1}] = ${p}: ${what}; expected each diagonal once, ${order}`);
    }
  }
}

/**
 * Check the stored-entry count of a padded format: an integer in [0, slots]. O(1).
 */
export function checkNnz(where: string, label: string, nnz: unknown, slots: number): void {
  if (!(typeof nnz === 'number' && Number.isInteger(nnz) && nnz >= 0 && nnz <= slots)) {
    throw new InvalidMatrixError(where, `${label} nnz = ${String(nnz)}: expected an integer in [0, ${slots}] (the slots stored)`);
  }
}

/**
 * Check a host-only presence mask over `slots` value slots (at least ⌈slots / 32⌉ words). O(1).
 */
export function checkPresentMask(where: string, label: string, present: unknown, slots: number): void {
  requireTyped(where, `${label} present`, present, 'Uint32Array');
  const need = Math.ceil(slots / 32);
  if ((present as Uint32Array).length < need) {
    throw new InvalidMatrixError(where, `${label} present has ${(present as Uint32Array).length} words: expected ⌈${slots} slots / 32⌉ = ${need}`);
  }
}
