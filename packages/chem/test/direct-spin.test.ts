/**
 * Spin without a penalty: the time-reversal half space of the direct σ (Qᵀ H Q against the
 * explicit H), the spin-adapted start vectors (exact ⟨S²⟩), and ciEnergies choosing a
 * multiplicity by parity — same energies as the penalty path, no more iterations than no spin.
 */
import { HostOperator } from '@gpusparse/formats';
import { describe, expect, it } from 'vitest';
import { ciEnergies } from '../src/ci';
import { directHamiltonian } from '../src/direct/ci';
import { directSigmaOperator } from '../src/direct/operator';
import { buildCiSpace } from '../src/determinants/build';
import { readFcidump } from '../src/fcidump/node';
import { assembleHamiltonian } from '../src/hamiltonian/assemble';
import { spinSquaredExpectations } from '../src/hamiltonian/spin';
import { spinAdaptedGuess } from '../src/spin-guess';
import { data, randomVector } from './helpers/vectors';

const dot = (a: Float64Array, b: Float64Array) => a.reduce((s, x, i) => s + x * b[i]!, 0);
const dense = (n: number, g: { index: number; value: number }[]) => {
  const v = new Float64Array(n);
  for (const e of g) v[e.index] = e.value;
  return v;
};

describe('the time-reversal half space of the direct σ', () => {
  it.each([
    ['even', 1, 1],
    ['odd', 6, 1],
    ['even', 1, 2],
  ] as const)('N2/STO-3G, %s spins, irrep %i, %i thread(s): half.apply = Qᵀ (explicit H) Q, Q an isometry', async (parity, irrep, threads) => {
    const fd = await readFcidump(data('N2_sto3g_R1.1A_block2.FCIDUMP'));
    const { fcidump, space } = buildCiSpace(fd, 'fci', { irrep });
    const h = await assembleHamiltonian(fcidump, space, { workers: 0 });
    const explicit = HostOperator.fromCsr(h.matrix);
    const op = await directSigmaOperator(fcidump, space, { timeReversal: parity, threads });
    try {
      const half = op.half!;
      expect(op.parity).toBe(parity === 'even' ? 1 : -1);
      // about half the determinants (all pairs, plus the (I, I) diagonal for even parity)
      expect(half.rows).toBeGreaterThan(0.45 * space.size);
      expect(half.rows).toBeLessThan(0.55 * space.size);
      const u = randomVector(half.rows, 7);
      const x = half.expand(u);
      expect(dot(x, x)).toBeCloseTo(dot(u, u), 10); // isometry
      const back = half.compress(x);
      for (let k = 0; k < u.length; k++) expect(Math.abs(back[k]! - u[k]!)).toBeLessThan(1e-15);
      const hx = new Float64Array(space.size);
      explicit.apply(x, hx);
      const want = half.compress(hx);
      const got = new Float64Array(half.rows);
      half.apply(u, got);
      let scale = 0;
      let diff = 0;
      for (let k = 0; k < got.length; k++) {
        scale = Math.max(scale, Math.abs(want[k]!));
        diff = Math.max(diff, Math.abs(want[k]! - got[k]!));
      }
      expect(diff / scale).toBeLessThan(1e-13);
      // the preconditioner's diagonal is diag(Qᵀ H Q) exactly (open-shell pairs included)
      const d = half.diagonal();
      let worst = 0;
      let coupled = 0;
      for (let k = 0; k < half.rows; k += 7) {
        const e = new Float64Array(half.rows);
        e[k] = 1;
        const col = half.expand(e);
        const hc = new Float64Array(space.size);
        explicit.apply(col, hc);
        const want2 = dot(col, hc);
        worst = Math.max(worst, Math.abs(d[k]! - want2));
        if (Math.abs(want2 - h.diagonal[col.findIndex((v) => v !== 0)]!) > 1e-6) coupled++;
      }
      expect(worst).toBeLessThan(1e-11);
      expect(coupled).toBeGreaterThan(0); // some coordinates are open-shell pairs with (pq|qp) ≠ 0
    } finally {
      op.dispose();
    }
  });
});

