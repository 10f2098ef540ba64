/**
 * `gpusparse ci` on spaces that do not fit: refused with exit 5 within seconds, in a child
 * process with a capped V8 heap (the cap shows nothing large is allocated before the refusal);
 * and stage lines on a piped stderr for a run that fits.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { dataFile } from '../../../testdata/index';

const require = createRequire(import.meta.url);
const tsxCli = require.resolve('tsx/cli');
const mainTs = fileURLToPath(new URL('../src/main.ts', import.meta.url));
const data = (name: string) => dataFile('fcidump', name);
const dir = mkdtempSync(join(tmpdir(), 'gpusparse-ci-mem-'));

/** Run the CLI with a 512 MB V8 heap and stderr piped; returns status, output and seconds. */
function cli(args: string[], env: Record<string, string> = {}) {
  const t = performance.now();
  const r = spawnSync(process.execPath, ['--max-old-space-size=512', tsxCli, mainTs, ...args], {
    encoding: 'utf8',
    env: { ...process.env, NODE_OPTIONS: '--max-old-space-size=512', ...env },
    timeout: 120_000,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, seconds: (performance.now() - t) / 1000 };
}

/** A dense C1 FCIDUMP (every integral present, like a molecule without symmetry). */
function denseFcidump(norb: number, nelec: number): string {
  const lines = [`&FCI NORB=${norb},NELEC=${nelec},MS2=0,`, `  ORBSYM=${new Array(norb).fill(1).join(',')},`, '  ISYM=1,', '&END'];
  for (let i = 1; i <= norb; i++) {
    for (let j = 1; j <= i; j++) {
      for (let k = 1; k <= norb; k++) {
        for (let l = 1; l <= k; l++) {
          if (i * (i - 1) / 2 + j < k * (k - 1) / 2 + l) continue;
          const v = i === j && k === l ? 0.5 / (1 + Math.abs(i - k)) : 0.01 / (1 + Math.abs(i - j) + Math.abs(k - l) + Math.abs(i - k));
          lines.push(`${v.toExponential(12)} ${i} ${j} ${k} ${l}`);
        }
      }
    }
  }
  for (let i = 1; i <= norb; i++) for (let j = 1; j <= i; j++) lines.push(`${(i === j ? -2 + 0.1 * i : -0.1 / (i - j)).toExponential(12)} ${i} ${j} 0 0`);
  lines.push('1.0 0 0 0 0');
  return `${lines.join('\n')}\n`;
}

describe('ci refuses spaces that do not fit, within seconds', () => {
  for (const norb of [18, 20]) {
    it(`NORB=${norb} NELEC=10 (C1): exit 5 naming bytes needed and available`, () => {
      const f = join(dir, `dense-${norb}.FCIDUMP`);
      writeFileSync(f, denseFcidump(norb, 10));
      const r = cli(['ci', f, '--backend', 'cpu']);
      expect(r.stderr).toMatch(/needs [\d.]+ [kMGTP]?B, [\d.]+ [kMGTP]?B available/);
      expect(r.stderr).toMatch(/point-group symmetry|smaller active space/);
      expect(r.status).toBe(5);
      expect(r.seconds).toBeLessThan(60);
    });
  }

  it('the 2.4·10^6-determinant N2 CAS(10e,16o) Ag sector on the CPU backend of a 24 GB machine: exit 5', () => {
    const r = cli(['ci', data('N2_631g_cas10e16o_block2_NOREF.FCIDUMP'), '--irrep', '1', '--backend', 'cpu', '--host-memory', '24']);
    expect(r.stderr).toMatch(/2\.389e\+6 determinants/);
    expect(r.stderr).toMatch(/needs 3\d\.\d GB, 24\.0 GB available/);
    expect(r.stderr).toMatch(/GPU backend/);
    expect(r.status).toBe(5);
    expect(r.seconds).toBeLessThan(60);
  });

  it('--dry-run --json prints the estimate table (and exit 5 when it would not fit)', () => {
    const r = cli(['ci', data('N2_631g_cas10e16o_block2_NOREF.FCIDUMP'), '--irrep', '1', '--backend', 'cpu', '--host-memory', '24', '--dry-run', '--json']);
    const j = JSON.parse(r.stdout);
    expect(j.determinants).toBe(2388528);
    expect(j.nnz.nnz).toBeGreaterThan(1.2e9);
    expect(j.stages.map((s: { stage: string }) => s.stage)).toEqual(['space', 'assembly', 'solve']);
    expect(j.fits).toBe(false);
    expect(r.status).toBe(5);
  });
});

describe('ci --assembly', () => {
  it('an unknown assembly mode is a usage error (exit 2)', () => {
    const r = cli(['ci', data('H4_sto6g_R1.8_block2.FCIDUMP'), '--backend', 'cpu', '--assembly', 'bogus']);
    expect(r.stderr).toMatch(/--assembly: expected auto, chunked or whole, got 'bogus'/);
    expect(r.status).toBe(2);
  });
});

describe('ci progress off a terminal', () => {
  it('prints a line per stage with the elapsed time on a piped stderr, and the run completes', () => {
    const r = cli(['ci', data('H8_sto6g_R1.8_block2.FCIDUMP'), '--backend', 'cpu', '--solver', 'davidson'], { GPUSPARSE_PROGRESS_INTERVAL_MS: '0' });
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/-4\.34507940/);
    const lines = r.stderr.split('\n').filter((l) => /^ci \[\d+\.\ds\] /.test(l));
    const text = lines.join('\n');
    for (const re of [/reading /, /FCIDUMP read/, /sized: 4900 determinants/, /determinant space built/, /assembly: \d+\/4900 rows/, /solving/, /Davidson: iteration \d+/, /done: converged/]) {
      expect(text).toMatch(re);
    }
  });
});
