/**
 * Session 8b: GPU work on a buffer after its dispose(). The buffer is back in the pool and may
 * already hold another vector: a dispatch, copy, write or readback on it must raise
 * UseAfterDisposeError at once (naming the kernel and the buffer), never touch that other
 * vector or read its data, and leave the context usable.
 */
import { csrSpmv, generators as g } from '@gpusparse/formats';
import { afterAll, describe, expect, it } from 'vitest';
import { gpuOperatorFromCsr, GpuVectorSpace, UseAfterDisposeError } from '../src/index';
import { testContext } from './helpers';

afterAll(async () => (await testContext()).dispose());

const N = 300;
const values = Float64Array.from({ length: N }, (_, i) => i + 1);

/** A disposed vector and a live one that took its pooled buffer. */
async function reused() {
  const ctx = await testContext();
  const space = new GpuVectorSpace(ctx);
  const dead = space.fromArray(new Float64Array(N).fill(7));
  space.release(dead);
  const live = space.fromArray(values);
  return { ctx, space, dead, live };
}

describe('use after dispose', () => {
  it('a kernel on a disposed vector: a named error, and the vector that reused its buffer is untouched', async () => {
    const { space, dead, live } = await reused();
    expect(live.buf.buffer).toBe(dead.buf.buffer); // the pool handed the same GPUBuffer on
    expect(() => space.fill(dead, 0)).toThrow(UseAfterDisposeError);
    expect(() => space.fill(dead, 0)).toThrow(/dispatch of '.*', binding \d+: expected a live GPU buffer, got buffer \d+ \('vector'\) after its dispose\(\)/);
    expect(() => space.axpby(2, live, 1, dead)).toThrow(UseAfterDisposeError);
    expect(Array.from(await space.toArray(live))).toEqual(Array.from(values));
    live.buf.dispose();
  });

  it('a readback, a write or a copy of a disposed vector: a named error, nothing leaked, context usable', async () => {
    const { ctx, space, dead, live } = await reused();
    const held = (ctx.buffers as unknown as { liveBytes: number }).liveBytes;
    await expect(space.toArray(dead)).rejects.toThrow(/readback: expected a live GPU buffer/);
    expect((ctx.buffers as unknown as { liveBytes: number }).liveBytes).toBe(held); // no staging buffer left behind
    expect(() => space.write(dead, new Float64Array(N))).toThrow(/write: expected a live GPU buffer/);
    const other = space.create(N);
    expect(() => space.copy(dead, other)).toThrow(UseAfterDisposeError);
    space.release(other);
    expect(Array.from(await space.toArray(live))).toEqual(Array.from(values));
    await ctx.finish();
    live.buf.dispose();
  });

  it('an operator product after the operator was disposed: a named error, not a product of freed buffers', async () => {
    const ctx = await testContext();
    const space = new GpuVectorSpace(ctx);
    const a = g.poisson2d(12);
    const op = gpuOperatorFromCsr(ctx, a, { kernel: 'csr-vector' });
    const x = space.fromArray(new Float64Array(a.rows).fill(1));
    const y = space.create(a.rows);
    op.apply(x, y);
    const want = csrSpmv(a, new Float64Array(a.rows).fill(1));
    expect(Array.from(await space.toArray(y))).toEqual(Array.from(want));
    op.dispose();
    expect(() => op.apply(x, y)).toThrow(UseAfterDisposeError);
    expect(Array.from(await space.toArray(y))).toEqual(Array.from(want));
  });
});
