/**
 * README.md shows what `pnpm start --backend cpu` prints. The CPU backend is deterministic (the
 * same energies, residual norms and iteration counts on every run and any thread count), so
 * everything but the times must match what the code prints now: the README's quick start had
 * drifted (residuals of the old residual rule, 436 CG iterations) before this test.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../src/main';
import { captured, captureOutput } from './capture';

captureOutput();
const threads = process.env.GPUSPARSE_THREADS;
process.env.GPUSPARSE_THREADS = '2'; // the README's run; results do not depend on it, the header names it
afterAll(() => {
  if (threads === undefined) delete process.env.GPUSPARSE_THREADS;
  else process.env.GPUSPARSE_THREADS = threads;
});

/** The text with times masked and runs of spaces collapsed (column widths follow the times). */
function normalize(text: string): string[] {
  return text
    .trim()
    .split('\n')
    .map((line) => {
      let l = line.replace(/\d+(?:\.\d+)? ms\b/g, 'N ms').replace(/\s+/g, ' ').trim();
      // the Poisson row: converged, outer, inner iterations, residual, error, then setup and solve ms
      if (/^(true|false) \d+ \d+ /.test(l)) l = l.split(' ').slice(0, 5).join(' ');
      if (/^-+( -+)+$/.test(l)) l = '(rule)';
      return l;
    });
}

describe("README's pnpm start --backend cpu", () => {
  it('prints what the README shows, but for the times', async () => {
    const readme = readFileSync(fileURLToPath(new URL('../../../README.md', import.meta.url)), 'utf8');
    const block = /```text\n(gpusparse main job on CPU[\s\S]*?)```/.exec(readme)?.[1];
    expect(block, 'README.md: a ```text block starting "gpusparse main job on CPU"').toBeDefined();
    expect(await main(['start', '--backend', 'cpu'])).toBe(0);
    expect(normalize(captured.stdout)).toEqual(normalize(block!));
  }, 120_000);
});
