/**
 * The device split of float64 words into df64 (hi, lo) pairs (split.kernel.ts) against the
 * host's splitF64, bit for bit, over random doubles of every exponent and the edge cases
 * (±0, float32 subnormal highs and lows, ties, the overflow boundary, double subnormals,
 * ±Inf, NaN), with and without a power-of-two shift; and the device join of (hi, lo) pairs into
 * float64 against the host's joinF64, on arbitrary pairs (any two float32 bit patterns: far
 * apart exponents, cancellation, ties of the float64 rounding). Runs on lavapipe in CI.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { Df64Blas, Df64Vector } from '../src/df64/blas';
import { joinF64, splitF64 } from '../src/df64/host';
import type { GpuContext } from '../src/index';
import { readRanges } from '../src/memory/readback';
import { writeData } from '../src/memory/upload';
import { testContext } from './helpers';

let ctx: GpuContext;
let d: Df64Blas;
beforeAll(async () => {
  ctx = await testContext();
  d = (await Df64Blas.of(ctx))!;
});

/** A deterministic generator (xorshift) of 32-bit words. */
function words(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>>= 0);
  };
}

/** Doubles from random bit patterns with the biased exponent in [lo, hi] (every mantissa bit random). */
function randomDoubles(n: number, lo: number, hi: number, seed: number): Float64Array {
  const w = words(seed);
  const out = new Float64Array(n);
  const u = new Uint32Array(out.buffer);
  for (let i = 0; i < n; i++) {
    const e = lo + (w() % (hi - lo + 1));
    u[2 * i] = w();
    u[2 * i + 1] = (w() & 0x800fffff) | (e << 20);
  }
  return out;
}

const F32_MAX = 3.4028234663852886e38;
const f = Math.fround;
/** Hand-picked cases where a split rule can go wrong. */
function edgeCases(): Float64Array {
  const v = [0, -0, 1, -1, 1 / 3, -2 / 3, Math.PI, 1e-30, 1e30, F32_MAX, -F32_MAX];
  v.push(F32_MAX * (1 + 2 ** -25), F32_MAX * (1 + 2 ** -24), 2 ** 128, -(2 ** 128) * (1 - 2 ** -25)); // overflow boundary (tie → Inf)
  v.push(2 ** -126, 2 ** -127, 2 ** -149, -(2 ** -149), 2 ** -150, 2 ** -150 * (1 + 2 ** -30), -(2 ** -150), 3 * 2 ** -151, 2 ** -151);
  v.push(2 ** -126 * (1 - 2 ** -24), 2 ** -126 - 2 ** -150, 2 ** -149 * 1.5, 2 ** -149 * 2.5); // subnormal highs, ties to even
  v.push(1 + 2 ** -24, 1 + 3 * 2 ** -24, 1 + 2 ** -24 + 2 ** -52, 1 - 2 ** -25, 1 + 2 ** -53 * 3); // ties and near-ties of hi
  v.push(1e-38 + 1e-45, 1e-36 * (1 + 2 ** -40), 2 ** -100 * (1 + 2 ** -30)); // lows that are float32 subnormals or vanish
  v.push(5e-324, -5e-324, 2.2250738585072014e-308, 1e-310, 1e-300, 1e300, -1e300); // double subnormals / far outside f32
  v.push(Number.MAX_VALUE, -Number.MAX_VALUE, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, Number.NaN);
  for (let k = -160; k <= 130; k++) v.push(2 ** k * (1 + 2 ** -23 + 2 ** -40), -(2 ** k) * (1 - 2 ** -30)); // every binade
  return Float64Array.from(v);
}

async function deviceSplit(values: Float64Array, shift: number): Promise<Uint32Array> {
  const v = d.fromFloat64(values, shift);
  const [b] = await readRanges(ctx, [{ buf: v.buf, offset: 0, bytes: values.length * 8 }]);
  v.buf.dispose();
  return new Uint32Array(b!);
}

/** Mismatching elements (NaN equals NaN), with the first few for the message. */
function compare(values: Float64Array, shift: number, dev: Uint32Array): { bad: number; first: string[] } {
  const host = new Uint32Array(splitF64(values.map((x) => x * 2 ** shift)).buffer);
  const fdev = new Float32Array(dev.buffer);
  const fhost = new Float32Array(host.buffer);
  let bad = 0;
  const first: string[] = [];
  for (let i = 0; i < dev.length; i++) {
    if (dev[i] === host[i] || (Number.isNaN(fdev[i]) && Number.isNaN(fhost[i]))) continue;
    bad++;
    if (first.length < 5) first.push(`v=${values[i >> 1]} part ${i & 1}: device ${dev[i]!.toString(16)} host ${host[i]!.toString(16)}`);
  }
  return { bad, first };
}

