/**
 * How far an assembled Hamiltonian is from symmetric: one pass over the CSR, no transpose, so
 * that a matrix of 10^9 non-zeros can be checked without a second copy of it (the assembly
 * computes H(i, j) and H(j, i) independently; they should agree to rounding).
 * @module
 */
import { type CsrMatrix, csrEntry, InvalidMatrixError } from '@gpusparse/formats';

/** An entry and its mirror; `aji` is 0 when (j, i) is not stored. 0-based. */
export interface SymmetryPair {
  row: number;
  col: number;
  aij: number;
  aji: number;
}

/** What {@link csrSymmetryDefect} found. */
export interface SymmetryDefect {
  /** Off-diagonal entries whose mirror is stored (each pair counted once). */
  pairs: number;
  /** Off-diagonal entries whose mirror is not stored (then the pattern is not symmetric). */
  unmatched: number;
  /** The first such entry in row order, if any. */
  firstUnmatched?: SymmetryPair;
  /** max |A(i, j) − A(j, i)| over all off-diagonal entries (an unmatched one counts |A(i, j)|). */
  maxAbsDiff: number;
  /** The pair of that largest difference. */
  worst?: SymmetryPair;
  /** max |A(i, j)| over the stored entries (scale for maxAbsDiff). */
  maxAbs: number;
}

/** Throw unless every row's columns are in range and strictly increasing (what the mirror walk relies on). */
function assertSortedRows(a: CsrMatrix): void {
  const { rowPtr, colIdx } = a;
  for (let i = 0; i < a.rows; i++) {
    let last = -1;
    for (let k = rowPtr[i]!; k < rowPtr[i + 1]!; k++) {
      const j = colIdx[k]!;
      if (j <= last || j >= a.cols) {
        throw new InvalidMatrixError('csrSymmetryDefect', `row ${i}: expected strictly increasing columns in 0..${a.cols - 1}, got ${j} at entry ${k} after ${last}`);
      }
      last = j;
    }
  }
}

/**
 * Compare every off-diagonal A(i, j) with A(j, i). Rows must hold strictly increasing columns
 * (checked first; the assembled Hamiltonians do). Walks the rows in order with one cursor per
 * row pointing at its next lower-triangle entry not yet matched: the mirror of (i, j), j > i, is
 * at row j's cursor when the matrix is symmetric, so each pair costs O(1). Cost: two passes over
 * the column indices, one over the values, 8·rows bytes of cursors.
 * @throws InvalidMatrixError when the matrix is not square or a row is not sorted
 * @example
 * const d = csrSymmetryDefect(h.matrix);
 * d.unmatched === 0 && d.maxAbsDiff <= 1e-12 * d.maxAbs; // symmetric to rounding
 */
export function csrSymmetryDefect(a: CsrMatrix): SymmetryDefect {
  if (a.rows !== a.cols) throw new InvalidMatrixError('csrSymmetryDefect', `expected a square matrix, got ${a.rows}×${a.cols}`);
  assertSortedRows(a);
  const { rowPtr, colIdx, values } = a;
  const next = new Float64Array(a.rows);
  for (let j = 0; j < a.rows; j++) next[j] = rowPtr[j]!;
  const d: SymmetryDefect = { pairs: 0, unmatched: 0, maxAbsDiff: 0, maxAbs: 0 };
  const unmatched = (row: number, col: number, aij: number) => {
    d.unmatched++;
    d.firstUnmatched ??= { row, col, aij, aji: 0 };
    if (Math.abs(aij) > d.maxAbsDiff) [d.maxAbsDiff, d.worst] = [Math.abs(aij), { row, col, aij, aji: 0 }];
  };
  let pairs = 0;
  let maxAbs = 0;
  for (let i = 0; i < a.rows; i++) {
    const end = rowPtr[i + 1]!;
    for (let k = rowPtr[i]!; k < end; k++) {
      const j = colIdx[k]!;
      const v = values[k]!;
      maxAbs = Math.max(maxAbs, Math.abs(v));
      // a lower entry the rows above did not match: its mirror (j, i) is not stored
      if (j < i) {
        if (k >= next[i]!) unmatched(i, j, v);
        continue;
      }
      if (j === i) continue;
      let p = next[j]!;
      const rowEnd = rowPtr[j + 1]!;
      // row j's lower entries left of column i have no mirror (their rows are done): count them now
      while (p < rowEnd && colIdx[p]! < i) {
        unmatched(j, colIdx[p]!, values[p]!);
        p++;
      }
      if (p < rowEnd && colIdx[p] === i) {
        pairs++;
        const diff = Math.abs(v - values[p]!);
        if (diff > d.maxAbsDiff) [d.maxAbsDiff, d.worst] = [diff, { row: i, col: j, aij: v, aji: values[p]! }];
        p++;
      } else unmatched(i, j, v);
      next[j] = p;
    }
  }
  d.pairs = pairs;
  d.maxAbs = maxAbs;
  return d;
}

