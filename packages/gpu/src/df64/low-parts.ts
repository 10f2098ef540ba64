/**
 * The f32 low parts of float64 matrix values, lo = fl32(v − fl32(v)), for df64 operators that
 * share a float32 upload's hi values: a one-pass typed scan (no allocation while every value is
 * exact in f32, none at all for f32-exact matrices), and a sliced upload that yields to the
 * event loop between slices so that it can run while a float32 solve awaits its readbacks.
 * @module
 */
import type { GpuContext } from '../device/context';
import { type GpuBuf, STORAGE_USAGE } from '../memory/buffers';
import { writeData } from '../memory/upload';

/** fl32(v − fl32(v)) of one value; 0 where fl32(v) overflows or v is not finite. */
function lowOf(v: number): number {
  const l = Math.fround(v - Math.fround(v));
  return l - l === 0 ? l : 0; // v − ±∞ or NaN: no low part
}

/**
 * out[k − k0] = fl32(v_k − fl32(v_k)) for k in [k0, k1) (0 where fl32(v) overflows); true when
 * some written lo is not 0. One pass, no allocation. O(k1 − k0).
 */
export function lowPartsInto(values: ArrayLike<number>, k0: number, k1: number, out: Float32Array): boolean {
  let any = false;
  for (let k = k0; k < k1; k++) {
    const v = values[k]!;
    const l = v - Math.fround(v);
    out[k - k0] = l - l === 0 ? l : 0; // the store rounds to f32
    if (out[k - k0] !== 0) any = true;
  }
  return any;
}

/**
 * lo = fl32(v − fl32(v)) of values[k0, k1), or undefined when every value is exact in f32
 * (then the block needs no lo array; nothing is allocated). O(k1 − k0).
 * @example lowParts(new Float64Array([1, 0.1])) // Float32Array [0, -1.49e-9]
 */
export function lowParts(values: ArrayLike<number>, k0 = 0, k1 = values.length): Float32Array | undefined {
  let first = k0;
  while (first < k1 && lowOf(values[first]!) === 0) first++;
  if (first >= k1) return undefined;
  const lo = new Float32Array(k1 - k0);
  lowPartsInto(values, first, k1, lo.subarray(first - k0));
  return lo;
}

/** Host milliseconds a low-part build spent scanning and handing slices to the queue. */
export interface LowPartStats {
  scanMs: number;
  uploadMs: number;
  /** Slices written and event-loop yields taken. */
  slices: number;
  yields: number;
}

/** Values per slice of {@link uploadLowParts} (4 MB of f32 per writeBuffer). */
export const LOW_PART_SLICE = 2 ** 20;

/** Let other tasks (a solve's readback continuations) run: setImmediate where it exists. */
function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => (typeof setImmediate === 'function' ? setImmediate(resolve) : setTimeout(resolve, 0)));
}

/**
 * The low parts of values[k0, k1) on the device, or undefined when all are 0: scanned in slices
 * of `slice` values into one reused scratch array and written to a buffer created at the first
 * slice with a non-zero lo (the exact slices before it written as zeros: pooled buffers are not
 * cleared); with `yieldBetween`, the event loop runs between slices (and before the first with
 * `yieldFirst`: the range continues an earlier one). Host memory: one slice.
 * Adds its host times to `stats`. O(k1 − k0).
 */
export async function uploadLowParts(ctx: GpuContext, values: ArrayLike<number>, k0: number, k1: number, stats: LowPartStats, o: { slice?: number; yieldBetween?: boolean; yieldFirst?: boolean; label?: string } = {}): Promise<GpuBuf | undefined> {
  const slice = Math.max(1, Math.min(o.slice ?? LOW_PART_SLICE, k1 - k0));
  const scratch = new Float32Array(slice);
  let buf: GpuBuf | undefined;
  for (let s = k0; s < k1; s += slice) {
    if (o.yieldBetween && (s > k0 || o.yieldFirst)) {
      await yieldToEventLoop();
      stats.yields++;
    }
    const e = Math.min(s + slice, k1);
    const t0 = performance.now();
    const view = scratch.subarray(0, e - s);
    const any = lowPartsInto(values, s, e, view);
    const t1 = performance.now();
    stats.scanMs += t1 - t0;
    if (!any && !buf) continue;
    if (!buf) {
      buf = ctx.buffers.acquire(4 * (k1 - k0), STORAGE_USAGE, o.label ?? 'df64-op-lo');
      const zeros = new Float32Array(Math.min(slice, s - k0));
      for (let z = k0; z < s; z += zeros.length) writeData(ctx, buf, zeros.subarray(0, Math.min(zeros.length, s - z)), z - k0);
    }
    writeData(ctx, buf, view, s - k0); // writeBuffer copies at the call: the scratch may be reused
    stats.slices++;
    stats.uploadMs += performance.now() - t1;
  }
  return buf;
}
