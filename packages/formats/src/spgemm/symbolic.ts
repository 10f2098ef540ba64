/**
 * The symbolic phase of C = A·B in diagonal storage (seed 002), from the diagonal offsets alone:
 * C's diagonal set {kA + kB} (HM; CDM: (kA + kB) mod n), and for each diagonal of C the list of
 * (A diagonal, B diagonal) pairs that feed it, in ascending kA. Host work and memory are
 * O(dgA·dgB) (a counting sort over C's offset window) or, where the offsets spread over far more
 * values than there are pairs, O(dgA·dgB log(dgA·dgB)) — never O(n) or O(non-zeros) — so it
 * stays cheap at n = 10^7.
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
 * `maxDiagonals` diagonals. Cost: O(dgA·dgB) host work in plain typed-array loops when C's
 * offsets span at most {@link windowSpan}(pairs) values (a counting sort over that window: no
 * comparison sort at all), else O(dgA·dgB log(dgA·dgB)) in one native sort. No per-pair
 * allocation or closure: small products plan in µs.
 * @param windowed false forces the sort path (tests compare the two)
 * @example spgemmSymbolic({ format: 'hm', rows: 6, cols: 6, offsets: [0, 1, -1] }, same).offsets // [0, 1, 2, -1, -2]
 */
export function spgemmSymbolic(a: DiagonalStructure, b: DiagonalStructure, maxDiagonals = 1 << 20, windowed = true): SymbolicProduct {
  if (a.format !== b.format) throw new InvalidParameterError('B format', `'${a.format}' (the format of A)`, b.format);
  if (a.cols !== b.rows) throw new DimensionMismatchError('spgemm: rows of B (= columns of A)', a.cols, b.rows);
  const pl = enumeratePairs(a, b);
  const { np, lo, hi } = pl;
  const m = a.rows;
  const n = b.cols;
  const cdm = a.format === 'cdm';
  const g = windowed && np > 0 && hi - lo + 1 <= windowSpan(np) ? groupByWindow(pl, !cdm) : groupBySort(pl, m, n, cdm);
  const dgC = g.offsets.length;
  if (dgC > maxDiagonals) throw new InvalidParameterError('maxDiagonals', `at least ${dgC} (C = A·B has ${dgC} diagonals)`, maxDiagonals);
  const lengths = new Int32Array(dgC);
  for (let d = 0; d < dgC; d++) {
    const k = g.offsets[d]!;
    if (cdm && k < 0) g.offsets[d] = k + m; // signed → compact index
    lengths[d] = cdm ? m : diagonalLength(m, n, k);
  }
  return { format: a.format, rows: m, inner: a.cols, cols: n, offsets: g.offsets, lengths, pairStart: g.pairStart, pairA: g.pairA, pairB: g.pairB, multiplyAdds: pl.multiplyAdds };
}

/**
 * Most distinct values C's signed offsets may span for the counting-sort grouping of `np` pairs:
 * 4·np + 4096, so that path stays O(pairs) — never O(n) — whatever the matrix order.
 */
export const windowSpan = (np: number): number => 4 * np + 4096;

/** Pairs in emission order (ascending kA, then B's order): signed C offset, A and B index. */
export interface PairList {
  readonly np: number;
  /**
   * Signed offset of each pair's C diagonal: HM kA + kB; CDM (kA + kB) mod n taken in
   * [−⌊n/2⌋, ⌈n/2⌉) (compact index s ≥ 0 → s, else s + n), so a band's offsets stay a narrow window.
   */
  readonly sk: Int32Array;
  readonly pa: Int32Array;
  readonly pb: Int32Array;
  /** Least and greatest of sk (0, −1 when there is no pair). */
  readonly lo: number;
  readonly hi: number;
  readonly multiplyAdds: number;
}

/**
 * Scratch arrays shared by every call (the symbolic phase is synchronous, so no two calls overlap
 * in one thread): the pair list and the counting window are rebuilt per call, and allocating
 * them fresh cost a zero-filled backing store each — several per plan, and the garbage they left
 * made the planning time of small products (0.1–0.4 ms on the H100 host) jump with each minor
 * GC. Arrays past {@link SCRATCH_KEEP} elements are used once and not kept.
 */
