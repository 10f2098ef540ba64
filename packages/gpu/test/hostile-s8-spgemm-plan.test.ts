/**
 * Session 8: the reusable device SpGEMM plan (spgemm/plan.ts) with operands it must refuse.
 * Executing a disposed plan wrote C into buffers the pool had handed out again, a disposed
 * operand was read from whatever its buffers held by then, and the plan's own C given as an
 * operand is read while the gather writes it — each gave a wrong result without a word. Also
 * checked (already refused): another structure, another format with the same offsets.
 */
import { type CsrMatrix, cdmFromCsr, csrFromTriplets, hmFromCsr, InvalidParameterError } from '@gpusparse/formats';
import { beforeAll, describe, expect, it } from 'vitest';
import type { GpuContext } from '../src/index';
import { uploadDiagonal } from '../src/spgemm/device-diagonal';
import { planSpgemm } from '../src/spgemm/plan';
import { readRanges } from '../src/memory/readback';
import { uploadU32 } from '../src/memory/upload';
import { testContext } from './helpers';

let ctx: GpuContext;
beforeAll(async () => {
  ctx = await testContext();
});

function band(n: number, offsets: number[], scale = 1): CsrMatrix {
  const ri: number[] = [];
  const ci: number[] = [];
  const v: number[] = [];
  for (const k of offsets) {
    for (let i = 0; i < n; i++) {
      const j = i + k;
      if (j < 0 || j >= n) continue;
      ri.push(i);
      ci.push(j);
      v.push(scale * (1 + ((i + 3 * j) % 7)));
    }
  }
  return csrFromTriplets(n, n, ri, ci, v);
}

describe('a reused SpGEMM plan refuses what would give a wrong C', () => {
  it('execute after dispose: InvalidParameterError, and the buffers the pool handed out again are untouched', async () => {
    const da = uploadDiagonal(ctx, hmFromCsr(band(64, [-1, 0, 1])));
    const db = uploadDiagonal(ctx, hmFromCsr(band(64, [-2, 0, 2])));
    const plan = planSpgemm(ctx, da, db);
    const sizes = plan.c.buffers.map((q) => q.bytes);
    plan.dispose();
    // take buffers of C's sizes back from the pool, holding a known pattern
    const mine = sizes.map((bytes) => uploadU32(ctx, new Uint32Array(bytes / 4).fill(0xabcdef), 'someone-else'));
    expect(() => plan.execute(da, db)).toThrow(InvalidParameterError);
    expect(() => plan.execute(da, db)).toThrow(/execute: expected a plan not yet disposed, got a disposed plan/);
    await ctx.finish();
    const back = await readRanges(ctx, mine.map((q) => ({ buf: q, offset: 0, bytes: q.bytes })));
    for (const data of back) expect(new Uint32Array(data!).every((w) => w === 0xabcdef)).toBe(true);
    for (const q of [...mine, da, db]) q.dispose();
  });

  it('a disposed operand is refused naming it', () => {
    const da = uploadDiagonal(ctx, hmFromCsr(band(64, [-1, 0, 1])));
    const db = uploadDiagonal(ctx, hmFromCsr(band(64, [-2, 0, 2])));
    const plan = planSpgemm(ctx, da, db);
    db.dispose();
    expect(() => plan.execute(da, db)).toThrow(/execute: B: expected an operand whose buffers are live, got a disposed operand/);
    da.dispose();
    expect(() => plan.execute(da, db)).toThrow(/execute: A: expected an operand whose buffers are live/);
    plan.dispose();
  });

  it("the plan's own C as an operand is refused (read while written)", () => {
    // diagonal × diagonal: C has A's structure, so only the aliasing can refuse it
    const da = uploadDiagonal(ctx, hmFromCsr(band(64, [0])));
    const db = uploadDiagonal(ctx, hmFromCsr(band(64, [0], 2)));
    const plan = planSpgemm(ctx, da, db);
    expect(() => plan.execute(plan.c, db)).toThrow(/execute: A: expected an operand that is not the plan's own C/);
    expect(() => plan.execute(da, plan.c)).toThrow(/execute: B: expected an operand that is not the plan's own C/);
    for (const q of [plan, da, db]) q.dispose();
  });

  it('another structure or another format with the same offsets is refused', () => {
    const a = band(64, [-1, 0, 1]);
    const da = uploadDiagonal(ctx, hmFromCsr(a));
    const db = uploadDiagonal(ctx, hmFromCsr(band(64, [-2, 0, 2])));
    const plan = planSpgemm(ctx, da, db);
    const cdmA = uploadDiagonal(ctx, cdmFromCsr(a));
    const wider = uploadDiagonal(ctx, hmFromCsr(band(65, [-1, 0, 1])));
    expect(() => plan.execute(cdmA, db)).toThrow(InvalidParameterError);
    expect(() => plan.execute(wider, db)).toThrow(/execute: A: expected the HM 64x64 structure/);
    for (const q of [plan, da, db, cdmA, wider]) q.dispose();
  });
});
