import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GpuContext } from '../src/index';
import { testContext } from './helpers';

let ctx: GpuContext;
beforeAll(async () => {
  ctx = await testContext(); // throws NoAdapterError: the file fails without an adapter
});
afterAll(() => ctx.dispose());

const MiB = 2 ** 20;

/** Count the device's createBuffer calls made by `f`. */
function created(f: () => void): number {
  const d = ctx.device as unknown as { createBuffer: (desc: GPUBufferDescriptor) => GPUBuffer };
  const orig = d.createBuffer;
  let n = 0;
  d.createBuffer = function (this: unknown, desc: GPUBufferDescriptor) {
    n++;
    return orig.call(this, desc);
  };
  try {
    f();
  } finally {
    d.createBuffer = orig;
  }
  return n;
}

describe('buffer pool', () => {
  it('keeps a released working set larger than maxPooledBytes for the next round (a Lanczos restart)', () => {
    const pool = ctx.buffers;
    const saved = pool.maxPooledBytes;
    pool.maxPooledBytes = 1 * MiB; // a fixed cap of one vector: the old rule kept 1 of the 6
    try {
      const round = () => {
        const bufs = Array.from({ length: 6 }, () => pool.acquire(MiB, undefined, 'basis'));
        for (const b of bufs) b.dispose();
      };
      created(round);
      expect(pool.peakLiveBytes).toBeGreaterThanOrEqual(6 * MiB);
      expect(created(round)).toBe(0); // every basis vector reused
      expect(created(round)).toBe(0);
    } finally {
      pool.maxPooledBytes = saved;
    }
  });

  it('never holds more than the peak working set: pooled buffers of another size are destroyed first', () => {
    const pool = ctx.buffers;
    const saved = pool.maxPooledBytes;
    pool.maxPooledBytes = 0;
    try {
      const before = pool.allocatedBytes;
      const peak0 = Math.max(pool.peakLiveBytes, 0);
      const a = Array.from({ length: 4 }, () => pool.acquire(2 * MiB, undefined, 'a'));
      for (const b of a) b.dispose(); // pooled: 8 MiB, within the peak
      const big = pool.acquire(Math.max(peak0, 8 * MiB) + 4 * MiB, undefined, 'big'); // a new size class
      // the pooled 2-MiB buffers went before the new one was made: allocated = live only
      expect(pool.allocatedBytes - before).toBeLessThanOrEqual(big.size);
      big.dispose();
    } finally {
      pool.maxPooledBytes = saved;
    }
  });
});
