/**
 * Session 7 hardening: refinedSolve (library call, df64 on the device or float64 on the host)
 * with b outside float32's range. Before the fix b = 1e-300 gave reason 'converged' with x = 0
 * (‖b‖² underflowed: "b = 0, so x = 0"; after that was fixed the df64 residual of b itself was
 * 0), and b = 1e38 stopped 'non-finite'. Now b is solved as b/2^k and x scaled back.
 */
import { type CsrMatrix, csrSpmv, generators, HostOperator } from '@gpusparse/formats';
import { beforeAll, describe, expect, it } from 'vitest';
import { cg, refinedSolve, rhsPowerOfTwo } from '../../solvers/src/index';
import { norm64 } from '../../solvers/src/refine/host-refinement';
import { InvalidParameterError } from '@gpusparse/formats';
import { Df64VectorSpace } from '../src/df64/space';
import { type GpuContext, gpuOperatorFromCsr, GpuVectorSpace } from '../src/index';
import { testContext } from './helpers';

let ctx: GpuContext;
beforeAll(async () => {
  ctx = await testContext();
});

/** ‖b − A·x‖ / ‖b‖ in float64, both scaled by max|b| first (b may be 1e-300). */
function scaledRelative(a: CsrMatrix, x: Float64Array, b: Float64Array): number {
  const ax = csrSpmv(a, x);
  const m = Math.max(...b.map(Math.abs));
  let r = 0;
  let bb = 0;
  for (let i = 0; i < b.length; i++) {
    r += ((b[i]! - ax[i]!) / m) ** 2;
    bb += (b[i]! / m) ** 2;
  }
  return Math.sqrt(r / bb);
}

describe('refinedSolve with b outside float32', () => {
  const a = generators.poisson2d(8);
  const b1 = csrSpmv(a, new Float64Array(a.rows).fill(1));
  for (const scale of [1e-300, 1e-310, 1e-45, 1e38, 1e300]) {
    for (const [method, extended] of [['cg', undefined], ['gmres', undefined], ['cg', false]] as const) {
      it(`b = A·1 × ${scale}, ${method}${extended === false ? ' (host float64 outer residual)' : ' (df64 on the device)'}: x = ${scale}·1 to 1e-10`, async () => {
        const b = b1.map((v) => v * scale);
        const op = gpuOperatorFromCsr(ctx, a, { kernel: 'csr-vector' });
        const res = await refinedSolve({ innerOperator: op, innerSpace: new GpuVectorSpace(ctx), b, rtol: 1e-10, inner: { method }, ...(extended === false ? { extended, hostOperator: HostOperator.fromCsr(a) } : {}) });
        expect(res.reason, res.detail).toBe('converged');
        expect(res.detail).toMatch(/solved for b\/2\^-?\d+/);
        expect(scaledRelative(a, res.x, b)).toBeLessThanOrEqual(1e-10);
        expect(res.trueResidual / res.bNorm).toBeLessThanOrEqual(1e-10);
        expect(res.x[0]! / scale).toBeCloseTo(1, 6);
      });
    }
  }
  it('norm64 of a vector whose squares all underflow is not 0 (was 0: "b = 0, so x = 0")', () => {
    expect(norm64(Float64Array.of(3e-300, 4e-300)) / 5e-300).toBeCloseTo(1, 14);
    expect(norm64(new Float64Array(3))).toBe(0);
  });
  it('rhsPowerOfTwo: 1 inside [2^-60, 2^60] (no copy), the nearest power of two outside', () => {
    expect(rhsPowerOfTwo([1e-10, 3, -1e10])).toBe(1);
    expect(rhsPowerOfTwo([0, 0])).toBe(1);
    expect(rhsPowerOfTwo([1e-300, 0])).toBe(2 ** Math.round(Math.log2(1e-300)));
    expect(rhsPowerOfTwo([-3e38])).toBe(2 ** 128);
  });
});

describe('a vector whose every non-zero is below float32\'s normal range', () => {
  it('GpuVectorSpace.fromArray / Df64VectorSpace.fromArray refuse it (plain float32 CG with b = A·1 × 1e-39 was "converged", x = 0)', async () => {
    const a = generators.poisson2d(6);
    const b = csrSpmv(a, new Float64Array(a.rows).fill(1)).map((v) => v * 1e-39);
    const gs = new GpuVectorSpace(ctx);
    expect(() => gs.fromArray(b)).toThrow(InvalidParameterError);
    expect(() => gs.fromArray(b)).toThrow(/GpuVectorSpace\.fromArray values: expected a vector with some \|value\| ≥ 1\.2e-38 .*got max \|value\| = 2e-39.*refinedSolve/);
    const ds = await Df64VectorSpace.of(ctx);
    if (ds) expect(() => ds.fromArray([0, 1e-300])).toThrow(/Df64VectorSpace\.fromArray values/);
    // the library route that answers it: refinedSolve scales b
    const op = gpuOperatorFromCsr(ctx, a, { kernel: 'csr-vector' });
    const res = await refinedSolve({ innerOperator: op, innerSpace: gs, b, rtol: 1e-10, inner: { method: 'cg' } });
    expect(res.reason).toBe('converged');
    expect(res.x[0]! / 1e-39).toBeCloseTo(1, 8);
  });
  it('zeros, one tiny entry beside normal ones, and NaN still upload (NaN is reported by the solver)', async () => {
    const gs = new GpuVectorSpace(ctx);
    expect(await gs.toArray(gs.fromArray([0, 0, 0]))).toEqual(Float64Array.of(0, 0, 0));
    expect((await gs.toArray(gs.fromArray([1e-40, 1])))[1]).toBe(1);
    const a = generators.poisson2d(4);
    const r = await cg(gs, gpuOperatorFromCsr(ctx, a, { kernel: 'csr-vector' }), gs.fromArray(new Float64Array(a.rows).fill(Number.NaN)));
    expect(r.reason).toBe('non-finite');
  });
});
