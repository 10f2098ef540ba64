/**
 * Sign rules: the assembled Hamiltonian and S² against a brute-force second-quantisation
 * implementation (creation/annihilation operators on spin-orbital bit strings), on small
 * hand-built cases with random integrals.
 */
import { csrSpmv, csrToDense, generators } from '@gpusparse/formats';
import { describe, expect, it } from 'vitest';
import { type DeterminantSpace, fciSpace, occupiedOrbitals, spaceFromDeterminants, truncatedSpace } from '../src/determinants/index';
import type { Fcidump } from '../src/fcidump/types';
import { assembleHamiltonian } from '../src/hamiltonian/assemble';
import { spinPenaltyMatrix, spinSquaredExpectations, spinSquaredMatrix } from '../src/hamiltonian/spin';

/** Random real integrals with 8-fold (or only 4-fold) permutational symmetry. */
function randomFcidump(norb: number, nelec: number, seed: number, symmetry: 8 | 4 = 8): Fcidump {
  const r = generators.rng(seed);
  const n = norb;
  const h1 = new Float64Array(n * n);
  for (let p = 0; p < n; p++) for (let q = 0; q <= p; q++) h1[p * n + q] = h1[q * n + p] = r() - 0.5;
  const eri = new Float64Array(n ** 4);
  const I = (i: number, j: number, k: number, l: number) => ((i * n + j) * n + k) * n + l;
  for (let i = 0; i < n; i++)
    for (let j = 0; j < n; j++)
      for (let k = 0; k < n; k++)
        for (let l = 0; l < n; l++) {
          if (eri[I(i, j, k, l)] !== 0) continue;
          const v = r() - 0.5;
          const perms = [I(i, j, k, l), I(k, l, i, j), I(j, i, l, k), I(l, k, j, i)];
          if (symmetry === 8) perms.push(I(j, i, k, l), I(i, j, l, k), I(k, l, j, i), I(l, k, i, j));
          for (const x of perms) eri[x] = v;
        }
  return {
    file: `random(${seed})`,
    norb,
    nelec,
    ms2: 0,
    orbsym: new Int32Array(n).fill(1),
    isym: 1,
    h1,
    eri,
    ecore: 0,
    orbitalEnergies: undefined,
    symmetry,
    header: {},
    notes: [],
  };
}

/** Apply a (creation if dagger) operator on spin-orbital i to basis state d: [sign, d'] or undefined. */
function op(d: number, i: number, dagger: boolean): [number, number] | undefined {
  const occ = (d >> i) & 1;
  if (dagger === (occ === 1)) return undefined;
  let below = 0;
  for (let k = 0; k < i; k++) below += (d >> k) & 1;
  return [below % 2 ? -1 : 1, d ^ (1 << i)];
}

/** Apply an operator string (rightmost first) to |d⟩. */
function applyString(d: number, ops: [number, boolean][]): [number, number] | undefined {
  let sign = 1;
  let s = d;
  for (let t = ops.length - 1; t >= 0; t--) {
    const r = op(s, ops[t]![0], ops[t]![1]);
    if (!r) return undefined;
    sign *= r[0];
    s = r[1];
  }
  return [sign, s];
}

/** Spin-orbital bit string of a determinant: alpha p → bit p, beta p → bit n + p. */
function detBits(space: DeterminantSpace, k: number): number {
  const n = space.norb;
  let d = 0;
  for (const p of occupiedOrbitals(space.alpha.lo[space.detAlpha[k]!]!, space.alpha.hi[space.detAlpha[k]!]!)) d |= 1 << p;
  for (const p of occupiedOrbitals(space.beta.lo[space.detBeta[k]!]!, space.beta.hi[space.detBeta[k]!]!)) d |= 1 << (n + p);
  return d;
}

/** Dense ⟨D_i|O|D_j⟩ for O = Σ terms coefficient × operator string, by brute force. */
function bruteMatrix(space: DeterminantSpace, terms: { c: number; ops: [number, boolean][] }[]): number[][] {
  const bits = Array.from({ length: space.size }, (_, k) => detBits(space, k));
  const index = new Map(bits.map((b, k) => [b, k]));
  const m = bits.map(() => new Array<number>(space.size).fill(0));
  for (let j = 0; j < space.size; j++) {
    for (const t of terms) {
      if (t.c === 0) continue;
      const r = applyString(bits[j]!, t.ops);
      if (!r) continue;
      const i = index.get(r[1]);
      if (i !== undefined) m[i]![j]! += t.c * r[0];
    }
  }
  return m;
}

/** H = Σ h_pq a†_pσ a_qσ + ½ Σ (pq|rs) a†_pσ a†_rτ a_sτ a_qσ as operator strings. */
function hamiltonianTerms(fd: Fcidump): { c: number; ops: [number, boolean][] }[] {
  const n = fd.norb;
  const terms: { c: number; ops: [number, boolean][] }[] = [];
  for (let s = 0; s < 2; s++)
    for (let p = 0; p < n; p++)
      for (let q = 0; q < n; q++)
        terms.push({
          c: fd.h1[p * n + q]!,
          ops: [
            [s * n + p, true],
            [s * n + q, false],
          ],
        });
  for (let s = 0; s < 2; s++)
    for (let t = 0; t < 2; t++)
      for (let p = 0; p < n; p++)
        for (let q = 0; q < n; q++)
          for (let r = 0; r < n; r++)
            for (let u = 0; u < n; u++)
              terms.push({
                c: 0.5 * fd.eri[((p * n + q) * n + r) * n + u]!,
                ops: [
                  [s * n + p, true],
                  [t * n + r, true],
                  [t * n + u, false],
                  [s * n + q, false],
                ],
              });
  return terms;
}

