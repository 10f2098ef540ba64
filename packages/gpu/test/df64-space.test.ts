/**
 * The df64 vector space and operator against the float64 host space (HostVectorSpace,
 * HostOperator): every VectorSpace method to ~1e-14 relative, the blocked product with and
 * without lo arrays, the f32 hand-over, and the generic eigensolvers (Davidson, Lanczos) run
 * in the df64 space to 1e-10 relative eigenvalues.
 */
import { type CsrMatrix, generators, HostOperator, HostVectorSpace } from '@gpusparse/formats';
import { davidson, eigsMixed, lanczos } from '../../solvers/src/index';
import { denseEigenvalues, denseToCsr } from '../../solvers/test/eigen-matrices';
import { beforeAll, describe, expect, it } from 'vitest';
import { Df64CsrOperator, type Df64Vector, Df64VectorSpace, type GpuContext, GpuVectorSpace, gpuOperatorFromCsr } from '../src/index';
import { randomVector, testContext } from './helpers';

let ctx: GpuContext;
let s: Df64VectorSpace;
const host = new HostVectorSpace();
beforeAll(async () => {
  ctx = await testContext();
  s = (await Df64VectorSpace.of(ctx))!;
});

const N = 20_000;
const relErr = (a: ArrayLike<number>, b: ArrayLike<number>): number => {
  let num = 0;
  let den = 0;
  for (let i = 0; i < a.length; i++) {
    num = Math.max(num, Math.abs(a[i]! - b[i]!));
    den = Math.max(den, Math.abs(b[i]!));
  }
  return num / (den || 1);
};
const vec = (seed: number, scale = 1): Float64Array => Float64Array.from(randomVector(N, seed), (v, i) => scale * (v + Math.sin(i) / 3));

