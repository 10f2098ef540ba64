/**
 * The VectorSpace contract: every method of GpuVectorSpace against HostVectorSpace (float64) on
 * the same inputs, with float32 tolerances; read / readMany / toArray are the only sync points.
 */
import { HostVectorSpace } from '@gpusparse/formats';
import { beforeAll, describe, expect, it } from 'vitest';
import { type GpuContext, type GpuScalar, GpuVectorSpace } from '../src/index';
import { EPS32, f32, randomVector, testContext } from './helpers';

let ctx: GpuContext;
let gs: GpuVectorSpace;
const hs = new HostVectorSpace();
beforeAll(async () => {
  ctx = await testContext();
  gs = new GpuVectorSpace(ctx);
});

function close(got: ArrayLike<number>, want: ArrayLike<number>, tol: number): void {
  expect(got.length).toBe(want.length);
  for (let i = 0; i < want.length; i++) expect(Math.abs(got[i]! - want[i]!), `index ${i}: ${got[i]} vs ${want[i]}`).toBeLessThanOrEqual(tol * (1 + Math.abs(want[i]!)));
}

describe.each([0, 1, 257, 5000])('GpuVectorSpace vs HostVectorSpace, n = %i', (n) => {
  it('vector methods', async () => {
    const a = f32(randomVector(n, 1));
    const b = f32(randomVector(n, 2));
    const [gx, gy, gz] = [gs.fromArray(a), gs.fromArray(b), gs.create(n)];
    const [hx, hy, hz] = [hs.fromArray(a), hs.fromArray(b), hs.create(n)];
    expect(gs.length(gx)).toBe(n);
    expect(gs.name).toBe('webgpu-f32');
    expect(gs.precision).toBe('f32');
    close(await gs.toArray(gz), hz, 0); // create gives zeros
    for (const [s, x, y, z] of [
      [gs, gx, gy, gz],
      [hs, hx, hy, hz],
    ] as const) {
      // biome-ignore lint/suspicious/noExplicitAny: the same script on both spaces
      const sp = s as any;
      sp.axpby(0.5, x, -2, y); // y = 0.5x − 2y
      sp.copy(y, z);
      sp.multiply(x, z, z); // z = x ∘ z
      sp.combine([1.5, -1], [x, y], 0.25, z); // z = 0.25z + 1.5x − y
      sp.axpby(2, z, 0, y); // y = 2z (beta = 0)
    }
    close(await gs.toArray(gy), hy, 8 * EPS32 * 10);
    close(await gs.toArray(gz), hz, 8 * EPS32 * 10);
    gs.fill(gz, 3);
    close(await gs.toArray(gz), new Float64Array(n).fill(3), 0);
    gs.write(gz, b);
    close(await gs.toArray(gz), b, 0);
    expect(() => gs.write(gz, new Float64Array(n + 1))).toThrow(/expected length/);
    expect(() => gs.axpby(1, gx, 1, gs.create(n + 1))).toThrow(/expected length/);
    for (const v of [gx, gy, gz]) gs.release(v);
  });

  it('reductions and scalar arithmetic', async () => {
    const a = f32(randomVector(n, 3));
    const b = f32(randomVector(n, 4));
    const gx = gs.fromArray(a);
    const gy = gs.fromArray(b);
    const hx = hs.fromArray(a);
    const hy = hs.fromArray(b);
    const tol = (40 + n / 1000) * EPS32;
    const pairs: [GpuScalar, number][] = [];
    const d = gs.dot(gx, gy);
    const nx = gs.norm2(gx);
    pairs.push([d, hs.dot(hx, hy).value], [nx, hs.norm2(hx).value]);
    const md = gs.multiDot([gx, gy], gy);
    pairs.push([md[0]!, hs.dot(hx, hy).value], [md[1]!, hs.dot(hy, hy).value]);
    const dv = hs.dot(hx, hy).value;
    const nv = hs.norm2(hx).value;
    const two = gs.scalar(2);
    pairs.push(
      [two, 2],
      [gs.add(d, two), dv + 2],
      [gs.sub(d, 1), dv - 1],
      [gs.mul(d, nx), dv * nv],
      [gs.mul(3, d), 3 * dv],
      [gs.div(d, two), dv / 2],
      [gs.div(1, two), 0.5],
      [gs.div(gs.add(d, 1), gs.add(nx, 1)), (dv + 1) / (nv + 1)],
      [gs.neg(d), -dv],
      [gs.sqrt(two), Math.SQRT2],
    );
    const submits = ctx.recorder.submits;
    const got = await gs.readMany(pairs.map((p) => p[0]));
    expect(ctx.recorder.submits - submits).toBeLessThanOrEqual(1); // one synchronisation
    got.forEach((v, i) => {
      expect(Math.abs(v - pairs[i]![1]), `scalar ${i}`).toBeLessThanOrEqual(tol * (1 + Math.abs(pairs[i]![1]) + n));
    });
    expect(await gs.read(4.5)).toBe(4.5);
    const inf = await gs.read(gs.div(1, gs.scalar(0)));
    expect(Number.isFinite(inf)).toBe(false);
    for (const [s] of pairs) gs.release(s);
    gs.release(gx);
    gs.release(gy);
  });
});

