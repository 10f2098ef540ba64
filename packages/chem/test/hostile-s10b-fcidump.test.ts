/**
 * Session 10 hostile FCIDUMP inputs. A file with NORB = 65..128 (the reader takes up to 128)
 * was read, sized — `--dry-run` said it fits — and only then refused while the space was built,
 * as "parameter norb: expected an integer in 1..64": determinants are one 64-bit string per spin,
 * but the message named neither the file's NORB nor the way out (an active space).
 */
import { readFileSync } from 'node:fs';
import { InvalidParameterError } from '@gpusparse/formats';
import { describe, expect, it } from 'vitest';
import { ciEnergies } from '../src/ci';
import { estimateCiEnergies } from '../src/ci-estimate';
import { parseFcidump } from '../src/fcidump/index';
import { dataFile } from '../../../testdata/index';

const h4text = readFileSync(dataFile('fcidump', 'H4_sto6g_R1.8_block2.FCIDUMP'), 'utf8');

/**
 * H4/STO-6G padded to `norb` orbitals: orbitals 5.. are uncoupled, high in energy (h_pp = 10,
 * (pp|pp) = 0.5), so CAS(4,4) of the padded file is H4's FCI.
 */
function paddedH4(norb: number): string {
  const body = h4text.slice(h4text.indexOf('&END') + 4).replace(/^\s*\n/, '');
  const header = ` &FCI NORB=${norb},NELEC=4,MS2=0,\n  ORBSYM=1,1,5,5,${Array(norb - 4).fill(1).join(',')},\n  ISYM=1,\n &END\n`;
  let extra = '';
  for (let p = 5; p <= norb; p++) extra += `  0.5 ${p} ${p} ${p} ${p}\n  10.0 ${p} ${p} 0 0\n`;
  return header + extra + body;
}

describe('more orbitals than a determinant holds (64)', () => {
  const fd65 = parseFcidump(paddedH4(65), { file: 'H4+61.FCIDUMP' });
  const want = /parameter space: expected at most 64 orbitals in the determinant space \(one 64-bit string per spin\), got FCI over all 65 orbitals of the FCIDUMP \(NORB=65\): choose an active space of at most 64 orbitals .*--space cas:N,M/;

  it('FCI over NORB=65: InvalidParameterError naming NORB and the CAS way out, in the run and in the dry-run sizing (was "norb: 1..64" after sizing; the dry-run said it fits)', async () => {
    await expect(ciEnergies(fd65, { nroots: 1 })).rejects.toThrow(InvalidParameterError);
    await expect(ciEnergies(fd65, { nroots: 1 })).rejects.toThrow(want);
    await expect(estimateCiEnergies(fd65, { nroots: 1, backend: 'host' })).rejects.toThrow(want);
    await expect(ciEnergies(fd65, { nroots: 1, space: { kind: 'cisd' } })).rejects.toThrow(/got CISD over all 65 orbitals of the FCIDUMP \(NORB=65\)/);
    await expect(ciEnergies(fd65, { nroots: 1, space: { kind: 'cas', electrons: 4, orbitals: 65 } })).rejects.toThrow(/got an active space of 65 orbitals: choose an active space of at most 64/);
  });

  it('NORB=128 (the reader\'s limit) is refused the same way; CAS(4,4) of the NORB=65 file gives H4\'s FCI energy', async () => {
    await expect(ciEnergies(parseFcidump(paddedH4(128)), { nroots: 1 })).rejects.toThrow(/FCI over all 128 orbitals of the FCIDUMP \(NORB=128\)/);
    const fci = await ciEnergies(parseFcidump(h4text), { nroots: 1 });
    const cas = await ciEnergies(fd65, { nroots: 1, space: { kind: 'cas', electrons: 4, orbitals: 4 } });
    expect(cas.determinants).toBe(36);
    expect(cas.energies[0]).toBeCloseTo(fci.energies[0]!, 9);
  });
});
