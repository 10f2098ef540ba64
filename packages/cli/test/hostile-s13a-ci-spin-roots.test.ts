/**
 * Session 13: `gpusparse ci --multiplicity m --nroots n` with n above the states of that spin in
 * the space. Davidson (the default above 64 determinants, or --solver davidson) returned roots of
 * another spin with exit 0, named only in a `note:` line. Now it is an invalid parameter (exit 3, as the dense solve's refusal was) naming
 * the count, on the host and the device backend alike, and before any assembly; a result whose
 * roots still miss the request (the driver's last safety net, `spinShortfall`) prints a WARNING
 * line, is NOT converged (exit 1) and carries `spinShortfall` in --json.
 */
import { describe, expect, it } from 'vitest';
import { main } from '../src/main';
import { dataFile } from '../../../testdata/index';
import { captured, captureOutput } from './capture';

captureOutput();
const H4 = dataFile('fcidump', 'H4_sto6g_R1.8_block2.FCIDUMP');
const gpuTierSkipped = process.env.GPUSPARSE_GPU_TIER === 'skip' && process.env.GPUSPARSE_REQUIRE_GPU !== '1';

describe('ci: more roots of a multiplicity than exist', () => {
  it('host, Davidson and dense: exit 3 naming the count (20 singlets, 1 quintet); the count itself runs (exit 0)', async () => {
    for (const solver of ['davidson', 'dense']) {
      captured.stderr = '';
      expect(await main(['ci', H4, '--backend', 'cpu', '--solver', solver, '--nroots', '21', '--multiplicity', '1'])).toBe(3);
      expect(captured.stderr).toMatch(/nroots: expected at most 20: the states of multiplicity 1 in this space/);
      captured.stderr = '';
      expect(await main(['ci', H4, '--backend', 'cpu', '--solver', solver, '--nroots', '2', '--multiplicity', '5', '--json'])).toBe(3);
      expect(captured.stderr).toMatch(/at most 1: the states of multiplicity 5/);
    }
    captured.stdout = '';
    expect(await main(['ci', H4, '--backend', 'cpu', '--solver', 'davidson', '--nroots', '1', '--multiplicity', '5', '--json'])).toBe(0);
    const r = JSON.parse(captured.stdout);
    expect(Math.abs(r.s2[0] - 6)).toBeLessThan(1e-6);
    expect(r.spinShortfall).toBeUndefined();
  });
  it('a result that still misses the spin (Davidson with --maxit 1: triplets among 20 singlets): WARNING line, NOT converged, exit 1; --json carries spinShortfall', async () => {
    captured.stdout = '';
    expect(await main(['ci', H4, '--backend', 'cpu', '--solver', 'davidson', '--nroots', '20', '--multiplicity', '1', '--maxit', '1'])).toBe(1);
    expect(captured.stdout).toMatch(/WARNING: the roots do not answer --multiplicity: roots [\d, ]+ have another spin/);
    expect(captured.stdout).toMatch(/NOT converged/);
    captured.stdout = '';
    expect(await main(['ci', H4, '--backend', 'cpu', '--solver', 'davidson', '--nroots', '20', '--multiplicity', '1', '--maxit', '1', '--json'])).toBe(1);
    const r = JSON.parse(captured.stdout);
    expect(r.spinShortfall.otherSpin.length).toBeGreaterThan(0);
    expect(r.solver.converged).toBe(false);
  });
  it.skipIf(gpuTierSkipped)('the device backend (float32 Davidson + polish): the same refusal', async () => {
    captured.stderr = '';
    expect(await main(['ci', H4, '--backend', 'webgpu', '--solver', 'davidson', '--nroots', '16', '--multiplicity', '3'])).toBe(3);
    expect(captured.stderr).toMatch(/at most 15: the states of multiplicity 3/);
  });
});
