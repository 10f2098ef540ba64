/**
 * Readback: the only synchronisation point of the runtime. Copies ranges into one mappable
 * staging buffer, submits, and waits for `mapAsync`.
 * @module
 */
import type { GpuContext } from '../device/context';
import { DeviceLostError, UseAfterDisposeError } from '../device/errors';
import type { GpuBuf } from './buffers';

/** A byte range of a device buffer (offset and bytes multiples of 4). */
export interface ReadRange {
  readonly buf: GpuBuf;
  readonly offset: number;
  readonly bytes: number;
}

const MAP_READ_USAGE = 0x01 | 0x08; // MAP_READ | COPY_DST

/**
 * Read several ranges with one submission and one wait. Cost: one round trip (~0.8 ms on an
 * H200 for a few bytes) plus the transfer.
 * @example
 * const [bytes] = await readRanges(ctx, [{ buf, offset: 0, bytes: 16 }]);
 */
export async function readRanges(ctx: GpuContext, ranges: readonly ReadRange[]): Promise<ArrayBuffer[]> {
  const out = await readMapped(ctx, ranges, (mapped, offsets) => ranges.map((r, k) => mapped.slice(offsets[k]!, offsets[k]! + r.bytes)));
  return out ?? ranges.map(() => new ArrayBuffer(0));
}

/**
 * The core of {@link readRanges}: copy the ranges into one mappable staging buffer, submit, wait,
 * and hand the mapped bytes (valid only during the call) with each range's offset in them to
 * `take`, whose result is returned; undefined when the ranges hold no byte. `take` copies what
 * it keeps, so a caller that converts the values (readF32: float32 → float64) reads the mapped
 * memory once, with no intermediate copy.
 */
async function readMapped<T>(ctx: GpuContext, ranges: readonly ReadRange[], take: (mapped: ArrayBuffer, offsets: readonly number[]) => T): Promise<T | undefined> {
  ctx.check();
  const offsets: number[] = [];
  let total = 0;
  for (const r of ranges) {
    offsets.push(total);
    total += Math.ceil(r.bytes / 4) * 4;
  }
  if (total === 0) {
    await ctx.finish();
    return undefined;
  }
  // refused before the staging buffer exists, so that the refusal leaks nothing
  for (const r of ranges) if (r.buf.isDisposed) throw new UseAfterDisposeError('readback', r.buf.id, r.buf.buffer.label);
  const staging = ctx.buffers.acquire(total, MAP_READ_USAGE, 'readback');
  ranges.forEach((r, k) => {
    ctx.recorder.copy(r.buf, r.offset, staging, offsets[k]!, Math.ceil(r.bytes / 4) * 4);
  });
  ctx.recorder.flush();
  try {
    await staging.buffer.mapAsync(GPUMapMode.READ, 0, total);
  } catch (e) {
    staging.dispose();
    await ctx.settle();
    await new Promise((r) => setTimeout(r, 0));
    ctx.check(); // the failed operation's own error, when one was reported
    throw new DeviceLostError('unknown', `mapAsync failed: ${(e as Error).message}`);
  }
  const mapped = staging.buffer.getMappedRange(0, total);
  let out: T;
  try {
    out = take(mapped, offsets);
  } finally {
    staging.buffer.unmap();
    staging.dispose();
  }
  await ctx.settle();
  ctx.check();
  return out;
}

/**
 * Read `count` f32 values of `buf` starting at element `first`, as float64: converted straight
 * from the mapped staging memory (one pass; no slice of the bytes first), with the typed-array
 * constructor (`Float64Array.from` goes through the iterator protocol: ~3× slower in V8).
 */
export async function readF32(ctx: GpuContext, buf: GpuBuf, count: number, first = 0): Promise<Float64Array> {
  const out = await readMapped(ctx, [{ buf, offset: first * 4, bytes: count * 4 }], (mapped) => new Float64Array(new Float32Array(mapped, 0, count)));
  return out ?? new Float64Array(0);
}