describe('spin-adapted start vectors', () => {
  it.each([
    [1, 0, 6],
    [3, 0, 6],
    [5, 0, 3],
    [3, 2, 4],
  ])('H8/STO-6G Ag, multiplicity %i, MS2 = %i: %i orthonormal vectors with ⟨S²⟩ = S(S+1) exactly', async (mult, ms2, k) => {
    const fd = await readFcidump(data('H8_sto6g_R1.8_block2.FCIDUMP'));
    const { fcidump, space } = buildCiSpace(fd, 'fci', { irrep: 1, ms2 });
    const h = await assembleHamiltonian(fcidump, space, { workers: 0 });
    const guesses = spinAdaptedGuess(space, h.diagonal, k, mult);
    expect(guesses).toHaveLength(k);
    const vs = guesses.map((g) => dense(space.size, g));
    const s = (mult - 1) / 2;
    for (const x of spinSquaredExpectations(space, vs)) expect(Math.abs(x - s * (s + 1))).toBeLessThan(1e-12);
    for (let a = 0; a < k; a++) for (let b = 0; b <= a; b++) expect(dot(vs[a]!, vs[b]!)).toBeCloseTo(a === b ? 1 : 0, 12);
    // open-shell singlets/triplets need several determinants: not all guesses are single determinants
    if (ms2 === 0) expect(guesses.some((g) => g.length > 1)).toBe(true);
  });

  it('the guesses of a multiplicity keep their time-reversal parity (project() leaves them unchanged)', async () => {
    const fd = await readFcidump(data('N2_sto3g_R1.1A_block2.FCIDUMP'));
    const { fcidump, space } = buildCiSpace(fd, 'fci', { irrep: 1 });
    for (const [mult, parity] of [
      [1, 'even'],
      [3, 'odd'],
    ] as const) {
      const op = await directSigmaOperator(fcidump, space, { timeReversal: parity });
      for (const g of spinAdaptedGuess(space, op.diagonal(), 4, mult)) {
        const v = dense(space.size, g);
        const p = Float64Array.from(v);
        op.project!(p);
        for (let i = 0; i < v.length; i++) expect(Math.abs(p[i]! - v[i]!)).toBeLessThan(1e-15);
      }
      op.dispose();
    }
  });

  it('O2 CAS(12e,8o) reordered by excitation level (determinants not grouped by α string): triplet guesses still exact', async () => {
    const fd = await readFcidump(data('O2_cas12e8o_C1_dice.FCIDUMP'));
    const { fcidump, space } = buildCiSpace(fd, 'fci', { referenceLevel: 2 });
    const op = await directSigmaOperator(fcidump, space);
    const vs = spinAdaptedGuess(space, op.diagonal(), 5, 3).map((g) => dense(space.size, g));
    op.dispose();
    for (const x of spinSquaredExpectations(space, vs)) expect(Math.abs(x - 2)).toBeLessThan(1e-12);
  });

  it('a multiplicity that MS2 does not allow is refused', async () => {
    const fd = await readFcidump(data('H8_sto6g_R1.8_block2.FCIDUMP'));
    const { space } = buildCiSpace(fd, 'fci', { irrep: 1, ms2: 2 });
    expect(() => spinAdaptedGuess(space, new Float64Array(space.size), 2, 1)).toThrow(/multiplicity.*2S\+1 with S ≥ \|M_S\| = 1/);
  });
});

describe('ciEnergies: a multiplicity by time-reversal parity, no penalty', () => {
  it('N2/STO-3G Ag singlets (the ⁵Ag state, second even-spin root, never enters: spin-projected starts, spin-clean preconditioner) and B2g triplets: the penalty path’s energies, ⟨S²⟩ per root, fewer iterations', async () => {
    const fd = await readFcidump(data('N2_sto3g_R1.1A_block2.FCIDUMP'));
    const singlet = await ciEnergies(fd, { irrep: 1, nroots: 3, spin: { multiplicity: 1 }, hamiltonian: directHamiltonian({ timeReversal: 'even' }) });
    const penalty = await ciEnergies(fd, { irrep: 1, nroots: 3, spin: { multiplicity: 1 }, hamiltonian: directHamiltonian() });
    const plain = await ciEnergies(fd, { irrep: 1, nroots: 3, hamiltonian: directHamiltonian({ timeReversal: 'even' }) });
    // parity alone: the ⁵Ag state is the second even-spin root (⟨S²⟩ to ≈ 6·(‖r‖/gap)²: the default stop leaves ‖r‖ ≤ 1e-4)
    expect(plain.s2[1]).toBeCloseTo(6, 6);
    // was: 'spin: 1 state(s) of another spin of the same parity shifted out' and a second Davidson round
    expect(singlet.notes.join('\n')).not.toMatch(/shifted out/);
    expect(singlet.notes.join('\n')).toMatch(/multiplicity 1 by time-reversal parity and a spin-adapted start \(no penalty\)/);
    expect(singlet.notes.join('\n')).toMatch(/Davidson on the \d+-dimensional half space/);
    for (let r = 0; r < 3; r++) {
      expect(Math.abs(singlet.energies[r]! - penalty.energies[r]!)).toBeLessThan(1e-8);
      expect(Math.abs(singlet.s2[r]!)).toBeLessThan(1e-8);
    }
    expect(singlet.solver.iterations).toBeLessThan(0.7 * penalty.solver.iterations);
    const triplet = await ciEnergies(fd, { irrep: 6, nroots: 2, spin: { multiplicity: 3 }, hamiltonian: directHamiltonian({ timeReversal: 'odd' }) });
    expect(Math.abs(triplet.energies[0]! - -107.356943001688)).toBeLessThan(1e-8);
    for (const x of triplet.s2) expect(Math.abs(x - 2)).toBeLessThan(1e-8);
    expect(triplet.vectors[0]!.length).toBe(triplet.determinants); // full vectors come back from the half space
  });
});
