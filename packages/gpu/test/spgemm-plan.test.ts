/**
 * The planned diagonal SpGEMM (planSpgemm / execute, spgemmCsr) against the float64 CSR product:
 * HM and CDM, square and rectangular, periodic (wrapped) bands, empty operands, the binding
 * split (a few-hundred-byte split limit forces C and the operands over many buffers, and a
 * one-slot-per-operand limit forces several passes that add into C), plan reuse with new values,
 * and the errors. Bound per entry: |c − c_ref| ≤ 2·dgA·ε₃₂·Σ|a·b| (operands rounded to float32
 * first, so only the device's accumulation is measured).
 */
import { type CsrMatrix, chooseSpgemmFormat, csrFromTriplets, csrSpgemmReference, DimensionMismatchError, hmFromCsr, InvalidParameterError, ResourceLimitError, spgemmMaxRelError } from '@gpusparse/formats';
import { beforeAll, describe, expect, it } from 'vitest';
import type { GpuContext } from '../src/index';
import { downloadDiagonal, spgemmCsr } from '../src/spgemm/spgemm';
import { planSpgemm } from '../src/spgemm/plan';
import { fillDiagonal, uploadDiagonal } from '../src/spgemm/device-diagonal';
import { hmToCsr } from '@gpusparse/formats';
import { EPS32, f32, randomVector, testContext } from './helpers';

let ctx: GpuContext;
beforeAll(async () => {
  ctx = await testContext();
});

/** rows × cols with the given diagonals (offsets j − i, wrapped mod cols when `wrap`), random float32 values. */
function diagonals(rows: number, cols: number, offsets: number[], seed: number, wrap = false): CsrMatrix {
  const ri: number[] = [];
  const ci: number[] = [];
  for (const k of offsets) {
    for (let i = 0; i < rows; i++) {
      const j = wrap ? (((i + k) % cols) + cols) % cols : i + k;
      if (j < 0 || j >= cols) continue;
      ri.push(i);
      ci.push(j);
    }
  }
  return csrFromTriplets(rows, cols, ri, ci, f32(randomVector(ri.length, seed)));
}

const bound = (dgA: number): number => 2 * Math.max(1, dgA) * EPS32;

async function checkProduct(a: CsrMatrix, b: CsrMatrix, format: 'hm' | 'cdm' | 'auto', extra: Record<string, number> = {}) {
  const r = await spgemmCsr(ctx, a, b, { format, ...extra });
  const err = spgemmMaxRelError(r.c, csrSpgemmReference(a, b));
  expect(err).toBeLessThanOrEqual(bound(r.stats.diagonalsA));
  return r;
}

