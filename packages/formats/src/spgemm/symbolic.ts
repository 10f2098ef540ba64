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
import { hmOrder } from '../hm/hm';

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
  // A's diagonals by ascending offset: the summation order of every C entry
  const orderA = Array.from({ length: a.offsets.length }, (_, u) => u).sort((p, q) => a.offsets[p]! - a.offsets[q]!);
  const keys: number[] = [];
  const pa: number[] = [];
  const pb: number[] = [];
  const work: number[] = [];
  for (const u of orderA) {
    const kA = a.offsets[u]!;
    for (let v = 0; v < b.offsets.length; v++) {
      const kB = b.offsets[v]!;
      const len = cdm ? m : overlap(kA, kB, m, inner, n);
      if (len === 0) continue;
      keys.push(cdm ? (kA + kB) % m : kA + kB);
      pa.push(u);
      pb.push(v);
      work.push(len);
    }
  }
  const distinct = [...new Set(keys)];
  const offsets = cdm ? Int32Array.from(distinct).sort() : hmOrder(distinct);
  if (offsets.length > maxDiagonals) throw new InvalidParameterError('maxDiagonals', `at least ${offsets.length} (C = A·B has ${offsets.length} diagonals)`, maxDiagonals);
  const index = new Map<number, number>();
  for (let d = 0; d < offsets.length; d++) index.set(offsets[d]!, d);
  // counting sort of the pairs by C diagonal (stable: ascending kA kept)
  const pairStart = new Int32Array(offsets.length + 1);
  for (const k of keys) pairStart[index.get(k)! + 1]!++;
  for (let d = 0; d < offsets.length; d++) pairStart[d + 1]! += pairStart[d]!;
  const fillAt = pairStart.slice(0, offsets.length);
  const pairA = new Int32Array(keys.length);
  const pairB = new Int32Array(keys.length);
  let multiplyAdds = 0;
  keys.forEach((k, t) => {
    const at = fillAt[index.get(k)!]!++;
    pairA[at] = pa[t]!;
    pairB[at] = pb[t]!;
    multiplyAdds += work[t]!;
  });
  const lengths = Int32Array.from(offsets, (k) => (cdm ? m : diagonalLength(m, n, k)));
  return { format: a.format, rows: m, inner, cols: n, offsets, lengths, pairStart, pairA, pairB, multiplyAdds };
}
