/**
 * ciEnergies with the direct σ (options.hamiltonian = directHamiltonian()): the reference
 * energies of /work/shared/data/fcidump/README.md to 1e-8 Eh, Davidson and the dense solver,
 * spin penalties, MS2 = 0, 2, 3, and the same roots as the explicit path.
 */
import { describe, expect, it } from 'vitest';
import { ciEnergies } from '../src/ci';
import { autoHamiltonian, chooseSigma } from '../src/direct/choose';
import { directHamiltonian } from '../src/direct/ci';
import { buildCiSpace } from '../src/determinants/build';
import { readFcidump } from '../src/fcidump/node';
import { dataFile } from '../../../testdata/index';

const data = (f: string) => dataFile('fcidump', f);
const near = (a: number, b: number, tol = 1e-8) => expect(Math.abs(a - b)).toBeLessThan(tol);

describe('CI energies with the direct σ', () => {
  it('H8/STO-6G in Ag, three roots on two threads: the explicit path’s roots, no stored H', async () => {
    const fd = await readFcidump(data('H8_sto6g_R1.8_block2.FCIDUMP'));
    const d = await ciEnergies(fd, { irrep: 'isym', nroots: 3, hamiltonian: directHamiltonian({ threads: 2 }) });
    const e = await ciEnergies(fd, { irrep: 'isym', nroots: 3, workers: 0 });
    expect(d.solver.converged).toBe(true);
    expect(d.nnz).toBe(0);
    expect(d.format).toBe('direct-sigma(2 threads)');
    expect(d.notes.join('\n')).toMatch(/H not stored: σ = H·c by direct-sigma/);
    near(d.energies[0]!, -4.3450794027); // cross-check FCI (block2 DMRG −4.3450794024)
    for (let r = 0; r < 3; r++) near(d.energies[r]!, e.energies[r]!, 1e-9);
    // the float64 default stop: certified bound ≤ 1e-8 Eh with ‖r‖ ≤ 1e-4 (or ‖r‖ ≤ 1e-8)
    for (const res of d.residualNorms) expect(res).toBeLessThanOrEqual(1e-4);
    for (const b of d.bounds!.bound) expect(b).toBeLessThanOrEqual(1e-8);
  });

  it('H4/STO-6G (36 determinants): the dense solver on the operator’s columns', async () => {
    const r = await ciEnergies(data('H4_sto6g_R1.8_block2.FCIDUMP'), { hamiltonian: directHamiltonian() });
    expect(r.solver.method).toMatch(/dense/);
    near(r.energies[0]!, -2.1903842188);
  });

  it('N2/STO-3G: ¹Ag ground state and the ³B2g sector through the spin penalty', async () => {
    const fd = await readFcidump(data('N2_sto3g_R1.1A_block2.FCIDUMP'));
    const g = await ciEnergies(fd, { irrep: 1, hamiltonian: directHamiltonian() });
    near(g.energies[0]!, -107.654122447525);
    const t = await ciEnergies(fd, { irrep: 6, spin: { multiplicity: 3 }, hamiltonian: directHamiltonian() });
    near(t.energies[0]!, -107.356943001688);
    expect(t.s2[0]).toBeCloseTo(2, 6);
  });

  it('C4 CAS(8e,12o) MS2 = 3 (B3u) and O2 CAS(12e,8o) MS2 = 2', async () => {
    const c4 = await ciEnergies(data('C4_sto3g_cas8e12o_spin3_dice.FCIDUMP'), { irrep: 2, hamiltonian: directHamiltonian() });
    expect(c4.determinants).toBe(6532);
    near(c4.energies[0]!, -148.91721368839598);
    const o2 = await ciEnergies(data('O2_cas12e8o_C1_dice.FCIDUMP'), { ms2: 2, hamiltonian: directHamiltonian() });
    near(o2.energies[0]!, -149.7049316931);
  });

  it('a space whose vectors would not fit is refused with ResourceLimitError before anything is built', async () => {
    await expect(ciEnergies(data('H8_sto6g_R1.8_block2.FCIDUMP'), { hamiltonian: directHamiltonian({ hostBytes: 1e6 }) })).rejects.toThrow(
      /direct CI over 4900 determinants .*: needs .* available — use point-group symmetry/,
    );
  });

  it('truncated CI with the direct factory is refused before any solve', async () => {
    await expect(ciEnergies(data('H8_sto6g_R1.8_block2.FCIDUMP'), { space: { kind: 'cisd' }, hamiltonian: directHamiltonian() })).rejects.toThrow(/explicit Hamiltonian/);
  });


  it('O2 CAS(12e,8o), MS2 = 0: time reversal finds the singlet (even S) or the triplet (odd S) without a penalty', async () => {
    const fd = await readFcidump(data('O2_cas12e8o_C1_dice.FCIDUMP'));
    const even = await ciEnergies(fd, { hamiltonian: directHamiltonian({ timeReversal: 'even' }) });
    expect(even.solver.converged).toBe(true);
    near(even.energies[0]!, -149.67760156282918); // Dice's singlet; the triplet lies 0.027 Eh lower
    expect(even.s2[0]).toBeCloseTo(0, 6);
    const penalty = await ciEnergies(fd, { spin: { multiplicity: 1 } });
    expect(even.solver.iterations).toBeLessThan(penalty.solver.iterations);
    const odd = await ciEnergies(fd, { hamiltonian: directHamiltonian({ timeReversal: 'odd' }) });
    near(odd.energies[0]!, -149.7049316931);
    expect(odd.s2[0]).toBeCloseTo(2, 6);
  });

  it('N2/STO-3G ¹B2g through time reversal (even S) in one D2h block', async () => {
    const r = await ciEnergies(data('N2_sto3g_R1.1A_block2.FCIDUMP'), { irrep: 6, hamiltonian: directHamiltonian({ timeReversal: 'even', threads: 2 }) });
    near(r.energies[0]!, -107.306744734756);
    expect(r.s2[0]).toBeCloseTo(0, 6);
  });
});