describe('planned diagonal SpGEMM', () => {
  it('HM: structured square and rectangular products match float64', async () => {
    await checkProduct(diagonals(300, 300, [-37, -1, 0, 2, 90], 1), diagonals(300, 300, [-5, 0, 1, 150], 2), 'hm');
    const r = await checkProduct(diagonals(70, 130, [-20, 0, 3, 64, 129], 3), diagonals(130, 41, [-100, -7, 0, 5, 40], 4), 'hm');
    expect(r.format).toBe('hm');
    expect(r.c.rows).toBe(70);
    expect(r.c.cols).toBe(41);
  });

  it('CDM: a narrow band and a periodic band match float64; auto picks CDM for them', async () => {
    const a = diagonals(517, 517, [-3, -2, -1, 0, 1, 2, 3], 5);
    const b = diagonals(517, 517, [-2, 0, 2], 6);
    expect(chooseSpgemmFormat(a, b)).toBe('cdm');
    expect((await checkProduct(a, b, 'auto')).format).toBe('cdm');
    const pa = diagonals(300, 300, [-1, 0, 1], 7, true);
    const pb = diagonals(300, 300, [-2, 5], 8, true);
    const r = await checkProduct(pa, pb, 'cdm');
    expect(r.stats.diagonalsC).toBe(6); // (kA + kB) mod n, wrapped pairs merged
  });

  it('auto picks HM for far-apart diagonals and rectangular operands', () => {
    expect(chooseSpgemmFormat(diagonals(200, 200, [-80, 0, 60], 1), diagonals(200, 200, [0], 2))).toBe('hm');
    expect(chooseSpgemmFormat(diagonals(20, 30, [0], 1), diagonals(30, 20, [0], 2))).toBe('hm');
  });

  it('splits C and the operands over many buffers at a small split limit (HM and CDM)', async () => {
    const a = diagonals(400, 400, [-9, -4, 0, 1, 7, 33], 9);
    const b = diagonals(400, 400, [-3, 0, 2, 11], 10);
    const hm = await checkProduct(a, b, 'hm', { splitBytes: 4 * 900 });
    expect(hm.stats.buffersC).toBeGreaterThan(5);
    const cdm = await checkProduct(a, b, 'cdm', { splitBytes: 4 * 1200 });
    expect(cdm.stats.buffersC).toBeGreaterThan(5);
  });

  it('one buffer slot per operand: several passes add into C, still float64-close', async () => {
    const a = diagonals(333, 333, [-6, -2, 0, 3, 8], 11);
    const b = diagonals(333, 333, [-4, -1, 0, 5], 12);
    for (const format of ['hm', 'cdm'] as const) {
      const r = await checkProduct(a, b, format, { splitBytes: 4 * 700, slotsPerOperand: 1 });
      expect(r.stats.dispatches).toBeGreaterThan(r.stats.buffersC);
    }
  });

  it('a plan is reused with new values of the same structure', async () => {
    const a1 = diagonals(250, 250, [-4, 0, 3], 13);
    const b1 = diagonals(250, 250, [-1, 0, 9], 14);
    const a2 = diagonals(250, 250, [-4, 0, 3], 15);
    const b2 = diagonals(250, 250, [-1, 0, 9], 16);
    const da = uploadDiagonal(ctx, hmFromCsr(a1), { splitBytes: 2000 });
    const db = uploadDiagonal(ctx, hmFromCsr(b1), { splitBytes: 2000 });
    const plan = planSpgemm(ctx, da, db, { splitBytes: 2000 });
    for (const [a, b] of [[a1, b1], [a2, b2]] as const) {
      const ha = hmFromCsr(a);
      const hb = hmFromCsr(b);
      fillDiagonal(ctx, da, (d, out) => out.set(ha.values.subarray(ha.starts[d]!, ha.starts[d]! + out.length)));
      fillDiagonal(ctx, db, (d, out) => out.set(hb.values.subarray(hb.starts[d]!, hb.starts[d]! + out.length)));
      plan.execute(da, db);
      const c = hmToCsr((await downloadDiagonal(ctx, plan.c)) as never);
      expect(spgemmMaxRelError(c, csrSpgemmReference(a, b))).toBeLessThanOrEqual(bound(3));
    }
    const other = uploadDiagonal(ctx, hmFromCsr(diagonals(250, 250, [-4, 0, 2], 1)), { splitBytes: 2000 });
    expect(() => plan.execute(other, db)).toThrow(InvalidParameterError);
    other.dispose();
    plan.dispose();
    da.dispose();
    db.dispose();
  });

  it('execute binds the buffers of the operands it is given; a second plan of the same shape compiles nothing', async () => {
    const a = diagonals(200, 200, [-6, 0, 5], 21);
    const b = diagonals(200, 200, [-2, 0, 7], 22);
    const a2 = diagonals(200, 200, [-6, 0, 5], 23);
    const da = uploadDiagonal(ctx, hmFromCsr(a));
    const db = uploadDiagonal(ctx, hmFromCsr(b));
    const plan = planSpgemm(ctx, da, db);
    // another object with the planned structure (new buffers): its values, not the planned operand's, are read
    const da2 = uploadDiagonal(ctx, hmFromCsr(a2));
    plan.execute(da2, db);
    let c = hmToCsr((await downloadDiagonal(ctx, plan.c)) as never);
    expect(spgemmMaxRelError(c, csrSpgemmReference(a2, b))).toBeLessThanOrEqual(bound(3));
    plan.execute(da, db);
    c = hmToCsr((await downloadDiagonal(ctx, plan.c)) as never);
    expect(spgemmMaxRelError(c, csrSpgemmReference(a, b))).toBeLessThanOrEqual(bound(3));
    const compiled = ctx.pipelines.compiled;
    const again = planSpgemm(ctx, da2, db);
    expect(ctx.pipelines.compiled).toBe(compiled);
    expect(Array.from(again.symbolic.pairA)).toEqual(Array.from(plan.symbolic.pairA));
    for (const x of [again, plan, da, da2, db]) x.dispose();
  });

  it('plans made one after another keep their own tables (the host staging array is shared)', async () => {
    const a1 = diagonals(400, 400, [-120, -33, -1, 0, 4, 57, 200], 31);
    const b1 = diagonals(400, 400, [-90, -2, 0, 3, 11, 140], 32);
    const a2 = diagonals(300, 300, [-3, 0, 1], 33);
    const b2 = diagonals(300, 300, [0, 2], 34);
    const [da1, db1, da2, db2] = [a1, b1, a2, b2].map((m) => uploadDiagonal(ctx, hmFromCsr(m)));
    const p1 = planSpgemm(ctx, da1!, db1!);
    // the second plan overwrites the staging words the first plan's table was built in
    const p2 = planSpgemm(ctx, da2!, db2!);
    p2.execute(da2!, db2!);
    p1.execute(da1!, db1!);
    const c1 = hmToCsr((await downloadDiagonal(ctx, p1.c)) as never);
    const c2 = hmToCsr((await downloadDiagonal(ctx, p2.c)) as never);
    expect(spgemmMaxRelError(c1, csrSpgemmReference(a1, b1))).toBeLessThanOrEqual(bound(7));
    expect(spgemmMaxRelError(c2, csrSpgemmReference(a2, b2))).toBeLessThanOrEqual(bound(3));
    expect(p1.symbolic.pairA.length).toBeGreaterThan(30);
    for (const x of [p1, p2, da1!, db1!, da2!, db2!]) x.dispose();
  });

  it('a product of more pairs than the first staging array holds (22 500 pairs) grows it and still matches float64', async () => {
    // 150 diagonals each near n/2: every pair meets, C's 299 diagonals are short (kA + kB near n)
    const n = 1200;
    const offs = Array.from({ length: 150 }, (_, t) => 450 + t);
    const a = diagonals(n, n, offs, 41);
    const b = diagonals(n, n, offs, 42);
    const [da, db] = [a, b].map((m) => uploadDiagonal(ctx, hmFromCsr(m)));
    const p = planSpgemm(ctx, da!, db!);
    expect(p.symbolic.pairA.length).toBe(150 * 150);
    p.execute(da!, db!);
    const c = hmToCsr((await downloadDiagonal(ctx, p.c)) as never);
    expect(spgemmMaxRelError(c, csrSpgemmReference(a, b))).toBeLessThanOrEqual(bound(150));
    for (const x of [p, da!, db!]) x.dispose();
  });

  it('empty operands give an empty C; errors name what was expected', async () => {
    const empty = csrFromTriplets(50, 50, [], [], []);
    const r = await spgemmCsr(ctx, empty, diagonals(50, 50, [0, 1], 1), { format: 'hm' });
    expect(r.c.values.length).toBe(0);
    await expect(spgemmCsr(ctx, diagonals(10, 20, [0], 1), diagonals(10, 20, [0], 2))).rejects.toThrow(DimensionMismatchError);
    await expect(spgemmCsr(ctx, diagonals(10, 10, [0], 1), diagonals(10, 10, [0], 2), { format: 'csr' as never })).rejects.toThrow(InvalidParameterError);
    // a diagonal longer than the split limit cannot be bound
    await expect(spgemmCsr(ctx, diagonals(300, 300, [0], 1), diagonals(300, 300, [0], 2), { format: 'hm', splitBytes: 400 })).rejects.toThrow(ResourceLimitError);
  });
});
