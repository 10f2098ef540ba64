/**
 * Hostile CI inputs (session 6 hardening) that a run accepted before its fix: a spin
 * multiplicity no determinant of the space can have. The FCIDUMP parser's own hostile cases
 * (missing &END, wrong NORB/NELEC/MS2, indices > NORB, ORBSYM out of range, non-numeric fields)
 * are covered by fcidump-fuzz.test.ts and fcidump-integrity.test.ts and passed the probes.
 */
import { InvalidParameterError } from '@gpusparse/formats';
import { describe, expect, it } from 'vitest';
import { ciEnergies } from '../src/ci';
import { readFcidump } from '../src/fcidump/node';
import { dataFile } from '../../../testdata/index';

const h2o = () => readFcidump(dataFile('fcidump', 'H2O_sto2g_hande.FCIDUMP')); // 10 electrons in 7 orbitals

describe('ciEnergies: spin multiplicity beyond the space', () => {
  it('multiplicity 7 or 13 for 10 electrons in 7 orbitals (at most 4 unpaired: a quintet) is refused before assembly', async () => {
    const fd = await h2o();
    for (const multiplicity of [7, 13]) {
      const run = ciEnergies(fd, { spin: { multiplicity } });
      await expect(run).rejects.toThrow(InvalidParameterError);
      await expect(ciEnergies(fd, { spin: { multiplicity } })).rejects.toThrow(/spin\.multiplicity: expected .*at most 5 \(4 unpaired electrons: 10 in 7 orbitals\)/);
    }
  });
  it('the quintet, the largest possible, still runs and has ⟨S²⟩ = 6', async () => {
    const r = await ciEnergies(await h2o(), { spin: { multiplicity: 5 } });
    expect(r.solver.converged).toBe(true);
    expect(r.s2[0]).toBeCloseTo(6, 6);
  });
});
