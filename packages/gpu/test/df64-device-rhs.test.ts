/**
 * refinedSolve with b already on the device (a df64 or a float32 GPU vector) and x left there
 * (`output: 'device'`): the CuPy-comparable setting where neither b nor x crosses to the host.
 * The answers equal those of the host-in / host-out solve, b is never changed, and the cases
 * that cannot be served are refused with a named error.
 */
import { type CsrMatrix, csrSpmv, DimensionMismatchError, generators, HostOperator, InvalidParameterError } from '@gpusparse/formats';
import { beforeAll, describe, expect, it } from 'vitest';
import { refinedSolve } from '../../solvers/src/index';
import { Df64Blas, Df64Vector, type GpuContext, gpuOperatorFromCsr, GpuVectorSpace } from '../src/index';
import { testContext, trueRelative } from './helpers';

let ctx: GpuContext;
let d: Df64Blas;
beforeAll(async () => {
  ctx = await testContext();
  d = (await Df64Blas.of(ctx))!;
});

const a: CsrMatrix = generators.poisson2d(24);
/** b = A·1 plus a float64 part that float32 cannot hold. */
function rhs(): Float64Array {
  const b = csrSpmv(a, new Float64Array(a.cols).fill(1));
  for (let i = 0; i < b.length; i++) b[i] = b[i]! + Math.sin(i) / 3;
  return b;
}

describe('refinedSolve with device b and device x', () => {
  it('df64 b in, df64 x out: the host solve’s answer, b unchanged, no transfer of x until read', async () => {
    const space = new GpuVectorSpace(ctx);
    const op = gpuOperatorFromCsr(ctx, a, { kernel: 'csr-vector' });
    const b = rhs();
    const bDev = d.fromFloat64(b);
    const host = await refinedSolve({ innerOperator: op, innerSpace: space, b, rtol: 1e-10, inner: { method: 'cg' } });
    const dev = await refinedSolve({ innerOperator: op, innerSpace: space, b: bDev, rtol: 1e-10, inner: { method: 'cg' }, output: 'device' });
    expect(dev.reason, dev.detail).toBe('converged');
    expect(dev.x.vector).toBeInstanceOf(Df64Vector);
    expect(dev.x.vector.n).toBe(a.rows);
    const x = await dev.x.read();
    expect(trueRelative(a, x, b)).toBeLessThanOrEqual(1e-10);
    // the same recurrence on the same numbers: same iterations, x equal to df64 rounding
    expect(dev.innerIterations).toBe(host.innerIterations);
    for (let i = 0; i < x.length; i++) expect(Math.abs(x[i]! - host.x[i]!)).toBeLessThanOrEqual(1e-12 * Math.abs(host.x[i]!) + 1e-14);
    // the device-out solve does not read x back, the device b costs one readback (its norm)
    expect(dev.stats.readbacks).toBe(host.stats.readbacks);
    expect(Array.from(await d.toFloat64(bDev))).toEqual(Array.from(await d.toFloat64(d.fromFloat64(b))));
    dev.x.dispose();
    bDev.buf.dispose();
    op.dispose();
  });

  it('a float32 GPU vector as b (exact in df64), GMRES, host x out', async () => {
    const space = new GpuVectorSpace(ctx);
    const op = gpuOperatorFromCsr(ctx, a, { kernel: 'csr-vector' });
    const b32 = Float64Array.from(rhs(), Math.fround);
    const res = await refinedSolve({ innerOperator: op, innerSpace: space, b: space.fromArray(b32), rtol: 1e-10, inner: { method: 'gmres', restart: 30 } });
    expect(res.reason, res.detail).toBe('converged');
    expect(trueRelative(a, res.x, b32)).toBeLessThanOrEqual(1e-10);
    op.dispose();
  });

  it('scales a device b of tiny norm (host x out) and refuses device x then', async () => {
    const space = new GpuVectorSpace(ctx);
    const op = gpuOperatorFromCsr(ctx, a, { kernel: 'csr-vector' });
    const b = rhs().map((v) => v * 2 ** -80);
    const bDev = d.fromFloat64(b);
    const res = await refinedSolve({ innerOperator: op, innerSpace: space, b: bDev, rtol: 1e-10, inner: { method: 'cg' } });
    expect(res.reason, res.detail).toBe('converged');
    expect(res.detail).toMatch(/solved for b\/2\^-/);
    expect(trueRelative(a, res.x, b)).toBeLessThanOrEqual(1e-10);
    await expect(refinedSolve({ innerOperator: op, innerSpace: space, b: bDev, inner: { method: 'cg' }, output: 'device' })).rejects.toThrow(/float32's exponent range/);
    op.dispose();
  });

  it('b = 0 on the device gives a device x of zeros; wrong lengths and host-only operators are refused', async () => {
    const space = new GpuVectorSpace(ctx);
    const op = gpuOperatorFromCsr(ctx, a, { kernel: 'csr-vector' });
    const zero = await refinedSolve({ innerOperator: op, innerSpace: space, b: d.create(a.rows), output: 'device' });
    expect(zero.reason).toBe('converged');
    expect(Array.from(await zero.x.read()).every((v) => v === 0)).toBe(true);
    await expect(refinedSolve({ innerOperator: op, innerSpace: space, b: d.create(a.rows - 1) })).rejects.toThrow(DimensionMismatchError);
    // the host float64 path (extended: false) cannot take a device b nor leave x on the device
    const hostOnly = { hostOperator: HostOperator.fromCsr(a), innerOperator: op, innerSpace: space, extended: false as const };
    await expect(refinedSolve({ ...hostOnly, b: d.create(a.rows) })).rejects.toThrow(InvalidParameterError);
    await expect(refinedSolve({ ...hostOnly, b: rhs(), output: 'device' })).rejects.toThrow(/output 'device'/);
    await expect(refinedSolve({ innerOperator: op, innerSpace: space, b: rhs(), output: 'gpu' as 'device' })).rejects.toThrow(/'host' \| 'device'/);
    op.dispose();
  });
});
