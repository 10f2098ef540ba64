/**
 * `gpusparse ci --backend webgpu --sigma direct --multiplicity m` at MS2 = 0: the device direct σ
 * keeps the spin parity (−1)^S (packages/chem/src/direct/gpu/parity.ts), so no penalty and the
 * df64 polish on the device; the energies of the host direct run (lavapipe here).
 */
import { describe, expect, it } from 'vitest';
import { main } from '../src/main';
import { captured, captureOutput } from './capture';
import { dataFile } from '../../../testdata/index';

const data = (f: string) => dataFile('fcidump', f);
captureOutput();
const gpuTierSkipped = process.env.GPUSPARSE_GPU_TIER === 'skip' && process.env.GPUSPARSE_REQUIRE_GPU !== '1';

async function run(args: string[]) {
  captured.stdout = '';
  expect(await main(['ci', data('H2O_sto2g_hande.FCIDUMP'), '--nroots', '2', '--sigma', 'direct', '--json', ...args])).toBe(0);
  return JSON.parse(captured.stdout) as { energies: number[]; s2: number[]; notes: string[]; solver: { method: string } };
}

describe.skipIf(gpuTierSkipped)('ci --backend webgpu --sigma direct --multiplicity (MS2 = 0)', () => {
  it('triplets: spin parity on the device, no penalty, df64 device polish, the host direct energies to 1e-8 Eh, ⟨S²⟩ = 2', async () => {
    const host = await run(['--backend', 'cpu', '--multiplicity', '3']);
    const dev = await run(['--backend', 'webgpu', '--multiplicity', '3']);
    const notes = dev.notes.join('\n');
    expect(notes).toMatch(/spin parity odd S/);
    expect(notes).toMatch(/multiplicity 3 by time-reversal parity .*no penalty/);
    expect(dev.solver.method).toMatch(/float32.*df64 .*polish/); // the df64 direct σ on the device, not the host polish
    for (let r = 0; r < 2; r++) {
      expect(Math.abs(dev.energies[r]! - host.energies[r]!)).toBeLessThan(1e-8);
      expect(Math.abs(dev.s2[r]! - 2)).toBeLessThan(1e-6);
    }
  });
});