describe('explicit or direct: the cost model', () => {
  it('direct when the explicit H would not fit, explicit for a truncated space or many products', async () => {
    const fd = await readFcidump(data('H8_sto6g_R1.8_block2.FCIDUMP'));
    const { fcidump, space } = buildCiSpace(fd, 'fci', { irrep: 1 });
    const tight = chooseSigma(fcidump, space, { products: 1000, hostBytes: 1e6 });
    expect(tight.sigma).toBe('direct');
    expect(tight.reason).toMatch(/would need .* GB at assembly/);
    expect(chooseSigma(fcidump, space, { products: 1000, hostBytes: 1e12 }).sigma).toBe('explicit');
    const few = chooseSigma(fcidump, space, { products: 5, hostBytes: 1e12 });
    expect(few.sigma).toBe('direct');
    expect(few.directMs).toBeLessThan(few.explicitMs);
    const cisd = buildCiSpace(fd, { kind: 'cisd' }, {});
    expect(chooseSigma(cisd.fcidump, cisd.space, { products: 5, hostBytes: 1e6 }).reason).toMatch(/not an FCI\/CAS space/);
  });

  it('autoHamiltonian in ciEnergies: the choice and its reason in the notes, the reference energy either way', async () => {
    const fd = await readFcidump(data('H8_sto6g_R1.8_block2.FCIDUMP'));
    for (const products of [5, 5000]) {
      const r = await ciEnergies(fd, { irrep: 1, hamiltonian: autoHamiltonian({ products }) });
      expect(r.notes.join('\n')).toMatch(products === 5 ? /sigma auto: direct/ : /sigma auto: explicit/);
      expect(r.nnz === 0).toBe(products === 5);
      near(r.energies[0]!, -4.3450794027);
    }
  });
});
