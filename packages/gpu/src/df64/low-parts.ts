/**
 * The f32 low parts of float64 matrix values, lo = fl32(v − fl32(v)), for df64 operators that
 * share a float32 upload's hi values: a one-pass typed scan (no allocation while every value is
 * exact in f32, none at all for f32-exact matrices), and a sliced upload that yields to the
 * event loop between slices so that it can run while a float32 solve awaits its readbacks.
 * With a power-of-two `scale` (flush.ts) the lo parts are those of scale·v: the kernel then
 * multiplies the shared hi by the same scale. Every scan also adds to a {@link Df64ValueRange}.
 * @module
 */
import type { GpuContext } from '../device/context';
import { type GpuBuf, STORAGE_USAGE } from '../memory/buffers';
import { writeData } from '../memory/upload';
import { type Df64ValueRange, emptyValueRange, F32_MIN_NORMAL } from './flush';

/**
 * out[k − k0] = fl32((v_k − fl32(v_k))·range.scale) for k in [k0, k1) (0 where fl32(v) overflows);
 * true when some written lo is not 0. Adds the values to `range` (max |v|, subnormal parts).
 * One pass, no allocation. O(k1 − k0).
 */
export function lowPartsInto(values: ArrayLike<number>, k0: number, k1: number, out: Float32Array, range: Df64ValueRange = emptyValueRange()): boolean {
  let any = false;
  const s = range.scale;
  let { maxAbs, subnormalHi, subnormalLo } = range;
  for (let k = k0; k < k1; k++) {
    const v = values[k]!;
    const hi = Math.fround(v);
    const l = (v - hi) * s;
    const o = (out[k - k0] = l - l === 0 ? l : 0); // the store rounds to f32; v − ±∞ or NaN: no low part
    if (o !== 0) {
      any = true;
      if (Math.abs(o) < F32_MIN_NORMAL) subnormalLo++;
    }
    const a = Math.abs(v);
    if (a > maxAbs) maxAbs = a;
    if (a < F32_MIN_NORMAL && hi !== 0) subnormalHi++;
  }
  range.maxAbs = maxAbs;
  range.subnormalHi = subnormalHi;
  range.subnormalLo = subnormalLo;
  return any;
}

/**
 * lo = fl32((v − fl32(v))·range.scale) of values[k0, k1), or undefined when every value is exact
 * in f32 (then the block needs no lo array, and nothing is allocated). Adds the values to
 * `range`. O(k1 − k0).
 * @example lowParts(new Float64Array([1, 0.1])) // Float32Array [0, -1.49e-9]
 */
export function lowParts(values: ArrayLike<number>, k0 = 0, k1 = values.length, range: Df64ValueRange = emptyValueRange()): Float32Array | undefined {
  const first = exactPrefix(values, k0, k1, range);
  if (first >= k1) return undefined;
  const lo = new Float32Array(k1 - k0);
  lowPartsInto(values, first, k1, lo.subarray(first - k0), range);
  return lo;
}

/** The first k in [k0, k1) whose lo part (at range.scale) is not 0, else k1; the values before it are added to `range`. */
function exactPrefix(values: ArrayLike<number>, k0: number, k1: number, range: Df64ValueRange): number {
  const s = range.scale;
  let { maxAbs, subnormalHi } = range;
  let k = k0;
  for (; k < k1; k++) {
    const v = values[k]!;
    const hi = Math.fround(v);
    const l = Math.fround((v - hi) * s);
    if (l !== 0 && l - l === 0) break;
    const a = Math.abs(v);
    if (a > maxAbs) maxAbs = a;
    if (a < F32_MIN_NORMAL && hi !== 0) subnormalHi++;
  }
  range.maxAbs = maxAbs;
  range.subnormalHi = subnormalHi;
  return k;
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
 * cleared; lo parts and `o.range` at o.range.scale); with `yieldBetween`, the event loop runs between slices (and before the first with
 * `yieldFirst`: the range continues an earlier one). Host memory: one slice.
 * Adds its host times to `stats`. O(k1 − k0).
 */
export async function uploadLowParts(ctx: GpuContext, values: ArrayLike<number>, k0: number, k1: number, stats: LowPartStats, o: { slice?: number; yieldBetween?: boolean; yieldFirst?: boolean; label?: string; range?: Df64ValueRange } = {}): Promise<GpuBuf | undefined> {
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
    const any = lowPartsInto(values, s, e, view, o.range);
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
