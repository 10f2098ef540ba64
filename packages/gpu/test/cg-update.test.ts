/**
 * The fused Krylov updates of GpuVectorSpace: CG's (x += α·p, r −= α·q, ⟨r, r⟩ in two
 * dispatches) and GMRES's (w = β·w + Σ c_j·v_j with ‖w‖ in one pass): results against float64
 * host references with float32 error bounds, against the unfused sequences, the dispatch
 * counts, and the alias checks.
 */
import { InvalidParameterError } from '@gpusparse/formats';
import { beforeAll, describe, expect, it } from 'vitest';
import { Blas1, type GpuContext, type GpuScalar, GpuVectorSpace } from '../src/index';
import { EPS32, f32, randomVector, testContext } from './helpers';

let ctx: GpuContext;
let s: GpuVectorSpace;
beforeAll(async () => {
  ctx = await testContext();
  s = new GpuVectorSpace(ctx);
});

describe.each([1, 2047, 2049, 100_003])('cgUpdate on n = %i', (n) => {
  it('x += α·p, r −= α·q within one float32 rounding of float64; ⟨r, r⟩ within the dot bound; same as the unfused sequence', async () => {
    const [ph, qh, xh, rh] = [11, 12, 13, 14].map((seed) => f32(randomVector(n, seed)));
    // α = ρ / π as the device keeps it: a ratio of two slots (no dispatch), as CG's α
    const rho = s.scalar(0.8125);
    const pi = s.scalar(1.3);
    const alpha = s.div(rho, pi);
    const a = await s.read(alpha); // the float32 α the kernel computes
    const [p, q, x, r] = [ph, qh, xh, rh].map((v) => s.fromArray(v));
    const before = ctx.recorder.dispatches;
    const rr = s.cgUpdate(alpha, p, q, x, r);
    expect(ctx.recorder.dispatches - before).toBe(2);
    const [gx, gr, grr] = [await s.toArray(x), await s.toArray(r), await s.read(rr)];
    let rrRef = 0;
    let bad = -1;
    for (let i = 0; i < n; i++) {
      const wantX = xh[i]! + a * ph[i]!;
      const wantR = rh[i]! - a * qh[i]!;
      // one product and one sum in float32 (fused or not): ≤ 2ε·(|a·p| + |x|)
      const okX = Math.abs(gx[i]! - wantX) <= 2 * EPS32 * (Math.abs(a * ph[i]!) + Math.abs(xh[i]!));
      const okR = Math.abs(gr[i]! - wantR) <= 2 * EPS32 * (Math.abs(a * qh[i]!) + Math.abs(rh[i]!));
      if (bad < 0 && !(okX && okR)) bad = i;
      rrRef += gr[i]! * gr[i]!;
    }
    expect(bad).toBe(-1);
    const rrAbs = rrRef;
    // the float32 tree order of dot: (8 + ⌈p/256⌉ + 16)·ε·Σ r_i² with p partials
    const partials = Math.ceil(n / 2048);
    expect(Math.abs(grr - rrRef)).toBeLessThanOrEqual((8 + Math.ceil(partials / 256) + 16) * EPS32 * rrAbs);
    // the unfused sequence on copies: the same arithmetic, so the same values to rounding
    const [x2, r2] = [xh, rh].map((v) => s.fromArray(v));
    s.axpby(alpha, p, 1, x2);
    s.axpby(s.neg(alpha), q, 1, r2);
    const rr2 = await s.read(s.dot(r2, r2));
    const [ux, ur] = [await s.toArray(x2), await s.toArray(r2)];
    let diff = -1;
    for (let i = 0; i < n && diff < 0; i++) {
      if (!(Math.abs(ux[i]! - gx[i]!) <= EPS32 * Math.abs(gx[i]!) && Math.abs(ur[i]! - gr[i]!) <= EPS32 * Math.abs(gr[i]!))) diff = i;
    }
    expect(diff).toBe(-1);
    expect(Math.abs(rr2 - grr)).toBeLessThanOrEqual(4 * EPS32 * grr);
    for (const v of [p, q, x, r, x2, r2]) s.release(v);
  });
});

describe.each([1, 2049, 100_003])('cgStep on n = %i', (n) => {
  it('⟨p, q⟩, α = ρ/⟨p, q⟩, x, r and ⟨r, r⟩ in 3 dispatches, bit for bit as dot + div + cgUpdate', async () => {
    const [ph, qh, xh, rh] = [21, 22, 23, 24].map((seed) => f32(randomVector(n, seed)));
    const rho = s.mul(s.dot(s.fromArray(rh), s.fromArray(rh)), 0.75); // a derived scalar, as after a replacement
    const [p, q, x, r, x2, r2] = [ph, qh, xh, rh, xh, rh].map((v) => s.fromArray(v));
    const before = ctx.recorder.dispatches;
    const { pq, rr } = s.cgStep(rho, p, q, x, r);
    expect(ctx.recorder.dispatches - before).toBe(3);
    const pq2 = s.dot(p, q);
    const rr2 = s.cgUpdate(s.div(rho, pq2), p, q, x2, r2);
    const [a, b] = [await s.readMany([pq, rr]), await s.readMany([pq2, rr2])];
    expect(a).toEqual(b);
    expect(Array.from(await s.toArray(x))).toEqual(Array.from(await s.toArray(x2)));
    expect(Array.from(await s.toArray(r))).toEqual(Array.from(await s.toArray(r2)));
    let dot = 0;
    let abs = 0;
    for (let i = 0; i < n; i++) {
      dot += ph[i]! * qh[i]!;
      abs += Math.abs(ph[i]! * qh[i]!);
    }
    expect(Math.abs(a[0]! - dot)).toBeLessThanOrEqual((8 + 1 + 16) * EPS32 * abs);
    for (const v of [p, q, x, r, x2, r2]) s.release(v);
  });
});