describe('Df64VectorSpace against HostVectorSpace', () => {
  it('axpby, combine, multiply, fill and copy agree to 1e-14 (aliases included)', async () => {
    const [a, b, c] = [vec(1), vec(2, Math.PI), vec(3, 1 / 7)];
    const [ga, gb, gc] = [s.fromArray(a), s.fromArray(b), s.fromArray(c)];
    const [ha, hb, hc] = [a.slice(), b.slice(), c.slice()];
    s.axpby(1 / 3, ga, -Math.E, gb);
    host.axpby(1 / 3, ha, -Math.E, hb);
    s.axpby(0.1, gc, 0, gc); // alias: c = 0.1·c
    host.axpby(0.1, hc, 0, hc);
    const coef = [0.5, -1 / 9, Math.SQRT2, 3, -0.25, 1e-3, 7, 11 / 13]; // 8 > one group of vectors
    const xs = [ga, gb, gc, ga, gb, gc, ga, gb];
    const hs = [ha, hb, hc, ha, hb, hc, ha, hb];
    const gy = s.fromArray(vec(4));
    const hy = vec(4);
    s.combine(coef, xs, -0.75, gy);
    host.combine(coef, hs, -0.75, hy);
    s.combine([2, 1], [gy, ga], 1, gy); // y among the xs: y = y + 2·y + a
    host.combine([2, 1], [hy, ha], 1, hy);
    const gz = s.create(N);
    s.multiply(ga, gb, gz);
    s.multiply(gz, gc, gz); // z aliases x
    const hz = new Float64Array(N);
    host.multiply(ha, hb, hz);
    host.multiply(hz, hc, hz);
    for (const [g, h] of [
      [gb, hb],
      [gc, hc],
      [gy, hy],
      [gz, hz],
    ] as const) {
      expect(relErr(await s.toArray(g), h)).toBeLessThan(1e-14);
    }
    const gf = s.create(N);
    s.fill(gf, 1 / 3);
    s.copy(gf, ga);
    expect((await s.toArray(ga)).every((v) => Math.abs(v - 1 / 3) < 1e-15)).toBe(true);
  });

  it('dot, norm2, multiDot and device scalar arithmetic agree to 1e-14; readMany reads several', async () => {
    const [a, b] = [vec(5), vec(6, 1e3)];
    const [ga, gb] = [s.fromArray(a), s.fromArray(b)];
    const xs = [a, b, a, b, a, b, a];
    const dots = await s.readMany(s.multiDot(xs.map((x) => (x === a ? ga : gb)), gb));
    const hdots = host.multiDot(xs, b).map((x) => x.value);
    expect(relErr(dots, hdots)).toBeLessThan(1e-14);
    const nrm = await s.read(s.norm2(ga));
    expect(Math.abs(nrm - Math.sqrt(host.dot(a, a).value)) / nrm).toBeLessThan(1e-14);
    // α = (a·b) / (a·a), then scalars composed on the device
    const ab = s.dot(ga, gb);
    const aa = s.dot(ga, ga);
    const alpha = s.div(ab, aa);
    const e = s.sqrt(s.add(s.mul(alpha, alpha), s.sub(s.neg(alpha), s.scalar(-2))));
    const [va, ve] = await s.readMany([alpha, e, 5]);
    const ha = host.dot(a, b).value / host.dot(a, a).value;
    expect(Math.abs(va! - ha) / Math.abs(ha)).toBeLessThan(1e-14);
    expect(Math.abs(ve! - Math.sqrt(ha * ha - ha + 2)) / ve!).toBeLessThan(1e-13);
    // a device scalar as axpby coefficient: b = b − α·a is ⟂ a
    s.axpby(s.neg(alpha), ga, 1, gb);
    const orth = await s.read(s.dot(ga, gb));
    expect(Math.abs(orth) / (nrm * (await s.read(s.norm2(gb))))).toBeLessThan(1e-13);
    expect(Number.isNaN(await s.read(s.sqrt(-1)))).toBe(true);
    expect(await s.read(s.div(1, 0))).not.toBeLessThan(Number.POSITIVE_INFINITY);
  });

  it('shiftedDivide clamps like the host rule; f32 hand-over stays on the device', async () => {
    const r = vec(7);
    const dd = Float64Array.from({ length: N }, (_, i) => 1 + (i % 5));
    const t = s.create(N);
    s.shiftedDivide(s.fromArray(r), s.fromArray(dd), 3, 2 ** -7, t); // the clamp is an f32 on the device
    const want = r.map((v, i) => {
      const den = dd[i]! - 3;
      return v / (Math.abs(den) < 2 ** -7 ? (den < 0 ? -(2 ** -7) : 2 ** -7) : den);
    });
    expect(relErr(await s.toArray(t), want)).toBeLessThan(1e-13);
    const f32 = new GpuVectorSpace(ctx);
    const g = f32.fromArray(r);
    const back = await s.toArray(s.fromGpu(g));
    expect(Array.from(back)).toEqual(Array.from(r, Math.fround));
    const h = s.toNewGpu(s.fromArray(r), -2);
    expect(Array.from(await f32.toArray(h))).toEqual(Array.from(r, (v) => Math.fround(-2 * v)));
  });
});

/**
 * A symmetric tridiagonal matrix with diagonal (i + 1)·π/3 and off-diagonals π/7 (values not
 * exact in f32: the lo array is used); well separated lowest eigenvalues.
 */
function inexactTridiagonal(n: number): number[][] {
  return Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => (i === j ? ((i + 1) * Math.PI) / 3 : Math.abs(i - j) === 1 ? Math.PI / 7 : 0)));
}

