/**
 * Session 12: the one-call API and the CLI with a matrix past one storage binding, on lavapipe
 * with GPUSPARSE_MAX_BINDING_BYTES emulating a device of that limit (planning and every binding
 * checked; bench/scale-s12b.ts runs the same at 5.95·10^8 entries on the H100). The arrays pass
 * the limit: the tuned kernel splits them, solve and eigsh give float64-accurate answers. The
 * vectors pass it: refused before any work, naming the limit, the size and the float32 vectors.
 */
import { csrSpmv, generators as g, ResourceLimitError } from '@gpusparse/formats';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eigsh, solve } from '../src/api';
import { main } from '../src/main';
import { captured, captureOutput } from './capture';

captureOutput();
// part of the GPU tier (vitest.config.ts): skipped with it when no adapter appears, required in CI
const gpuTierSkipped = process.env.GPUSPARSE_GPU_TIER === 'skip' && process.env.GPUSPARSE_REQUIRE_GPU !== '1';
const dir = mkdtempSync(join(tmpdir(), 'gpusparse-s12b-scale-'));
const saved = { cap: process.env.GPUSPARSE_MAX_BINDING_BYTES, cache: process.env.GPUSPARSE_CACHE_DIR };
beforeAll(() => {
  process.env.GPUSPARSE_MAX_BINDING_BYTES = '300000';
  process.env.GPUSPARSE_CACHE_DIR = dir;
});
afterAll(() => {
  for (const [k, v] of [['GPUSPARSE_MAX_BINDING_BYTES', saved.cap], ['GPUSPARSE_CACHE_DIR', saved.cache]] as const) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  rmSync(dir, { recursive: true, force: true });
});

const norm = (v: ArrayLike<number>): number => Math.sqrt(Array.from(v).reduce((s, x) => s + x * x, 0));

describe.skipIf(gpuTierSkipped)('past a 300 kB binding limit (emulated)', () => {
  // poisson3d(30): 27 000 rows (108 kB float32 vectors, 216 kB df64), 183 600 entries (734 kB per array)
  const a = g.poisson3d(30);
  a.values[a.rowPtr[0]!] = 100; // A(1,1): an isolated largest eigenvalue ≈ 100.03
  const b = csrSpmv(a, new Float64Array(a.rows).fill(1));

  it('solve (autotuned CG in float64 refinement) reaches 1e-10 in float64, recomputed here', async () => {
    const r = await solve(a, b, { rtol: 1e-10, backend: 'webgpu' });
    expect(r.converged).toBe(true);
    const ax = csrSpmv(a, r.x);
    const res = norm(b.map((v, i) => v - ax[i]!)) / norm(b);
    expect(res).toBeLessThanOrEqual(1e-10);
    expect(Math.abs(res - r.relativeResidual)).toBeLessThan(1e-3 * res);
  }, 300_000);

  it("eigsh 'largest' gives λ ≈ 100.03 with ‖A·v − λ·v‖ ≤ 1e-8·‖A‖∞", async () => {
    const r = await eigsh(a, 1, { which: 'largest', backend: 'webgpu' });
    expect(r.converged).toBe(true);
    const v = r.vectors[0]!;
    const av = csrSpmv(a, v);
    const res = norm(av.map((x, i) => x - r.values[0]! * v[i]!));
    expect(r.values[0]).toBeGreaterThan(100);
    expect(r.values[0]).toBeLessThan(100.2);
    expect(res).toBeLessThanOrEqual(1e-8 * 103);
  }, 300_000);

  it('vectors past the limit (poisson2d(300): 90 000 rows, 360 kB in float32): ResourceLimitError before any work, from the API and the CLI (exit 5)', async () => {
    const big = g.poisson2d(300);
    const rhs = new Float64Array(big.rows).fill(1);
    await expect(solve(big, rhs, { backend: 'webgpu' })).rejects.toThrow(ResourceLimitError);
    await expect(solve(big, rhs, { backend: 'webgpu' })).rejects.toThrow(/x \(90000 entries\) or y \(90000\) in float32.*needs 360\.0 kB, 300\.0 kB available/);
    expect(await main(['solve', 'gen:poisson2d:300', '--backend', 'webgpu'])).toBe(5);
    expect(captured.stderr).toMatch(/ResourceLimitError: .*needs 360\.0 kB, 300\.0 kB available.*maxStorageBufferBindingSize/);
  }, 300_000);

  it('the CLI: tune and eigs on poisson3d(30) (arrays past the limit) succeed', async () => {
    expect(await main(['tune', 'gen:poisson3d:30', '--json'])).toBe(0);
    const t = JSON.parse(captured.stdout) as { winner?: { kernel: string } };
    expect(t.winner?.kernel).toBeTruthy();
    expect(await main(['eigs', 'gen:poisson3d:30', '-k', '1', '--which', 'largest', '--backend', 'webgpu'])).toBe(0);
  }, 300_000);
});