const SCRATCH_KEEP = 1 << 22;
const scratch: Int32Array[] = [new Int32Array(1 << 14), new Int32Array(1 << 14), new Int32Array(1 << 14), new Int32Array(1 << 15)];
function scratchOf(slot: number, length: number): Int32Array {
  const have = scratch[slot]!;
  return have.length >= length ? have : grownScratch(slot, length);
}

/**
 * A scratch array of at least `length` (the next power of two), kept when ≤ SCRATCH_KEEP. Its
 * own function, and the first arrays sized for products of 16 384 pairs (320 kB in all), so that
 * the typical planner never takes this path: on the H100 host the first growth (at 2 065 pairs)
 * deoptimised the planner's optimised code, and one benchmark case planned 8× slower than the
 * same case later (issue 22).
 */
function grownScratch(slot: number, length: number): Int32Array {
  const fresh = new Int32Array(2 ** Math.ceil(Math.log2(length)));
  if (fresh.length <= SCRATCH_KEEP) scratch[slot] = fresh;
  return fresh;
}

/**
 * Every (A diagonal, B diagonal) pair that contributes (HM: their inner index ranges meet; CDM:
 * all), A's diagonals taken by ascending offset — the summation order of every C entry. O(dgA·dgB).
 * The returned sk / pa / pb are scratch arrays (valid until the next call), np entries used.
 */
function enumeratePairs(a: DiagonalStructure, b: DiagonalStructure): PairList {
  const cdm = a.format === 'cdm';
  const [m, inner, n] = [a.rows, a.cols, b.cols];
  const offA = a.offsets;
  const offB = b.offsets;
  const na = offA.length;
  const nb = offB.length;
  const orderA = ascendingOrder(offA);
  const sk = scratchOf(0, na * nb);
  const pa = scratchOf(1, na * nb);
  const pb = scratchOf(2, na * nb);
  const half = m - Math.floor(m / 2); // CDM: compact s ≥ half is s − m
  let np = 0;
  // a double from the start: a small-integer sum overflowing past 2^31 (at ~2·10^9 multiply–adds)
  // would deoptimise this function in the middle of a run
  let multiplyAdds = -0;
  let lo = 0;
  let hi = -1;
  for (let q = 0; q < na; q++) {
    const u = orderA[q]!;
    const kA = offA[u]!;
    // HM: columns of A's diagonal kA = rows of B it meets: [max(0, kA), min(inner, m + kA))
    const aLo = Math.max(kA, 0);
    const aHi = Math.min(inner, m + kA);
    for (let v = 0; v < nb; v++) {
      const kB = offB[v]!;
      let len = m;
      let k = kA + kB;
      if (cdm) {
        if (k >= m) k -= m;
        if (k >= half) k -= m;
      } else {
        // rows j of B's diagonal kB: [max(0, −kB), min(inner, n − kB)); shared j with A's range
        const bHi = Math.min(inner, n - kB);
        const bLo = kB < 0 ? -kB : 0;
        len = Math.min(aHi, bHi) - Math.max(aLo, bLo);
        if (len <= 0) continue;
      }
      if (np === 0) lo = hi = k;
      else if (k < lo) lo = k;
      else if (k > hi) hi = k;
      sk[np] = k;
      pa[np] = u;
      pb[np++] = v;
      multiplyAdds += len;
    }
  }
  return { np, sk, pa, pb, lo, hi, multiplyAdds: multiplyAdds + 0 }; // + 0: never −0
}

/** C's offsets in storage order and the pairs grouped by them, emission order kept inside a group. */
export interface GroupedOffsets {
  readonly offsets: Int32Array;
  readonly pairStart: Int32Array;
  readonly pairA: Int32Array;
  readonly pairB: Int32Array;
}

/**
 * Group by a counting sort over the window [lo, hi] of signed C offsets: count, walk the window
 * in storage order (0, 1, …, then the negatives: HM −1, −2, … descending, CDM ascending — the
 * compact indices s + n ascending) assigning each offset its first pair, then scatter the pairs
 * in emission order (stable). O(pairs + window), no comparison sort.
 * @example groupByWindow(pairs, true).offsets // HM order
 */
