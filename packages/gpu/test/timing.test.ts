/**
 * timeGpu's timestamped path: every timed pass follows an untimed repetition in the same
 * submission (issue 15: a one-repetition probe timed a pass that started on an idle GPU and was
 * ranked against medians of passes that started behind another one).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { Blas1, type GpuContext, imm, timeGpu } from '../src/index';
import { testContext } from './helpers';

let ctx: GpuContext;
beforeAll(async () => {
  ctx = await testContext();
});

/** Dispatches and submissions that one timeGpu call records. */
async function counted(opts: Parameters<typeof timeGpu>[2]): Promise<{ dispatches: number; submits: number; samples: number }> {
  const b = ctx.buffers.acquire(4 * 4096);
  const enc = () => Blas1.of(ctx).fill(b, 4096, imm(1));
  enc(); // pipeline and bind group created outside the count
  await ctx.finish();
  const [d0, s0] = [ctx.recorder.dispatches, ctx.recorder.submits];
  const t = await timeGpu(ctx, enc, opts);
  const out = { dispatches: ctx.recorder.dispatches - d0, submits: ctx.recorder.submits - s0, samples: t.samples };
  b.dispose();
  return out;
}

describe('timeGpu lead repetition', () => {
  it('records one untimed repetition before a single timed pass, in the same submission', async () => {
    const one = await counted({ reps: 1, warmup: 0, batches: 1 });
    expect(one.samples).toBe(1);
    if (!ctx.caps.timestampQuery) {
      expect(one.dispatches).toBe(1); // wall clock: nothing added
      return;
    }
    expect(one.dispatches).toBe(2);
    expect(one.submits).toBe(1); // the lead is not drained before the timed pass
  });

  it('adds the lead once per call, not per repetition, and can be turned off', async () => {
    if (!ctx.caps.timestampQuery) return;
    expect((await counted({ reps: 5, warmup: 1 })).dispatches).toBe(1 + 1 + 5);
    expect((await counted({ reps: 5, warmup: 1, lead: false })).dispatches).toBe(1 + 5);
  });

  it('leaves the wall-clock path unchanged', async () => {
    expect((await counted({ reps: 4, warmup: 1, batches: 2, forceWall: true })).dispatches).toBe(1 + 4);
  });
});
