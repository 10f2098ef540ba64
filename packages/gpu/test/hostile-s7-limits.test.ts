/**
 * Session 7 hardening: a matrix whose x or y (float32) exceeds one storage binding. Every SpMV
 * kernel binds them whole; before the fix each kernel refused it with NotSupportedError (CLI
 * exit 3, "bad input") and the tuner with "no kernel passes verification" (170 failed
 * candidates). Now: ResourceLimitError (exit 5) with bytes needed and available, before any
 * conversion. A context planning with 4096-byte bindings stands in for the device limit.
 */
import { csrSpmv, generators, ResourceLimitError } from '@gpusparse/formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkVectorBindings, createGpuContext, type GpuContext, gpuOperatorFromCsr, GpuVectorSpace, kernels } from '../src/index';

let ctx: GpuContext;
beforeAll(async () => {
  ctx = await createGpuContext({ maxBindingBytes: 4096 });
});
afterAll(() => ctx?.dispose());

describe('x or y beyond one storage binding', () => {
  const a = generators.poisson2d(40); // 1600 rows: x is 6400 bytes
  it('every registered kernel: ResourceLimitError naming x, y, 6.4 kB needed and 4.1 kB available (was NotSupportedError)', () => {
    for (const k of kernels) {
      let err: unknown;
      try {
        gpuOperatorFromCsr(ctx, a, { kernel: k.id });
      } catch (e) {
        err = e;
      }
      expect(err, k.id).toBeInstanceOf(ResourceLimitError);
      expect((err as Error).message).toMatch(new RegExp(`^${k.id}: x \\(1600 entries\\) or y \\(1600\\) in float32, bound whole by every SpMV kernel: needs 6\\.4 kB, 4\\.1 kB available — .*--backend cpu`));
    }
  });
  it('a rectangular matrix is judged by its longer vector; one that fits still runs and multiplies right', async () => {
    expect(() => checkVectorBindings(ctx, { rows: 10, cols: 1025 }, 'A')).toThrow(/A: x \(1025 entries\) or y \(10\)/);
    expect(() => checkVectorBindings(ctx, { rows: 1024, cols: 1024 }, 'A')).not.toThrow();
    const small = generators.poisson2d(30); // 900 rows: 3600 bytes
    const op = gpuOperatorFromCsr(ctx, small, { kernel: 'csr-vector' });
    const space = new GpuVectorSpace(ctx);
    const x = Float64Array.from({ length: small.cols }, (_, i) => Math.cos(i));
    const y = space.create(small.rows);
    op.apply(space.fromArray(x), y);
    const ref = csrSpmv(small, x);
    const got = await space.toArray(y);
    for (let i = 0; i < ref.length; i++) expect(Math.abs(got[i]! - ref[i]!)).toBeLessThan(1e-5);
    op.dispose();
  });
});
