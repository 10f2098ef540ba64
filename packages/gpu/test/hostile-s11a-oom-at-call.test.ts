/**
 * Session 11: an out-of-memory of an allocation made by an async call is reported by that call
 * (session 10 did tunedOperator and the device σ's tables; these three were left):
 * refinedSolve with b = 0 and output 'device' (x allocated, handed back without a solve),
 * Df64CsrOperator.fromGpuOperatorSliced (the lo arrays) and deviceDiaFromCsr (the offset map).
 * Before, each resolved and the error came at the caller's next use of the result. The fault is
 * injected at the Dawn boundary (support/faults.ts injectOom): the allocation whose buffer label matches
 * reports 'out-of-memory' from its error scope (WebGPU reports it asynchronously, so the buffer
 * itself exists; only the scope says it failed).
 */
import { generators as g, ResourceLimitError } from '@gpusparse/formats';
import { describe, expect, it } from 'vitest';
import { refinedSolve } from '../../solvers/src/index';
import { createGpuContext, Df64CsrOperator, Df64VectorSpace, GpuVectorSpace, gpuOperatorFromCsr, uploadCsrArrays } from '../src/index';
import { deviceDiaFromCsr } from '../src/kernels/dia/dia-build';
import { injectOom } from './support/faults';

/** The call's rejection, or an Error saying what it resolved to instead (disposed). */
async function rejection(call: Promise<unknown>, cleanup: (v: unknown) => void): Promise<unknown> {
  return call.then(
    (v) => {
      cleanup(v);
      return new Error('expected a ResourceLimitError, got a result');
    },
    (e: unknown) => e,
  );
}

describe('out of memory at the allocating call (session 10 left these)', () => {
  it("refinedSolve, b = 0, output 'device': ResourceLimitError from refinedSolve (was a DeviceSolution whose x failed)", async () => {
    const ctx = await createGpuContext();
    try {
      const a = g.poisson2d(16);
      const op = gpuOperatorFromCsr(ctx, a);
      const space = new GpuVectorSpace(ctx);
      const b = new Float64Array(a.rows); // on the host: ‖b‖ needs no device vector, the first df64 vectors are the early path's
      await ctx.finish();
      // a fresh context: no pooled df64 vector, so x is a new allocation (the first 'df64-vector')
      const f = injectOom(ctx, /df64-vector/);
      const e = await rejection(refinedSolve({ innerOperator: op, innerSpace: space, b, inner: { method: 'cg' }, output: 'device' }), (r) => (r as { x: { dispose(): void } }).x.dispose());
      expect(f.fired()).toBe(true);
      expect(e).toBeInstanceOf(ResourceLimitError);
      expect((e as Error).message).toMatch(/df64-vector/);
      expect(() => ctx.check()).not.toThrow(); // the call took the error: the next operation starts clean
      op.dispose();
    } finally {
      ctx.dispose();
    }
  });

  it('Df64CsrOperator.fromGpuOperatorSliced: the lo upload runs out of memory → ResourceLimitError from the build', async () => {
    const ctx = await createGpuContext();
    try {
      const a = g.poisson2d(16);
      const m = { ...a, values: a.values.map((v) => v / 3) }; // not exact in float32: a lo array exists
      const op = gpuOperatorFromCsr(ctx, m, { kernel: 'csr-vector' });
      const d = (await Df64VectorSpace.of(ctx))!.d;
      await ctx.finish();
      const f = injectOom(ctx, /df64-op-lo/);
      const e = await rejection(Df64CsrOperator.fromGpuOperatorSliced(d, op, m), (r) => (r as { dispose(): void } | undefined)?.dispose());
      expect(f.fired()).toBe(true);
      expect(e).toBeInstanceOf(ResourceLimitError);
      expect((e as Error).message).toMatch(/df64-op-lo/);
      expect(() => ctx.check()).not.toThrow();
      op.dispose();
    } finally {
      ctx.dispose();
    }
  });

  it('deviceDiaFromCsr: the offset map runs out of memory → ResourceLimitError from the build', async () => {
    const ctx = await createGpuContext();
    try {
      const a = g.poisson2d(16);
      const shared = uploadCsrArrays(ctx, a);
      await ctx.finish();
      const f = injectOom(ctx, /dia-build-map/);
      const e = await rejection(deviceDiaFromCsr(ctx, shared, { offsets: Int32Array.from([-16, -1, 0, 1, 16]) }), (r) => (r as { release(): void }).release());
      expect(f.fired()).toBe(true);
      expect(e).toBeInstanceOf(ResourceLimitError);
      expect((e as Error).message).toMatch(/dia-build-map/);
      expect(() => ctx.check()).not.toThrow();
      shared.release();
    } finally {
      ctx.dispose();
    }
  });
});
