/**
 * Re-timing the finalists: the best few candidates by objective are uploaded together and timed
 * again in interleaved rounds (A B C A B C …), so that a load change on the device or the host
 * during the sweep cannot decide the winner by itself. Each finalist's product time becomes the
 * median of its first measurement and the round medians.
 * @module
 */
import type { GpuContext } from '../device/context';
import type { DeviceMatrix } from '../kernels/types';
import { timeGpu } from '../timing/index';
import type { Candidate } from './candidates';
import type { ConversionCache, TuneVectors } from './measure';
import type { Trial } from './report';

const median = (v: number[]): number => {
  const s = [...v].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

/**
 * Re-time `finalists` in `rounds` interleaved rounds of `reps` products each; sets `ms` (median of
 * the first measurement and the rounds) and `firstMs` on each trial. A finalist that fails to
 * upload keeps its first measurement. Cost: one upload per finalist (conversions shared) and
 * finalists · rounds · (warmup + reps) products.
 * @example await retimeFinalists(ctx, conv, top3, vectors, { reps: 10, warmup: 2, rounds: 3 });
 */
export async function retimeFinalists(
  ctx: GpuContext,
  conv: ConversionCache,
  finalists: readonly { c: Candidate; t: Trial }[],
  v: TuneVectors,
  opts: { reps: number; warmup: number; rounds: number },
): Promise<void> {
  const live: { t: Trial; c: Candidate; h: DeviceMatrix; samples: number[] }[] = [];
  try {
    for (const { c, t } of finalists) {
      try {
        live.push({ t, c, h: c.kernel.upload(ctx, conv.get(c).m, c.params), samples: [t.ms!] });
      } catch (e) {
        if (ctx.isLost) throw e;
      }
    }
    await ctx.finish();
    for (let r = 0; r < opts.rounds; r++) {
      for (const f of live) {
        const tm = await timeGpu(ctx, () => f.c.kernel.encode(ctx, f.h, v.dx, v.dy), { reps: opts.reps, warmup: opts.warmup });
        f.samples.push(tm.medianMs);
      }
    }
    for (const f of live) {
      f.t.firstMs = f.samples[0];
      f.t.ms = median(f.samples);
    }
  } finally {
    for (const f of live) f.h.dispose();
  }
}