/** A 32-bit mix of an index and the two words of a float64 (murmur3's finalizer over a seeded combination). */
function mix(seed: number, index: number, lo: number, hi: number): number {
  let h = Math.imul(index ^ seed, 0x9e3779b1) ^ lo;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b) ^ hi;
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) | 0;
}

/** What {@link csrSymmetryFingerprint} found. */
export interface SymmetryFingerprint {
  /** Rows whose (column, value bits) fingerprint differs from their column's (row, value bits) one. */
  mismatchedRows: number;
  /** The first of them (up to `keep`, 0-based). */
  rows: number[];
}

/**
 * Bitwise symmetry in one sequential pass, for matrices too large for {@link csrSymmetryDefect}'s
 * cursor walk (one cache miss per pair: ~25–100 ns per entry at 10^9 entries): for each row i,
 * Σ h(j, bits(A(i, j))) over its entries, and for each column j, Σ h(i, bits(A(i, j))) over its
 * entries, sums mod 2^32 of two independently seeded 32-bit hashes. A(i, j) = A(j, i) bit for bit
 * for every pair (pattern included) makes row j's and column j's sums equal; any difference makes
 * them differ except with probability ~2^-64 per row. Rows need not be sorted. A matrix symmetric
 * only to rounding shows mismatched rows: check those exactly with {@link symmetryOfRows}.
 * Cost: one pass over the entries, 16·rows bytes.
 * @throws InvalidMatrixError when not square
 * @example
 * const f = csrSymmetryFingerprint(h.matrix);
 * if (f.mismatchedRows > 0) console.log(symmetryOfRows(h.matrix, f.rows).maxAbsDiff);
 */
export function csrSymmetryFingerprint(a: CsrMatrix, keep = 16): SymmetryFingerprint {
  if (a.rows !== a.cols) throw new InvalidMatrixError('csrSymmetryFingerprint', `expected a square matrix, got ${a.rows}×${a.cols}`);
  const { rowPtr, colIdx, values } = a;
  // the value's two words through an 8-byte scratch (a word view of the whole array would pass 2^31 elements at 10^9 entries)
  const f64 = new Float64Array(1);
  const u32 = new Uint32Array(f64.buffer);
  const col1 = new Int32Array(a.rows);
  const col2 = new Int32Array(a.rows);
  const out: SymmetryFingerprint = { mismatchedRows: 0, rows: [] };
  const rowSums = new Int32Array(2 * a.rows);
  for (let i = 0; i < a.rows; i++) {
    let r1 = 0;
    let r2 = 0;
    for (let k = rowPtr[i]!; k < rowPtr[i + 1]!; k++) {
      const j = colIdx[k]!;
      f64[0] = values[k]!;
      const lo = u32[0]!;
      const hi = u32[1]!;
      r1 = (r1 + mix(0x1b873593, j, lo, hi)) | 0;
      r2 = (r2 + mix(0x27d4eb2f, j, lo, hi)) | 0;
      col1[j] = (col1[j]! + mix(0x1b873593, i, lo, hi)) | 0;
      col2[j] = (col2[j]! + mix(0x27d4eb2f, i, lo, hi)) | 0;
    }
    rowSums[2 * i] = r1;
    rowSums[2 * i + 1] = r2;
  }
  for (let i = 0; i < a.rows; i++) {
    if (rowSums[2 * i] === col1[i] && rowSums[2 * i + 1] === col2[i]) continue;
    out.mismatchedRows++;
    if (out.rows.length < keep) out.rows.push(i);
  }
  return out;
}

/**
 * {@link csrSymmetryDefect}'s figures restricted to the entries of `rows` (each against its
 * mirror, found by binary search: rows must have sorted columns). For the rows a fingerprint
 * flagged. Cost O(Σ len · log len) over those rows.
 * @example symmetryOfRows(h.matrix, [0, 17]).unmatched; // entries of rows 0 and 17 without a mirror
 */
export function symmetryOfRows(a: CsrMatrix, rows: Iterable<number>): SymmetryDefect {
  const d: SymmetryDefect = { pairs: 0, unmatched: 0, maxAbsDiff: 0, maxAbs: 0 };
  for (const i of rows) {
    for (let k = a.rowPtr[i]!; k < a.rowPtr[i + 1]!; k++) {
      const j = a.colIdx[k]!;
      const v = a.values[k]!;
      d.maxAbs = Math.max(d.maxAbs, Math.abs(v));
      if (j === i) continue;
      const m = csrEntry(a, j, i);
      if (m === undefined) {
        d.unmatched++;
        d.firstUnmatched ??= { row: i, col: j, aij: v, aji: 0 };
      } else d.pairs++;
      const diff = Math.abs(v - (m ?? 0));
      if (diff > d.maxAbsDiff) [d.maxAbsDiff, d.worst] = [diff, { row: i, col: j, aij: v, aji: m ?? 0 }];
    }
  }
  return d;
}
