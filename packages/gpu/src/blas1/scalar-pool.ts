/**
 * Device scalars: one storage buffer of float32 slots per context, with reference counts, so
 * that dot products, norms and scalar arithmetic stay on the device until a readback.
 * @module
 */
import { GpuSparseError } from '@gpusparse/formats';
import type { GpuContext } from '../device/context';
import type { GpuBuf } from '../memory/buffers';

/** Number of scalar slots per context (256 KiB). */
export const SCALAR_SLOTS = 65_536;

/** Slots of the device scalar buffer of one context. Cost of alloc/release: O(1). */
export class ScalarPool {
  readonly buf: GpuBuf;
  private readonly refs = new Uint32Array(SCALAR_SLOTS);
  private readonly free: number[] = [];
  private next = 0;

  constructor(ctx: GpuContext) {
    this.buf = ctx.buffers.acquire(SCALAR_SLOTS * 4, undefined, 'scalars');
  }

  /** A fresh slot with one reference (its content is written by the caller's kernel). */
  alloc(): number {
    const s = this.free.pop() ?? (this.next < SCALAR_SLOTS ? this.next++ : -1);
    if (s < 0) {
      throw new GpuSparseError(`device scalars: expected at most ${SCALAR_SLOTS} live scalars, got more; release() scalars you no longer need`);
    }
    this.refs[s] = 1;
    return s;
  }

  /** Add a reference to slot `s` (ignores -1). */
  retain(s: number): void {
    if (s >= 0) this.refs[s]!++;
  }

  /** Drop a reference; the slot is reused when none remain (ignores -1). */
  release(s: number): void {
    if (s < 0 || this.refs[s] === 0) return;
    if (--this.refs[s]! === 0) this.free.push(s);
  }

  /** Live slots (tests). */
  get live(): number {
    return this.next - this.free.length;
  }
}
