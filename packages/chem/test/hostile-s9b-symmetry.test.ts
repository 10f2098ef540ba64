/**
 * Session 9 hardening: an FCIDUMP whose integrals break its own ORBSYM labels. A run restricted
 * to one irrep keeps only that irrep's determinants and so drops every coupling between irreps;
 * before the fix H4 with a forbidden h(3,1) = 0.1 (orbital 3 is irrep 5, orbital 1 irrep 1) gave
 * −2.190384 Eh with --irrep 1, converged — the energy of the file without that integral, while
 * its true ground state is −2.191972 Eh (found by the unrestricted run). Now refused, naming it.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ciEnergies } from '../src/ci';
import { directHamiltonian } from '../src/direct/ci';
import { FcidumpError, parseFcidump, symmetryBreaking } from '../src/fcidump/index';
import { dataFile } from '../../../testdata/index';

const h4 = readFileSync(dataFile('fcidump', 'H4_sto6g_R1.8_block2.FCIDUMP'), 'utf8');
/** H4 with one extra integral line after the header. */
const withLine = (line: string, name: string) => parseFcidump(h4.replace(' &END\n', ` &END\n${line}\n`), { file: name });

describe('integrals that break ORBSYM', () => {
  it('a forbidden h(3,1) = 0.1 with irrep 1: FcidumpError naming it and its irreps, explicit and direct σ (was −2.190384, converged)', async () => {
    const fd = withLine('  0.1   3   1   0   0', 'h31.FCIDUMP');
    expect(symmetryBreaking(fd)).toMatchObject({ kind: 'h', value: 0.1, count: 2 });
    for (const extra of [{}, { hamiltonian: directHamiltonian() }]) {
      const run = ciEnergies(fd, { irrep: 1, nroots: 1, ...extra });
      await expect(run).rejects.toThrow(FcidumpError);
      await expect(ciEnergies(fd, { irrep: 1, nroots: 1, ...extra })).rejects.toThrow(
        /h31\.FCIDUMP: expected integrals that respect ORBSYM for a run restricted to irrep 1 .*got h\((3,1|1,3)\) = 0\.1 between orbitals of irreps (5, 1|1, 5) \(2 such stored integral\(s\)\).*without an irrep restriction/,
      );
    }
    // without the restriction the coupling is kept: the true ground state, below the restricted answer
    const all = await ciEnergies(fd, { nroots: 1 });
    expect(all.energies[0]).toBeCloseTo(-2.1919720701668, 9);
  });
  it("a forbidden two-electron integral (3 1|1 1) = 0.05, and the file's own ISYM as the irrep: refused too", async () => {
    const fd = withLine('  0.05   3   1   1   1', 'eri.FCIDUMP');
    expect(symmetryBreaking(fd)).toMatchObject({ kind: 'eri', value: 0.05, count: 4 });
    await expect(ciEnergies(fd, { irrep: 'isym', nroots: 1 })).rejects.toThrow(/got \(\d \d\|\d \d\) = 0\.05 between orbitals of irreps/);
  });
  it('noise below 1e-8 (real files carry up to ≈ 1e-11) is accepted: the restricted run gives the file energy', async () => {
    const fd = withLine('  3e-12   3   1   0   0', 'noise.FCIDUMP');
    expect(symmetryBreaking(fd)).toBeUndefined();
    const r = await ciEnergies(fd, { irrep: 1, nroots: 1 });
    expect(r.energies[0]).toBeCloseTo(-2.1903842187927, 9);
  });
});
