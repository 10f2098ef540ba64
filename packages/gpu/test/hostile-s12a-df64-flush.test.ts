/**
 * Session 12: the df64 operator where the device flushes float32 subnormals (NVIDIA; lavapipe
 * keeps them, so the flush is simulated here: support/faults.ts rewrites every df64 kernel so
 * that each intermediate and each argument below 2^-126 reads 0).
 * Session 11 closed the hole for refinedSolve only: `Df64CsrOperator` used directly (eigsMixed's
 * devicePolish, the CI driver's float64 phase) multiplied A·1e-30 with its lo parts (≈ 1e-38)
 * flushed, i.e. about float32-accurately, with nothing said. Now such a build is an
 * InvalidMatrixError, `{ scale: 'auto' }` builds 2^s·A (exact) and eigsMixed scales the problem to
 * match; a matrix with only a few tiny entries keeps its df64 paths (their flushed parts are far
 * below df64's rounding) — before, refinedSolve lost the device residual for it.
 */
import { csrSpmv, type CsrMatrix, generators as g, HostOperator, InvalidMatrixError } from '@gpusparse/formats';
import { afterAll, describe, expect, it } from 'vitest';
import { eigsMixed, refinedSolve } from '../../solvers/src/index';
import { createGpuContext, Df64Blas, Df64Csr, Df64CsrOperator, Df64VectorSpace, type GpuContext, gpuOperatorFromCsr, GpuVectorSpace } from '../src/index';
import { testContext, trueRelative } from './helpers';
import { simulateSubnormalFlush, withTinyPairs } from './support/faults';

let flushCtx: GpuContext | undefined;
let flushes: { flushed: () => number } | undefined;
/** A context whose df64 kernels flush subnormals (its own: the flush is installed before any df64 use). */
async function flushing(): Promise<{ ctx: GpuContext; d: Df64Blas }> {
  if (!flushCtx) {
    flushCtx = await createGpuContext();
    flushes = simulateSubnormalFlush(flushCtx);
  }
  const d = await Df64Blas.of(flushCtx);
  if (!d) throw new Error('df64 self-test failed under the simulated flush');
  return { ctx: flushCtx, d };
}

afterAll(async () => {
  flushCtx?.dispose();
  (await testContext()).dispose();
});

