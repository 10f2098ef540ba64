/**
 * The P space of the direct σ's half space (./time-reversal.ts): the exact H block over the half
 * coordinates of lowest diagonal, by Slater–Condon rules on the determinants' bit strings. Davidson's
 * preconditioner then inverts (H − θ) exactly on P and by the diagonal elsewhere (the "P-space
 * preconditioner" of Knowles–Handy and Olsen-type CI codes): the strongly coupled low
 * determinants no longer slow the first iterations down, and the lowest P eigenvectors are better
 * start vectors than single configurations.
 * @module
 */
import type { DeterminantSpace } from '../determinants/space';
import type { Fcidump } from '../fcidump/types';
import type { DirectContext } from './tables';
import type { TimeReversalPairs } from './time-reversal';

function bit(lo: number, hi: number, p: number): number {
  return p < 32 ? (lo >>> p) & 1 : (hi >>> (p - 32)) & 1;
}

function popcount32(x: number): number {
  let v = x >>> 0;
  v -= (v >>> 1) & 0x55555555;
  v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
  return (Math.imul((v + (v >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24) & 0xff;
}

/** (−1)^(occupied orbitals of the string strictly between p and q). */
function between(lo: number, hi: number, p: number, q: number): number {
  const a = Math.min(p, q);
  const b = Math.max(p, q);
  let n = 0;
  for (let x = a + 1; x < b; x++) n += bit(lo, hi, x);
  return n & 1 ? -1 : 1;
}

/** The orbitals set in (lo1, hi1) and not in (lo2, hi2), at most `max` of them, into out; their count. */
function only(lo1: number, hi1: number, lo2: number, hi2: number, norb: number, out: number[]): number {
  let n = 0;
  for (let x = 0; x < norb; x++) if (bit(lo1, hi1, x) && !bit(lo2, hi2, x)) out[n++] = x;
  return n;
}

/** One determinant as its α and β strings (lo, hi words). */
interface Det {
  alo: number;
  ahi: number;
  blo: number;
  bhi: number;
}

/** ⟨I|H|K⟩ for a same-spin single replacement p → q (p in I, q in K); `same`, `other`: the strings. */
function singleElement(fd: Fcidump, p: number, q: number, sLo: number, sHi: number, oLo: number, oHi: number): number {
  const n = fd.norb;
  const { h1, eri } = fd;
  let v = h1[p * n + q]!;
  for (let k = 0; k < n; k++) {
    if (bit(sLo, sHi, k) && k !== p) v += eri[((p * n + q) * n + k) * n + k]! - eri[((p * n + k) * n + k) * n + q]!;
    if (bit(oLo, oHi, k)) v += eri[((p * n + q) * n + k) * n + k]!;
  }
  return between(sLo, sHi, p, q) * v;
}

/** ⟨I|H|K⟩ for a same-spin double replacement p1 p2 → q1 q2 of the string (lo, hi). */
function doubleElement(fd: Fcidump, p: number[], q: number[], lo: number, hi: number): number {
  const n = fd.norb;
  const s1 = between(lo, hi, p[0]!, q[0]!);
  // the string after the first replacement, for the second one's sign
  let l2 = lo;
  let h2 = hi;
  for (const [x, on] of [[p[0]!, 0], [q[0]!, 1]] as const) {
    if (x < 32) l2 = on ? (l2 | (1 << x)) >>> 0 : (l2 & ~(1 << x)) >>> 0;
    else h2 = on ? (h2 | (1 << (x - 32))) >>> 0 : (h2 & ~(1 << (x - 32))) >>> 0;
  }
  const s2 = between(l2, h2, p[1]!, q[1]!);
  const e = fd.eri;
  const at = (a: number, b: number, c: number, d: number) => e[((a * n + b) * n + c) * n + d]!;
  return s1 * s2 * (at(p[0]!, q[0]!, p[1]!, q[1]!) - at(p[0]!, q[1]!, p[1]!, q[0]!));
}

/** ⟨I|H|K⟩ between two different determinants (0 beyond double replacements). */
function offDiagonal(fd: Fcidump, I: Det, K: Det, scratch: number[][]): number {
  const da = popcount32((I.alo ^ K.alo) >>> 0) + popcount32((I.ahi ^ K.ahi) >>> 0);
  const db = popcount32((I.blo ^ K.blo) >>> 0) + popcount32((I.bhi ^ K.bhi) >>> 0);
  if (da + db > 4 || da + db === 0) return 0;
  const n = fd.norb;
  const [pa, qa, pb, qb] = scratch as [number[], number[], number[], number[]];
  only(I.alo, I.ahi, K.alo, K.ahi, n, pa);
  only(K.alo, K.ahi, I.alo, I.ahi, n, qa);
  only(I.blo, I.bhi, K.blo, K.bhi, n, pb);
  only(K.blo, K.bhi, I.blo, I.bhi, n, qb);
  if (da === 2 && db === 0) return singleElement(fd, pa[0]!, qa[0]!, I.alo, I.ahi, I.blo, I.bhi);
  if (da === 0 && db === 2) return singleElement(fd, pb[0]!, qb[0]!, I.blo, I.bhi, I.alo, I.ahi);
  if (da === 4) return doubleElement(fd, pa, qa, I.alo, I.ahi);
  if (db === 4) return doubleElement(fd, pb, qb, I.blo, I.bhi);
  // one α and one β replacement: (pq|rs) with both strings' signs
  const sa = between(I.alo, I.ahi, pa[0]!, qa[0]!);
  const sb = between(I.blo, I.bhi, pb[0]!, qb[0]!);
  return sa * sb * fd.eri[((pa[0]! * n + qa[0]!) * n + pb[0]!) * n + qb[0]!]!;
}

/** The determinant at a direct-layout position: α string I of its row, β string of its column. */
function determinantAt(ctx: DirectContext, space: DeterminantSpace, pos: number): Det {
  const { nA, rowStart, rowLen, irrepA, betaSorted, betaStart, target } = ctx;
  let lo = 0;
  let hi = nA - 1;
  // the last row starting at or before pos (empty rows share their start with the next one)
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (rowStart[mid]! <= pos) lo = mid;
    else hi = mid - 1;
  }
  while (lo > 0 && rowLen[lo]! === 0) lo--;
  const i = lo;
  const j = betaSorted[betaStart[irrepA[i]! ^ target]! + (pos - rowStart[i]!)]!;
  return { alo: space.alpha.lo[i]!, ahi: space.alpha.hi[i]!, blo: space.beta.lo[j]!, bhi: space.beta.hi[j]! };
}

/**
 * The dense block (row-major, m×m) of Qᵀ H Q over the half coordinates `idx` (m of them), with
 * diag(Qᵀ H Q) taken from `diag` (the half operator's exact diagonal). A pair coordinate is
 * (|I J⟩ + s|J I⟩)/√2, a diagonal one |I I⟩; H commutes with the α↔β swap, so
 * ⟨(I J)|H|(K L)⟩ = ⟨I J|H|K L⟩ + s⟨I J|H|L K⟩, scaled by √2 (or 1/√2·2) where one side is diagonal.
 * Cost O(m²·norb).
 */
export function halfSpaceBlock(fd: Fcidump, space: DeterminantSpace, ctx: DirectContext, tr: TimeReversalPairs, idx: Int32Array, diag: Float64Array): Float64Array {
  const m = idx.length;
  const s = tr.parity;
  const dets = Array.from(idx, (k) => determinantAt(ctx, space, tr.half[k]!));
  const swapped = dets.map((d) => ({ alo: d.blo, ahi: d.bhi, blo: d.alo, bhi: d.ahi }));
  const pair = Array.from(idx, (k) => tr.mirror[k]! >= 0);
  const scratch = [[], [], [], []] as number[][];
  const out = new Float64Array(m * m);
  for (let a = 0; a < m; a++) {
    out[a * m + a] = diag[idx[a]!]!;
    for (let b = 0; b < a; b++) {
      let v = offDiagonal(fd, dets[a]!, dets[b]!, scratch);
      if (pair[b]) v += s * offDiagonal(fd, dets[a]!, swapped[b]!, scratch);
      // normalisation: pair–pair 1; pair–diagonal (1 + s)/√2 · ⟨I J|H|K K⟩ = √2·⟨…⟩ (s = +1); diagonal–diagonal 1
      if (pair[a] !== pair[b]) v *= pair[b] ? Math.SQRT1_2 : Math.SQRT2;
      out[a * m + b] = v;
      out[b * m + a] = v;
    }
  }
  return out;
}
