/**
 * `gpusparse spgemm`: the product on the device (lavapipe) written as Matrix Market and as JSON,
 * the float64 check, the host product (--backend cpu), and usage / input errors with their exit codes.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { csrSpgemmReference, generators, readMatrixMarket, spgemmMaxRelError } from '@gpusparse/formats';
import { describe, expect, it } from 'vitest';
import { main } from '../src/main';
import { captured, captureOutput } from './capture';

captureOutput();
const dir = mkdtempSync(join(tmpdir(), 'gpusparse-spgemm-'));

describe('gpusparse spgemm', () => {
  it('poisson2d · banded on the GPU: .mtx output equals the float64 product to float32 accuracy; --check passes', async () => {
    const out = join(dir, 'c.mtx');
    expect(await main(['spgemm', 'gen:poisson2d:12', 'gen:laplacian1d:144', '-o', out, '--check', '--json'])).toBe(0);
    const summary = JSON.parse(captured.stdout);
    expect(summary.engine).toMatch(/^webgpu (hm|cdm)$/);
    expect(summary.check.pass).toBe(true);
    expect(summary.check.maxRelError).toBeLessThanOrEqual(summary.check.bound);
    const c = (await readMatrixMarket(out)).matrix;
    const ref = csrSpgemmReference(generators.poisson2d(12), generators.laplacian1d(144));
    expect(spgemmMaxRelError(c, ref)).toBeLessThanOrEqual(summary.check.bound);
  });

  it('--check passes for values that float32 cannot hold exactly (a diagonal matrix of 0.1 … 2.0)', async () => {
    const lines = ['%%MatrixMarket matrix coordinate real general', '20 20 20'];
    for (let i = 1; i <= 20; i++) lines.push(`${i} ${i} ${(0.1 * i).toFixed(1)}`);
    const path = join(dir, 'd.mtx');
    writeFileSync(path, `${lines.join('\n')}\n`);
    expect(await main(['spgemm', path, path, '-o', join(dir, 'd2.mtx'), '--check', '--json'])).toBe(0);
    const check = JSON.parse(captured.stdout).check;
    expect(check.maxRelError).toBeGreaterThan(0); // the operands' float32 rounding shows
    expect(check.pass).toBe(true);
  });

  it('--format hm writes the HM arrays as JSON; the text summary names the phases', async () => {
    const out = join(dir, 'c.json');
    expect(await main(['spgemm', 'gen:laplacian1d:50', 'gen:laplacian1d:50', '-o', out, '--format', 'hm'])).toBe(0);
    const c = JSON.parse(readFileSync(out, 'utf8'));
    expect(c.format).toBe('hm');
    expect(c.offsets).toEqual([0, 1, 2, -1, -2]);
    expect(captured.stdout).toMatch(/symbolic .* ms, numeric .* ms/);
  });

  it('--backend cpu writes the float64 host product', async () => {
    const out = join(dir, 'host.mtx');
    expect(await main(['spgemm', 'gen:laplacian1d:20', 'gen:laplacian1d:20', '-o', out, '--backend', 'cpu', '--json'])).toBe(0);
    expect(JSON.parse(captured.stdout).engine).toBe('host float64');
    const c = (await readMatrixMarket(out)).matrix;
    expect(c.values[0]).toBe(5); // (L²)₀₀ = 2·2 + (−1)(−1)
  });

  it('usage and input errors: exit 2 for usage, 3 for mismatched shapes', async () => {
    expect(await main(['spgemm', 'gen:laplacian1d:10', '-o', join(dir, 'x.mtx')])).toBe(2);
    expect(await main(['spgemm', 'gen:laplacian1d:10', 'gen:laplacian1d:10', '-o', join(dir, 'x.mtx'), '--format', 'ell'])).toBe(2);
    expect(captured.stderr).toMatch(/expected one of auto, hm, cdm, csr, got 'ell'/);
    expect(await main(['spgemm', 'gen:laplacian1d:10', 'gen:laplacian1d:11', '-o', join(dir, 'x.mtx')])).toBe(3);
    expect(captured.stderr).toMatch(/rows of B/);
    // CDM forced on rectangular operands: bad input, named
    const rect = join(dir, 'r.mtx');
    writeFileSync(rect, '%%MatrixMarket matrix coordinate real general\n3 4 2\n1 1 1.5\n3 4 2\n');
    const rectT = join(dir, 'rt.mtx');
    writeFileSync(rectT, '%%MatrixMarket matrix coordinate real general\n4 3 2\n1 1 1.5\n4 3 2\n');
    expect(await main(['spgemm', rect, rectT, '-o', join(dir, 'x.mtx'), '--format', 'cdm'])).toBe(3);
    expect(captured.stderr).toMatch(/square/);
    expect(await main(['spgemm', rect, rectT, '-o', join(dir, 'x.mtx')])).toBe(0); // auto: HM
  });

  it('an operand with more than 4096 occupied diagonals is refused (exit 3), whatever the format', async () => {
    expect(await main(['spgemm', 'gen:uniform:6000:8', 'gen:laplacian1d:6000', '-o', join(dir, 'x.mtx'), '--format', 'hm'])).toBe(3);
    expect(captured.stderr).toMatch(/occupied diagonals.*at most 4096/);
  });
});
