/**
 * The number of non-zeros of H estimated before the space exists: draw determinants uniformly
 * (../determinants/count.ts) and count, per drawn row, the singles and doubles that stay in the
 * space (irrep, excitation level) and whose Slater–Condon element is not exactly zero — the same
 * entries the assembly stores (it drops exact zeros off the diagonal). A sampled estimate, not a
 * bound: the result carries its standard error.
 * @module
 */
import { generators } from '@gpusparse/formats';
import type { CountedSpace } from '../determinants/count';
import type { Fcidump } from '../fcidump/types';

/** A sampled non-zero count. */
export interface NnzEstimate {
  /** Estimated non-zeros of H (diagonal included). */
  nnz: number;
  /** Mean stored entries per row of the sample. */
  perRow: number;
  /** Standard error of `nnz` (from the sample's row-length variance). */
  stderr: number;
  /** Largest row length seen. */
  maxRow: number;
  rowsSampled: number;
  method: string;
}

interface RowCtx {
  n: number;
  h1: Float64Array;
  eri: Float64Array;
  irr: readonly number[];
  level: number;
  refA: Uint8Array;
  refB: Uint8Array;
}

const eri4 = (c: RowCtx, i: number, j: number, k: number, l: number) => c.eri[((i * c.n + j) * c.n + k) * c.n + l]!;

/** Non-zero single q→p of one spin: h_pq + Σ_same[(pq|kk) − (pk|kq)] + Σ_other (pq|kk). */
function singleValue(c: RowCtx, p: number, q: number, same: readonly number[], other: readonly number[]): number {
  let v = c.h1[p * c.n + q]!;
  for (const k of same) if (k !== q) v += eri4(c, p, q, k, k) - eri4(c, p, k, k, q);
  for (const k of other) v += eri4(c, p, q, k, k);
  return v;
}

/** Excitation level of an occupation (count of occupied orbitals outside the reference). */
function levelOf(occ: Uint8Array, ref: Uint8Array): number {
  let e = 0;
  for (let p = 0; p < occ.length; p++) if (occ[p] && !ref[p]) e++;
  return e;
}

/** Stored entries of one row (determinant with occupied lists a, b). */
function rowLength(c: RowCtx, a: number[], b: number[]): number {
  const occA = new Uint8Array(c.n);
  const occB = new Uint8Array(c.n);
  for (const p of a) occA[p] = 1;
  for (const p of b) occB[p] = 1;
  const virtA = [...Array(c.n).keys()].filter((p) => !occA[p]);
  const virtB = [...Array(c.n).keys()].filter((p) => !occB[p]);
  const la = c.level < Infinity ? levelOf(occA, c.refA) : 0;
  const lb = c.level < Infinity ? levelOf(occB, c.refB) : 0;
  // change of the excitation level when an electron moves q→p (particles: occupied orbitals outside ref)
  const dl = (ref: Uint8Array, q: number, p: number) => (ref[p] ? 0 : 1) - (ref[q] ? 0 : 1);
  const ok = (g: number, lev: number) => g === 0 && lev <= c.level;
  let count = 1;
  const singles = (occ: number[], virt: number[], other: number[], ref: Uint8Array, base: number) => {
    for (const q of occ) for (const p of virt) if (ok(c.irr[p]! ^ c.irr[q]!, base + dl(ref, q, p)) && singleValue(c, p, q, occ, other) !== 0) count++;
  };
  singles(a, virtA, b, c.refA, la + lb);
  singles(b, virtB, a, c.refB, la + lb);
  const sameDoubles = (occ: number[], virt: number[], ref: Uint8Array, base: number) => {
    for (let i = 0; i < occ.length; i++) {
      for (let j = i + 1; j < occ.length; j++) {
        const q1 = occ[i]!;
        const q2 = occ[j]!;
        for (let s = 0; s < virt.length; s++) {
          for (let t = s + 1; t < virt.length; t++) {
            const p1 = virt[s]!;
            const p2 = virt[t]!;
            if (!ok(c.irr[p1]! ^ c.irr[p2]! ^ c.irr[q1]! ^ c.irr[q2]!, base + dl(ref, q1, p1) + dl(ref, q2, p2))) continue;
            if (eri4(c, p1, q1, p2, q2) - eri4(c, p1, q2, p2, q1) !== 0) count++;
          }
        }
      }
    }
  };
  sameDoubles(a, virtA, c.refA, la + lb);
  sameDoubles(b, virtB, c.refB, la + lb);
  for (const q of a) {
    for (const p of virtA) {
      const ga = c.irr[p]! ^ c.irr[q]!;
      const lA = la + dl(c.refA, q, p);
      for (const r of b) for (const s of virtB) if (ok(ga ^ c.irr[s]! ^ c.irr[r]!, lA + lb + dl(c.refB, r, s)) && eri4(c, p, q, s, r) !== 0) count++;
    }
  }
  return count;
}

/** Element tests per sampled row: singles (O(norb) each), same-spin and opposite-spin doubles. */
function workPerRow(norb: number, na: number, nb: number): number {
  const c2 = (n: number) => (n * (n - 1)) / 2;
  const sa = na * (norb - na);
  const sb = nb * (norb - nb);
  return (sa + sb) * norb + c2(na) * c2(norb - na) + c2(nb) * c2(norb - nb) + sa * sb;
}

/**
 * Estimate nnz(H) of `space` over the integrals of `fd` from uniformly drawn rows (with
 * replacement): `rows` of them (default 300, fewer — down to 30 — when a row costs so many
 * element tests that 300 would exceed 10^7, e.g. 42 orbitals and 48 electrons). Cost
 * O(rows · (singles·norb + doubles)): milliseconds for norb ≤ 30, about a second at most.
 * @example
 * const e = estimateNnz(fd, countSpace(shape)); // e.nnz ± e.stderr
 */
export function estimateNnz(fd: Fcidump, space: CountedSpace, rowsWanted?: number, seed = 2024): NnzEstimate {
  const s = space.shape;
  const rows = rowsWanted ?? Math.max(30, Math.min(300, Math.floor(1e7 / workPerRow(s.norb, s.nalpha, s.nbeta))));
  const refA = new Uint8Array(s.norb);
  const refB = new Uint8Array(s.norb);
  for (const p of s.reference?.alpha ?? []) refA[p] = 1;
  for (const p of s.reference?.beta ?? []) refB[p] = 1;
  const c: RowCtx = { n: s.norb, h1: fd.h1, eri: fd.eri, irr: s.irreps, level: s.level ?? Infinity, refA, refB };
  const rand = generators.rng(seed);
  let sum = 0;
  let sum2 = 0;
  let maxRow = 0;
  for (let r = 0; r < rows; r++) {
    const d = space.sample(rand);
    const len = rowLength(c, d.alpha, d.beta);
    sum += len;
    sum2 += len * len;
    if (len > maxRow) maxRow = len;
  }
  const mean = sum / rows;
  const variance = Math.max(0, sum2 / rows - mean * mean);
  const n = space.determinants;
  return {
    nnz: Math.round(mean * n),
    perRow: mean,
    stderr: Math.sqrt(variance / rows) * n,
    maxRow,
    rowsSampled: rows,
    method: `sampled: ${rows} uniformly drawn rows, non-zero Slater–Condon elements counted`,
  };
}
