/** `gpusparse ci --sigma explicit|direct|auto`: the direct σ from the command line, and the cost model's choice in the notes. */
import { describe, expect, it } from 'vitest';
import { main } from '../src/main';
import { captured, captureOutput } from './capture';
import { dataFile } from '../../../testdata/index';

const data = (f: string) => dataFile('fcidump', f);
captureOutput();

describe('ci --sigma', () => {
  it('direct: same energy as the explicit H, no stored non-zeros, the operator named', async () => {
    expect(await main(['ci', data('N2_sto3g_R1.1A_block2.FCIDUMP'), '--irrep', '1', '--backend', 'cpu', '--sigma', 'direct', '--json'])).toBe(0);
    const j = JSON.parse(captured.stdout);
    expect(j.nnz).toBe(0);
    expect(j.format).toMatch(/^direct-sigma/);
    expect(Math.abs(j.energies[0] - -107.654122447525)).toBeLessThan(1e-8);
    // σ has its own threads: no second (idle) worker pool for Davidson's vectors
    expect(j.backend).toMatch(/WebAssembly SIMD, 1 thread\)/);
  });

  it('auto: says which path it took and why', async () => {
    expect(await main(['ci', data('H8_sto6g_R1.8_block2.FCIDUMP'), '--irrep', '1', '--backend', 'cpu', '--sigma', 'auto', '--json'])).toBe(0);
    const j = JSON.parse(captured.stdout);
    expect(j.notes.join('\n')).toMatch(/sigma auto: (direct|explicit) — modelled .* s direct vs .* s explicit/);
    expect(Math.abs(j.energies[0] - -4.3450794027)).toBeLessThan(1e-8);
  });

  it('direct --multiplicity 3 at MS2 = 0: the odd spin parity (time reversal), no penalty, ⟨S²⟩ = 2', async () => {
    expect(await main(['ci', data('N2_sto3g_R1.1A_block2.FCIDUMP'), '--irrep', '6', '--backend', 'cpu', '--sigma', 'direct', '--multiplicity', '3', '--json'])).toBe(0);
    const j = JSON.parse(captured.stdout);
    expect(j.format).toMatch(/time reversal: odd S/);
    expect(j.notes.join('\n')).toMatch(/multiplicity 3 by time-reversal parity .*no penalty/);
    expect(Math.abs(j.energies[0] - -107.356943001688)).toBeLessThan(1e-8);
    expect(Math.abs(j.s2[0] - 2)).toBeLessThan(1e-8);
  });

  it('a bad value is a usage error (exit 2)', async () => {
    expect(await main(['ci', data('H4_sto6g_R1.8_block2.FCIDUMP'), '--backend', 'cpu', '--sigma', 'fast'])).toBe(2);
    expect(captured.stderr).toMatch(/--sigma: expected explicit, direct or auto, got 'fast'/);
  });
});
