import { describe, expect, it } from 'vitest';
import { readFcidump } from '../src/fcidump/node';
import { fciSpace } from '../src/determinants/space';
import { assembleHamiltonian } from '../src/hamiltonian/assemble';
import { csrEigenvalues } from './helpers/jacobi';
const data = (f: string) => new URL(`../../../../shared/data/fcidump/${f}`, import.meta.url);
describe('smoke', () => {
  it('H4', async () => {
    const fd = await readFcidump(data('H4_sto6g_R1.8_block2.FCIDUMP'));
    const sp = fciSpace(fd.norb, 2, 2);
    const h = await assembleHamiltonian(fd, sp, { workers: 0 });
    const ev = csrEigenvalues(h.matrix);
    console.log(ev[0]! + fd.ecore, h.stats);
    const hw = await assembleHamiltonian(fd, sp, { workers: 2 });
    console.log(hw.stats, hw.matrix.values.length);
    expect(ev[0]! + fd.ecore).toBeCloseTo(-2.1903842178, 8);
  });
});
