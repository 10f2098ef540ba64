import { beforeAll, describe, expect, it } from 'vitest';
import { Blas1, type GpuBuf, type GpuContext, imm, readF32, readRanges, uploadF32 } from '../src/index';
import { EPS32, f32, randomVector, testContext } from './helpers';

let ctx: GpuContext;
let b1: Blas1;
beforeAll(async () => {
  ctx = await testContext();
  b1 = Blas1.of(ctx);
});

const SIZES = [0, 1, 255, 256, 257, 100_000];
/** Past 65 535 workgroups of 256 invocations: exercises the 2-D dispatch fold. */
const HUGE = 65_536 * 256 + 1;

async function slot(s: number): Promise<number> {
  const [b] = await readRanges(ctx, [{ buf: b1.scalars.buf, offset: s * 4, bytes: 4 }]);
  return new Float32Array(b!)[0]!;
}

function expectClose(got: Float64Array, want: Float64Array, bound: (i: number) => number): void {
  expect(got.length).toBe(want.length);
  let bad = -1;
  for (let i = 0; i < want.length; i++) {
    if (!(Math.abs(got[i]! - want[i]!) <= bound(i))) {
      bad = i;
      break;
    }
  }
  expect(bad, bad >= 0 ? `index ${bad}: got ${got[bad]}, want ${want[bad]}` : '').toBe(-1);
}

function vec(n: number, seed: number): [Float64Array, GpuBuf] {
  const v = f32(randomVector(n, seed));
  return [v, uploadF32(ctx, v)];
}

describe.each(SIZES)('BLAS-1 on n = %i', (n) => {
  it('fill, copy, axpby (incl. beta = 0 over NaN, aliasing), multiply', async () => {
    const [x, dx] = vec(n, 1);
    const [y, dy] = vec(n, 2);
    const alpha = Math.fround(0.75);
    const beta = Math.fround(-1.25);
    // y = alpha·x + beta·y
    b1.axpby(imm(alpha), dx, imm(beta), dy, n);
    const want = x.map((xi, i) => alpha * xi + beta * y[i]!);
    expectClose(await readF32(ctx, dy, n), want, (i) => 3 * EPS32 * (Math.abs(alpha * x[i]!) + Math.abs(beta * y[i]!)));
    // beta = 0 ignores NaN in y
    b1.fill(dy, n, imm(Number.NaN));
    b1.axpby(imm(2), dx, imm(0), dy, n);
    expectClose(await readF32(ctx, dy, n), x.map((v) => 2 * v), () => 0);
    // x aliasing y: y = (2 + 3)·y
    b1.axpby(imm(2), dy, imm(3), dy, n);
    expectClose(await readF32(ctx, dy, n), x.map((v) => 10 * v), (i) => 3 * EPS32 * 10 * Math.abs(x[i]!));
    // scale: y = −0.5·y
    b1.scale(imm(-0.5), dy, n);
    expectClose(await readF32(ctx, dy, n), x.map((v) => -5 * v), (i) => 4 * EPS32 * 5 * Math.abs(x[i]!));
    // fill, copy
    b1.fill(dy, n, imm(0.5));
    expectClose(await readF32(ctx, dy, n), new Float64Array(n).fill(0.5), () => 0);
    b1.copy(dx, dy, n);
    expectClose(await readF32(ctx, dy, n), x, () => 0);
    // multiply: distinct, aliased, squared
    const [z, dz] = vec(n, 3);
    const dw = ctx.buffers.acquire(n * 4);
    b1.multiply(dx, dz, dw, n);
    expectClose(await readF32(ctx, dw, n), x.map((v, i) => Math.fround(v * z[i]!)), () => 0);
    b1.multiply(dx, dz, dz, n);
    expectClose(await readF32(ctx, dz, n), x.map((v, i) => Math.fround(v * z[i]!)), () => 0);
    b1.multiply(dx, dx, dx, n);
    expectClose(await readF32(ctx, dx, n), x.map((v) => Math.fround(v * v)), () => 0);
    for (const b of [dx, dy, dz, dw]) b.dispose();
  });

  it('dot, norm2 and multiDot into device slots (tree order, f32)', async () => {
    const [x, dx] = vec(n, 4);
    const [y, dy] = vec(n, 5);
    const s = [b1.scalars.alloc(), b1.scalars.alloc(), b1.scalars.alloc()];
    b1.dots([dx], dy, n, [s[0]!]);
    b1.dots([dx], dx, n, [s[1]!], true);
    let dot = 0;
    let abs = 0;
    let sq = 0;
    for (let i = 0; i < n; i++) {
      dot += x[i]! * y[i]!;
      abs += Math.abs(x[i]! * y[i]!);
      sq += x[i]! * x[i]!;
    }
    const gamma = (8 + Math.ceil(n / 2048 / 256) + 16 + 2) * EPS32;
    expect(Math.abs((await slot(s[0]!)) - dot)).toBeLessThanOrEqual(gamma * abs + 1e-30);
    expect(Math.abs((await slot(s[1]!)) - Math.sqrt(sq))).toBeLessThanOrEqual(gamma * Math.sqrt(sq) + 1e-30);
    // multiDot: [x·y, y·y] in one recording
    b1.dots([dx, dy], dy, n, [s[0]!, s[2]!]);
    let yy = 0;
    for (let i = 0; i < n; i++) yy += y[i]! * y[i]!;
    expect(Math.abs((await slot(s[0]!)) - dot)).toBeLessThanOrEqual(gamma * abs + 1e-30);
    expect(Math.abs((await slot(s[2]!)) - yy)).toBeLessThanOrEqual(gamma * yy + 1e-30);
    for (const k of s) b1.scalars.release(k);
    dx.dispose();
    dy.dispose();
  });
});

