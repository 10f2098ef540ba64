/**
 * Session 7 hostile inputs through the CLI: each case gave a silent wrong answer, a misleading
 * exit code or message before its fix. Tiny files written here.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../src/main';
import { captured, captureOutput } from './capture';

captureOutput();
const dir = mkdtempSync(join(tmpdir(), 'gpusparse-s7-'));
const gpuTierSkipped = process.env.GPUSPARSE_GPU_TIER === 'skip' && process.env.GPUSPARSE_REQUIRE_GPU !== '1';

/** A diagonal Matrix Market file with the given values. */
function diag(name: string, values: string[]): string {
  const path = join(dir, name);
  writeFileSync(path, `%%MatrixMarket matrix coordinate real general\n${values.length} ${values.length} ${values.length}\n${values.map((v, i) => `${i + 1} ${i + 1} ${v}`).join('\n')}\n`);
  return path;
}
/** The entries of a coordinate Matrix Market file as "i j value" lines. */
const entries = (path: string) => readFileSync(path, 'utf8').split('\n').filter((l) => /^\d+ \d+ /.test(l)).slice(1);

describe.skipIf(gpuTierSkipped)('spgemm outside float32 on the device', () => {
  it('values 1e20 (products 1e40) or 1e-30 (products 1e-60): C = A·B to float32 rounding, exit 0 (was Infinity written, or the entries dropped)', async () => {
    for (const [name, values] of [['big.mtx', ['1e20', '3e19', '-2e20']], ['tiny.mtx', ['3e-30', '1e-30', '-2e-30']]] as const) {
      const a = diag(name, [...values]);
      const out = join(dir, `c-${name}`);
      captured.stdout = '';
      expect(await main(['spgemm', a, a, '-o', out, '--backend', 'webgpu', '--check', '--json'])).toBe(0);
      expect(JSON.parse(captured.stdout)).toMatchObject({ nnzC: 3, engine: expect.stringMatching(/^webgpu/), check: { pass: true } });
      const c = entries(out).map((l) => Number(l.split(' ')[2]));
      values.forEach((v, i) => {
        expect(Math.abs(c[i]! - Number(v) ** 2) / Number(v) ** 2).toBeLessThan(1e-6);
      });
    }
  });
  it('products beyond float32 even scaled: webgpu exit 3 naming both ranges; auto multiplies on the host and says so', async () => {
    const a = diag('span.mtx', ['1e-30', '1', '1e-12']);
    const out = join(dir, 'span-c.mtx');
    expect(await main(['spgemm', a, a, '-o', out, '--backend', 'webgpu', '--json'])).toBe(3);
    expect(JSON.parse(captured.stdout).error).toMatchObject({ name: 'InvalidMatrixError', exitCode: 3, message: expect.stringMatching(/got A from 1\.00e-30 to 1\.00e\+0 .*--backend cpu/) });
    captured.stdout = '';
    expect(await main(['spgemm', a, a, '-o', out, '--json'])).toBe(0);
    expect(JSON.parse(captured.stdout)).toMatchObject({ engine: 'host float64', note: expect.stringMatching(/cannot hold these operands' products .*float64 host product/) });
    const c = entries(out).map((l) => Number(l.split(' ')[2]));
    [1e-60, 1, 1e-24].forEach((want, i) => {
      expect(c[i]! / want).toBeCloseTo(1, 12);
    });
  });
});
