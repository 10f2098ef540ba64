/**
 * The float64 CI Davidson's default stop (issue 19): a root is accepted when its certified
 * Lehmann–Temple bound 0 ≤ E − λ ≤ ε²/gap is ≤ tol and ‖r‖ ≤ the residual floor (√tol), or
 * when ‖r‖ ≤ tol — against the residual rule on the same runs (H8/STO-6G FCI, 4 900
 * determinants), the floor on its own, and the option checks.
 */
import { InvalidParameterError } from '@gpusparse/formats';
import { describe, expect, it } from 'vitest';
import { dataFile } from '../../../testdata/index';
import { ciJudge } from '../src/ci-polish';
import { residualFloor } from '../src/ci-solve';
import { ciEnergies, directHamiltonian } from '../src/index';
import { readFcidump } from '../src/node';

const H8_FCI = -4.3450794024; // FCI-exact DMRG, /work/shared/data/fcidump/README.md (our float64 FCI: −4.3450794027)
const h8 = () => readFcidump(dataFile('fcidump', 'H8_sto6g_R1.8_block2.FCIDUMP'));

describe('ciJudge with a residual floor', () => {
  it('a root whose bound passes is still refused while its residual is above the floor', () => {
    const judge = ciJudge(1e-8, 1, 2 ** -53, true, 1e-5);
    // θ = (0, 1): gap ≈ 1, so ‖r‖ = 3e-5 gives a bound of 9e-10 ≤ 1e-8, but 3e-5 > the floor 1e-5
    expect(judge.report([0, 1], [3e-5, 0]).bound[0]).toBeLessThan(1e-8);
    expect(judge.accept([0, 1], [3e-5, 0])[0]).toBe(false);
    expect(judge.accept([0, 1], [5e-6, 0])[0]).toBe(true);
    expect(judge.report([0, 1], [5e-6, 0]).acceptedBy).toEqual(['bound']);
    // without a floor (the float32 polish's mode) the first one passes
    expect(ciJudge(1e-8, 1, 2 ** -53, true).accept([0, 1], [3e-5, 0])[0]).toBe(true);
  });

  it('the default floor is √tol, never below tol', () => {
    expect(residualFloor(1e-8, undefined)).toBeCloseTo(1e-4, 15);
    expect(residualFloor(1e-6, undefined)).toBeCloseTo(1e-3, 15);
    expect(residualFloor(1e-8, 1e-9)).toBe(1e-8);
  });
});

describe('ciEnergies on a float64 backend: the bound stop is the default', () => {
  it('H8 Ag, 3 roots (direct σ): energies within 1e-8 Eh of the residual rule and the reference, bounds ≤ tol, residuals ≤ 1e-4, fewer iterations', async () => {
    const fd = await h8();
    const opts = { irrep: 'isym' as const, nroots: 3, hamiltonian: directHamiltonian({ threads: 1 }) };
    const byBound = await ciEnergies(fd, opts);
    const byResidual = await ciEnergies(fd, { ...opts, accept: 'residual' });
    expect(byBound.solver.converged).toBe(true);
    expect(byBound.bounds!.accept).toBe('bound');
    expect(byBound.bounds!.acceptedBy.every((a) => a === 'bound' || a === 'residual')).toBe(true);
    expect(byBound.bounds!.acceptedBy).toContain('bound');
    for (const b of byBound.bounds!.bound) expect(b).toBeLessThanOrEqual(1e-8);
    for (const x of byBound.residualNorms) expect(x).toBeLessThanOrEqual(1e-4);
    expect(Math.max(...byBound.residualNorms)).toBeGreaterThan(1e-8); // it did stop on the bound
    expect(byBound.notes.join('\n')).toMatch(/stop: roots accepted by .*certified bounds .* Eh \(0 ≤ E − λ ≤ bound with ‖r‖ ≤ 1\.0e-4/);
    for (const x of byResidual.residualNorms) expect(x).toBeLessThanOrEqual(1e-8);
    expect(byResidual.bounds).toBeUndefined();
    expect(Math.abs(byBound.energies[0]! - H8_FCI)).toBeLessThan(1e-8);
    for (let r = 0; r < 3; r++) {
      // an upper bound (Rayleigh–Ritz), within its certified bound of the converged energy
      const d = byBound.energies[r]! - byResidual.energies[r]!;
      expect(d, `root ${r}`).toBeGreaterThan(-1e-12);
      expect(d, `root ${r}`).toBeLessThanOrEqual(byBound.bounds!.bound[r]! + 1e-12);
    }
    expect(byBound.solver.iterations).toBeLessThan(byResidual.solver.iterations);
  }, 60_000);

  it('residualFloor = tol gives the residual rule’s residuals; one root without accept: no guard root, residual rule, a note', async () => {
    const fd = await h8();
    const strict = await ciEnergies(fd, { irrep: 'isym', nroots: 2, residualFloor: 1e-8, workers: 0 });
    for (const x of strict.residualNorms) expect(x).toBeLessThanOrEqual(1e-8);
    const one = await ciEnergies(fd, { irrep: 'isym', nroots: 1, workers: 0 });
    expect(one.solver.method).toContain('k=1');
    expect(one.bounds!.acceptedBy).toEqual(['residual']);
    expect(one.residualNorms[0]).toBeLessThanOrEqual(1e-8);
    expect(one.notes.join('\n')).toMatch(/no guard root above the wanted one/);
  }, 60_000);

  it('a residualFloor that is not a positive number is refused with InvalidParameterError', async () => {
    const fd = await h8();
    for (const bad of [0, -1e-5, Number.NaN]) await expect(ciEnergies(fd, { nroots: 1, residualFloor: bad })).rejects.toThrow(InvalidParameterError);
  });
});
