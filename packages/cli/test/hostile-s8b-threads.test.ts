// Session 8b: `ci` with the explicit H (the default σ) honours GPUSPARSE_THREADS for the
// assembly's worker threads (it took a thread per core past 20 000 determinants whatever the
// variable said), with the same energy; a bad value is refused naming the variable.
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

describe('GPUSPARSE_THREADS and the explicit-H assembly', () => {
  for (const [t, workers] of [
    ['1', 0],
    ['3', 2],
  ] as const) {
    it(`GPUSPARSE_THREADS=${t}: the assembly runs ${workers} worker(s) beside the main thread, same energy`, async () => {
      process.env.GPUSPARSE_THREADS = t;
      expect(await main(['ci', n2, '--irrep', '1', '--backend', 'cpu', '--json'])).toBe(0);
      const j = JSON.parse(captured.stdout);
      expect(j.assembly.workers).toBe(workers);
      expect(Math.abs(j.energies[0] - -107.654122447525)).toBeLessThan(1e-8);
    });
  }
  it('GPUSPARSE_THREADS=abc with the explicit H: exit 3 naming the variable', async () => {
    process.env.GPUSPARSE_THREADS = 'abc';
    expect(await main(['ci', n2, '--irrep', '1', '--backend', 'cpu'])).toBe(3);
    expect(captured.stderr).toMatch(/GPUSPARSE_THREADS \(environment variable\): expected an integer in \[1, 64\], got abc/);
  });
});
