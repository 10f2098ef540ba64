// Session 8: `ci --backend cpu --sigma direct|auto` honours GPUSPARSE_THREADS for the direct σ's
// worker threads (it took every core whatever the variable said), and a bad value is still
// refused naming the variable.
import { afterEach, describe, expect, it } from 'vitest';
import { main } from '../src/main';
import { captured, captureOutput } from './capture';
import { dataFile } from '../../../testdata/index';

const n2 = dataFile('fcidump', 'N2_sto3g_R1.1A_block2.FCIDUMP');
captureOutput();
const saved = process.env.GPUSPARSE_THREADS;
afterEach(() => {
  if (saved === undefined) delete process.env.GPUSPARSE_THREADS;
  else process.env.GPUSPARSE_THREADS = saved;
});

describe('GPUSPARSE_THREADS and the host direct σ', () => {
  for (const [t, label] of [
    ['1', 'direct-sigma(1 thread)'],
    ['3', 'direct-sigma(3 threads)'],
  ] as const) {
    it(`GPUSPARSE_THREADS=${t}: the σ runs on ${t} thread(s), same energy`, async () => {
      process.env.GPUSPARSE_THREADS = t;
      expect(await main(['ci', n2, '--irrep', '1', '--backend', 'cpu', '--sigma', 'direct', '--json'])).toBe(0);
      const j = JSON.parse(captured.stdout);
      expect(j.format).toBe(label);
      expect(Math.abs(j.energies[0] - -107.654122447525)).toBeLessThan(1e-8);
    });
  }
  it('GPUSPARSE_THREADS=0 with --sigma direct: exit 3 naming the variable', async () => {
    process.env.GPUSPARSE_THREADS = '0';
    expect(await main(['ci', n2, '--irrep', '1', '--backend', 'cpu', '--sigma', 'direct'])).toBe(3);
    expect(captured.stderr).toMatch(/GPUSPARSE_THREADS \(environment variable\): expected an integer in \[1, 64\], got 0/);
  });
});
