/**
 * df64 vectors, BLAS-1 and the CSR residual product on the device against float64 host
 * references computed with compensated (double-double) arithmetic.
 */
import { type CsrMatrix, generators, ResourceLimitError } from '@gpusparse/formats';
import { beforeAll, describe, expect, it } from 'vitest';
import { Df64Blas, Df64Csr, type GpuContext, joinF64, residualLanes, splitF64, uploadF32 } from '../src/index';
import { randomVector, testContext } from './helpers';

let ctx: GpuContext;
let d: Df64Blas;
beforeAll(async () => {
  ctx = await testContext();
  d = (await Df64Blas.of(ctx))!;
});

/** Σ terms with TwoSum compensation in double (≈ 2^-100 relative: a reference for df64). */
function accurateSum(terms: ArrayLike<number>): number {
  let s = 0;
  let c = 0;
  for (let i = 0; i < terms.length; i++) {
    const t = terms[i]!;
    const u = s + t;
    const bb = u - s;
    c += s - (u - bb) + (t - bb);
    s = u;
  }
  return s + c;
}

/** x·y with exact products (Dekker in double) and compensated sum. */
function accurateDot(x: Float64Array, y: Float64Array): { dot: number; abs: number } {
  const terms: number[] = [];
  let abs = 0;
  for (let i = 0; i < x.length; i++) {
    const p = x[i]! * y[i]!;
    terms.push(p, Math.fround(0) + twoProdErr(x[i]!, y[i]!, p));
    abs += Math.abs(p);
  }
  return { dot: accurateSum(terms), abs };
}

function twoProdErr(a: number, b: number, p: number): number {
  const split = (v: number): [number, number] => {
    const t = 134217729 * v;
    const hi = t - (t - v);
    return [hi, v - hi];
  };
  const [ah, al] = split(a);
  const [bh, bl] = split(b);
  return ah * bh - p + ah * bl + al * bh + al * bl;
}

/** The float64 values a df64 vector holds for `v` (48-bit rounding). */
const asDf = (v: ArrayLike<number>): Float64Array => joinF64(splitF64(v));

const N = 100_000;

