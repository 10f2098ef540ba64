/**
 * Reference energies of /work/shared/data/fcidump/README.md (to 1e-8 Eh) on the small files,
 * with the dense solver (full spectra, independent of the iterative eigensolver) and, for O2 and
 * H2 Lz, the default Davidson path.
 */
import { describe, expect, it } from 'vitest';
import { ciEnergies } from '../src/ci';
import { buildCiSpace } from '../src/determinants/build';
import { readFcidump } from '../src/fcidump/node';
import { assembleHamiltonian } from '../src/hamiltonian/assemble';
import { csrEigenvalues } from './helpers/jacobi';
import { dataFile } from '../../../testdata/index';

const data = (f: string) => dataFile('fcidump', f);

describe('CI energies of the small files', () => {
  it('H4/STO-6G FCI (36 determinants), Jacobi oracle agrees with tred2/tql2', async () => {
    const fd = await readFcidump(data('H4_sto6g_R1.8_block2.FCIDUMP'));
    const r = await ciEnergies(fd, { solver: 'dense', nroots: 36 });
    expect(r.determinants).toBe(36);
    // cross-check FCI −2.1903842188 (the block2 DMRG value −2.1903842178 is 1e-9 above)
    expect(r.energies[0]).toBeCloseTo(-2.1903842188, 9);
    const { space } = buildCiSpace(fd, 'fci');
    const jac = csrEigenvalues((await assembleHamiltonian(fd, space, { workers: 0 })).matrix);
    for (let k = 0; k < 36; k++) expect(r.energies[k]! - fd.ecore).toBeCloseTo(jac[k]!, 10);
    for (const res of r.residualNorms) expect(res).toBeLessThan(1e-10);
    expect(r.s2[0]).toBeCloseTo(0, 10);
  });

  it('H2/6-31G** FCI', async () => {
    const r = await ciEnergies(data('H2_631gss_block2.FCIDUMP'), { solver: 'dense' });
    expect(r.determinants).toBe(100);
    expect(Math.abs(r.energies[0]! - -1.1369814718)).toBeLessThan(1e-8);
  });

  it('H2O/STO-2G: ground state and the whole A1 spectrum (133 roots)', async () => {
    const r = await ciEnergies(data('H2O_sto2g_hande.FCIDUMP'), { solver: 'dense', irrep: 1, nroots: 133 });
    expect(r.determinants).toBe(133);
    expect(Math.abs(r.energies[0]! - -72.786196191345)).toBeLessThan(1e-8);
    expect(Math.abs(r.energies[132]! - -26.558191164396)).toBeLessThan(1e-8);
    // unfiltered: 441 determinants, same ground state
    const all = await ciEnergies(data('H2O_sto2g_hande.FCIDUMP'), { solver: 'dense' });
    expect(all.determinants).toBe(441);
    expect(Math.abs(all.energies[0]! - -72.786196191345)).toBeLessThan(1e-8);
  });

  it('He2 FCI in Ag', async () => {
    const r = await ciEnergies(data('He2_dice.FCIDUMP'), { solver: 'dense', irrep: 'isym' });
    expect(Math.abs(r.energies[0]! - -5.76217597349)).toBeLessThan(1e-8);
  });

  it('O2 CAS(12,8): lowest Ms=0 state is the triplet, the singlet from the spin penalty', async () => {
    const fd = await readFcidump(data('O2_cas12e8o_C1_dice.FCIDUMP'));
    const r = await ciEnergies(fd, { nroots: 2 });
    expect(r.determinants).toBe(784);
    expect(Math.abs(r.energies[0]! - -149.7049316931)).toBeLessThan(1e-8);
    expect(r.s2[0]).toBeCloseTo(2, 8);
    expect(Math.abs(r.energies[1]! - -149.67760156282918)).toBeLessThan(1e-8);
    expect(r.s2[1]).toBeCloseTo(0, 8);
    const singlet = await ciEnergies(fd, { spin: { multiplicity: 1 } });
    expect(Math.abs(singlet.energies[0]! - -149.67760156282918)).toBeLessThan(1e-8);
    expect(singlet.s2[0]).toBeCloseTo(0, 8);
    // the MS2=2 sector has the triplet as its ground state
    const ms1 = await ciEnergies(fd, { ms2: 2 });
    expect(Math.abs(ms1.energies[0]! - -149.7049316931)).toBeLessThan(1e-8);
    expect(ms1.s2[0]).toBeCloseTo(2, 8);
  });

  it('H2/cc-pVTZ with complex Lz orbitals: 4-fold symmetry detected from SYMLZ', async () => {
    const fd = await readFcidump(data('H2_ccpvtz_Lz_hande.FCIDUMP'));
    expect(fd.symmetry).toBe(4);
    expect(fd.notes.join(' ')).toMatch(/SYMLZ/);
    const r = await ciEnergies(fd, {});
    expect(r.determinants).toBe(784);
    expect(Math.abs(r.energies[0]! - -1.145758846665)).toBeLessThan(1e-8);
    // the 8-fold expansion gives the README's wrong value
    const wrong = await ciEnergies(await readFcidump(data('H2_ccpvtz_Lz_hande.FCIDUMP'), { symmetry: 8 }), {});
    expect(wrong.energies[0]).toBeCloseTo(-1.1559242738, 8);
  });
});
