/**
 * Session 7 hardening: the host direct σ with time-reversal symmetry (MS2 = 0) under the dense
 * solver. Before the fix a dense solve (the solver `auto` picks for ≤ 64 determinants) took the
 * eigenvalues of the whole operator P H P + (1 − P) D (1 − P), whose second block is a diagonal
 * on the other spin parity: H4 --multiplicity 3 gave −2.127887 Eh with ⟨S²⟩ = 0 (no eigenvalue of
 * H), converged. A multiplicity of the other parity and more roots than the parity holds gave
 * wrong energies or an error about Davidson's internal k.
 */
import { InvalidParameterError } from '@gpusparse/formats';
import { beforeAll, describe, expect, it } from 'vitest';
import { ciEnergies } from '../src/ci';
import { directHamiltonian } from '../src/direct/ci';
import { readFcidump } from '../src/fcidump/node';
import type { Fcidump } from '../src/fcidump/types';
import { dataFile } from '../../../testdata/index';

let fd: Fcidump;
/** The whole spectrum of H4 (36 determinants) with ⟨S²⟩, from the explicit H. */
let spectrum: { e: number; s2: number }[];
const lowest = (s2: number, n: number) => spectrum.filter((x) => Math.abs(x.s2 - s2) < 1e-6).slice(0, n).map((x) => x.e);

beforeAll(async () => {
  fd = await readFcidump(dataFile('fcidump', 'H4_sto6g_R1.8_block2.FCIDUMP'));
  const r = await ciEnergies(fd, { nroots: 36, solver: 'dense' });
  spectrum = r.energies.map((e, i) => ({ e, s2: r.s2[i]! }));
});

describe('direct σ with time reversal, dense solver', () => {
  it('multiplicity 3, 1 and 5: the lowest states of that spin (was −2.127887, not an eigenvalue, for the triplet)', async () => {
    for (const [multiplicity, s2, n] of [[3, 2, 2], [1, 0, 3], [5, 6, 1]] as const) {
      for (const solver of ['dense', 'auto'] as const) {
        const r = await ciEnergies(fd, { nroots: n, solver, spin: { multiplicity }, hamiltonian: directHamiltonian({ multiplicity }) });
        expect(r.solver.method).toMatch(/half space/);
        const want = lowest(s2, n);
        for (const [i, e] of r.energies.entries()) expect(e, `multiplicity ${multiplicity} root ${i}`).toBeCloseTo(want[i]!, 9);
        for (const x of r.s2) expect(x).toBeCloseTo(s2, 6);
        expect(r.notes.join('\n')).not.toMatch(/not \d/);
      }
    }
  });
  it('timeReversal odd without a spin target: the lowest odd-parity states, each an eigenvalue of H', async () => {
    const r = await ciEnergies(fd, { nroots: 3, solver: 'dense', hamiltonian: directHamiltonian({ timeReversal: 'odd' }) });
    const odd = spectrum.filter((x) => Math.abs(x.s2 - 2) < 1e-6 || Math.abs(x.s2 - 12) < 1e-6).slice(0, 3);
    for (const [i, e] of r.energies.entries()) expect(e).toBeCloseTo(odd[i]!.e, 9);
    expect(Math.max(...r.residualNorms)).toBeLessThan(1e-8);
  });
});

describe('direct σ with time reversal: what it cannot answer is refused', () => {
  it('a multiplicity of the other parity (timeReversal even, multiplicity 3): InvalidParameterError, both solvers (was −1.735486, no eigenvalue)', async () => {
    for (const solver of ['dense', 'davidson'] as const) {
      const run = () => ciEnergies(fd, { nroots: 2, solver, spin: { multiplicity: 3 }, hamiltonian: directHamiltonian({ timeReversal: 'even' }) });
      await expect(run()).rejects.toThrow(InvalidParameterError);
      await expect(run()).rejects.toThrow(/spin\.multiplicity: expected a multiplicity of the direct σ's time-reversal even spin parity .*got 3/);
    }
  });
  it('more roots than the parity holds (15 odd states of 36): nroots named (was "davidson k: expected 1..15, got 21"); 15 runs', async () => {
    const run = (nroots: number, solver: 'dense' | 'davidson') => ciEnergies(fd, { nroots, solver, spin: { multiplicity: 3 }, hamiltonian: directHamiltonian({ multiplicity: 3 }) });
    // session 13: the count of the multiplicity's states (15 triplets) refuses it first, before assembly
    for (const solver of ['dense', 'davidson'] as const) await expect(run(20, solver)).rejects.toThrow(/parameter nroots: expected at most 15(: the states of multiplicity 3 in this space| \(the states of odd spin parity) .*got 20/);
    const r = await run(15, 'davidson');
    expect(r.energies).toHaveLength(15);
    expect(r.energies[0]).toBeCloseTo(lowest(2, 1)[0]!, 8);
  });
});
