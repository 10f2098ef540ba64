/**
 * Session 11, from the H100 rerun of bench/hostile-s11.ts: refinedSolve on poisson2d 128²·1e-30
 * said 'converged' at rtol 1e-10 while the host float64 relative residual of x was 7.07e-8. The
 * df64 lo parts of A's values (v − fl32(v) ≈ 1e-38) are float32 subnormals, which NVIDIA flushes:
 * the df64 A was the float32 A. Now such an operator offers no df64 residual, and refinement
 * runs its outer residual on the host in float64 (lavapipe keeps subnormals, so there the df64
 * path was right; the decline is what is checked here).
 */
import { csrSpmv, generators as g, HostOperator } from '@gpusparse/formats';
import { afterAll, describe, expect, it } from 'vitest';
import { refinedSolve } from '../../solvers/src/index';
import { gpuOperatorFromCsr, GpuVectorSpace } from '../src/index';
import { testContext, trueRelative } from './helpers';

afterAll(async () => (await testContext()).dispose());

describe('df64 residuals and lo parts below float32 normal range', () => {
  it('A·1e-30 (lo parts ≈ 1e-38): no df64 offer; refinedSolve converges on the host residual to 1e-10', async () => {
    const ctx = await testContext();
    const a0 = g.poisson2d(12);
    const a = { ...a0, values: a0.values.map((v) => v * 1e-30) };
    const op = gpuOperatorFromCsr(ctx, a);
    expect(await op.extendedPrecision()).toBeUndefined();
    const plain = gpuOperatorFromCsr(ctx, a0);
    expect(await plain.extendedPrecision()).toBeDefined();
    const b = csrSpmv(a, new Float64Array(a.rows).fill(1));
    const r = await refinedSolve({ hostOperator: HostOperator.fromCsr(a), innerOperator: op, innerSpace: new GpuVectorSpace(ctx), b, rtol: 1e-10, inner: { method: 'cg', rtol: 1e-4 } });
    expect(r.outerPrecision).toBe('f64 on the host');
    expect(r.reason).toBe('converged');
    expect(trueRelative(a, r.x, b)).toBeLessThan(1e-9);
    op.dispose();
    plain.dispose();
  });
});
