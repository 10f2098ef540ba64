/**
 * The fused multi-vector BLAS-1 kernels behind GpuVectorSpace.combine and multiDot: results
 * against float64 references with the float32 error bounds, the dispatch counts, and
 * bit-identity of a one-vector multiDot with dot.
 */
import type { ScalarLike } from '@gpusparse/formats';
import { beforeAll, describe, expect, it } from 'vitest';
import { FUSED_G, fusedGroup } from '../src/blas1/fused-shaders';
import { type GpuContext, type GpuScalar, type GpuVector, GpuVectorSpace } from '../src/index';
import { EPS32, f32, randomVector, testContext } from './helpers';

let ctx: GpuContext;
let s: GpuVectorSpace;
beforeAll(async () => {
  ctx = await testContext();
  s = new GpuVectorSpace(ctx);
});

const SIZES = [0, 1, 255, 257, 100_000];
// around both the portable group (6) and the largest (14, NVIDIA and lavapipe through Dawn)
const COUNTS = [0, 1, FUSED_G - 1, FUSED_G, FUSED_G + 1, 13, 14, 15, 30];
/** Vectors per fused dispatch on the test device. */
const G = () => fusedGroup(ctx.limits.maxStorageBuffersPerShaderStage);
const MAX = 30;

/** Coefficient j: a number, a device slot, or a device ratio k·s[num]/s[den] (mixed). */
function coeff(j: number): ScalarLike<GpuScalar> {
  const v = Math.cos(j + 0.5) * 1.7;
  if (j % 3 === 0) return v;
  if (j % 3 === 1) return s.scalar(v);
  return s.neg(s.div(s.scalar(v), s.scalar(0.75 + j / 64)));
}

/** The first index where |got − want| exceeds bound, or −1. */
function firstBad(got: ArrayLike<number>, want: ArrayLike<number>, bound: (i: number) => number): number {
  for (let i = 0; i < want.length; i++) if (!(Math.abs(got[i]! - want[i]!) <= bound(i))) return i;
  return -1;
}

describe.each(SIZES)('fused BLAS-1 on n = %i', (n) => {
  let xh: Float64Array[];
  let xs: GpuVector[];
  let yh: Float64Array;
  beforeAll(() => {
    xh = Array.from({ length: MAX }, (_, j) => f32(randomVector(n, 100 + j)));
    xs = xh.map((v) => s.fromArray(v));
    yh = f32(randomVector(n, 7));
  });

  it.each(COUNTS)('combine with %i vectors (β device scalar, β number, β = 0 over NaN)', async (k) => {
    const cs = Array.from({ length: k }, (_, j) => coeff(j));
    const c = await s.readMany(cs); // the float32 values the kernel reads
    const betas: [ScalarLike<GpuScalar>, boolean][] = [
      [s.scalar(-0.625), false],
      [1.25, false],
      [0, true],
    ];
    for (const [beta, nan] of betas) {
      const b = await s.read(beta);
      const y = s.fromArray(nan ? new Float64Array(n).fill(Number.NaN) : yh);
      s.combine(cs, xs.slice(0, k), beta, y);
      const got = await s.toArray(y);
      const want = new Float64Array(n);
      const mag = new Float64Array(n);
      for (let i = 0; i < n; i++) {
        want[i] = b === 0 ? 0 : b * yh[i]!;
        mag[i] = Math.abs(want[i]!);
        for (let j = 0; j < k; j++) {
          want[i]! += c[j]! * xh[j]![i]!;
          mag[i]! += Math.abs(c[j]! * xh[j]![i]!);
        }
      }
      const bad = firstBad(got, want, (i) => (k + 2) * EPS32 * mag[i]!);
      expect(bad, bad >= 0 ? `beta ${b}, index ${bad}: got ${got[bad]}, want ${want[bad]}` : '').toBe(-1);
      s.release(y);
    }
  });

  it.each(COUNTS)('multiDot with %i vectors', async (k) => {
    const y = s.fromArray(yh);
    const got = await s.readMany(s.multiDot(xs.slice(0, k), y));
    expect(got.length).toBe(k);
    const p = Math.ceil(n / 2048);
    for (let j = 0; j < k; j++) {
      let want = 0;
      let mag = 0;
      for (let i = 0; i < n; i++) {
        want += xh[j]![i]! * yh[i]!;
        mag += Math.abs(xh[j]![i]! * yh[i]!);
      }
      const bound = (8 + Math.ceil(p / 256) + 16) * EPS32 * mag;
      expect(Math.abs(got[j]! - want), `vector ${j}: got ${got[j]}, want ${want}`).toBeLessThanOrEqual(bound);
    }
    s.release(y);
  });

  it('multiDot equals dot bit for bit (one vector and each of several)', async () => {
    const y = s.fromArray(yh);
    const [one] = await s.readMany(s.multiDot([xs[3]!], y));
    const [ref] = await s.readMany([s.dot(xs[3]!, y)]);
    expect(Object.is(one, ref), `multiDot ${one} vs dot ${ref}`).toBe(true);
    const k = G() + 1;
    const many = await s.readMany(s.multiDot(xs.slice(0, k), y));
    const dots = await s.readMany(xs.slice(0, k).map((x) => s.dot(x, y)));
    for (let j = 0; j < k; j++) expect(Object.is(many[j], dots[j]), `vector ${j}: ${many[j]} vs ${dots[j]}`).toBe(true);
    s.release(y);
  });
});

