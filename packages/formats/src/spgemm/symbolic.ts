/**
 * The symbolic phase of C = A·B in diagonal storage (seed 002), from the diagonal offsets alone:
 * C's diagonal set {kA + kB} (HM; CDM: (kA + kB) mod n), and for each diagonal of C the list of
 * (A diagonal, B diagonal) pairs that feed it, in ascending kA. Host work and memory are
 * O(dgA·dgB + dgC log dgC) — never O(n) or O(non-zeros) — so it stays cheap at n = 10^7.
 *
 * HM keeps a pair only when the two diagonals share an inner index j (their index ranges meet),
 * so every C diagonal holds at least one product of in-matrix slots; CDM keeps every pair (all
 * compact diagonals have length n).
 * @module
 */
import { DimensionMismatchError, InvalidParameterError } from '../core/errors';
import { diagonalLength } from '../dia/stats';

/** What the symbolic phase needs of an operand: format, shape and its diagonal offsets. */
export interface DiagonalStructure {
  readonly format: 'hm' | 'cdm';
  readonly rows: number;
  readonly cols: number;
  /** HM: j − i; CDM: compact indices in [0, n). Any order; index d names diagonal d. */
  readonly offsets: ArrayLike<number>;
}

/** C's structure and the pair lists, grouped by C diagonal. */
export interface SymbolicProduct {
  readonly format: 'hm' | 'cdm';
  readonly rows: number;
  readonly inner: number;
  readonly cols: number;
  /** C's offsets in storage order (HM order, or ascending compact indices). */
  readonly offsets: Int32Array;
  /** C's diagonal lengths. */
  readonly lengths: Int32Array;
  /** Pairs of C diagonal dc are pairA/pairB[pairStart[dc] … pairStart[dc + 1]), ascending kA. */
  readonly pairStart: Int32Array;
  /** Index of the A diagonal of each pair (into A's offsets). */
  readonly pairA: Int32Array;
  /** Index of the B diagonal of each pair. */
  readonly pairB: Int32Array;
  /** Multiply–adds of the numeric phase (fill included): Σ over pairs of the shared index range. */
  readonly multiplyAdds: number;
}

/** Columns j that diagonal k of a rows × cols matrix reaches: [lo, hi). O(1). */
const colSpan = (k: number, rows: number, cols: number): [number, number] => [Math.max(0, k), Math.min(cols, rows + k)];

/** Shared inner indices of A diagonal kA and B diagonal kB (HM): count, 0 when they miss. O(1). */
function overlap(kA: number, kB: number, m: number, inner: number, n: number): number {
  const [aLo, aHi] = colSpan(kA, m, inner); // columns of A = rows of B
  const bLo = Math.max(0, -kB);
  const bHi = Math.min(inner, n - kB);
  return Math.max(0, Math.min(aHi, bHi) - Math.max(aLo, bLo));
}

/**
 * The symbolic product of A and B (same format). Throws DimensionMismatchError when the inner
 * dimensions (CDM: the orders) differ, InvalidParameterError when C would have more than
 * `maxDiagonals` diagonals. Cost: O(dgA·dgB + dgC log dgC) host work.
 * @example spgemmSymbolic({ format: 'hm', rows: 6, cols: 6, offsets: [0, 1, -1] }, same).offsets // [0, 1, 2, -1, -2]
 */
export function spgemmSymbolic(a: DiagonalStructure, b: DiagonalStructure, maxDiagonals = 1 << 20): SymbolicProduct {
  if (a.format !== b.format) throw new InvalidParameterError('B format', `'${a.format}' (the format of A)`, b.format);
  if (a.cols !== b.rows) throw new DimensionMismatchError('spgemm: rows of B (= columns of A)', a.cols, b.rows);
  const cdm = a.format === 'cdm';
  const [m, inner, n] = [a.rows, a.cols, b.cols];
  const na = a.offsets.length;
  const nb = b.offsets.length;
  // A's diagonals by ascending offset: the summation order of every C entry
  const orderA = new Int32Array(na);
  for (let u = 0; u < na; u++) orderA[u] = u;
  orderA.sort((p, q) => a.offsets[p]! - a.offsets[q]!);
  // storage rank of a C offset: HM order 0, 1, …, n − 1, then −1, −2, … ; CDM ascending
  const rank = (k: number): number => (cdm || k >= 0 ? k : n - k);
  // ranks reach rows + cols: int32 when that fits (its sort is twice as fast), else float64
  const keys = m + n < 2 ** 31 ? new Int32Array(na * nb) : new Float64Array(na * nb);
  const pa = new Int32Array(na * nb);
  const pb = new Int32Array(na * nb);
  let np = 0;
  let multiplyAdds = 0;
  for (const u of orderA) {
    const kA = a.offsets[u]!;
    for (let v = 0; v < nb; v++) {
      const kB = b.offsets[v]!;
      const len = cdm ? m : overlap(kA, kB, m, inner, n);
      if (len === 0) continue;
      keys[np] = rank(cdm ? (kA + kB) % m : kA + kB);
      pa[np] = u;
      pb[np++] = v;
      multiplyAdds += len;
    }
  }
  const ranks = keys.slice(0, np).sort();
  let dgC = 0;
  for (let t = 0; t < np; t++) if (t === 0 || ranks[t] !== ranks[t - 1]) ranks[dgC++] = ranks[t]!;
  const distinct = ranks.subarray(0, dgC);
  if (dgC > maxDiagonals) throw new InvalidParameterError('maxDiagonals', `at least ${dgC} (C = A·B has ${dgC} diagonals)`, maxDiagonals);
  // counting sort of the pairs by C diagonal (stable: ascending kA kept); index by binary search
  const where = new Int32Array(np);
  const pairStart = new Int32Array(dgC + 1);
  for (let t = 0; t < np; t++) {
    const d = lowerBound(distinct, keys[t]!);
    where[t] = d;
    pairStart[d + 1]!++;
  }
  for (let d = 0; d < dgC; d++) pairStart[d + 1]! += pairStart[d]!;
  const fillAt = pairStart.slice(0, dgC);
  const pairA = new Int32Array(np);
  const pairB = new Int32Array(np);
  for (let t = 0; t < np; t++) {
    const at = fillAt[where[t]!]!++;
    pairA[at] = pa[t]!;
    pairB[at] = pb[t]!;
  }
  // plain loops: TypedArray.from with a map function is ~15x slower in V8
  const offsets = new Int32Array(dgC);
  const lengths = new Int32Array(dgC);
  for (let d = 0; d < dgC; d++) {
    const r = distinct[d]!;
    offsets[d] = r < n || cdm ? r : n - r;
    lengths[d] = cdm ? m : diagonalLength(m, n, offsets[d]!);
  }
  return { format: a.format, rows: m, inner, cols: n, offsets, lengths, pairStart, pairA, pairB, multiplyAdds };
}

/** First index of `sorted` holding a value ≥ x. O(log length). */
function lowerBound(sorted: Int32Array | Float64Array, x: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