describe('Df64CsrOperator', () => {
  it('y = α·A·x + β·y over several binding blocks agrees with the float64 host product to 1e-14', async () => {
    const a = generators.powerLaw(3000, 3000, { seed: 3, maxLen: 300 });
    const vals = Float64Array.from(a.values, (x, k) => x + (k % 3) / 3); // inexact in f32
    const m: CsrMatrix = { ...a, values: vals };
    const op = Df64CsrOperator.fromCsr(s.d, m, { maxBindingBytes: 512 });
    expect(op.blocks.length).toBeGreaterThan(10);
    expect(op.blocks.some((b) => b.cont)).toBe(true); // a row longer than one block
    const x = Float64Array.from(randomVector(3000, 9));
    const y0 = Float64Array.from(randomVector(3000, 10));
    const gy = s.fromArray(y0);
    op.applyScaled(1 / 3, s.fromArray(x), -2, gy);
    const hy = y0.slice();
    HostOperator.fromCsr(m).applyScaled(1 / 3, x, -2, hy);
    expect(relErr(await s.toArray(gy), hy)).toBeLessThan(1e-14);
    const exact = Df64CsrOperator.fromCsr(s.d, { ...a, values: Float64Array.from(a.values, Math.fround) });
    expect(exact.blocks.every((b) => b.lo === undefined)).toBe(true); // f32-exact values: no lo bytes
    op.dispose();
    exact.dispose();
  });
});

describe('eigensolvers in the df64 space', () => {
  const n = 200;
  const dense = inexactTridiagonal(n);
  const a = denseToCsr(dense);
  const want = denseEigenvalues(dense);
  const diag = Float64Array.from(dense, (row, i) => row[i]!);

  it('Davidson and Lanczos reach 1e-10 relative eigenvalues', async () => {
    const op = Df64CsrOperator.fromCsr(s.d, a);
    expect(op.blocks[0]!.lo).toBeDefined();
    const dv = await davidson<Df64Vector, unknown>(op, s as never, { k: 4, diagonal: diag, tol: 1e-12, residualTol: 1e-9, maxIterations: 100 });
    expect(dv.converged).toBe(true);
    const lz = await lanczos<Df64Vector, unknown>(op, s as never, { k: 4, tol: 1e-12, maxIterations: 300, maxBasis: 80 });
    expect(lz.converged).toBe(true);
    for (let j = 0; j < 4; j++) {
      expect(Math.abs(dv.values[j]! - want[j]!) / Math.abs(want[j]!)).toBeLessThan(1e-10);
      expect(Math.abs(lz.values[j]! - want[j]!) / Math.abs(want[j]!)).toBeLessThan(1e-10);
    }
    op.dispose();
  });
});

describe('eigsMixed with the polish on the device', () => {
  it('float32 Davidson + df64 JD polish agrees with the host polish to 1e-10 relative', async () => {
    const n = 400;
    const dense = inexactTridiagonal(n);
    const a = denseToCsr(dense);
    const want = denseEigenvalues(dense);
    const diagonal = Float64Array.from(dense, (row, i) => row[i]!);
    const f32 = new GpuVectorSpace(ctx);
    const fastOperator = gpuOperatorFromCsr(ctx, a);
    const op = Df64CsrOperator.fromCsr(s.d, a);
    const common = { method: 'davidson' as const, k: 4, fastOperator, fastSpace: f32, diagonal, tol: 1e-12, residualTol: 1e-9 };
    const dev = await eigsMixed({ ...common, devicePolish: s.polish(op) });
    const hst = await eigsMixed({ ...common, hostOperator: HostOperator.fromCsr(a) });
    expect(dev.converged).toBe(true);
    expect(dev.phases[1]!.space).toBe('webgpu-df64');
    expect(dev.phases[1]!.innerMatvecs).toBeGreaterThan(0);
    for (let j = 0; j < 4; j++) {
      expect(Math.abs(dev.values[j]! - want[j]!) / want[j]!).toBeLessThan(1e-10);
      expect(Math.abs(dev.values[j]! - hst.values[j]!) / want[j]!).toBeLessThan(1e-10);
    }
    // the vectors came back as float64 host arrays: ‖A·v − λ·v‖ on the host
    const y = new Float64Array(n);
    HostOperator.fromCsr(a).apply(dev.vectors[0]!, y);
    let r = 0;
    for (let i = 0; i < n; i++) r += (y[i]! - dev.values[0]! * dev.vectors[0]![i]!) ** 2;
    expect(Math.sqrt(r)).toBeLessThan(1e-8);
    op.dispose();
  });
});
