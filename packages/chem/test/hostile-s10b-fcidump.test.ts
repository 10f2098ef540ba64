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

/** H4's integrals under another header. */
const h4body = h4text.slice(h4text.indexOf('&END') + 5);
const withHeader = (header: string) => `${header}\n${h4body}`;

describe('namelist headers as Fortran writes them (each was an FcidumpError before)', () => {
  const ref = parseFcidump(h4text);
  const same = (text: string) => {
    const fd = parseFcidump(text, { file: 'h.FCIDUMP' });
    expect([fd.norb, fd.nelec, fd.ms2, fd.isym, Array.from(fd.orbsym), fd.ecore]).toEqual([ref.norb, ref.nelec, ref.ms2, ref.isym, Array.from(ref.orbsym), ref.ecore]);
    expect(fd.h1).toEqual(ref.h1);
    expect(fd.eri).toEqual(ref.eri);
  };

  it("repeat counts 'r*value' (gfortran's namelist output: ORBSYM= 2*1, 2*5): r copies (was 'a number … got \"2*1\"')", () => {
    same(withHeader(' &FCI NORB=4,NELEC=4,MS2=0,\n  ORBSYM= 2*1, 2*5,\n  ISYM=1,\n &END'));
    same(withHeader(' &FCI NORB=4,NELEC=4,MS2=0,ORBSYM=1,1*1,2*5,ISYM=1*1 &END'));
    // what a repeat cannot be: refused at its line and column
    expect(() => parseFcidump(withHeader(' &FCI NORB=4,NELEC=4,MS2=0,ORBSYM=0*1,4*1 &END'))).toThrow(/:1:35: expected a repeat count r in 1\.\.65536 in 'r\*value' in header key ORBSYM, got "0\*1"/);
    expect(() => parseFcidump(withHeader(' &FCI NORB=4,NELEC=4,MS2=0,ORBSYM=100000000*1 &END'))).toThrow(/repeat count r in 1\.\.65536/);
    expect(() => parseFcidump(withHeader(' &FCI NORB=4,NELEC=4,MS2=0,ORBSYM=4* &END'))).toThrow(/a value after the repeat count .*null values 'r\*' are not supported/);
    expect(() => parseFcidump(withHeader(' &FCI NORB=4,NELEC=4,MS2=0,ORBSYM=4*x &END'))).toThrow(/:1:37: expected a number or a logical after 'r\*' in header key ORBSYM, got "x"/);
    // a repeated count must still match NORB
    expect(() => parseFcidump(withHeader(' &FCI NORB=4,NELEC=4,MS2=0,ORBSYM=3*1 &END'))).toThrow(/expected ORBSYM with NORB=4 entries, got 3 entries/);
  });

  it("'!' comments (Fortran namelist input), a key whose '=' is on the next line, a UTF-8 byte order mark", () => {
    same(withHeader(' &FCI NORB=4, ! orbitals\n NELEC=4,MS2=0, ! closed shell\n ! a whole comment line\n ORBSYM=1,1,5,5,ISYM=1\n &END ! end of header'));
    same(withHeader(' &FCI NORB\n = 4, NELEC\n\n =4,MS2=0,ORBSYM=1,1,5,5,ISYM=1\n &END'));
    same(`\ufeff${h4text}`); // readFileSync(path, 'utf8') keeps it; the message showed an invisible character
    // a name followed by anything but '=' is still refused, naming the name where it was
    expect(() => parseFcidump(withHeader(' &FCI NORB\n NELEC=4 &END'))).toThrow(/:1:7: expected a key 'NAME=' or a value, got "NORB" followed by "NELEC=4 &END" on line 2/);
    expect(() => parseFcidump(withHeader(' &FCI NORB=4 NELEC &END'))).toThrow(/expected a key 'NAME=' or a value, got "NELEC"/);
    // a byte order mark anywhere else is not one
    expect(() => parseFcidump(withHeader(' &FCI NORB=4,\n\ufeffNELEC=4 &END'))).toThrow(/:2:1:/);
  });
});

describe("an FCIDUMP whose MS2 has the other parity than NELEC (PySCF's writer puts MS2=0 unless told)", () => {
  // H4 with one electron less: NELEC=3 and the header's MS2=0, as pyscf.tools.fcidump writes a radical
  const odd = withHeader(' &FCI NORB=4,NELEC=3,MS2=0,ORBSYM=1,1,5,5,ISYM=1 &END');

  it('without ms2: still refused, now saying where such files come from and what to pass', () => {
    expect(() => parseFcidump(odd, { file: 'h4+.FCIDUMP' })).toThrow(/h4\+\.FCIDUMP:1: expected MS2 with \|MS2\| ≤ NELEC and the same parity as NELEC=3, got 0 \(PySCF's writer puts MS2=0 unless told.*--ms2, e\.g\. 1\)/);
  });

  it('with ms2 = 1 (CLI --ms2 1): read with a note, and the doublet energies equal those of the file with MS2=1 (the file was refused whatever --ms2 said)', async () => {
    const fd = parseFcidump(odd, { ms2: 1 });
    expect(fd.ms2).toBe(1);
    expect(fd.notes).toContain('MS2=0 in the header does not match NELEC=3 (odd/even): the given ms2 = 1 is used');
    const right = parseFcidump(withHeader(' &FCI NORB=4,NELEC=3,MS2=1,ORBSYM=1,1,5,5,ISYM=1 &END'));
    const [a, b] = [await ciEnergies(fd, { nroots: 2, ms2: 1 }), await ciEnergies(right, { nroots: 2 })];
    expect(a.energies[0]).toBeCloseTo(b.energies[0]!, 10);
    expect(a.energies[1]).toBeCloseTo(b.energies[1]!, 10);
    // a header of the right parity is not touched by a given ms2 (the driver applies it)
    expect(parseFcidump(withHeader(' &FCI NORB=4,NELEC=3,MS2=1 &END'), { ms2: -1 }).ms2).toBe(1);
    // a given ms2 of the wrong parity too: named
    expect(() => parseFcidump(odd, { ms2: 2 })).toThrow(/parameter ms2: expected an integer with \|ms2\| ≤ 3 and the parity of NELEC=3 \(it replaces the header's MS2=0, of the wrong parity\), got 2/);
  });
});