export function groupByWindow(pl: PairList, negativesDescending: boolean): GroupedOffsets {
  const { np, sk, pa, pb, lo, hi } = pl;
  const span = hi - lo + 1;
  const pos = scratchOf(3, Math.max(0, span));
  pos.fill(0, 0, span);
  let dgC = 0;
  for (let t = 0; t < np; t++) if (pos[sk[t]! - lo]!++ === 0) dgC++;
  // one backing store for the four outputs: offsets, pairStart, pairA, pairB
  const store = new Int32Array(2 * dgC + 1 + 2 * np);
  const offsets = store.subarray(0, dgC);
  const starts = store.subarray(dgC, 2 * dgC + 1);
  const pairA = store.subarray(2 * dgC + 1, 2 * dgC + 1 + np);
  const pairB = store.subarray(2 * dgC + 1 + np);
  let d = 0;
  let at = 0;
  // window index of offset 0 (or of the least offset when all are positive / negative)
  const zero = lo > 0 ? 0 : Math.min(span, -lo);
  for (let pass = 0; pass < 2; pass++) {
    // pass 0: the non-negative offsets ascending; pass 1: the negative ones
    const from = pass === 0 ? zero : negativesDescending ? zero - 1 : 0;
    const to = pass === 0 ? span : negativesDescending ? -1 : zero;
    const step = pass === 1 && negativesDescending ? -1 : 1;
    for (let x = from; x !== to; x += step) {
      const c = pos[x]!;
      if (c === 0) continue;
      offsets[d] = x + lo;
      starts[d++] = at;
      pos[x] = at;
      at += c;
    }
  }
  starts[dgC] = np;
  for (let t = 0; t < np; t++) {
    const s = pos[sk[t]! - lo]!++;
    pairA[s] = pa[t]!;
    pairB[s] = pb[t]!;
  }
  return { offsets, pairStart: starts, pairA, pairB };
}

/**
 * Group by storage rank with one native sort (HM k ≥ 0 → k, k < 0 → n − k; CDM the compact index
 * s or s + n): the path for offsets spread over far more values than there are pairs. O(np log np).
 */
function groupBySort(pl: PairList, m: number, n: number, cdm: boolean): GroupedOffsets {
  const { np, sk, pa, pb } = pl;
  const ranks = new Float64Array(np);
  for (let t = 0; t < np; t++) {
    const k = sk[t]!;
    ranks[t] = k >= 0 ? k : cdm ? k + m : n - k;
  }
  // ranks reach rows + cols; rank·np + t is exact in float64 below 2^53 (always, unless n·pairs is astronomical)
  const g = (m + n + 1) * Math.max(1, np) < 2 ** 53 ? groupByCompositeKey(ranks, np, pa, pb) : groupByCounting(ranks, np, pa, pb);
  const offsets = new Int32Array(g.distinct.length);
  for (let d = 0; d < offsets.length; d++) {
    const r = g.distinct[d]!;
    offsets[d] = r < n || cdm ? r : n - r;
  }
  return { offsets, pairStart: g.pairStart, pairA: g.pairA, pairB: g.pairB };
}

/**
 * Indices 0 … length−1 by ascending value (offsets are distinct). Operands arrive ascending (CDM)
 * or in HM order (0, 1, …, then −1, −2, …): both are read off in O(length) with no sort; any
 * other order takes one native sort of rank·len + index.
 */
function ascendingOrder(values: ArrayLike<number>): Int32Array {
  const len = values.length;
  const order = new Int32Array(len);
  // HM order: a non-decreasing run of k ≥ 0, then a decreasing run of k < 0 (either may be empty)
  let split = 0;
  while (split < len && values[split]! >= 0 && (split === 0 || values[split]! > values[split - 1]!)) split++;
  let tail = split;
  while (tail < len && values[tail]! < 0 && (tail === split || values[tail]! < values[tail - 1]!)) tail++;
  if (tail === len) {
    for (let q = 0; q < len - split; q++) order[q] = len - 1 - q;
    for (let q = 0; q < split; q++) order[len - split + q] = q;
    return order;
  }
  let ascending = true;
  for (let u = 1; u < len && ascending; u++) ascending = values[u]! > values[u - 1]!;
  if (ascending) {
    for (let u = 0; u < len; u++) order[u] = u;
    return order;
  }
  let lo = 0;
  for (let u = 0; u < len; u++) lo = Math.min(lo, values[u]!);
  const keys = new Float64Array(len);
  for (let u = 0; u < len; u++) keys[u] = (values[u]! - lo) * len + u;
  keys.sort();
  for (let q = 0; q < len; q++) order[q] = keys[q]! % len;
  return order;
}

/** C's distinct ranks ascending and the pairs grouped by them, emission order kept inside a group. */
export interface Grouped {
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