describe('fused BLAS-1: dispatch counts and aliasing', () => {
  it('a 30-vector combine and multiDot take ⌈30/G⌉ and ⌈30/G⌉ + 1 dispatches (one stage 2 for all groups)', async () => {
    const xs = Array.from({ length: 30 }, (_, j) => s.fromArray(randomVector(64, j)));
    const y = s.fromArray(randomVector(64, 99));
    const groups = Math.ceil(30 / G());
    let d0 = ctx.recorder.dispatches;
    s.combine(
      xs.map((_, j) => j + 1),
      xs,
      0.5,
      y,
    );
    expect(ctx.recorder.dispatches - d0).toBe(groups);
    d0 = ctx.recorder.dispatches;
    const dots = s.multiDot(xs, y);
    expect(ctx.recorder.dispatches - d0).toBe(groups + 1);
    // every slot filled by the one stage-2 dispatch, bit for bit the single dots
    const got = await s.readMany(dots);
    const ref = await s.readMany(xs.map((x) => s.dot(x, y)));
    for (let j = 0; j < 30; j++) expect(Object.is(got[j], ref[j]), `vector ${j}: ${got[j]} vs ${ref[j]}`).toBe(true);
    // 61 vectors: two stage-2 dispatches (60 slots each)
    const more = [...xs, ...xs, xs[0]!];
    d0 = ctx.recorder.dispatches;
    const dots61 = s.multiDot(more, y);
    expect(ctx.recorder.dispatches - d0).toBe(Math.ceil(61 / G()) + 2);
    const got61 = await s.readMany(dots61);
    for (let j = 0; j < 61; j++) expect(Object.is(got61[j], ref[j % 30]), `vector ${j}`).toBe(true);
    await ctx.finish();
  });

  it('combine with an x aliasing y follows the sequential updates', async () => {
    const n = 300;
    const xh = f32(randomVector(n, 5));
    const yh = f32(randomVector(n, 6));
    const x = s.fromArray(xh);
    const y = s.fromArray(yh);
    // y = 2·x + 0.5·y, then y = 3·y + y, then y = −1·x + y
    s.combine([2, 3, -1], [x, y, x], 0.5, y);
    const got = await s.toArray(y);
    const want = Array.from({ length: n }, (_, i) => 4 * (2 * xh[i]! + 0.5 * yh[i]!) - xh[i]!);
    const bad = firstBad(got, want, (i) => 8 * EPS32 * (8 * Math.abs(xh[i]!) + 2 * Math.abs(yh[i]!) + Math.abs(xh[i]!)));
    expect(bad, bad >= 0 ? `index ${bad}: got ${got[bad]}, want ${want[bad]}` : '').toBe(-1);
  });
});

describe('fusedGroup', () => {
  it('leaves two bindings free and stays within 1..14', () => {
    expect(fusedGroup(8)).toBe(6);
    expect(fusedGroup(16)).toBe(14);
    expect(fusedGroup(1_000_000)).toBe(14);
    expect(fusedGroup(2)).toBe(1);
    expect(G()).toBe(fusedGroup(ctx.limits.maxStorageBuffersPerShaderStage));
  });
});