const m = 12;
const a0 = g.poisson2d(m); // n = 144
const scaled = (s: number): CsrMatrix => ({ ...a0, values: a0.values.map((v) => v * s) });
/** poisson2d(m)'s eigenvalues, 4 − 2cos(iπ/(m+1)) − 2cos(jπ/(m+1)), ascending. */
const exact = (): number[] => {
  const l: number[] = [];
  for (let i = 1; i <= m; i++) for (let j = 1; j <= m; j++) l.push(4 - 2 * Math.cos((i * Math.PI) / (m + 1)) - 2 * Math.cos((j * Math.PI) / (m + 1)));
  return l.sort((x, y) => x - y);
};
/** x_i = 1 + i/n (no symmetry for a flushed part to cancel in). */
const xs = (n: number) => Float64Array.from({ length: n }, (_, i) => 1 + i / n);
/** max_i |y_i − ref_i| / max_i |ref_i|. */
const relMax = (y: Float64Array, ref: Float64Array) => {
  let e = 0;
  let r = 0;
  for (let i = 0; i < y.length; i++) {
    e = Math.max(e, Math.abs(y[i]! - ref[i]!));
    r = Math.max(r, Math.abs(ref[i]!));
  }
  return e / r;
};
describe('df64 under a flush of float32 subnormals', () => {
  it('the simulation bites: a df64 residual of A·1e-30 is float32-accurate with the flush, float64-accurate without', async () => {
    const a = scaled(1e-30);
    const x = xs(a.rows);
    const ref = csrSpmv(a, x).map((v) => -v); // r = 0 − A·x
    const errs: number[] = [];
    for (const ctx of [await testContext(), (await flushing()).ctx]) {
      const d = (await Df64Blas.of(ctx))!;
      const mat = new Df64Csr(d, a);
      const [dx, db, dr] = [d.fromFloat64(x), d.fromFloat64(new Float64Array(a.rows)), d.create(a.rows)];
      mat.residual(dx, db, dr);
      errs.push(relMax(await d.toFloat64(dr), ref));
      for (const v of [dx, db, dr]) v.buf.dispose();
      mat.dispose();
    }
    expect(errs[0]).toBeLessThan(1e-13);
    expect(errs[1]).toBeGreaterThan(1e-10); // the lo parts and the products' error terms flushed
    expect(flushes!.flushed()).toBeGreaterThan(0);
  });

  it("A·1e-30: every Df64CsrOperator build refuses (InvalidMatrixError naming the remedy); { scale: 'auto' } multiplies by 2^s·A to 1e-14", async () => {
    const { ctx, d } = await flushing();
    const a = scaled(1e-30);
    const op = gpuOperatorFromCsr(ctx, a);
    expect(() => Df64CsrOperator.fromCsr(d, a)).toThrow(InvalidMatrixError);
    expect(() => Df64CsrOperator.fromCsr(d, a)).toThrow(/scale: 'auto'/);
    expect(() => Df64CsrOperator.fromGpuOperator(d, op, a)).toThrow(InvalidMatrixError);
    await expect(Df64CsrOperator.fromGpuOperatorSliced(d, op, a)).rejects.toThrow(InvalidMatrixError);
    const x = xs(a.rows);
    for (const dop of [Df64CsrOperator.fromCsr(d, a, { scale: 'auto' }), Df64CsrOperator.fromGpuOperator(d, op, a, { scale: 'auto' })!, (await Df64CsrOperator.fromGpuOperatorSliced(d, op, a, { scale: 'auto' }))!]) {
      expect(dop.scale).toBe(2 ** 98); // max |aᵢⱼ| = 4e-30 ≈ 2^-97.7
      const [dx, dy] = [d.fromFloat64(x), d.create(a.rows)];
      dop.apply(dx, dy);
      expect(relMax(await d.toFloat64(dy), csrSpmv(a, x).map((v) => v * dop.scale))).toBeLessThan(1e-14);
      expect(dop.diagonal!()[0]).toBe(4e-30 * 2 ** 98);
      dx.buf.dispose();
      dy.buf.dispose();
      dop.dispose();
    }
    expect(() => Df64CsrOperator.fromCsr(d, a, { scale: 3 })).toThrow(/power of two/);
    op.dispose();
  });

  it('a few entries of 1e-33 in an order-one matrix: the df64 product stays df64-accurate and refinedSolve keeps the device residual (session 11: host residual)', async () => {
    const { ctx, d } = await flushing();
    const a = withTinyPairs(a0, 3);
    const x = xs(a.rows);
    const dop = Df64CsrOperator.fromCsr(d, a);
    const [dx, dy] = [d.fromFloat64(x), d.create(a.rows)];
    dop.apply(dx, dy);
    expect(relMax(await d.toFloat64(dy), csrSpmv(a, x))).toBeLessThan(1e-14);
    dx.buf.dispose();
    dy.buf.dispose();
    dop.dispose();
    const op = gpuOperatorFromCsr(ctx, a);
    expect(await op.extendedPrecision()).toBeDefined();
    const b = csrSpmv(a, x);
    const r = await refinedSolve({ hostOperator: HostOperator.fromCsr(a), innerOperator: op, innerSpace: new GpuVectorSpace(ctx), b, rtol: 1e-12, inner: { method: 'cg', rtol: 1e-4 } });
    expect(r.outerPrecision).toMatch(/df64/);
    expect(r.reason).toBe('converged');
    expect(trueRelative(a, r.x, b)).toBeLessThan(1e-11);
    op.dispose();
  });

  it("eigsMixed with a df64 devicePolish on A·1e-30 ({ scale: 'auto' }): converged, the 3 lowest to 1e-10, host float64 residuals ≤ 1e-9·‖A‖", async () => {
    const { ctx } = await flushing();
    const a = scaled(1e-30);
    const op = gpuOperatorFromCsr(ctx, a);
    const df = (await Df64VectorSpace.of(ctx))!;
    const dop = Df64CsrOperator.fromGpuOperator(df.d, op, a, { scale: 'auto' })!;
    const r = await eigsMixed({ method: 'lanczos', k: 3, fastOperator: op, fastSpace: new GpuVectorSpace(ctx), devicePolish: df.polish(dop), rtol: 1e-10 });
    expect(r.reason).toBe('converged');
    const want = exact().slice(0, 3).map((l) => l * 1e-30);
    for (const [i, l] of r.values.entries()) expect(Math.abs(l - want[i]!) / want[i]!).toBeLessThan(1e-10);
    r.vectors.forEach((v, i) => {
      const av = csrSpmv(a, v);
      const res = Math.hypot(...av.map((t, j) => t - r.values[i]! * v[j]!)) / Math.hypot(...v);
      expect(res).toBeLessThan(1e-9 * 8e-30);
      expect(r.residualNorms[i]!).toBeLessThan(1e-9 * 8e-30);
    });
    expect(r.detail).toMatch(/2\^98·A/);
    dop.dispose();
    op.dispose();
  });
});
