/**
 * The recorder's automatic submits: a long recording is submitted in pieces (so the GPU starts
 * early) without a wait and without changing results, and never inside a timestamped pass.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { AUTO_FLUSH_DISPATCHES, FIRST_BATCH_DISPATCHES, type GpuContext, GpuVectorSpace, timeGpu } from '../src/index';
import { testContext } from './helpers';

let ctx: GpuContext;
let gs: GpuVectorSpace;
beforeAll(async () => {
  ctx = await testContext();
  gs = new GpuVectorSpace(ctx);
});

describe('Recorder automatic submits', () => {
  it('after a wait submits after 16, 32, 64, then every AUTO_FLUSH_DISPATCHES dispatches; the result is that of the whole sequence', async () => {
    const n = 3001;
    const x = gs.fromArray(Float32Array.from({ length: n }, (_, i) => (i % 7) - 3));
    const y = gs.create(n);
    gs.fill(y, 0);
    await ctx.finish();
    expect(FIRST_BATCH_DISPATCHES).toBe(16);
    const submits = ctx.recorder.submits;
    const marks: number[] = [];
    const reps = 16 + 32 + 64 + 2 * AUTO_FLUSH_DISPATCHES + 5;
    for (let r = 0; r < reps; r++) {
      gs.axpby(1, x, 1, y); // y = y + x, one dispatch each
      if (ctx.recorder.submits - submits > marks.length) marks.push(r + 1);
    }
    // the ramp after the idle GPU, then full batches, all without a wait
    expect(marks).toEqual([16, 48, 112, 112 + AUTO_FLUSH_DISPATCHES, 112 + 2 * AUTO_FLUSH_DISPATCHES]);
    expect(ctx.recorder.pending).toBe(true);
    // an explicit flush starts the ramp again
    await ctx.finish();
    const again = ctx.recorder.submits;
    for (let r = 0; r < 16; r++) gs.axpby(1, x, 1, y);
    expect(ctx.recorder.submits - again).toBe(1);
    const got = await gs.toArray(y);
    for (let i = 0; i < n; i++) expect(got[i]).toBe((reps + 16) * ((i % 7) - 3));
    gs.release(x);
    gs.release(y);
  });

  it('does not submit inside a timestamped pass (timings of long encodes stay whole)', async () => {
    const n = 1024;
    const x = gs.fromArray(new Float32Array(n).fill(1));
    const y = gs.create(n);
    const per = AUTO_FLUSH_DISPATCHES + 10; // one repetition crosses the automatic-submit mark
    const t = await timeGpu(ctx, () => {
      for (let r = 0; r < per; r++) gs.axpby(1, x, 0, y);
    }, { reps: 3, warmup: 1 });
    expect(t.medianMs).toBeGreaterThan(0);
    expect(Number.isFinite(t.medianMs)).toBe(true);
    if (t.method === 'timestamp') {
      // the same encode timed with fewer dispatches per repetition must not look longer
      const short = await timeGpu(ctx, () => gs.axpby(1, x, 0, y), { reps: 3, warmup: 1 });
      expect(t.medianMs).toBeGreaterThan(short.medianMs);
    }
    gs.release(x);
    gs.release(y);
  });
});
