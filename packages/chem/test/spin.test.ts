/**
 * The S² kernels (move tables, arithmetic / dense / hash lookups, the alpha-string pair kernel,
 * worker threads) against a direct implementation: per determinant, per (β-only p, α-only q),
 * the partner string built bit by bit, its sign from countBelow and its index from the hashes
 * (the construction that slater-condon.test.ts checks against brute-force second quantisation).
 * Spaces: FCI with MS2 = 0, 2, −3, of one irrep, reordered by excitation level; truncated CI;
 * explicit lists whose partners fall outside; more than 32 orbitals.
 */
import { type CsrMatrix, generators } from '@gpusparse/formats';
import { describe, expect, it } from 'vitest';
import { countBelow } from '../src/determinants/bits';
import { pairHashGet } from '../src/determinants/pair-hash';
import { type DeterminantSpace, fciSpace, orderByExcitation, spaceFromDeterminants, truncatedSpace } from '../src/determinants/space';
import { stringIndex } from '../src/determinants/strings';
import {
  spinContext,
  spinPairsKernel,
  spinRowsKernel,
  spinSquaredExpectations,
  spinSquaredExpectationsParallel,
  spinSquaredMatrix,
} from '../src/hamiltonian/spin';

/** S² by columns (row → value), term by term with bit operations and hash lookups. */
function directS2(space: DeterminantSpace): Map<number, number>[] {
  const m = Array.from({ length: space.size }, () => new Map<number, number>());
  const sz = (space.nalpha - space.nbeta) / 2;
  const bit = (lo: number, hi: number, p: number) => (p < 32 ? (lo >>> p) & 1 : (hi >>> (p - 32)) & 1);
  const flip = (lo: number, hi: number, p: number): [number, number] => (p < 32 ? [(lo ^ (1 << p)) >>> 0, hi] : [lo, (hi ^ (1 << (p - 32))) >>> 0]);
  for (let k = 0; k < space.size; k++) {
    const aLo = space.alpha.lo[space.detAlpha[k]!]!;
    const aHi = space.alpha.hi[space.detAlpha[k]!]!;
    const bLo = space.beta.lo[space.detBeta[k]!]!;
    const bHi = space.beta.hi[space.detBeta[k]!]!;
    let open = 0;
    for (let p = 0; p < space.norb; p++) {
      if (!bit(bLo, bHi, p) || bit(aLo, aHi, p)) continue;
      open++;
      for (let q = 0; q < space.norb; q++) {
        if (!bit(aLo, aHi, q) || bit(bLo, bHi, q)) continue;
        // a_pβ, a†_pα, a_qα, a†_qβ in turn
        let parity = countBelow(bLo, bHi, p) + countBelow(aLo, aHi, p);
        let [a1Lo, a1Hi] = flip(aLo, aHi, p);
        parity += countBelow(a1Lo, a1Hi, q);
        [a1Lo, a1Hi] = flip(a1Lo, a1Hi, q);
        let [b1Lo, b1Hi] = flip(bLo, bHi, p);
        parity += countBelow(b1Lo, b1Hi, q);
        [b1Lo, b1Hi] = flip(b1Lo, b1Hi, q);
        const ta = stringIndex(space.alpha, a1Lo, a1Hi);
        const tb = stringIndex(space.beta, b1Lo, b1Hi);
        const t = ta < 0 || tb < 0 ? -1 : pairHashGet(space.detHash, ta, tb);
        if (t >= 0) m[k]!.set(t, (m[k]!.get(t) ?? 0) + (parity & 1 ? -1 : 1));
      }
    }
    m[k]!.set(k, (m[k]!.get(k) ?? 0) + sz * sz + sz + open);
  }
  return m;
}

function quadratic(m: Map<number, number>[], c: Float64Array): number {
  let num = 0;
  let den = 0;
  for (let k = 0; k < c.length; k++) {
    den += c[k]! * c[k]!;
    for (const [t, x] of m[k]!) num += c[t]! * x * c[k]!;
  }
  return num / den;
}

