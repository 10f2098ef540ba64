/**
 * The symbolic phase of C = A·B in diagonal storage (seed 002), from the diagonal offsets alone:
 * C's diagonal set {kA + kB} (HM; CDM: (kA + kB) mod n), and for each diagonal of C the list of
 * (A diagonal, B diagonal) pairs that feed it, in ascending kA. Host work and memory are
 * O(dgA·dgB log(dgA·dgB)) — never O(n) or O(non-zeros) — so it stays cheap at n = 10^7.
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

/**
 * The symbolic product of A and B (same format). Throws DimensionMismatchError when the inner
 * dimensions (CDM: the orders) differ, InvalidParameterError when C would have more than
 * `maxDiagonals` diagonals. Cost: O(dgA·dgB log(dgA·dgB)) host work in one native sort and
 * plain typed-array loops (no per-pair allocation or closure: small products plan in µs).
 * @example spgemmSymbolic({ format: 'hm', rows: 6, cols: 6, offsets: [0, 1, -1] }, same).offsets // [0, 1, 2, -1, -2]
 */
export function spgemmSymbolic(a: DiagonalStructure, b: DiagonalStructure, maxDiagonals = 1 << 20): SymbolicProduct {
  if (a.format !== b.format) throw new InvalidParameterError('B format', `'${a.format}' (the format of A)`, b.format);
  if (a.cols !== b.rows) throw new DimensionMismatchError('spgemm: rows of B (= columns of A)', a.cols, b.rows);
  const { np, ranks, pa, pb, multiplyAdds } = enumeratePairs(a, b);
  const m = a.rows;
  const n = b.cols;
  // ranks reach rows + cols; rank·np + t is exact in float64 below 2^53 (always, unless n·pairs is astronomical)
  const g = (m + n + 1) * Math.max(1, np) < 2 ** 53 ? groupByCompositeKey(ranks, np, pa, pb) : groupByCounting(ranks, np, pa, pb);
  const dgC = g.distinct.length;
  if (dgC > maxDiagonals) throw new InvalidParameterError('maxDiagonals', `at least ${dgC} (C = A·B has ${dgC} diagonals)`, maxDiagonals);
  const cdm = a.format === 'cdm';
  const offsets = new Int32Array(dgC);
  const lengths = new Int32Array(dgC);
  for (let d = 0; d < dgC; d++) {
    const r = g.distinct[d]!;
    offsets[d] = r < n || cdm ? r : n - r;
    lengths[d] = cdm ? m : diagonalLength(m, n, offsets[d]!);
  }
  return { format: a.format, rows: m, inner: a.cols, cols: n, offsets, lengths, pairStart: g.pairStart, pairA: g.pairA, pairB: g.pairB, multiplyAdds };
}

/** Pairs in emission order (ascending kA, then B's order): C storage rank, A and B index. */
interface PairList {
  readonly np: number;
  /** Storage rank of each pair's C diagonal: HM k ≥ 0 → k, k < 0 → cols − k; CDM the compact index. */
  readonly ranks: Float64Array;
  readonly pa: Int32Array;
  readonly pb: Int32Array;
  readonly multiplyAdds: number;
}

/**
 * Every (A diagonal, B diagonal) pair that contributes (HM: their inner index ranges meet; CDM:
 * all), A's diagonals taken by ascending offset — the summation order of every C entry. O(dgA·dgB).
 */
