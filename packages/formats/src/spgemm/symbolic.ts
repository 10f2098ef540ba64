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
  const g = groupByMerge(ranks, np, pa, pb);
  const dgC = g.distinct.length;
  if (dgC > maxDiagonals) throw new InvalidParameterError('maxDiagonals', `at least ${dgC} (C = A·B has ${dgC} diagonals)`, maxDiagonals);
  const cdm = a.format === 'cdm';
  const offsets = new Int32Array(dgC);
  const lengths = new Int32Array(dgC);
  for (let d = 0; d < dgC; d++) {
    offsets[d] = g.distinct[d]!;
    lengths[d] = cdm ? m : diagonalLength(m, n, offsets[d]!);
  }
  return { format: a.format, rows: m, inner: a.cols, cols: n, offsets, lengths, pairStart: g.pairStart, pairA: g.pairA, pairB: g.pairB, multiplyAdds };
}

/** Pairs in emission order (ascending kA, then B's order): C storage rank, A and B index. */
interface PairList {
  readonly np: number;
  /** Offset of each pair's C diagonal: HM kA + kB, CDM (kA + kB) mod n. Ascending within each A. */
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
  // B by ascending offset: each A's C offsets then ascend (CDM: ascend, wrap once, ascend)
  const orderB = ascendingOrder(offB);
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
    for (let w = 0; w < nb; w++) {
      const v = orderB[w]!;
      const kB = offB[v]!;
      let len = m;
      let r: number;
      if (cdm) r = (kA + kB) % m;
      else {
        // rows j of B's diagonal kB: [max(0, −kB), min(inner, n − kB)); shared j with A's range
        len = Math.min(aHi, Math.min(inner, n - kB)) - Math.max(aLo, kB < 0 ? -kB : 0);
        if (len <= 0) continue;
        r = kA + kB;
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

/** C's offsets in storage order and the pairs grouped by them, emission order kept inside a group. */
interface Grouped {
  readonly distinct: Float64Array;
  readonly pairStart: Int32Array;
  readonly pairA: Int32Array;
  readonly pairB: Int32Array;
}

/**
 * Stable sort of the pairs by C offset, as a bottom-up merge of the ascending runs the emission
 * already holds (one or two per A diagonal): about log2(2·dgA) linear passes, no comparison
 * sort of all pairs (V8's typed-array sort costs ~90 ns per element). Ties keep emission order
 * (ascending kA). Then the groups in storage order: offsets ≥ 0 ascending, then < 0 descending.
 * O(np log dgA).
 */
export function groupByMerge(keys: Float64Array, np: number, pa: Int32Array, pb: Int32Array): Grouped {
  let key = keys.slice(0, np);
  let idx = new Int32Array(np);
  for (let t = 0; t < np; t++) idx[t] = t;
  // run starts: where the key drops
  const runs = new Int32Array(np + 1);
  let nr = 0;
  for (let t = 0; t < np; t++) if (t === 0 || key[t]! < key[t - 1]!) runs[nr++] = t;
  runs[nr] = np;
  let key2 = new Float64Array(np);
  let idx2 = new Int32Array(np);
  while (nr > 1) {
    let out = 0;
    for (let r = 0; r < nr; r += 2) {
      const lo = runs[r]!;
      const mid = runs[Math.min(r + 1, nr)]!;
      const hi = runs[Math.min(r + 2, nr)]!;
      mergeInto(key, idx, lo, mid, hi, key2, idx2);
      runs[out++] = lo;
    }
    runs[out] = np;
    nr = out;
    [key, key2] = [key2, key];
    [idx, idx2] = [idx2, idx];
  }
  return storageGroups(key, idx, np, pa, pb);
}

/** Merge sorted [lo, mid) and [mid, hi) of (key, idx) into the same range of the outputs; ties from the left. */
function mergeInto(key: Float64Array, idx: Int32Array, lo: number, mid: number, hi: number, ko: Float64Array, io: Int32Array): void {
  let i = lo;
  let j = mid;
  let o = lo;
  while (i < mid && j < hi) {
    if (key[j]! < key[i]!) {
      ko[o] = key[j]!;
      io[o++] = idx[j++]!;
    } else {
      ko[o] = key[i]!;
      io[o++] = idx[i++]!;
    }
  }
  while (i < mid) {
    ko[o] = key[i]!;
    io[o++] = idx[i++]!;
  }
  while (j < hi) {
    ko[o] = key[j]!;
    io[o++] = idx[j++]!;
  }
}

/** Sorted (key, idx) to groups in storage order (offsets ≥ 0 ascending, then < 0 descending). O(np). */
function storageGroups(key: Float64Array, idx: Int32Array, np: number, pa: Int32Array, pb: Int32Array): Grouped {
  const gStart = new Int32Array(np + 1);
  let ng = 0;
  for (let s = 0; s < np; s++) if (s === 0 || key[s] !== key[s - 1]) gStart[ng++] = s;
  gStart[ng] = np;
  let firstNonNeg = 0;
  while (firstNonNeg < ng && key[gStart[firstNonNeg]!]! < 0) firstNonNeg++;
  const distinct = new Float64Array(ng);
  const pairStart = new Int32Array(ng + 1);
  const pairA = new Int32Array(np);
  const pairB = new Int32Array(np);
  let at = 0;
  for (let q = 0; q < ng; q++) {
    const grp = q < ng - firstNonNeg ? firstNonNeg + q : ng - 1 - q; // then firstNonNeg − 1 down to 0
    distinct[q] = key[gStart[grp]!]!;
    pairStart[q] = at;
    for (let s = gStart[grp]!; s < gStart[grp + 1]!; s++) {
      const t = idx[s]!;
      pairA[at] = pa[t]!;
      pairB[at++] = pb[t]!;
    }
  }
  pairStart[ng] = np;
  return { distinct, pairStart, pairA, pairB };
}
