/**
 * What a refined solve records per inner iteration on the device (issue 15's profile,
 * bench/cg-profile.ts): reliable CG with the fused iteration and the lagged check records the
 * product plus 3 BLAS-1 dispatches (4 with the synchronous check, 7 before any fusion: 8.7 per
 * iteration measured with checks and replacements),
 * and a scalar readback of many slots is one copy command (GMRES(30) read its Hessenberg with
 * one 4-byte copy per slot).
 */
import { csrSpmv, generators } from '@gpusparse/formats';
import { beforeAll, describe, expect, it } from 'vitest';
import { refinedSolve } from '../../solvers/src/index';
import { type GpuContext, gpuOperatorFromCsr, GpuVectorSpace } from '../src/index';
import { testContext, trueRelative } from './helpers';

let ctx: GpuContext;
beforeAll(async () => {
  ctx = await testContext();
});

describe('device work per inner iteration', () => {
  it('reliable CG, 3-D Poisson 12³ to 1e-8: ≤ 4.9 dispatches per inner iteration (product + 3) and a 1e-8 answer', async () => {
    const a = generators.poisson3d(12);
    const b = csrSpmv(a, new Float64Array(a.cols).fill(1));
    const op = gpuOperatorFromCsr(ctx, a, { kernel: 'csr-vector', params: { lanes: 4 } });
    const space = new GpuVectorSpace(ctx);
    const solve = () => refinedSolve({ innerOperator: op, innerSpace: space, b, rtol: 1e-8, inner: { method: 'cg' } });
    await solve(); // pipelines and df64 self-test
    const d0 = ctx.recorder.dispatches;
    const res = await solve();
    const perIteration = (ctx.recorder.dispatches - d0) / res.innerIterations;
    expect(res.reason, res.detail).toBe('converged');
    expect(trueRelative(a, res.x, b)).toBeLessThanOrEqual(1e-8);
    // 4 per iteration, plus the checks, replacements and setup spread over ~40 iterations
    expect(perIteration).toBeGreaterThanOrEqual(4);
    expect(perIteration).toBeLessThanOrEqual(4.9);
    op.dispose();
  });

  it('readMany of 200 scattered slots: one copy command, the values of each slot', async () => {
    const space = new GpuVectorSpace(ctx);
    const held = Array.from({ length: 400 }, (_, i) => space.scalar(i + 0.5));
    const picked = held.filter((_, i) => i % 2 === 1);
    for (let i = 0; i < held.length; i += 2) space.release(held[i]!);
    const rec = ctx.recorder;
    const copy = rec.copy.bind(rec);
    let copies = 0;
    rec.copy = (...args: Parameters<typeof rec.copy>) => {
      copies++;
      copy(...args);
    };
    try {
      const vals = await space.readMany([...picked].reverse());
      expect(copies).toBe(1);
      expect(vals).toEqual(picked.map((_, k) => 2 * k + 1.5).reverse());
    } finally {
      rec.copy = copy;
      for (const s of picked) space.release(s);
    }
  });
});