/** S² = S_z² + S_z + S₋S₊ as operator strings (S₊ = Σ a†_pα a_pβ). */
function spinTerms(n: number, sz: number): { c: number; ops: [number, boolean][] }[] {
  const terms: { c: number; ops: [number, boolean][] }[] = [];
  for (let d = 0; d < 1; d++) terms.push({ c: sz * sz + sz, ops: [] });
  for (let p = 0; p < n; p++)
    for (let q = 0; q < n; q++)
      terms.push({
        c: 1,
        ops: [
          [n + q, true],
          [q, false],
          [p, true],
          [n + p, false],
        ],
      });
  return terms;
}

function maxDiff(a: number[][], b: number[][]): number {
  let m = 0;
  for (let i = 0; i < a.length; i++) for (let j = 0; j < a.length; j++) m = Math.max(m, Math.abs(a[i]![j]! - b[i]![j]!));
  return m;
}

describe('Slater–Condon rules against brute-force second quantisation', () => {
  const cases: [number, number, number, 8 | 4][] = [
    [3, 1, 1, 8], // 2 electrons / 3 orbitals, opposite spins
    [3, 2, 0, 8], // 2 electrons / 3 orbitals, same spin
    [3, 2, 1, 8],
    [4, 2, 2, 8],
    [4, 3, 1, 4], // complex-orbital (4-fold) integrals
    [5, 2, 3, 4],
  ];
  for (const [norb, na, nb, sym] of cases) {
    it(`norb=${norb}, ${na}α ${nb}β, ${sym}-fold integrals (main thread and workers)`, async () => {
      const fd = randomFcidump(norb, na + nb, 17 + norb * 10 + na, sym);
      const space = fciSpace(norb, na, nb);
      const brute = bruteMatrix(space, hamiltonianTerms(fd));
      const h = await assembleHamiltonian(fd, space, { workers: 0 });
      expect(maxDiff(csrToDense(h.matrix), brute)).toBeLessThan(1e-13);
      for (let i = 0; i < space.size; i++) expect(h.diagonal[i]).toBeCloseTo(brute[i]![i]!, 13);
      const hw = await assembleHamiltonian(fd, space, { workers: 2 });
      expect(hw.stats.workers).toBe(2);
      expect(Array.from(hw.matrix.values)).toEqual(Array.from(h.matrix.values));
      expect(Array.from(hw.matrix.colIdx)).toEqual(Array.from(h.matrix.colIdx));
      // S²
      const s2 = spinSquaredMatrix(space);
      expect(maxDiff(csrToDense(s2), bruteMatrix(space, spinTerms(norb, (na - nb) / 2)))).toBeLessThan(1e-14);
      // matrix-free ⟨S²⟩ equals ⟨c|S²|c⟩/⟨c|c⟩ with the matrix, for several vectors at once
      const cs = [0, 1, 2].map((r) => Float64Array.from({ length: space.size }, (_, i) => Math.sin(1.3 * i + r) + 0.1 * r));
      const free = spinSquaredExpectations(space, cs);
      cs.forEach((c, r) => {
        const y = csrSpmv(s2, c);
        let num = 0;
        let den = 0;
        for (let i = 0; i < c.length; i++) {
          num += c[i]! * y[i]!;
          den += c[i]! * c[i]!;
        }
        expect(free[r]).toBeCloseTo(num / den, 12);
      });
      // penalty P = (S² − S(S+1))² against the dense square
      const mult = Math.abs(na - nb) + 1;
      const shift = ((mult - 1) / 2) * ((mult + 1) / 2);
      const m = csrToDense(s2).map((row, i) => row.map((x, j) => (i === j ? x - shift : x)));
      const sq = m.map((row) => m.map((_, j) => row.reduce((acc, x, k) => acc + x * m[k]![j]!, 0)));
      expect(maxDiff(csrToDense(spinPenaltyMatrix(s2, mult)), sq)).toBeLessThan(1e-13);
    });
  }

  it('explicit and truncated spaces (targets outside the space are skipped)', async () => {
    const fd = randomFcidump(5, 4, 99);
    const ref = { alpha: [0, 1], beta: [0, 1] };
    for (const space of [
      truncatedSpace(5, 2, ref),
      spaceFromDeterminants(5, [
        { alpha: [0, 1], beta: [0, 1] },
        { alpha: [1, 4], beta: [0, 1] },
        { alpha: [0, 3], beta: [2, 4] },
        { alpha: [0, 1], beta: [3, 1] },
      ]),
    ]) {
      const brute = bruteMatrix(space, hamiltonianTerms(fd));
      const h = await assembleHamiltonian(fd, space, { workers: 0 });
      expect(maxDiff(csrToDense(h.matrix), brute)).toBeLessThan(1e-13);
    }
  });
});