/** The columns of a CSR matrix as maps (S² is symmetric: row i of the CSR is column i). */
function columns(a: CsrMatrix): Map<number, number>[] {
  return Array.from({ length: a.rows }, (_, i) => {
    const col = new Map<number, number>();
    for (let e = a.rowPtr[i]!; e < a.rowPtr[i + 1]!; e++) col.set(a.colIdx[e]!, a.values[e]!);
    return col;
  });
}

const orbsym = (n: number) => Int32Array.from({ length: n }, (_, p) => 1 + ((p * 5) % 4));

const spaces: [string, () => DeterminantSpace][] = [
  ['FCI 6o 3α3β', () => fciSpace(6, 3, 3)],
  ['FCI 7o 4α2β (MS2 = 2)', () => fciSpace(7, 4, 2)],
  ['FCI 6o 1α4β (MS2 = −3)', () => fciSpace(6, 1, 4)],
  ['FCI 7o 3α3β irrep 2', () => fciSpace(7, 3, 3, { irrep: 2, orbsym: orbsym(7) })],
  ['FCI 6o reordered by excitation', () => orderByExcitation(fciSpace(6, 3, 3), { alpha: [0, 1, 2], beta: [0, 1, 2] }, 1)],
  ['CISD 8o 3α3β', () => truncatedSpace(8, 2, { alpha: [0, 1, 2], beta: [0, 1, 2] })],
  ['CISDT 7o 3α2β irrep 1', () => truncatedSpace(7, 3, { alpha: [0, 1, 2], beta: [0, 1] }, { irrep: 1, orbsym: orbsym(7) })],
  [
    'explicit list, partners outside',
    () =>
      spaceFromDeterminants(6, [
        { alpha: [0, 1], beta: [0, 1] },
        { alpha: [0, 2], beta: [0, 1] },
        { alpha: [0, 1], beta: [0, 2] },
        { alpha: [1, 4], beta: [2, 5] },
        { alpha: [2, 5], beta: [1, 4] },
        { alpha: [1, 5], beta: [2, 4] },
        { alpha: [3, 4], beta: [0, 5] },
      ]),
  ],
  ['FCI 34o 2α1β (orbitals across bit 32)', () => fciSpace(34, 2, 1)],
  ['CISD 36o 2α2β (reference across bit 32)', () => truncatedSpace(36, 2, { alpha: [30, 32], beta: [31, 32] })],
  [
    'explicit list over 64 orbitals',
    () =>
      spaceFromDeterminants(64, [
        { alpha: [0, 31, 63], beta: [31, 32, 40] },
        { alpha: [31, 32, 63], beta: [0, 31, 40] },
        { alpha: [0, 32, 40], beta: [31, 32, 63] },
        { alpha: [31, 32, 40], beta: [0, 31, 63] },
        { alpha: [0, 31, 40], beta: [31, 32, 63] },
        { alpha: [40, 31, 63], beta: [31, 32, 0] },
      ]),
  ],
];

