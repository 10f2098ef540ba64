/**
 * Session 9 hostile CI inputs: more roots than the space has determinants was sized first and
 * refused as a memory problem (10^11 roots of H4's 36 determinants: ResourceLimitError "needs
 * 115.2 TB … select one point-group irrep"), and a Molpro IUHF=1 (spin-unrestricted) file was
 * read as restricted until its blocks clashed ("core energy 0 here, 2.4 there").
 */
import { readFileSync } from 'node:fs';
import { InvalidParameterError } from '@gpusparse/formats';
import { describe, expect, it } from 'vitest';
import { ciEnergies } from '../src/ci';
import { estimateCiEnergies } from '../src/ci-estimate';
import { FcidumpError, parseFcidump } from '../src/fcidump/index';
import { readFcidump } from '../src/fcidump/node';
import { dataFile } from '../../../testdata/index';

const h4path = dataFile('fcidump', 'H4_sto6g_R1.8_block2.FCIDUMP');

describe('nroots beyond the space', () => {
  it('10^11 and 37 roots of 36 determinants: InvalidParameterError naming nroots and the space size, not ResourceLimitError', async () => {
    const fd = await readFcidump(h4path);
    for (const nroots of [1e11, 37]) {
      const run = ciEnergies(fd, { nroots });
      await expect(run).rejects.toThrow(InvalidParameterError);
      await expect(ciEnergies(fd, { nroots })).rejects.toThrow(new RegExp(`parameter nroots: expected an integer in 1\\.\\.36 \\(the space size\\), got ${nroots}`));
    }
    // an irrep block of 20 determinants: named with its own size
    await expect(ciEnergies(fd, { irrep: 1, nroots: 1e9 })).rejects.toThrow(/parameter nroots: expected an integer in 1\.\.20 \(the space size\), got 1000000000/);
  });
});

describe('spin-unrestricted FCIDUMP headers', () => {
  it('IUHF=1 is refused at its line like UHF=.TRUE.; IUHF=0 reads as before', () => {
    const h4 = readFileSync(h4path, 'utf8');
    const header = (iuhf: string) => h4.replace('  ISYM=   1,\n', `  ISYM=   1,\n  IUHF=${iuhf},\n`);
    expect(() => parseFcidump(header('1'), { file: 'uhf.FCIDUMP' })).toThrow(FcidumpError);
    expect(() => parseFcidump(header('1'), { file: 'uhf.FCIDUMP' })).toThrow(/^uhf\.FCIDUMP:4: expected a restricted FCIDUMP \(IUHF=0 or absent\), got IUHF=1, which is not supported \(spin-unrestricted integrals\)/);
    expect(parseFcidump(header('0')).norb).toBe(4);
  });
});

describe('active spaces and irreps that hold no determinant', () => {
  it('cas:4,1 (blamed ms2: "at most 1 electrons per spin") and cas:2,0 (blamed NORB: "core (1) + active ≤ 4, got 0"): the CAS option named', async () => {
    const fd = await readFcidump(h4path);
    await expect(ciEnergies(fd, { space: { kind: 'cas', electrons: 4, orbitals: 1 } })).rejects.toThrow(/parameter CAS electrons: expected at most 2 per active orbital \(≤ 2 in 1\), got 4/);
    await expect(ciEnergies(fd, { space: { kind: 'cas', electrons: 2, orbitals: 0 } })).rejects.toThrow(/parameter CAS orbitals: expected at least 1 active orbital, got 0/);
    // every electron frozen in the core (0 in 2 active orbitals) is a space of one determinant: it runs
    const r = await ciEnergies(fd, { space: { kind: 'cas', electrons: 0, orbitals: 2 } });
    expect(r.energies).toHaveLength(1);
  });
  it('an irrep outside the point group of ORBSYM (H4: irreps 1, 5; CH4: 1–4) says so (was only "an empty space")', async () => {
    const fd = await readFcidump(h4path);
    await expect(ciEnergies(fd, { irrep: 2 })).rejects.toThrow(/empty space \(FCI\(4o; 2α,2β; irrep 2\)\): irrep 2 is not in the point group of the file — ORBSYM's orbitals \(irreps 1, 5\) make determinants of irreps 1, 5 only/);
    const ch4 = await readFcidump(dataFile('fcidump', 'CH4_sto3g_chemps2.FCIDUMP'));
    await expect(ciEnergies(ch4, { irrep: 8 })).rejects.toThrow(/irrep 8 is not in the point group of the file — ORBSYM's orbitals \(irreps 1, 2, 3\) make determinants of irreps 1, 2, 3, 4 only/);
  });
});

describe('ciEnergies options of the wrong kind', () => {
  it("space: 'cas' as a bare string (ran FCI, 36 determinants, silently) and maxIterations −1 (returned start-vector energies): refused", async () => {
    const fd = await readFcidump(h4path);
    await expect(ciEnergies(fd, { space: 'cas' as never })).rejects.toThrow(/parameter space: expected \{ kind: 'cas', electrons, orbitals \} \(a CAS needs its sizes\), got 'cas'/);
    for (const maxIterations of [-1, 2.5]) await expect(ciEnergies(fd, { solver: 'davidson', maxIterations })).rejects.toThrow(/parameter maxIterations: expected an integer ≥ 0/);
  });
});

describe('the dry-run sizing (estimateCiEnergies) with more roots than determinants', () => {
  it('10^11 roots of 36: InvalidParameterError naming nroots (was an estimate of 115 TB and "would be refused")', async () => {
    await expect(estimateCiEnergies(h4path, { nroots: 1e11, backend: 'host' })).rejects.toThrow(/parameter nroots: expected an integer in 1\.\.36 \(the space size\), got 100000000000/);
    expect((await estimateCiEnergies(h4path, { nroots: 36, backend: 'host' })).estimate.determinants).toBe(36);
  });
});
