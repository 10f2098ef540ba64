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
  const one = ranges.length === 1 ? ranges[0]! : undefined;
  if (one && usePieces(one.bytes)) {
    const bytes = new Uint8Array(one.bytes);
    await readPieces(ctx, one.buf, one.offset, Math.ceil(one.bytes / 4) * 4, (mapped, at, len) => bytes.set(new Uint8Array(mapped, 0, Math.min(len, one.bytes - at)), at));
    return [bytes.buffer];
  }
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
 * How {@link readF32} reads large vectors: `single`, one staging buffer of the whole range, one
 * wait, one conversion; `pieces`, pieces of `pieceBytes` (4 MiB) through two pooled staging buffers
 * taken in turn — the GPU copies piece i + 1 while the host converts piece i out of its mapped
 * memory into the result (on the H100 host the conversion into a fresh Float64Array ran at
 * ~0.9 GB/s and the copy out of a mapped read buffer at ~1.7 GB/s: one pass after the other,
 * 1 GiB took 0.97 s). `auto` (the default): `pieces` from `minPiecesBytes` (8 MiB) on, on every
 * adapter (lavapipe, bench/transfer.ts lib-read-f64: no slower within its noise). readRanges of
 * one range (the df64 vector's read) goes the same way.
 */
export const readTuning: { method: 'auto' | 'single' | 'pieces'; pieceBytes: number; minPiecesBytes: number } = {
  method: 'auto',
  pieceBytes: 4 * 2 ** 20,
  minPiecesBytes: 8 * 2 ** 20,
};

/**
 * Read `count` f32 values of `buf` starting at element `first`, as float64: converted straight
 * from the mapped staging memory (one pass; no slice of the bytes first), with the typed-array
 * constructor or `set` (`Float64Array.from` goes through the iterator protocol: ~3× slower in
 * V8); large reads in pipelined pieces ({@link readTuning}). Bit-identical either way.
 */
export async function readF32(ctx: GpuContext, buf: GpuBuf, count: number, first = 0): Promise<Float64Array> {
  if (usePieces(count * 4)) {
    const out = new Float64Array(count);
    await readPieces(ctx, buf, first * 4, count * 4, (mapped, at, len) => out.set(new Float32Array(mapped, 0, len / 4), at / 4));
    return out;
  }
  const out = await readMapped(ctx, [{ buf, offset: first * 4, bytes: count * 4 }], (mapped) => new Float64Array(new Float32Array(mapped, 0, count)));
  return out ?? new Float64Array(0);
}

/** Whether a read of `bytes` goes in pieces ({@link readTuning}). */
function usePieces(bytes: number): boolean {
  const yes = readTuning.method === 'pieces' || (readTuning.method === 'auto' && bytes >= readTuning.minPiecesBytes);
  return yes && bytes > pieceBytes();
}

/** Bytes of one read piece (readTuning.pieceBytes, a multiple of 4). */
function pieceBytes(): number {
  return Math.max(4, Math.floor(readTuning.pieceBytes / 4) * 4);
}

/**
 * Read `total` bytes (a multiple of 4) of `buf` from byte `offset` in pieces through two staging
 * buffers of the pool: piece k + 1 is copied and its map requested before `put` takes piece k
 * (its mapped bytes, valid during the call, with its byte position and length), so the GPU's
 * copy and the host's conversion overlap. Errors as readMapped: a failed map says the device's
 * own error if one was reported, else DeviceLostError; nothing leaks (the staging buffers are
 * unmapped and returned to the pool).
 */
async function readPieces(ctx: GpuContext, buf: GpuBuf, offset: number, total: number, put: (mapped: ArrayBuffer, at: number, len: number) => void): Promise<void> {
  ctx.check();
  if (buf.isDisposed) throw new UseAfterDisposeError('readback', buf.id, buf.buffer.label);
  const piece = pieceBytes();
  const staging = [ctx.buffers.acquire(piece, MAP_READ_USAGE, 'readback-piece'), ctx.buffers.acquire(piece, MAP_READ_USAGE, 'readback-piece')];
  const n = Math.ceil(total / piece);
  const start = (k: number): Promise<void> => {
    const s = staging[k % 2]!;
    const len = Math.min(piece, total - k * piece);
    ctx.recorder.copy(buf, offset + k * piece, s, 0, len);
    ctx.recorder.flush();
    const p = s.buffer.mapAsync(GPUMapMode.READ, 0, len);
    p.catch(() => undefined); // awaited below; a piece never awaited (an earlier one failed) must not be an unhandled rejection
    return p;
  };
  let pending = start(0);
  try {
    for (let k = 0; k < n; k++) {
      const next = k + 1 < n ? start(k + 1) : undefined;
      await pending;
      const s = staging[k % 2]!;
      const len = Math.min(piece, total - k * piece);
      put(s.buffer.getMappedRange(0, len), k * piece, len);
      s.buffer.unmap();
      if (next) pending = next;
    }
  } catch (e) {
    for (const s of staging) {
      s.buffer.unmap(); // cancels a pending map: the buffer goes back to the pool unmapped
      s.dispose();
    }
    await ctx.settle();
    await new Promise((r) => setTimeout(r, 0));
    ctx.check(); // the failed operation's own error, when one was reported
    throw new DeviceLostError('unknown', `mapAsync failed: ${(e as Error).message}`);
  }
  for (const s of staging) s.dispose();
  await ctx.settle();
  ctx.check();
}
