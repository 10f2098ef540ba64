/**
 * Kernel timing: GPU timestamp queries when the device has `timestamp-query` (quantization
 * disabled by toggle), otherwise wall clock over many repetitions in one submission.
 * @module
 */
import type { GpuContext } from '../device/context';
import { readRanges } from '../memory/readback';

/** Result of {@link timeGpu}: milliseconds per repetition. */
export interface Timing {
  readonly medianMs: number;
  readonly minMs: number;
  readonly meanMs: number;
  readonly samples: number;
  /** 'timestamp' (per-pass GPU timestamps) or 'wall' (host clock over batched repetitions). */
  readonly method: 'timestamp' | 'wall';
}

function stats(ms: number[], method: Timing['method']): Timing {
  const s = [...ms].sort((a, b) => a - b);
  const mid = s.length >> 1;
  const median = s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
  return { medianMs: median, minMs: s[0]!, meanMs: s.reduce((a, b) => a + b, 0) / s.length, samples: s.length, method };
}

/**
 * Time `encode` (which records GPU work into `ctx.recorder`): `warmup` untimed repetitions, then
 * `reps` timed ones. With timestamps each repetition is its own compute pass bracketed by
 * timestamps; without, `reps` repetitions are submitted together `batches` times and the host
 * clock is divided by `reps`. Cost: one readback (timestamps) or `batches` waits (wall).
 *
 * `lead` (default true; timestamps only): record one more untimed repetition right before the
 * first timed pass, in the same submission. Dawn's Vulkan backend writes a pass's beginning
 * timestamp at top-of-pipe, before the barrier that orders the pass's first dispatch after the
 * previous pass, so a pass that follows GPU work is stamped differently from one that starts on
 * an idle GPU. Without the lead the first timed pass starts idle and the others behind their
 * predecessor; a one-repetition timing (the autotuner's probe, a candidate's only sample once the
 * tuning budget is spent) then measured only the idle case while it was ranked against medians
 * of the other. With it every timed pass follows a repetition. bench/spmv-gap.ts times both.
 * `encode` must only record dispatches (no copies) and fewer than ~1000 per repetition, so that
 * the recorder's uniform arena does not flush in the middle of a timestamped pass.
 * @example const t = await timeGpu(ctx, () => op.apply(x, y), { reps: 20 });
 */
export async function timeGpu(
  ctx: GpuContext,
  encode: () => void,
  opts: { reps?: number; warmup?: number; batches?: number; forceWall?: boolean; lead?: boolean } = {},
): Promise<Timing> {
  const reps = Math.max(1, opts.reps ?? 20);
  for (let i = 0; i < (opts.warmup ?? 2); i++) encode();
  await ctx.finish();
  const rec = ctx.recorder;
  if (ctx.caps.timestampQuery && !opts.forceWall) {
    const qs = ctx.device.createQuerySet({ type: 'timestamp', count: 2 * reps });
    if (opts.lead ?? true) encode();
    for (let r = 0; r < reps; r++) {
      rec.computePass({ timestampWrites: { querySet: qs, beginningOfPassWriteIndex: 2 * r, endOfPassWriteIndex: 2 * r + 1 } });
      encode();
      rec.endPass();
    }
    const resolve = ctx.buffers.acquire(16 * reps, 0x200 | 0x04, 'timestamps'); // QUERY_RESOLVE | COPY_SRC
    rec.commandEncoder().resolveQuerySet(qs, 0, 2 * reps, resolve.buffer, 0);
    const [bytes] = await readRanges(ctx, [{ buf: resolve, offset: 0, bytes: 16 * reps }]);
    resolve.dispose();
    qs.destroy();
    const t = new BigUint64Array(bytes!);
    const ms: number[] = [];
    for (let r = 0; r < reps; r++) ms.push(Number(t[2 * r + 1]! - t[2 * r]!) / 1e6);
    return stats(ms, 'timestamp');
  }
  const batches = Math.max(1, opts.batches ?? 5);
  const per = Math.max(1, Math.ceil(reps / batches));
  const ms: number[] = [];
  for (let b = 0; b < batches; b++) {
    const t0 = performance.now();
    for (let r = 0; r < per; r++) encode();
    await ctx.finish();
    ms.push((performance.now() - t0) / per);
  }
  return stats(ms, 'wall');
}
