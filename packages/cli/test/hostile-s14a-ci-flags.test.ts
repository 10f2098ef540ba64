/**
 * Session 14 hardening (s14-harden-e): `ci` flags the run would drop. `--penalty` without
 * `--multiplicity`, `--chunk-nnz` with `--assembly whole` and `--polish` with `--backend cpu` each ran
 * with the flag silently ignored (exit 0, H4 STO-6G's energy); the library's `polish: 'device'` on a
 * float64 backend was dropped the same way, though its own refusal names "a CPU backend". Now usage
 * errors (exit 2, naming both flags) and a NotSupportedError, as `solve --restart` without gmres has
 * been since session 12. Found fine: --tol-residual with --energy-change, --accept bound with
 * --tol-residual (exit 2), --penalty 0, --host-memory 0 / 1e999, --irrep 0, --ms2 1 (exit 3, the
 * parity named), --space cas:3,3 / cas:9,9 (exit 3, the electrons named).
 */
import { ciEnergies } from '@gpusparse/chem';
import { readFcidump } from '@gpusparse/chem/node';
import { NotSupportedError } from '@gpusparse/formats';
import { describe, expect, it } from 'vitest';
import { main } from '../src/main';
import { captured, captureOutput } from './capture';

captureOutput();
const h4 = new URL('../../../testdata/fcidump/H4_sto6g_R1.8_block2.FCIDUMP', import.meta.url).pathname;

describe('ci flags that the run would ignore', () => {
  it('--penalty without --multiplicity, --chunk-nnz with --assembly whole, --polish with --backend cpu: exit 2 naming them (were ignored, exit 0)', async () => {
    const cases: [string[], RegExp][] = [
      [['--penalty', '0.5'], /--penalty: only with --multiplicity/],
      [['--assembly', 'whole', '--chunk-nnz', '100'], /--chunk-nnz: not with --assembly whole/],
      [['--polish', 'device'], /--polish: not with --backend cpu/],
      [['--polish', 'host'], /--polish: not with --backend cpu/],
    ];
    for (const [flags, said] of cases) {
      captured.stdout = '';
      expect(await main(['ci', h4, '--backend', 'cpu', ...flags, '--json']), flags.join(' ')).toBe(2);
      expect(JSON.parse(captured.stdout).error.message).toMatch(said);
    }
    // with what they belong to, they run
    captured.stdout = '';
    expect(await main(['ci', h4, '--backend', 'cpu', '--multiplicity', '1', '--penalty', '0.5', '--json'])).toBe(0);
    expect(JSON.parse(captured.stdout).energies[0]).toBeCloseTo(-2.1903842187927, 9);
  }, 60_000);

  it("ciEnergies polish 'device' on a float64 backend: NotSupportedError (was dropped silently)", async () => {
    const fd = await readFcidump(h4);
    await expect(ciEnergies(fd, { nroots: 1, polish: 'device' })).rejects.toThrow(NotSupportedError);
    await expect(ciEnergies(fd, { nroots: 1, polish: 'device' })).rejects.toThrow(/solves in float64, with no float32 phase to polish/);
    expect((await ciEnergies(fd, { nroots: 1, polish: 'host' })).energies[0]).toBeCloseTo(-2.1903842187927, 9);
  });
});
