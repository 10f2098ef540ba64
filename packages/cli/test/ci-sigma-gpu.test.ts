/**
 * `gpusparse ci --backend webgpu --sigma direct|auto`: the direct σ on the device (float32 WGSL on
 * lavapipe here) with the float64 host polish, from the command line; the energies of the
 * explicit path, and the cost model's choice in the notes.
 */
import { describe, expect, it } from 'vitest';
import { main } from '../src/main';
import { captured, captureOutput } from './capture';
import { dataFile } from '../../../testdata/index';

const data = (f: string) => dataFile('fcidump', f);
captureOutput();
// part of the GPU tier (vitest.config.ts): skipped with it when no adapter appears
const gpuTierSkipped = process.env.GPUSPARSE_GPU_TIER === 'skip' && process.env.GPUSPARSE_REQUIRE_GPU !== '1';

describe.skipIf(gpuTierSkipped)('ci --backend webgpu --sigma', () => {
  it('direct: the explicit path’s energy to 1e-8 Eh, no stored non-zeros, the device operator named, df64 polish on the device', async () => {
    expect(await main(['ci', data('N2_sto3g_R1.1A_block2.FCIDUMP'), '--irrep', '1', '--nroots', '2', '--backend', 'webgpu', '--sigma', 'direct', '--json'])).toBe(0);
    const j = JSON.parse(captured.stdout);
    expect(j.nnz).toBe(0);
    expect(j.format).toMatch(/^direct-sigma-gpu\(f32/);
    expect(j.solver.method).toMatch(/float32.*df64 .*polish/); // the df64 direct σ on the device (lavapipe passes the df64 self-test)
    expect(j.notes.join('\n')).toMatch(/direct σ on the device/);
    expect(Math.abs(j.energies[0] - -107.654122447525)).toBeLessThan(1e-8);
    expect(j.residualNorms[0]).toBeLessThan(1e-8);
  });

  it('auto: says which path it took, with the σ time measured on the device', async () => {
    expect(await main(['ci', data('H8_sto6g_R1.8_block2.FCIDUMP'), '--irrep', '1', '--backend', 'webgpu', '--sigma', 'auto', '--json'])).toBe(0);
    const j = JSON.parse(captured.stdout);
    expect(j.notes.join('\n')).toMatch(/sigma auto: (direct|explicit) — σ measured [\d.]+ ms on the device × \d+ products/);
    // the path named is the path taken: no stored H when direct, the assembled one when explicit
    if (/sigma auto: direct/.test(j.notes.join('\n'))) expect(j.nnz).toBe(0);
    else expect(j.nnz).toBeGreaterThan(0);
    expect(Math.abs(j.energies[0] - -4.3450794027)).toBeLessThan(1e-8);
  });
});