describe('cgUpdate arguments', () => {
  it('refuses aliased vectors and mismatched lengths', () => {
    const [a, b, c] = [s.create(8), s.create(8), s.create(8)];
    const short = s.create(7);
    expect(() => s.cgUpdate(1, a, b, c, a)).toThrow(InvalidParameterError);
    expect(() => s.cgUpdate(1, a, b, c, short)).toThrow(/cgUpdate/);
    expect(() => s.cgStep(1, a, b, a, c)).toThrow(InvalidParameterError);
    expect(() => s.cgStep(1, a, b, c, short)).toThrow(/cgStep/);
    for (const v of [a, b, c, short]) s.release(v);
  });
});

describe.each([1, 2049, 100_003])('combineNorm on n = %i', (n) => {
  it.each([1, 5, 12, 13, 14, 27, 30])('%i vectors: y within the float32 bound of float64, ‖y‖ within the dot bound, one dispatch fewer than combine + norm2', async (k) => {
    const xh = Array.from({ length: k }, (_, j) => f32(randomVector(n, 200 + j)));
    const yh = f32(randomVector(n, 300));
    const xs = xh.map((v) => s.fromArray(v));
    // coefficients as GMRES has them: device slots (dot products), β = −1
    const cs: GpuScalar[] = xh.map((_, j) => s.scalar(Math.cos(j + 0.25)));
    const c = await s.readMany(cs);
    const y = s.fromArray(yh);
    const before = ctx.recorder.dispatches;
    const hn = s.combineNorm(cs, xs, -1, y);
    const fused = ctx.recorder.dispatches - before;
    const [gy, gn] = [await s.toArray(y), await s.read(hn)];
    let bad = -1;
    let ss = 0;
    for (let i = 0; i < n; i++) {
      let want = -yh[i]!;
      let abs = Math.abs(yh[i]!);
      for (let j = 0; j < k; j++) {
        want += c[j]! * xh[j]![i]!;
        abs += Math.abs(c[j]! * xh[j]![i]!);
      }
      // k + 1 products and sums in float32, each rounding ≤ ε of a partial sum ≤ abs
      if (bad < 0 && !(Math.abs(gy[i]! - want) <= 2 * (k + 2) * EPS32 * abs)) bad = i;
      ss += gy[i]! * gy[i]!;
    }
    expect(bad).toBe(-1);
    const partials = Math.ceil(n / 2048);
    expect(Math.abs(gn - Math.sqrt(ss))).toBeLessThanOrEqual((8 + Math.ceil(partials / 256) + 16 + 1) * EPS32 * Math.sqrt(ss));
    // the unfused pair on a copy of y
    const y2 = s.fromArray(yh);
    const b2 = ctx.recorder.dispatches;
    s.combine(cs, xs, -1, y2);
    const n2 = await s.read(s.norm2(y2));
    const unfused = ctx.recorder.dispatches - b2;
    expect(Math.abs(n2 - gn)).toBeLessThanOrEqual(4 * (k + 2) * EPS32 * gn);
    const G = Blas1.of(ctx).group;
    // combine groups by G from the front; combineNorm puts the last G − 1 vectors in the fused pass
    expect(fused).toBe(Math.ceil(Math.max(0, k - (G - 1)) / G) + 2);
    if (k <= G - 1) expect(fused).toBe(unfused - 1);
    for (const v of [...xs, y, y2]) s.release(v);
  });
});

describe('combineNorm arguments', () => {
  it('refuses y among the x, mismatched coefficient counts and lengths; no vectors gives |β|·‖y‖', async () => {
    const [a, b] = [s.fromArray([3, 4]), s.create(2)];
    expect(() => s.combineNorm([1], [a], 1, a)).toThrow(InvalidParameterError);
    expect(() => s.combineNorm([1, 2], [a], 1, b)).toThrow(/combineNorm coeffs/);
    expect(() => s.combineNorm([1], [s.create(3)], 1, b)).toThrow(/combineNorm/);
    expect(await s.read(s.combineNorm([], [], -2, a))).toBeCloseTo(10, 5);
    for (const v of [a, b]) s.release(v);
  });
});
