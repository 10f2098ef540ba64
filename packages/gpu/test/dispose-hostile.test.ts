/**
 * Use of a GpuContext after `dispose()` (session 6 hardening probe): every operation — a
 * readback already in flight when dispose ran, new vectors, kernels, uploads, df64 — fails with
 * the typed DeviceLostError (CLI exit 4), never a native crash or a hang; disposing twice and
 * disposing buffers of a dead context are no-ops. These passed when probed; kept as a net.
 */
import { generators as g } from '@gpusparse/formats';
import { describe, expect, it } from 'vitest';
import { createGpuContext, Df64Blas, DeviceLostError, getKernel, gpuOperatorFromCsr, GpuVectorSpace, readF32, uploadF32 } from '../src/index';

describe('a disposed GpuContext', () => {
  it('in-flight readbacks and every later operation throw DeviceLostError', async () => {
    const ctx = await createGpuContext();
    const d = await Df64Blas.of(ctx);
    const space = new GpuVectorSpace(ctx);
    const a = g.laplacian1d(100);
    const op = gpuOperatorFromCsr(ctx, a);
    const k = getKernel('csr-vector');
    const h = k.upload(ctx, a, {});
    const x = space.fromArray(new Float64Array(100).fill(1));
    const y = space.create(100);
    const dx = uploadF32(ctx, new Float32Array(100));
    op.apply(x, y);
    const pending = space.toArray(y); // recorded, not yet read
    ctx.dispose();
    const lost = { name: 'DeviceLostError', message: expect.stringMatching(/device lost.*destroyed.*recreate the context or use the host backend/) };
    await expect(pending).rejects.toMatchObject(lost);
    await expect(pending).rejects.toBeInstanceOf(DeviceLostError);
    const later: [string, () => unknown][] = [
      ['space.create', () => space.create(10)],
      ['space.fromArray', () => space.fromArray([1, 2])],
      ['space.toArray', () => space.toArray(x)],
      ['axpby', () => space.axpby(1, x, 1, y)],
      ['operator apply', () => op.apply(x, y)],
      ['kernel encode', () => k.encode(ctx, h, dx, dx)],
      ['readF32', () => readF32(ctx, dx, 10)],
      ['upload', () => k.upload(ctx, a, {})],
      ['acquire', () => ctx.buffers.acquire(1024)],
      ['finish', () => ctx.finish()],
      ['df64 fromFloat64', () => d?.fromFloat64([1, 2, 3])],
    ];
    for (const [what, f] of later) {
      await expect((async () => f())(), what).rejects.toBeInstanceOf(DeviceLostError);
    }
    expect(() => {
      h.dispose();
      dx.dispose();
      ctx.dispose();
    }).not.toThrow();
  });
});
