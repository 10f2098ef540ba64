/** `gpusparse ci --irrep 1,2,…`: one run per irrep in one process, each the same as a run of its own. */
import { describe, expect, it } from 'vitest';
import { main } from '../src/main';
import { captured, captureOutput } from './capture';
import { dataFile } from '../../../testdata/index';

const h2o = dataFile('fcidump', 'H2O_sto2g_hande.FCIDUMP');
captureOutput();

describe('ci --irrep list', () => {
  it('--irrep 1,3 --json: { irreps: [...] }, each irrep as its own run gives it', async () => {
    const args = [h2o, '--backend', 'cpu', '--sigma', 'direct', '--multiplicity', '1', '--nroots', '2', '--json'];
    expect(await main(['ci', ...args, '--irrep', '1,3'])).toBe(0);
    const both = JSON.parse(captured.stdout);
    expect(both.irreps.map((r: { irrep: number }) => r.irrep)).toEqual([1, 3]);
    // HANDE's A1 ground state of this file
    expect(Math.abs(both.irreps[0].energies[0] - -72.786196191345)).toBeLessThan(1e-8);
    for (const [k, irrep] of [1, 3].entries()) {
      captured.stdout = '';
      expect(await main(['ci', ...args, '--irrep', String(irrep)])).toBe(0);
      const one = JSON.parse(captured.stdout);
      expect(one.irreps).toBeUndefined();
      expect(both.irreps[k].determinants).toBe(one.determinants);
      for (let j = 0; j < 2; j++) expect(Math.abs(both.irreps[k].energies[j] - one.energies[j])).toBeLessThan(1e-9);
    }
  });

  it('text output titles each irrep', async () => {
    expect(await main(['ci', h2o, '--backend', 'cpu', '--irrep', '2,4', '--nroots', '1'])).toBe(0);
    expect(captured.stdout).toMatch(/irrep 2: FCI[^\n]*irrep 2\)[\s\S]*irrep 4: FCI[^\n]*irrep 4\)/);
  });

  it('a repeated or out-of-range irrep is a usage error (exit 2)', async () => {
    expect(await main(['ci', h2o, '--backend', 'cpu', '--irrep', '1,1'])).toBe(2);
    expect(captured.stderr).toMatch(/--irrep: expected distinct irreps, got '1,1'/);
    expect(await main(['ci', h2o, '--backend', 'cpu', '--irrep', '1,9'])).toBe(2);
  });
});
