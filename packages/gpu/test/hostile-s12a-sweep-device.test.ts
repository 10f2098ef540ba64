/**
 * Session 12 adversarial sweep on WebGPU, the cases that needed a fix:
 * - tunedOperator / autotune with a candidate id outside the kernels tuned over (a typo, or an
 *   experimental kernel not passed in `kernels`): it was dropped without a word — alone, a
 *   TuningError "no candidate"; next to others, a tuning over those only. Now InvalidParameterError
 *   naming the id and the ids tuned over;
 * - gmres on the device with a preconditioner that starts returning NaN: 'non-finite' with x =
 *   NaN; now x is the cycle's start (packages/solvers/test/hostile-s12a-sweep has the host cases).
 */
import { generators as g, InvalidParameterError, type LinearOperator } from '@gpusparse/formats';
import { afterAll, describe, expect, it } from 'vitest';
import { gmres } from '../../solvers/src/index';
import { gpuOperatorFromCsr, type GpuVector, GpuVectorSpace, tunedOperator } from '../src/index';
import { testContext } from './helpers';

afterAll(async () => (await testContext()).dispose());

describe('session 12 sweep on the device', () => {
  it("tunedOperator candidates with an unknown id: InvalidParameterError naming it (was 'no candidate', or the others only)", async () => {
    const ctx = await testContext();
    const a = g.poisson2d(12);
    for (const candidates of [['csr-vectr'], ['csr-scalar', 'csr-vectr'], ['sliced-ell-split']]) {
      const p = tunedOperator(ctx, a, { cache: false, candidates, warn: () => {} });
      await expect(p).rejects.toThrow(InvalidParameterError);
      await expect(tunedOperator(ctx, a, { cache: false, candidates, warn: () => {} })).rejects.toThrow(/autotune candidates.*'(csr-vectr|sliced-ell-split)'/);
    }
    const ok = await tunedOperator(ctx, a, { cache: false, candidates: ['csr-scalar', 'csr-vector'], warn: () => {} });
    expect(ok.label).toMatch(/^csr-(scalar|vector)/);
    ok.dispose();
  });

  it("gmres with a preconditioner turning NaN: 'non-finite', x finite (was NaN)", async () => {
    const ctx = await testContext();
    const space = new GpuVectorSpace(ctx);
    const a = g.poisson2d(8);
    const op = gpuOperatorFromCsr(ctx, a);
    let c = 0;
    const pre: LinearOperator<GpuVector> = {
      rows: a.rows,
      cols: a.rows,
      apply(x, y) {
        if (++c >= 4) space.fill(y, Number.NaN);
        else space.copy(x, y);
      },
      applyScaled() {
        throw new Error('not used');
      },
    };
    const r = await gmres(space, op, space.fromArray(new Float64Array(a.rows).fill(1)), { rtol: 1e-8, preconditioner: pre });
    expect(r.reason).toBe('non-finite');
    expect((await space.toArray(r.x)).every(Number.isFinite)).toBe(true);
    expect(Number.isFinite(r.trueResidual)).toBe(true);
    // NaN from the update's own application (the 6th, restart 5): the residual after it is read
    // with the next cycle's first batch on the device, and x restored there
    c = 0;
    const late: LinearOperator<GpuVector> = { ...pre, apply: (x, y) => (++c >= 6 ? space.fill(y, Number.NaN) : space.copy(x, y)) };
    const r2 = await gmres(space, op, space.fromArray(new Float64Array(a.rows).fill(1)), { rtol: 1e-8, restart: 5, preconditioner: late });
    expect(r2.reason).toBe('non-finite');
    expect((await space.toArray(r2.x)).every(Number.isFinite)).toBe(true);
    expect(r2.detail).toMatch(/x is the cycle's start/);
    op.dispose();
  });
});
