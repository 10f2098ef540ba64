import { beforeAll, describe, expect, it } from 'vitest';
import { generators, InvalidMatrixError } from '@gpusparse/formats';
import { Blas1, createGpuContext, csrScalarKernel, imm, timeGpu, DeviceLostError, fold2d, type GpuContext, GpuValidationError, LAVAPIPE_INSTALL, NoAdapterError, readF32, uploadF32 } from '../src/index';
import { testContext } from './helpers';

let ctx: GpuContext;
beforeAll(async () => {
  ctx = await testContext(); // throws NoAdapterError: the file fails without an adapter
});

describe('GPU context', () => {
  it('requests the adapter limits and features', () => {
    const d = ctx.describe();
    expect(d.limits.maxStorageBufferBindingSize).toBeGreaterThanOrEqual(128 * 2 ** 20);
    expect(d.limits.maxComputeWorkgroupsPerDimension).toBeGreaterThanOrEqual(65_535);
    expect(d.limits.maxComputeInvocationsPerWorkgroup).toBeGreaterThanOrEqual(256);
    if (d.caps.subgroups) expect(d.caps.subgroupMinSize).toBeGreaterThanOrEqual(4);
    expect(d.features.includes('timestamp-query')).toBe(d.caps.timestampQuery);
    const text = ctx.describeText();
    expect(text).toContain('maxStorageBufferBindingSize');
    console.log(text);
  });

  it('round-trips a buffer', async () => {
    const b = uploadF32(ctx, [1, 2.5, -3]);
    expect([...(await readF32(ctx, b, 3))]).toEqual([1, 2.5, -3]);
    b.dispose();
  });

  it('folds dispatches past 65 535 workgroups into 2-D', () => {
    expect(fold2d(10)).toEqual([10, 1]);
    expect(fold2d(65_535)).toEqual([65_535, 1]);
    const [x, y] = fold2d(200_000);
    expect(x).toBeLessThanOrEqual(65_535);
    expect(x * y).toBeGreaterThanOrEqual(200_000);
    expect(x * (y - 1)).toBeLessThan(200_000);
  });

  it('surfaces a bad shader as GpuValidationError with its label', async () => {
    ctx.pipelines.get({ key: 'test:bad', label: 'deliberately-bad', bindings: '', wgsl: () => 'fn main( {' });
    const err = await ctx.finish().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GpuValidationError);
    expect((err as GpuValidationError).label).toBe('deliberately-bad');
    await ctx.finish(); // the error is consumed; the context is usable again
  });

  it('NoAdapterError names the lavapipe install line', () => {
    const e = new NoAdapterError('requestAdapter returned null');
    expect(e.message).toContain(LAVAPIPE_INSTALL);
    expect(e.message).toContain('mesa-vulkan-drivers');
  });

  it('types device loss as DeviceLostError', async () => {
    const own = await createGpuContext();
    const b = uploadF32(own, [1]);
    own.device.destroy();
    await new Promise((r) => setTimeout(r, 10));
    expect(own.isLost).toBe(true);
    await expect(readF32(own, b, 1)).rejects.toBeInstanceOf(DeviceLostError);
    expect(() => own.check()).toThrow(DeviceLostError);
    own.dispose();
  });

  it('times GPU work with timestamps (when present) and with the wall clock', async () => {
    const b = ctx.buffers.acquire(4 * 100_000);
    const enc = () => Blas1.of(ctx).fill(b, 100_000, imm(1));
    const t = await timeGpu(ctx, enc, { reps: 5 });
    expect(t.method).toBe(ctx.caps.timestampQuery ? 'timestamp' : 'wall');
    expect(t.samples).toBe(5);
    const w = await timeGpu(ctx, enc, { reps: 6, batches: 3, forceWall: true });
    expect(w.method).toBe('wall');
    for (const r of [t, w]) {
      expect(r.minMs).toBeGreaterThan(0);
      expect(r.minMs).toBeLessThanOrEqual(r.medianMs);
      expect(Number.isFinite(r.meanMs)).toBe(true);
    }
    b.dispose();
  });

  it('rejects invalid index arrays on upload with the row named', () => {
    const a = generators.uniformRandom(10, 10, 3, 1);
    const badCol = { ...a, colIdx: a.colIdx.slice() };
    badCol.colIdx[a.rowPtr[4]!] = 10;
    expect(() => csrScalarKernel.upload(ctx, badCol)).toThrow(InvalidMatrixError);
    expect(() => csrScalarKernel.upload(ctx, badCol)).toThrow(/row 4: expected column in \[0, 10\), got 10/);
    const badPtr = { ...a, rowPtr: a.rowPtr.slice() };
    badPtr.rowPtr[3] = badPtr.rowPtr[5]! + 1;
    expect(() => csrScalarKernel.upload(ctx, badPtr)).toThrow(/row 3: expected rowPtr non-decreasing/);
    expect(() => csrScalarKernel.upload(ctx, { ...a, values: a.values.subarray(1) })).toThrow(/expected length 30, got 29/);
  });

  it('an unsafe context (no bounds checks) computes the same product', async () => {
    const own = await createGpuContext({ unsafe: true });
    expect(own.caps.unsafe).toBe(true);
    expect(own.toggles.join(' ')).toContain('disable_robustness');
    const a = generators.banded(100, 2, 2, { seed: 1 });
    const h = csrScalarKernel.upload(own, a);
    const x = uploadF32(own, new Float64Array(100).fill(1));
    const y = own.buffers.acquire(400);
    csrScalarKernel.encode(own, h, x, y);
    const got = await readF32(own, y, 100);
    for (let i = 0; i < 100; i++) {
      let s = 0;
      for (let k = a.rowPtr[i]!; k < a.rowPtr[i + 1]!; k++) s += Math.fround(a.values[k]!);
      expect(Math.abs(got[i]! - s)).toBeLessThanOrEqual(1e-5);
    }
    own.dispose();
  });
});
