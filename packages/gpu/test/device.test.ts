import { beforeAll, describe, expect, it } from 'vitest';
import { createGpuContext, DeviceLostError, fold2d, type GpuContext, GpuValidationError, LAVAPIPE_INSTALL, NoAdapterError, readF32, uploadF32 } from '../src/index';
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
});