describe('df64 split of float64 words on the device', () => {
  it('equals the host split bit for bit on the edge cases', async () => {
    const v = edgeCases();
    const { bad, first } = compare(v, 0, await deviceSplit(v, 0));
    expect(bad, first.join('; ')).toBe(0);
    // the cases are really hard ones: float32-subnormal lows, zero highs and infinite highs occur
    const p = splitF64(v);
    let subLo = 0;
    let inf = 0;
    for (let i = 0; i < v.length; i++) {
      const lo = Math.abs(p[2 * i + 1]!);
      if (lo > 0 && lo < 2 ** -126) subLo++;
      if (!Number.isFinite(p[2 * i]!)) inf++;
    }
    expect(subLo).toBeGreaterThan(5);
    expect(inf).toBeGreaterThan(4);
  });

  it('equals the host split bit for bit on 2^16 random doubles of every exponent and on 2^16 in float32 range', async () => {
    for (const [lo, hi, seed] of [
      [0, 2046, 7],
      [1023 - 160, 1023 + 130, 11],
    ] as const) {
      const v = randomDoubles(1 << 16, lo, hi, seed);
      const { bad, first } = compare(v, 0, await deviceSplit(v, 0));
      expect(bad, first.join('; ')).toBe(0);
    }
  });

  it('folds a power-of-two scale into the split exactly (·2^shift)', async () => {
    const v = randomDoubles(1 << 14, 1023 - 250, 1023 + 250, 5);
    for (const shift of [-200, -70, 70, 200]) {
      const { bad, first } = compare(v, shift, await deviceSplit(v, shift));
      expect(bad, `shift ${shift}: ${first.join('; ')}`).toBe(0);
    }
    expect(() => d.fromFloat64(v, 0.5)).toThrow(/integer power-of-two shift/);
  });

  it('a df64 vector made by the device split reads back as the float64 values to 48 bits', async () => {
    const v = Float64Array.from({ length: 1000 }, (_, i) => Math.sin(i) * 10 ** ((i % 20) - 10));
    const back = await d.toFloat64(d.fromFloat64(v));
    for (let i = 0; i < v.length; i++) expect(Math.abs(back[i]! - v[i]!)).toBeLessThanOrEqual(Math.abs(v[i]!) * 2 ** -47);
    expect(f(back[3]!)).toBe(f(v[3]!));
  });
});

/** Compare the device join of raw pairs with the host join, bit for bit (NaN equals NaN). */
async function joinMismatches(pairs: Uint32Array): Promise<{ bad: number; first: string[] }> {
  const n = pairs.length / 2;
  const v = new Df64Vector(ctx.buffers.acquire(n * 8, undefined, 'test-pairs'), n);
  writeData(ctx, v.buf, pairs);
  const dev = await d.toFloat64(v);
  v.buf.dispose();
  const host = joinF64(new Float32Array(pairs.buffer), n);
  const du = new Uint32Array(dev.buffer, dev.byteOffset, 2 * n);
  const hu = new Uint32Array(host.buffer);
  const f = new Float32Array(pairs.buffer);
  let bad = 0;
  const first: string[] = [];
  for (let i = 0; i < n; i++) {
    if ((du[2 * i] === hu[2 * i] && du[2 * i + 1] === hu[2 * i + 1]) || (Number.isNaN(dev[i]) && Number.isNaN(host[i]))) continue;
    bad++;
    if (first.length < 5) first.push(`hi=${f[2 * i]} lo=${f[2 * i + 1]}: device ${dev[i]} host ${host[i]}`);
  }
  return { bad, first };
}

describe('df64 join into float64 on the device', () => {
  it('equals the host join bit for bit on arbitrary pairs, near pairs and edge cases', async () => {
    const w = words(23);
    const n = 1 << 16;
    const pairs = new Uint32Array(2 * n);
    for (let i = 0; i < n; i++) {
      const hi = w();
      pairs[2 * i] = hi;
      // a third: any lo; a third: lo 20–60 binades below hi (rounding and sticky bits); a third: −hi + a few ulps
      const kind = i % 3;
      const he = (hi >>> 23) & 0xff;
      if (kind === 0) pairs[2 * i + 1] = w();
      else if (kind === 1) pairs[2 * i + 1] = (w() & 0x807fffff) | (Math.max(0, Math.min(254, he - 20 - (w() % 41))) << 23);
      else pairs[2 * i + 1] = (hi ^ 0x80000000) + (w() % 5) - 2;
    }
    const edges = [
      [1, 2 ** -53], [1, -(2 ** -54)], [1, 3 * 2 ** -53], [1 + 2 ** -23, 2 ** -53], [1, 2 ** -53 + 2 ** -80], [1, -(2 ** -53) - 2 ** -90],
      [2 ** 127, 2 ** 127], [-(2 ** -149), 2 ** -149], [0, -0], [-0, -0], [0, 2 ** -149], [-0, 5], [3, 0],
      [Number.POSITIVE_INFINITY, 1], [Number.NEGATIVE_INFINITY, Number.POSITIVE_INFINITY], [Number.NaN, 1], [1, Number.NaN], [2 ** 100, 2 ** -100], [-(2 ** 100), 2 ** 70],
    ];
    const e = new Float32Array(edges.flat());
    const all = new Uint32Array(pairs.length + e.length);
    all.set(pairs);
    all.set(new Uint32Array(e.buffer), pairs.length);
    const { bad, first } = await joinMismatches(all);
    expect(bad, first.join('; ')).toBe(0);
  });
});