describe('S² kernels against the direct construction', () => {
  for (const [name, make] of spaces) {
    it(name, async () => {
      const space = make();
      const ref = directS2(space);
      // the matrix: every entry, exactly
      expect(columns(spinSquaredMatrix(space))).toEqual(ref);
      const rng = generators.rng(space.size);
      const cs = [0, 1, 2].map(() => Float64Array.from({ length: space.size }, () => rng() - 0.5));
      const want = cs.map((c) => quadratic(ref, c));
      const close = (got: readonly number[]) => {
        expect(got).toHaveLength(want.length);
        got.forEach((x, r) => {
          expect(Math.abs(x - want[r]!)).toBeLessThan(1e-12 * Math.max(1, Math.abs(want[r]!)));
        });
      };
      close(spinSquaredExpectations(space, cs));
      // every path of the kernels: tables or string hashes × arithmetic / dense / hash lookups
      for (const options of [{}, { pairs: false }, { moveTables: false }, { lookup: 'hash' as const }, { moveTables: false, lookup: 'hash' as const }]) {
        const ctx = spinContext(space, options);
        const sums = ctx.pairOff.length > 0 ? spinPairsKernel(ctx, cs, 0, ctx.alpha.count) : spinRowsKernel(ctx, cs, 0, space.size);
        close(cs.map((_, r) => sums[r]! / sums[cs.length + r]!));
      }
      close(await spinSquaredExpectationsParallel(space, cs, { workers: 2 }));
      close(await spinSquaredExpectationsParallel(space, cs, { workers: 0 }));
    });
  }

  it('picks the fast paths where they apply', () => {
    const fci = spinContext(fciSpace(6, 3, 3));
    expect([fci.lookup, fci.classes, fci.pairOff.length > 0, fci.alpha.move.length > 0]).toEqual([0, 1, true, true]);
    const reordered = spinContext(orderByExcitation(fciSpace(6, 3, 3), { alpha: [0, 1, 2], beta: [0, 1, 2] }, 1));
    expect([reordered.lookup, reordered.classes, reordered.pairOff.length > 0]).toEqual([1, 1, true]);
    const irrep = spinContext(fciSpace(7, 3, 3, { irrep: 2, orbsym: orbsym(7) }));
    expect([irrep.lookup, irrep.classes]).toEqual([1, 4]);
    const cisd = spinContext(truncatedSpace(8, 2, { alpha: [0, 1, 2], beta: [0, 1, 2] }));
    expect([cisd.classes, cisd.pairOff.length]).toEqual([0, 0]);
  });

  it('spin eigenstates: a closed shell, the open-shell singlet and triplet, a quartet', () => {
    const space = fciSpace(4, 2, 2);
    const at = (alpha: number[], beta: number[]) => {
      for (let k = 0; k < space.size; k++) {
        const a = space.alpha.lo[space.detAlpha[k]!]!;
        const b = space.beta.lo[space.detBeta[k]!]!;
        if (a === alpha.reduce((x, p) => x | (1 << p), 0) && b === beta.reduce((x, p) => x | (1 << p), 0)) return k;
      }
      throw new Error(`determinant ${alpha}/${beta} not in the space`);
    };
    const closed = new Float64Array(space.size);
    closed[at([0, 1], [0, 1])] = 1;
    // |0α 1β⟩ ± |1α 0β⟩ on top of the doubly occupied orbital 2
    const plus = new Float64Array(space.size);
    const minus = new Float64Array(space.size);
    const u = at([0, 2], [1, 2]);
    const v = at([1, 2], [0, 2]);
    plus[u] = plus[v] = 1;
    minus[u] = 1;
    minus[v] = -1;
    const s2 = spinSquaredExpectations(space, [closed, plus, minus]);
    // one of the open-shell combinations is the singlet, the other the M_S = 0 triplet
    expect(s2[0]).toBe(0);
    expect([s2[1]!, s2[2]!].sort()).toEqual([0, 2]);
    // high spin: 3α 0β in 3 orbitals is a quartet (S = 3/2, S(S+1) = 15/4)
    expect(spinSquaredExpectations(fciSpace(3, 3, 0), [Float64Array.of(1)])).toEqual([3.75]);
  });

  it('rejects vectors of the wrong length, naming the vector', async () => {
    const space = fciSpace(4, 2, 2);
    expect(() => spinSquaredExpectations(space, [new Float64Array(space.size), new Float64Array(3)])).toThrow(/vectors\[1\]/);
    await expect(spinSquaredExpectationsParallel(space, [new Float64Array(5)])).rejects.toThrow(/36/);
    await expect(spinSquaredExpectationsParallel(space, [new Float64Array(36)], { workers: -1 })).rejects.toThrow(/workers/);
  });
});
