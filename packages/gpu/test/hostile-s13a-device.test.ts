/**
 * Session 13 on WebGPU (float32 space, scalars on the device):
 * - CG on poisson2d 30², rtol 1e-5, checkEvery 32 ended 'breakdown' (stagnation at 2.1e-5) where
 *   checkEvery 1 converged at 8.3e-6: after a false convergence the next check came 31 steps
 *   later, and each step past the tolerance widened the gap between the recursive and the true
 *   residual. Now the driver checks every step after a false convergence: converged in 66
 *   iterations at 7.5e-6 (float64 recomputed: 6.2e-6). Where float32 cannot reach the tolerance
 *   (64², 1e-6) the stagnation detail names the achieved true residual, which is the returned x's;
 * - an async onIteration is awaited (one in flight, false stops, a rejection rejects the solve);
 * - BiCGStab's near-breakdown (t ⟂ s) is named, not called divergence.
 * The host cases are in packages/solvers/test/hostile-s13a-*.
 */
import { denseToCsrHelper } from './hostile-s13a-helpers';
import { generators as g } from '@gpusparse/formats';
import { afterAll, describe, expect, it } from 'vitest';
import { bicgstab, cg, davidson, gmres, lanczos, lobpcg } from '../../solvers/src/index';
import { gpuOperatorFromCsr, GpuVectorSpace } from '../src/index';
import { testContext, trueRelative } from './helpers';
import { probeAsyncCallback } from '../../solvers/test/support/async-callback';

afterAll(async () => (await testContext()).dispose());
const ones = (n: number) => new Float64Array(n).fill(1);
/** The device space and poisson2d(m) on it (csr-vector). */
async function poisson(m: number) {
  const ctx = await testContext();
  const a = g.poisson2d(m);
  return { space: new GpuVectorSpace(ctx), a, op: gpuOperatorFromCsr(ctx, a, { kernel: 'csr-vector' }) };
}

describe('float32 CG near its attainable accuracy', () => {
  it('poisson2d 30², rtol 1e-5: converged for checkEvery 1, 8 and 32 (32 was breakdown), float64 residual ≤ 1e-5', async () => {
    const { space, a, op } = await poisson(30);
    for (const checkEvery of [1, 8, 32]) {
      const r = await cg(space, op, space.fromArray(ones(a.rows)), { rtol: 1e-5, checkEvery });
      const x = await space.toArray(r.x);
      expect(r.reason, `checkEvery ${checkEvery}: ${r.detail}`).toBe('converged');
      expect(trueRelative(a, x, ones(a.rows))).toBeLessThanOrEqual(1e-5);
      space.release(r.x);
    }
    op.dispose?.();
  });
  it('poisson2d 64², rtol 1e-6 (below float32 here): stagnation named with the achieved residual, which is the returned x’s (float64 within 2×)', async () => {
    const { space, a, op } = await poisson(64);
    const r = await cg(space, op, space.fromArray(ones(a.rows)), { rtol: 1e-6, checkEvery: 32 });
    expect(r.reason).toBe('breakdown');
    expect(r.detail).toMatch(/^cg: stagnation at iteration \d+: .* the f32 space cannot resolve this tolerance/);
    const rel = trueRelative(a, await space.toArray(r.x), ones(a.rows));
    expect(rel).toBeGreaterThan(1e-6);
    expect(rel / (r.trueResidual / r.bNorm)).toBeGreaterThan(0.5);
    expect(rel / (r.trueResidual / r.bNorm)).toBeLessThan(2);
    space.release(r.x);
    op.dispose?.();
  });
});

describe('async onIteration on the device', () => {
  it('cg, gmres, bicgstab, lanczos, davidson, lobpcg: awaited (one in flight), false stops, a rejection rejects', async () => {
    const { space, a, op } = await poisson(12);
    const b = () => space.fromArray(ones(a.rows));
    const runs: Record<string, (cb: (i: unknown) => unknown) => Promise<{ reason: string }>> = {
      cg: (cb) => cg(space, op, b(), { rtol: 1e-4, checkEvery: 4, onIteration: cb as never }),
      gmres: (cb) => gmres(space, op, b(), { rtol: 1e-4, restart: 20, onIteration: cb as never }),
      bicgstab: (cb) => bicgstab(space, op, b(), { rtol: 1e-4, checkEvery: 4, onIteration: cb as never }),
      lanczos: (cb) => lanczos(space, op, { k: 2, tol: 1e-4, onIteration: cb }),
      davidson: (cb) => davidson(space, op, { k: 2, tol: 1e-4, diagonal: new Float64Array(a.rows).fill(4), onIteration: cb }),
      lobpcg: (cb) => lobpcg(space, op, { k: 2, tol: 1e-4, onIteration: cb }),
    };
    for (const [name, run] of Object.entries(runs)) {
      const p = await probeAsyncCallback(run);
      expect(p, name).toEqual({ reason: 'converged', calls: p.calls, most: 1, inFlight: 0, stopped: 'stopped', rejected: true });
      expect(p.calls, name).toBeGreaterThan(0);
    }
    op.dispose?.();
  });
});

describe('BiCGStab near-breakdown on the device', () => {
  it('[[1, 2], [3, 4]], b = 1 (t ⟂ s): near-breakdown of cos²∠(t, s) at iteration 1, not divergence; x the half step', async () => {
    const ctx = await testContext();
    const space = new GpuVectorSpace(ctx);
    const a = denseToCsrHelper([[1, 2], [3, 4]]);
    const op = gpuOperatorFromCsr(ctx, a, { kernel: 'csr-scalar' });
    for (const checkEvery of [1, 8]) {
      const r = await bicgstab(space, op, space.fromArray([1, 1]), { rtol: 1e-5, checkEvery });
      expect(r.reason).toBe('breakdown');
      expect(r.detail).toMatch(/^bicgstab: near-breakdown at iteration 1: cos²∠\(t, s\) = .*rounding noise in the f32 space/);
      const x = await space.toArray(r.x);
      expect(Math.abs(x[0]! - 0.2) + Math.abs(x[1]! - 0.2)).toBeLessThan(1e-6);
    }
    op.dispose?.();
  });
});
