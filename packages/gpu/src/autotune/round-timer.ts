/**
 * The device side of the interleaved rounds (`rounds.ts`): one round records every candidate's
 * products back to back into one stream of GPU work — per candidate one untimed lead product
 * and `reps` products each in its own timestamped compute pass — and reads the timestamps back
 * once, so that no host pause falls between candidates and all of them run at one clock. Without
 * timestamp queries each candidate is timed by the host clock over its `reps` products (a wait
 * per candidate: the best a device without timestamps allows).
 * @module
 */
import type { GpuContext } from '../device/context';
import { readRanges } from '../memory/readback';
import type { RoundTimer } from './rounds';
import { medianOf } from './types';

/** A {@link RoundTimer} on a device, with the query set it keeps between rounds. */
export interface DeviceRoundTimer {
  readonly time: RoundTimer;
  readonly method: 'timestamp' | 'wall';
  dispose(): void;
}

/** WebGPU's largest timestamp query set (count). */
const MAX_QUERIES = 4096;

/**
 * A round timer over `encoders` (each records one product into `ctx.recorder`), for rounds of at
 * most `maxReps` repetitions. A candidate whose encode throws reads NaN for the round (the others
 * are still timed). Cost per round: n · (reps + 1) products, one submission and one readback
 * (timestamps), or n waits (wall clock).
 * @example const t = deviceRoundTimer(ctx, [encA, encB], 5); const [a, b] = await t.time([0, 1], 5); t.dispose();
 */
export function deviceRoundTimer(ctx: GpuContext, encoders: readonly (() => void)[], maxReps: number, forceWall = false): DeviceRoundTimer {
  const n = encoders.length;
  const stamps = ctx.caps.timestampQuery && !forceWall && 2 * maxReps * n <= MAX_QUERIES;
  if (!stamps) return { time: (order, reps) => wallRound(ctx, encoders, reps, order), method: 'wall', dispose: () => {} };
  const qs = ctx.device.createQuerySet({ type: 'timestamp', count: 2 * maxReps * n });
  const time = (order: readonly number[], reps: number) => stampedRound(ctx, encoders, Math.min(reps, maxReps), order, qs);
  return { time, method: 'timestamp', dispose: () => qs.destroy() };
}

/** One round by GPU timestamps: all candidates in one submission, one readback. */
async function stampedRound(ctx: GpuContext, encoders: readonly (() => void)[], reps: number, order: readonly number[], qs: GPUQuerySet): Promise<number[]> {
  const rec = ctx.recorder;
  const ok = order.map(() => true);
  order.forEach((i, k) => {
    try {
      encoders[i]!(); // the lead: the first timed pass follows a product of its own kernel
      for (let r = 0; r < reps; r++) {
        const q = 2 * (k * reps + r);
        rec.computePass({ timestampWrites: { querySet: qs, beginningOfPassWriteIndex: q, endOfPassWriteIndex: q + 1 } });
        encoders[i]!();
        rec.endPass();
      }
    } catch {
      rec.endPass();
      ok[k] = false;
    }
  });
  const count = 2 * reps * order.length;
  const resolve = ctx.buffers.acquire(8 * count, 0x200 | 0x04, 'timestamps'); // QUERY_RESOLVE | COPY_SRC
  try {
    rec.commandEncoder().resolveQuerySet(qs, 0, count, resolve.buffer, 0);
    const [bytes] = await readRanges(ctx, [{ buf: resolve, offset: 0, bytes: 8 * count }]);
    const t = new BigUint64Array(bytes!);
    return order.map((_, k) => {
      if (!ok[k]) return Number.NaN;
      const ms: number[] = [];
      for (let r = 0; r < reps; r++) ms.push(Number(t[2 * (k * reps + r) + 1]! - t[2 * (k * reps + r)]!) / 1e6);
      return medianOf(ms);
    });
  } finally {
    resolve.dispose();
  }
}

/** One round by the host clock: per candidate a lead product, a wait, then `reps` products and a wait. */
async function wallRound(ctx: GpuContext, encoders: readonly (() => void)[], reps: number, order: readonly number[]): Promise<number[]> {
  const out: number[] = [];
  for (const i of order) {
    try {
      encoders[i]!();
      await ctx.finish();
      const t0 = performance.now();
      for (let r = 0; r < reps; r++) encoders[i]!();
      await ctx.finish();
      out.push((performance.now() - t0) / reps);
    } catch (e) {
      if (ctx.isLost) throw e;
      out.push(Number.NaN);
    }
  }
  return out;
}
