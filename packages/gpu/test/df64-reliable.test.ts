/**
 * Reliable-update CG on the GPU (refinedSolve's default for inner method 'cg'): one float32 CG
 * recurrence on the device whose residual is replaced by the df64 one, x accumulated in df64.
 * Checked on lavapipe against float64 CG on the host: iteration counts and the true float64
 * relative residual recomputed on the host.
 */
import { csrSpmv, generators, HostOperator, HostVectorSpace } from '@gpusparse/formats';
import { beforeAll, describe, expect, it } from 'vitest';
import { cg, refinedSolve } from '../../solvers/src/index';
import { type GpuContext, gpuOperatorFromCsr, GpuVectorSpace } from '../src/index';
import { testContext, trueRelative } from './helpers';

let ctx: GpuContext;
beforeAll(async () => {
  ctx = await testContext();
});


describe('reliable-update CG with df64 replacements on the device', () => {
  it('3-D Poisson 16³: float64 CG iteration count, 1e-10, no host product, one readback per check or replacement', async () => {
    const a = generators.poisson3d(16);
    const b = csrSpmv(a, new Float64Array(a.cols).fill(1));
    for (let i = 0; i < b.length; i++) b[i] = b[i]! + Math.sin(i) / 3;
    const host = new HostVectorSpace();
    const ref = await cg(host, HostOperator.fromCsr(a), host.fromArray(b), { rtol: 1e-10, maxIterations: 2000, checkEvery: 1 });
    const op = gpuOperatorFromCsr(ctx, a, { kernel: 'csr-vector' });
    const space = new GpuVectorSpace(ctx);
    const res = await refinedSolve({ innerOperator: op, innerSpace: space, b, rtol: 1e-10, inner: { method: 'cg', checkEvery: 8 } });
    expect(res.reason, res.detail).toBe('converged');
    expect(res.outerPrecision).toMatch(/^df64/);
    expect(res.hostMatvecs).toBe(0);
    const rel = trueRelative(a, res.x, b);
    expect(rel).toBeLessThanOrEqual(1e-10);
    expect(res.innerIterations).toBeLessThanOrEqual(1.15 * ref.iterations + 8);
    // restarted refinement on the same device: more iterations
    const restarted = await refinedSolve({ innerOperator: op, innerSpace: space, b, rtol: 1e-10, inner: { method: 'cg', checkEvery: 8, rtol: 1e-4, reliable: false } });
    expect(restarted.converged).toBe(true);
    expect(restarted.innerIterations).toBeGreaterThan(res.innerIterations);
    // readbacks: one per check (every 8 iterations and the first), one per replacement, one for x
    expect(res.stats.readbacks).toBeLessThanOrEqual(Math.ceil(res.innerIterations / 8) + 2 * res.outerIterations + 2);
    console.log(
      `poisson3d(16): float64 CG ${ref.iterations}, reliable ${res.innerIterations} (${res.outerIterations} df64 replacements, ${res.stats.readbacks} readbacks), ` +
        `restarted ${restarted.innerIterations} (${restarted.outerIterations} outer); true relative residual ${rel.toExponential(2)}`,
    );
    op.dispose();
  });

  it('bcsstk05 (float64 values, lo array in use): 1e-10 from float32 CG with df64 replacements', async () => {
    const { loadShared } = await import('../../solvers/test/krylov-matrices');
    const a = await loadShared('bcsstk05.mtx');
    const b = csrSpmv(a, new Float64Array(a.cols).fill(1));
    const op = gpuOperatorFromCsr(ctx, a, { kernel: 'csr-vector' });
    const res = await refinedSolve({ innerOperator: op, innerSpace: new GpuVectorSpace(ctx), b, rtol: 1e-10, inner: { method: 'cg' } });
    expect(res.reason, res.detail).toBe('converged');
    expect(res.method).toBe('refined(cg reliable, f32)');
    expect(trueRelative(a, res.x, b)).toBeLessThanOrEqual(1e-10);
    op.dispose();
  });

});
