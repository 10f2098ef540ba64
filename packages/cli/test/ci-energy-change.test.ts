/** `gpusparse ci --energy-change e`: the OpenMolcas-style stop rule, against the residual rule on the same run. */
import { describe, expect, it } from 'vitest';
import { main } from '../src/main';
import { captured, captureOutput } from './capture';
import { dataFile } from '../../../testdata/index';

const n2 = dataFile('fcidump', 'N2_sto3g_R1.1A_block2.FCIDUMP');
const args = ['ci', n2, '--irrep', '1', '--backend', 'cpu', '--sigma', 'direct', '--multiplicity', '1', '--json'];
captureOutput();

describe('ci --energy-change', () => {
  it('stops in fewer iterations than the residual rule, says so, energy within 1e-8 Eh, residual ≤ √e', async () => {
    expect(await main(args)).toBe(0);
    const byResidual = JSON.parse(captured.stdout);
    captured.stdout = '';
    expect(await main([...args, '--energy-change', '1e-8'])).toBe(0);
    const byEnergy = JSON.parse(captured.stdout);
    expect(byEnergy.notes.join('\n')).toMatch(/stop: energy change < 1e-8 Eh per iteration and ‖r‖ ≤ 1\.0e-4 \(not a certified energy error\)/);
    expect(byEnergy.solver.iterations).toBeLessThan(byResidual.solver.iterations);
    expect(byResidual.residualNorms[0]).toBeLessThanOrEqual(1e-8);
    expect(byEnergy.residualNorms[0]).toBeLessThanOrEqual(1e-4);
    expect(byEnergy.residualNorms[0]).toBeGreaterThan(1e-8); // it did stop on the energy, not the residual
    // Davidson's Ritz value is an upper bound: never below the converged energy (beyond rounding)
    expect(byEnergy.energies[0] - byResidual.energies[0]).toBeGreaterThan(-1e-12);
    expect(byEnergy.energies[0] - byResidual.energies[0]).toBeLessThan(1e-8);
  });

  it('a value outside [1e-15, 0.1] is a usage error (exit 2)', async () => {
    expect(await main([...args, '--energy-change', '0'])).toBe(2);
    expect(captured.stderr).toMatch(/--energy-change: expected .*1e-15.*got '0'/);
  });

  it('with --export-petsc it is a usage error, not silently ignored', async () => {
    expect(await main(['ci', n2, '--export-petsc', '/tmp/never-written.petsc', '--energy-change', '1e-8'])).toBe(2);
    expect(captured.stderr).toMatch(/--energy-change: not with --engine or --export-petsc/);
  });
});