describe('df64 vectors and BLAS-1', () => {
  it('from/to Float64Array keep 48 bits; axpy, scale, axpyF32 and toF32 within 2^-46', async () => {
    const xv = randomVector(N, 1).map((v) => v * Math.PI);
    const yv = randomVector(N, 2).map((v) => v / 3);
    const x = d.fromFloat64(xv);
    const y = d.fromFloat64(yv);
    const back = await d.toFloat64(x);
    let worst = 0;
    for (let i = 0; i < N; i++) worst = Math.max(worst, Math.abs(back[i]! - xv[i]!) / Math.abs(xv[i]!));
    expect(worst).toBeLessThanOrEqual(2 ** -48);
    const alpha = 1 / 7;
    d.axpy(alpha, x, y); // y = y + x/7
    const f = Float32Array.from(randomVector(N, 3));
    const fb = uploadF32(ctx, f);
    d.axpyF32(-Math.E, fb, x); // x = x − e·f
    d.scale(1 / 3, x); // x = x/3
    const out = ctx.buffers.acquire(N * 4);
    d.toF32(2, y, out); // out = fl32(2·y)
    const [gy, gx, go] = [await d.toFloat64(y), await d.toFloat64(x), new Float32Array(await (async () => {
      const { readRanges } = await import('../src/index');
      return (await readRanges(ctx, [{ buf: out, offset: 0, bytes: N * 4 }]))[0]!;
    })())];
    const X = asDf(xv);
    const Y = asDf(yv);
    let ey = 0;
    let ex = 0;
    let eo = 0;
    for (let i = 0; i < N; i++) {
      const wy = Y[i]! + alpha * X[i]!;
      const wx = (X[i]! - Math.E * f[i]!) / 3;
      ey = Math.max(ey, Math.abs(gy[i]! - wy) / (Math.abs(Y[i]!) + Math.abs(alpha * X[i]!)));
      ex = Math.max(ex, Math.abs(gx[i]! - wx) / ((Math.abs(X[i]!) + Math.abs(Math.E * f[i]!)) / 3));
      if (go[i] !== Math.fround(2 * gy[i]!)) eo++;
    }
    expect(ey).toBeLessThan(2 ** -46);
    expect(ex).toBeLessThan(2 ** -45);
    expect(eo).toBe(0);
    for (const b of [x.buf, y.buf, fb, out]) b.dispose();
  });

  it('dot of 10^5 elements: error ≤ 1e-14 relative (positive terms) and ≤ 1e-14·Σ|x_i y_i| (mixed signs), deterministic', async () => {
    const pos1 = randomVector(N, 4).map((v) => 1.5 + v);
    const pos2 = randomVector(N, 5).map((v) => 1.5 - v / 3);
    const mix1 = randomVector(N, 6);
    const mix2 = randomVector(N, 7);
    const report: string[] = [];
    for (const [a, b, kind] of [[pos1, pos2, 'positive'], [mix1, mix2, 'mixed']] as const) {
      const x = d.fromFloat64(a);
      const y = d.fromFloat64(b);
      const got = await d.dotValue(x, y);
      const again = await d.dotValue(x, y);
      expect(again).toBe(got);
      const ref = accurateDot(asDf(a), asDf(b));
      const err = Math.abs(got - ref.dot);
      const rel = kind === 'positive' ? err / Math.abs(ref.dot) : err / ref.abs;
      report.push(`${kind}: ${rel.toExponential(2)} (${(-Math.log2(rel)).toFixed(1)} bits)`);
      expect(rel, report.join('; ')).toBeLessThan(1e-14);
      const nrm = await d.norm2Value(x);
      expect(Math.abs(nrm - Math.sqrt(accurateDot(asDf(a), asDf(a)).dot)) / nrm).toBeLessThan(1e-14);
      x.buf.dispose();
      y.buf.dispose();
    }
    console.log(`df64 dot, n = ${N}: ${report.join('; ')}`);
  });

  it('norm2Value falls back to a scaled host norm outside the f32 exponent range', async () => {
    const big = d.fromFloat64([3e25, 4e25]);
    expect(await d.norm2Value(big)).toBeCloseTo(5e25, -12);
    const zero = d.create(5);
    expect(await d.norm2Value(zero)).toBe(0);
  });
});

/** b − A·x with exact products and a compensated sum per row, and Σ|a_ij x_j| per row. */
function referenceResidual(a: CsrMatrix, x: Float64Array, b: Float64Array): { r: Float64Array; scale: Float64Array } {
  const r = new Float64Array(a.rows);
  const scale = new Float64Array(a.rows);
  for (let i = 0; i < a.rows; i++) {
    const terms: number[] = [b[i]!];
    let s = Math.abs(b[i]!);
    for (let k = a.rowPtr[i]!; k < a.rowPtr[i + 1]!; k++) {
      const p = a.values[k]! * x[a.colIdx[k]!]!;
      terms.push(-p, -twoProdErr(a.values[k]!, x[a.colIdx[k]!]!, p));
      s += Math.abs(p);
    }
    r[i] = accurateSum(terms);
    scale[i] = s;
  }
  return { r, scale };
}

