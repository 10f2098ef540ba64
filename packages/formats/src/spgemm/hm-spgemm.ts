/**
 * C = A·B with A, B and C in HM diagonal storage: the float64 CPU reference of seed 002 §6.2
 * (Algorithm 2, structured sparse matrix–matrix multiplication).
 *
 * Structure of Algorithm 2: one (virtual) thread per stored entry of A; it loops over the diagonals
 * of B, finds the entry of B it multiplies (FindBInd) and the entry of C it updates (FindCInd), and
 * adds the product into C (an atomic add on the GPU). The thirteen super/sub/principal cases of the
 * paper all follow from its two rules, which are what this reference applies directly: a_ij·b_jl
 * contributes to c_il, and entry (i, j) of an HM matrix lives at A[j − i][min(i, j)].
 *
 * The diagonal set of C is fixed before any arithmetic ({@link hmSpgemmDiagonals}): dA + dB for every
 * pair of stored diagonals whose index ranges meet, so C is allocated once. A slot of C is marked
 * present when at least one product of two stored entries lands on it (the structural pattern of a
 * CSR×CSR product; cancellations stay as explicit zeros); fill slots of A and B are skipped.
 * Rectangular operands (m×k times k×n) are accepted, as HM is here.
 * Cost: O(stored(A)·dg(B)) time, O(Σ|diagonal of C|) memory.
 * @module
 */
import { DimensionMismatchError } from '../core/errors';
import { bitmaskGet, bitmaskSet, requireInt } from '../dia/common';
import { checkDiagonalCount } from '../dia/dia';
import { type HmMatrix, hmAllocate, hmDiagonalLookup, hmDiagonalSize } from '../hm/hm';

/** Options of the diagonal products. */
export interface SpgemmOptions {
  /** Refuse (InvalidParameterError) when C would have more diagonals than this. Default 4096. */
  readonly maxDiagonals?: number;
}

/**
 * The diagonal offsets of C = A·B for HM operands, before any arithmetic: every dA + dB such that
 * diagonal dA of A (rows i, columns j = i + dA) and diagonal dB of B (rows j) share a j. Ascending.
 * Cost: O(dg(A)·dg(B) + m + n).
 * @example
 * hmSpgemmDiagonals(hmFromCsr(laplacian1d(6)), hmFromCsr(laplacian1d(6))); // [-2, -1, 0, 1, 2]
 */
export function hmSpgemmDiagonals(a: HmMatrix, b: HmMatrix): Int32Array {
  if (a.cols !== b.rows) throw new DimensionMismatchError('hmSpgemm: rows of B (= columns of A)', a.cols, b.rows);
  const m = a.rows;
  const k = a.cols;
  const n = b.cols;
  const seen = new Uint8Array(Math.max(0, m + n - 1));
  for (const dA of a.offsets) {
    // columns j reached by diagonal dA of A
    const jLo = Math.max(0, dA);
    const jHi = Math.min(k, m + dA);
    for (const dB of b.offsets) {
      // rows j of B that diagonal dB covers
      const bLo = Math.max(0, -dB);
      const bHi = Math.min(k, n - dB);
      const dC = dA + dB;
      if (Math.max(jLo, bLo) < Math.min(jHi, bHi) && dC > -m && dC < n) seen[dC + m - 1] = 1;
    }
  }
  const out: number[] = [];
  for (let t = 0; t < seen.length; t++) if (seen[t]) out.push(t - (m - 1));
  return Int32Array.from(out);
}

/**
 * C = A·B in float64 with HM operands and an HM result (convert with hmToCsr). Follows Algorithm 2:
 * for each stored entry a_ij of A and each diagonal dB of B, b_{j, j+dB} (if stored) is multiplied in
 * and added to c_{i, j+dB}. Throws DimensionMismatchError when columns of A ≠ rows of B.
 * Cost: O(stored(A)·dg(B)).
 * @example
 * const c = hmSpgemm(hmFromCsr(a), hmFromCsr(b)); hmToCsr(c); // A·B in CSR
 */
export function hmSpgemm(a: HmMatrix, b: HmMatrix, opts: SpgemmOptions = {}): HmMatrix {
  const maxDiagonals = requireInt('maxDiagonals', opts.maxDiagonals ?? 4096, 0);
  const offsets = hmSpgemmDiagonals(a, b);
  const m = a.rows;
  const n = b.cols;
  let slots = 0;
  for (const d of offsets) slots += Math.max(0, d >= 0 ? Math.min(m, n - d) : Math.min(m + d, n));
  checkDiagonalCount('hm (product)', offsets.length, maxDiagonals, slots);
  const c = hmAllocate(m, n, offsets);
  const lookC = hmDiagonalLookup(c);
  const { values: cv, present: cp, starts: cs } = c;
  const { values: bv, present: bp, starts: bs, offsets: bo } = b;
  let nnz = 0;
  for (let u = 0; u < a.numDiagonals; u++) {
    const dA = a.offsets[u];
    const s0 = a.starts[u];
    const len = hmDiagonalSize(a, u);
    for (let p = 0; p < len; p++) {
      if (!bitmaskGet(a.present, s0 + p)) continue;
      // entry a_ij of A: A[dA][min(i, j)] with p = min(i, j)
      const i = dA >= 0 ? p : p - dA;
      const j = i + dA;
      const av = a.values[s0 + p];
      for (let v = 0; v < b.numDiagonals; v++) {
        const dB = bo[v];
        const l = j + dB;
        if (l < 0 || l >= n) continue;
        const sB = bs[v] + Math.min(j, l); // FindBInd: B[dB][min(j, l)]
        if (!bitmaskGet(bp, sB)) continue;
        const sC = cs[lookC[dA + dB + m - 1]] + Math.min(i, l); // FindCInd: C[dA + dB][min(i, l)]
        // c_il += a_ij·b_jl
        cv[sC] += av * bv[sB];
        if (!bitmaskGet(cp, sC)) {
          bitmaskSet(cp, sC);
          nnz++;
        }
      }
    }
  }
  return { ...c, nnz };
}