describe('BLAS-1 scalars and big dispatches', () => {
  it('scalar ops on device slots, and axpby reading alpha = k·s[num]/s[den]', async () => {
    const sp = b1.scalars;
    const a = sp.alloc();
    const b = sp.alloc();
    const o = sp.alloc();
    b1.scalarOp('set', imm(6), imm(0), a);
    b1.scalarOp('set', imm(4), imm(0), b);
    const cases: [Parameters<Blas1['scalarOp']>[0], number][] = [['add', 10], ['sub', 2], ['mul', 24], ['div', 1.5], ['sqrt', Math.sqrt(6)], ['neg', -6]];
    for (const [op, want] of cases) {
      b1.scalarOp(op, { num: a, den: -1, k: 1 }, { num: b, den: -1, k: 1 }, o);
      expect(await slot(o)).toBeCloseTo(want, 5);
    }
    b1.scalarOp('div', imm(1), imm(0), o);
    expect(Number.isFinite(await slot(o))).toBe(false);
    // y = -(6/4)·x + y
    const dx = uploadF32(ctx, [1, 2]);
    const dy = uploadF32(ctx, [10, 10]);
    b1.axpby({ num: a, den: b, k: -1 }, dx, imm(1), dy, 2);
    expect([...(await readF32(ctx, dy, 2))]).toEqual([8.5, 7]);
    for (const s of [a, b, o]) sp.release(s);
    dx.dispose();
    dy.dispose();
  });

  it(`element-wise kernels and dot past 65 535 workgroups (n = ${HUGE})`, async () => {
    const n = HUGE;
    const x = new Float32Array(n);
    for (let i = 0; i < n; i++) x[i] = (i % 7) - 3;
    const dx = uploadF32(ctx, x);
    const dy = ctx.buffers.acquire(n * 4);
    b1.fill(dy, n, imm(1));
    b1.axpby(imm(2), dx, imm(1), dy, n); // y = 2x + 1
    const s = b1.scalars.alloc();
    b1.dots([dy], dy, n, [s]);
    const y = await readF32(ctx, dy, n);
    let bad = -1;
    let want = 0;
    for (let i = 0; i < n; i++) {
      const w = 2 * x[i]! + 1;
      want += w * w;
      if (y[i] !== w && bad < 0) bad = i;
    }
    expect(bad).toBe(-1);
    const gamma = (8 + Math.ceil(n / 2048 / 256) + 18) * EPS32;
    expect(Math.abs((await slot(s)) - want)).toBeLessThanOrEqual(gamma * want);
    b1.scalars.release(s);
    dx.dispose();
    dy.dispose();
  });
});