function enumeratePairs(a: DiagonalStructure, b: DiagonalStructure): PairList {
  const cdm = a.format === 'cdm';
  const [m, inner, n] = [a.rows, a.cols, b.cols];
  const na = a.offsets.length;
  const nb = b.offsets.length;
  const offA = Float64Array.from(a.offsets);
  const offB = Float64Array.from(b.offsets);
  const orderA = ascendingOrder(offA);
  const ranks = new Float64Array(na * nb);
  const pa = new Int32Array(na * nb);
  const pb = new Int32Array(na * nb);
  let np = 0;
  let multiplyAdds = 0;
  for (let q = 0; q < na; q++) {
    const u = orderA[q]!;
    const kA = offA[u]!;
    // HM: columns of A's diagonal kA = rows of B it meets: [max(0, kA), min(inner, m + kA))
    const aLo = Math.max(kA, 0);
    const aHi = Math.min(inner, m + kA);
    for (let v = 0; v < nb; v++) {
      const kB = offB[v]!;
      let len = m;
      let r: number;
      if (cdm) r = (kA + kB) % m;
      else {
        // rows j of B's diagonal kB: [max(0, −kB), min(inner, n − kB)); shared j with A's range
        len = Math.min(aHi, Math.min(inner, n - kB)) - Math.max(aLo, kB < 0 ? -kB : 0);
        if (len <= 0) continue;
        const k = kA + kB;
        r = k >= 0 ? k : n - k;
      }
      ranks[np] = r;
      pa[np] = u;
      pb[np++] = v;
      multiplyAdds += len;
    }
  }
  return { np, ranks, pa, pb, multiplyAdds };
}

/** Indices 0 … length−1 by ascending value (offsets are distinct). One native sort of rank·len + index. */
function ascendingOrder(values: Float64Array): Int32Array {
  let lo = 0;
  for (let u = 0; u < values.length; u++) lo = Math.min(lo, values[u]!);
  const len = values.length;
  const keys = new Float64Array(len);
  for (let u = 0; u < len; u++) keys[u] = (values[u]! - lo) * len + u;
  keys.sort();
  const order = new Int32Array(len);
  for (let q = 0; q < len; q++) order[q] = keys[q]! % len;
  return order;
}

/** C's distinct ranks ascending and the pairs grouped by them, emission order kept inside a group. */
interface Grouped {
  readonly distinct: Float64Array;
  readonly pairStart: Int32Array;
  readonly pairA: Int32Array;
  readonly pairB: Int32Array;
}

/**
 * Group by one native sort of the composite key rank·np + t (t = emission index: the sort is
 * stable by construction), then one pass. Needs (max rank + 1)·np < 2^53. O(np log np).
 */
export function groupByCompositeKey(ranks: Float64Array, np: number, pa: Int32Array, pb: Int32Array): Grouped {
  const keys = new Float64Array(np);
  for (let t = 0; t < np; t++) keys[t] = ranks[t]! * np + t;
  keys.sort();
  const pairA = new Int32Array(np);
  const pairB = new Int32Array(np);
  const distinct = new Float64Array(np);
  const starts = new Int32Array(np + 1);
  let dgC = 0;
  let prev = -1;
  for (let s = 0; s < np; s++) {
    const key = keys[s]!;
    const t = key % np;
    const r = (key - t) / np;
    if (r !== prev) {
      starts[dgC] = s;
      distinct[dgC++] = r;
      prev = r;
    }
    pairA[s] = pa[t]!;
    pairB[s] = pb[t]!;
  }
  starts[dgC] = np;
  return { distinct: distinct.slice(0, dgC), pairStart: starts.slice(0, dgC + 1), pairA, pairB };
}

/**
 * Group by sorting the distinct ranks, a binary search per pair and a stable counting sort: no
 * bound on rank·np (the fallback of {@link groupByCompositeKey}). O(np log np).
 */
export function groupByCounting(ranks: Float64Array, np: number, pa: Int32Array, pb: Int32Array): Grouped {
  const sorted = ranks.slice(0, np).sort();
  let dgC = 0;
  for (let t = 0; t < np; t++) if (t === 0 || sorted[t] !== sorted[t - 1]) sorted[dgC++] = sorted[t]!;
  const distinct = sorted.slice(0, dgC);
  const where = new Int32Array(np);
  const pairStart = new Int32Array(dgC + 1);
  for (let t = 0; t < np; t++) {
    const d = lowerBound(distinct, ranks[t]!);
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
  return { distinct, pairStart, pairA, pairB };
}

/** First index of `sorted` holding a value ≥ x. O(log length). */
function lowerBound(sorted: Float64Array, x: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