describe('GpuVectorSpace synchronisation and fusion', () => {
  it('records without waiting; read is the sync point; CG-style alpha = rho/(p·q) needs no scalar kernel', async () => {
    const n = 1000;
    const p = gs.fromArray(f32(randomVector(n, 5)));
    const q = gs.fromArray(f32(randomVector(n, 6)));
    const x = gs.create(n);
    await ctx.finish();
    const submits = ctx.recorder.submits;
    const before = ctx.recorder.dispatches;
    const rho = gs.dot(p, p);
    const pq = gs.dot(p, q);
    const alpha = gs.div(rho, pq); // lazy ratio: no dispatch
    gs.axpby(alpha, p, 1, x); // x = x + alpha·p
    gs.axpby(gs.neg(alpha), q, 1, x); // x = x − alpha·q
    expect(ctx.recorder.dispatches - before).toBe(2 + 2 + 1 + 1); // 2 dots × 2 stages + 2 axpby
    expect(ctx.recorder.submits).toBe(submits); // nothing submitted yet
    expect(ctx.recorder.pending).toBe(true);
    const [r, d, al] = await gs.readMany([rho, pq, alpha]);
    expect(ctx.recorder.pending).toBe(false);
    expect(al).toBeCloseTo(r! / d!, 4);
    const pv = await gs.toArray(p);
    const qv = await gs.toArray(q);
    const xv = await gs.toArray(x);
    for (let i = 0; i < n; i++) expect(Math.abs(xv[i]! - al! * (pv[i]! - qv[i]!))).toBeLessThanOrEqual(1e-5 * (1 + Math.abs(al!)));
    for (const s of [rho, pq, alpha]) gs.release(s);
    for (const v of [p, q, x]) gs.release(v);
  });
});

describe('GpuVectorSpace scalar slots', () => {
  it('releases slots explicitly and reclaims forgotten scalars on garbage collection', async () => {
    const pool = (await import('../src/index')).Blas1.of(ctx).scalars;
    const live0 = pool.live;
    const s = gs.scalar(1);
    const r = gs.div(s, s); // shares the slot
    expect(pool.live).toBe(live0 + 1);
    gs.release(s);
    expect(await gs.read(r)).toBe(1); // still alive through r
    gs.release(r);
    gs.release(r);
    expect(pool.live).toBe(live0);
    const gc = (globalThis as { gc?: () => void }).gc;
    if (gc) {
      for (let i = 0; i < 1000; i++) gs.scalar(i);
      await ctx.finish();
      gc();
      await new Promise((res) => setTimeout(res, 50));
      expect(pool.live).toBeLessThan(live0 + 1000);
    }
  });
});

describe('GpuVectorSpace.shiftedDivide (Davidson preconditioner on the device)', () => {
  it('t = r / (d − σ) with |d − σ| clamped at c, sign kept, against float64', async () => {
    const n = 4099;
    const r = f32(randomVector(n, 7));
    const d = f32(randomVector(n, 8).map((x) => 10 * x));
    const sigma = Math.fround(d[17]!); // one exact hit of the clamp (d − σ = 0 → +c)
    d[18] = Math.fround(sigma - 1e-9); // below the clamp, negative side → −c
    const c = 1e-3;
    const [gr, gd, gt] = [gs.fromArray(r), gs.fromArray(d), gs.create(n)];
    gs.shiftedDivide(gr, gd, sigma, c, gt);
    const got = await gs.toArray(gt);
    const want = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      let den = d[i]! - sigma;
      if (Math.abs(den) < c) den = den < 0 ? -c : c;
      want[i] = r[i]! / den;
    }
    expect(got[17]).toBeCloseTo(r[17]! / c, 0);
    close(got, want, 4 * EPS32);
    expect(() => gs.shiftedDivide(gr, gd, sigma, c, gr)).toThrow(/distinct from r and d/);
    for (const v of [gr, gd, gt]) gs.release(v);
  });
});