describe('df64 CSR residual r = b − A·x', () => {
  const cases: [string, CsrMatrix][] = [
    ['poisson3d 20³ (values exact in f32: no lo array)', generators.poisson3d(20)],
    ['uniform random 5000×5000, 24/row (float64 values: hi + lo)', generators.uniformRandom(5000, 5000, 24, 3)],
    ['power law 20 000 rows (long rows)', generators.powerLaw(20_000, 20_000, { seed: 5, maxLen: 3000 })],
    ['uniform random 1500×1500, 600/row (32 lanes per row: the full df64 tree)', generators.uniformRandom(1500, 1500, 600, 4)],
  ];
  it.each(cases)('%s: |r − r_ref| ≤ 2^-44·(|b| + Σ|a_ij x_j|) per row', async (_name, a) => {
    const xv = randomVector(a.cols, 8).map((v) => v * 10 + 1 / 3);
    const bv = randomVector(a.rows, 9);
    const m = new Df64Csr(d, a);
    const exact = a.values.every((v) => Math.fround(v) === v);
    expect(m.hasLo).toBe(!exact);
    expect(m.bytes).toBe(4 * (a.rows + 1) + (exact ? 8 : 12) * a.values.length);
    expect(m.lanes).toBe(residualLanes(a.rows, a.values.length));
    const x = d.fromFloat64(xv);
    const b = d.fromFloat64(bv);
    const r = d.create(a.rows);
    m.residual(x, b, r);
    const got = await d.toFloat64(r);
    // the matrix as the device holds it (hi + lo) and the df64-rounded x and b
    const held = { ...a, values: asDf(a.values) };
    const { r: want, scale } = referenceResidual(held, asDf(xv), asDf(bv));
    let worst = 0;
    for (let i = 0; i < a.rows; i++) worst = Math.max(worst, Math.abs(got[i]! - want[i]!) / scale[i]!);
    expect(worst).toBeLessThan(2 ** -44);
    // against the raw float64 data: limited only by the 48-bit storage of A, x and b
    const { r: raw, scale: rawScale } = referenceResidual(a, xv, bv);
    let worstRaw = 0;
    for (let i = 0; i < a.rows; i++) worstRaw = Math.max(worstRaw, Math.abs(got[i]! - raw[i]!) / rawScale[i]!);
    expect(worstRaw).toBeLessThan(2 ** -44);
    console.log(`${_name}: worst row error ${worst.toExponential(2)} (${(-Math.log2(worst || 2 ** -60)).toFixed(1)} bits) of Σ|a x|, vs raw float64 ${worstRaw.toExponential(2)}; ${m.bytes / a.values.length} B/nnz, lanes ${m.lanes}`);
    m.dispose();
    for (const v of [x, b, r]) v.buf.dispose();
  });
});

describe('df64 residual lanes per row', () => {
  it('4–8 non-zeros per invocation, a power of two in 1 … 32 (27-point stencil: 4, not 32)', () => {
    expect(residualLanes(1_728_000, 27 * 1_728_000)).toBe(4);
    expect(residualLanes(1000, 7000)).toBe(1);
    expect(residualLanes(1000, 24_000)).toBe(4);
    expect(residualLanes(1000, 15_000)).toBe(2);
    expect(residualLanes(1000, 876_000)).toBe(32);
    expect(residualLanes(0, 0)).toBe(1);
  });
});

describe('df64 aliasing and shape errors', () => {
  it('axpy with x = y scales; residual refuses r aliasing x; shapes are checked', async () => {
    const x = d.fromFloat64([1, 2, 3]);
    d.axpy(0.5, x, x);
    expect(Array.from(await d.toFloat64(x))).toEqual([1.5, 3, 4.5]);
    const m = new Df64Csr(d, generators.laplacian1d(3));
    expect(() => m.residual(x, x, x)).toThrow(/distinct/);
    expect(() => m.residual(d.create(4), x, d.create(3))).toThrow(/df64 residual x/);
    m.dispose();
  });
});

describe('df64 residual matrix limits', () => {
  it('a matrix whose arrays exceed one storage binding is refused with ResourceLimitError', () => {
    const small = { ctx: { limits: { ...ctx.limits, maxStorageBufferBindingSize: 64 } } } as unknown as Df64Blas;
    expect(() => new Df64Csr(small, generators.poisson2d(8))).toThrow(ResourceLimitError);
  });
});
