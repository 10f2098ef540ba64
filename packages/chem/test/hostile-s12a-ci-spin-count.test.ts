/**
 * Session 12: the CI driver's dense solver with a spin multiplicity (the penalty H + 0.2·P,
 * P = (S² − S(S+1))²) took the lowest `nroots` eigenpairs of the penalised H. Once the spectrum
 * spread past the penalty, a shifted triplet came before the higher singlets (H4 STO-6G, 36
 * determinants = 20 singlets + 15 triplets + 1 quintet: 'nroots 20, singlets' returned 6 triplets
 * among them), and with more roots than the space has of that spin it returned states of other
 * spins (3 quintets: the quintet and two triplets). Now the dense solve keeps the states whose
 * ⟨P⟩ is 0, every one of them, and refuses more roots than exist (InvalidParameterError
 * 'nroots' naming the count). The Davidson path repeats a run that let another spin in with the
 * penalty raised (at least doubled and at least the roots' spread; three tries at most).
 */
import { InvalidParameterError } from '@gpusparse/formats';
import { describe, expect, it } from 'vitest';
import { ciEnergies } from '../src/index';
import { readFcidump } from '../src/fcidump/node';
import { data } from './helpers/vectors';

describe('CI dense solve with a spin multiplicity: every root of that spin, no more than exist', () => {
  it('H4: the 20 singlets are the 20 lowest eigenvalues of H with ⟨S²⟩ = 0; 15 triplets; 3 quintets refused (1 exists)', async () => {
    const fd = await readFcidump(data('H4_sto6g_R1.8_block2.FCIDUMP'));
    const all = await ciEnergies(fd, { workers: 0, nroots: 36 });
    const of = (s2: number) => all.energies.filter((_, i) => Math.abs(all.s2[i]! - s2) < 1e-6);
    for (const [m, s2, count] of [[1, 0, 20], [3, 2, 15], [5, 6, 1]] as const) {
      const want = of(s2);
      expect(want.length).toBe(count);
      const r = await ciEnergies(fd, { workers: 0, nroots: count, spin: { multiplicity: m } });
      for (const x of r.s2) expect(Math.abs(x - s2)).toBeLessThan(1e-6);
      for (const [i, e] of r.energies.entries()) expect(Math.abs(e - want[i]!)).toBeLessThan(1e-10);
      await expect(ciEnergies(fd, { workers: 0, nroots: count + 1, spin: { multiplicity: m } })).rejects.toThrow(InvalidParameterError);
      await expect(ciEnergies(fd, { workers: 0, nroots: count + 1, spin: { multiplicity: m } })).rejects.toThrow(new RegExp(`at most ${count}`));
    }
  });

  it('H4 by Davidson, 20 singlets at the default penalty 0.2 Eh: repeated with a larger penalty, all 20 singlets to 1e-6 Eh (was 6 triplets among them)', async () => {
    const fd = await readFcidump(data('H4_sto6g_R1.8_block2.FCIDUMP'));
    const dense = await ciEnergies(fd, { workers: 0, nroots: 20, spin: { multiplicity: 1 } });
    const r = await ciEnergies(fd, { workers: 0, nroots: 20, spin: { multiplicity: 1 }, solver: 'davidson' });
    for (const x of r.s2) expect(Math.abs(x)).toBeLessThan(1e-6);
    for (const [i, e] of r.energies.entries()) expect(Math.abs(e - dense.energies[i]!)).toBeLessThan(1e-6);
    expect(r.notes.join(' ')).toMatch(/repeated with penalty/);
  });
});
