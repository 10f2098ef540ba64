import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../src/main';
import { captured, captureOutput } from './capture';

captureOutput();
const gpuTierSkipped = process.env.GPUSPARSE_GPU_TIER === 'skip' && process.env.GPUSPARSE_REQUIRE_GPU !== '1';

describe('help texts speak to a user, not to the seed papers', () => {
  it('info --help explains the statistics it prints', async () => {
    expect(await main(['info', '--help'])).toBe(0);
    expect(captured.stdout).not.toMatch(/seed 0\d\d|Table 1/);
    expect(captured.stdout).toMatch(/RSDP: RSD as a percentage of RAVE/);
  });
});

describe.skipIf(gpuTierSkipped)('tune prints the measured candidates and counts the rest', () => {
  const cache = join(mkdtempSync(join(tmpdir(), 'gpusparse-tune-')), 'tune.json');
  it('no row per candidate that was not timed; one line counts them by reason; --all lists them', async () => {
    expect(await main(['tune', 'gen:poisson2d:24', '--cache', cache, '--no-cache'])).toBe(0);
    const table = captured.stdout.split('\n\n')[0]!.split('\n').slice(1); // the rows under the header line
    expect(table.some((l) => /^\S+\s+\S+\s+(skipped|budget|pruned)\s/.test(l))).toBe(false);
    expect(table.some((l) => /^\S+\s+\S+\s+timed\s/.test(l))).toBe(true);
    expect(captured.stdout).toMatch(/^not timed: .*\(--all lists them with their reasons\)$/m);
    expect(captured.stdout).toMatch(/^winner: /m);
    captured.stdout = '';
    expect(await main(['tune', 'gen:poisson2d:24', '--no-cache', '--all'])).toBe(0);
    expect(captured.stdout).toMatch(/^\S+\s+\S+\s+(skipped|pruned)\s/m);
  });
});
