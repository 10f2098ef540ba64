/**
 * Issue 14: errors stay where they happen (each device operation in its own error scope, typed
 * as what it is) and one failure never poisons the context; no binding ever exceeds the
 * device's maxStorageBufferBindingSize (pool size classes, the planning cap).
 */
import { csrSpmv, generators as g, ResourceLimitError } from '@gpusparse/formats';
import { beforeAll, describe, expect, it } from 'vitest';
import { poolSize, STORAGE_USAGE, sizeClass } from '../src/memory/buffers';
import { createGpuContext, getKernel, type GpuContext, GpuValidationError, readF32, Uniforms, uploadF32 } from '../src/index';
import { EPS32, f32, randomVector } from './helpers';

let ctx: GpuContext;
beforeAll(async () => {
  ctx = await createGpuContext(); // its own context: this file makes it fail on purpose
});

/** A kernel that must pass after a failure in the same context: csr-vector y = A·x, per-row bound. */
async function passingSpmv(c: GpuContext): Promise<void> {
  const a0 = g.powerLaw(300, 300, { seed: 5, maxLen: 60 });
  const a = { ...a0, values: f32(a0.values) };
  const x = f32(randomVector(300, 9));
  const k = getKernel('csr-vector');
  const h = k.upload(c, a, {});
  const dx = uploadF32(c, x);
  const dy = c.buffers.acquire(300 * 4);
  k.encode(c, h, dx, dy);
  const y = await readF32(c, dy, 300);
  const want = csrSpmv(a, x);
  for (let i = 0; i < 300; i++) {
    let mass = 0;
    for (let q = a.rowPtr[i]!; q < a.rowPtr[i + 1]!; q++) mass += Math.abs(a.values[q]! * x[a.colIdx[q]!]!);
    expect(Math.abs(y[i]! - want[i]!), `row ${i}`).toBeLessThanOrEqual(2 * (a.rowPtr[i + 1]! - a.rowPtr[i]!) * EPS32 * mass);
  }
  h.dispose();
  dx.dispose();
  dy.dispose();
}

describe('pool size classes never round a binding past the limit', () => {
  const NV = 2_147_483_644; // NVIDIA: 2 GiB − 4
  it('a request that fits one binding gets a buffer that fits it (the reported 2 GiB class)', () => {
    expect(sizeClass(NV)).toBe(2 ** 31); // the class alone would pass the limit
    for (const b of [NV, NV - 4, NV - 100, 2 ** 31 - 2 ** 20 + 1]) {
      const s = poolSize(b, NV, 2 ** 36);
      expect(s, `${b}`).toBeGreaterThanOrEqual(b);
      expect(s, `${b}`).toBeLessThanOrEqual(NV);
    }
    expect(poolSize(1000, NV, 2 ** 36)).toBe(1024); // small requests keep their class
  });
  it('never passes maxBufferSize; refuses a request past it', () => {
    expect(poolSize(2 ** 32 - 100, NV, 2 ** 32 - 1)).toBeLessThanOrEqual(2 ** 32 - 1);
    expect(poolSize(2 ** 32, NV, 2 ** 32 - 1)).toBe(-1);
    expect(() => ctx.buffers.acquire(ctx.deviceLimits.maxBufferSize + 1)).toThrow(ResourceLimitError);
  });
});

describe('errors stay where they happen; the context keeps working', () => {
  it('an out-of-memory buffer is a ResourceLimitError (bytes needed vs held), then a kernel passes', async () => {
    // lavapipe allocates lazily: the one request it refuses at once is maxBufferSize (2^32 − 1,
    // rounded up to 2^32 by Dawn), so create it raw through the scope that acquire() uses
    const size = ctx.deviceLimits.maxBufferSize;
    const huge = ctx.scoped("buffer 'oom-on-purpose'", () => ctx.device.createBuffer({ size, usage: STORAGE_USAGE, label: 'oom-on-purpose' }), { bytes: size });
    const err = await ctx.finish().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ResourceLimitError);
    expect((err as Error).message).toMatch(/oom-on-purpose.*needs .*available.*out of memory/);
    huge.destroy();
    await passingSpmv(ctx);
    await ctx.finish();
  });

  it('a bad pipeline is a bug-class GpuValidationError (not a GpuSparseError: CLI exit 70), then a kernel passes', async () => {
    ctx.pipelines.get({ key: 'test:bad-2', label: 'bad-on-purpose', bindings: 'w', wgsl: () => '@compute @workgroup_size(1) fn main() { let q = undefined_thing; }' });
    const err = await ctx.finish().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GpuValidationError);
    expect((err as Error).name).toBe('GpuValidationError');
    expect((err as Error).message).toContain('bad-on-purpose');
    await passingSpmv(ctx);
  });

  it('a dispatch of a failed pipeline fails its own batch only; the next batch runs', async () => {
    const bad = ctx.pipelines.get({ key: 'test:bad-3', label: 'bad-dispatch', bindings: 'w', wgsl: () => 'this is not WGSL' });
    const b = ctx.buffers.acquire(256);
    ctx.recorder.dispatch(bad, [b], new Uniforms(), 1);
    const err = await readF32(ctx, b, 4).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GpuValidationError);
    b.dispose();
    await passingSpmv(ctx);
  });

  it('a binding past the device limit is refused before the device sees it (ResourceLimitError), buffers stay usable', async () => {
    const pipe = ctx.pipelines.get({
      key: 'test:fill',
      label: 'fill',
      bindings: 'w',
      wgsl: () => `struct U { n: u32 }
@group(0) @binding(0) var<uniform> u: U;
@group(0) @binding(1) var<storage, read_write> b: array<f32>;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) id: vec3<u32>) { if (id.x < u.n) { b[id.x] = 7.0; } }`,
    });
    const b = ctx.buffers.acquire(1024);
    const u = new Uniforms();
    u.u[0] = 256;
    expect(() => ctx.recorder.dispatch(pipe, [{ buf: b, size: ctx.deviceLimits.maxStorageBufferBindingSize + 4 }], u, 4)).toThrow(ResourceLimitError);
    const u2 = new Uniforms();
    u2.u[0] = 256;
    ctx.recorder.dispatch(pipe, [b], u2, 4);
    expect([...(await readF32(ctx, b, 256))].every((v) => v === 7)).toBe(true);
    b.dispose();
  });
});

describe('planning cap (context option maxBindingBytes)', () => {
  it('limits report the cap; the device keeps its own', async () => {
    const c = await createGpuContext({ maxBindingBytes: 300_000 });
    expect(c.limits.maxStorageBufferBindingSize).toBe(300_000);
    expect(c.deviceLimits.maxStorageBufferBindingSize).toBe(ctx.deviceLimits.maxStorageBufferBindingSize);
    // a matrix past the cap is split by the kernels, which plan from ctx.limits
    const a = g.uniformRandom(20_000, 20_000, 8, 3); // 160 000 entries: 640 kB of columns
    const h = getKernel('csr-vector').upload(c, a, {});
    expect(h.blocks).toBeGreaterThan(1);
    h.dispose();
    await expect(createGpuContext({ maxBindingBytes: 10 })).rejects.toThrow(/maxBindingBytes/);
    c.dispose();
  });
});
