/**
 * refinedSolve through the extended-precision capability (ExtendedPrecisionResidual): a host
 * stand-in that keeps x, b and r "on the backend" in float64 and counts every call, so the
 * device path's control flow is tested without a GPU (the GPU df64 implementation is tested in
 * packages/gpu/test/df64-refine.test.ts).
 */
import { type CsrMatrix, csrFromDense, csrSpmv, type ExtendedPrecisionResidual, type ExtendedRefinement, extendedPrecisionOf, generators, HostOperator, type LinearOperator } from '@gpusparse/formats';
import { describe, expect, it } from 'vitest';
import { refinedSolve } from '../src/index';
import { f32Operator, Float32HostSpace } from './krylov-f32-space';
import { convectionDiffusion, norm, residual64, rhs } from './krylov-matrices';

/** A capability on the host: float64 state, counted calls, no host-side x until solution(). */
class CountingCapability implements ExtendedPrecisionResidual<Float64Array> {
  readonly precision = 'f64 stand-in';
  readonly rows: number;
  calls = { residualNorm: 0, correctionRhs: 0, update: 0, saveBest: 0, restoreBest: 0, solution: 0, dispose: 0 };
  constructor(readonly a: CsrMatrix) {
    this.rows = a.rows;
  }
  start(b: ArrayLike<number>, x0?: ArrayLike<number>): ExtendedRefinement<Float64Array> {
    const a = this.a;
    const c = this.calls;
    const x = x0 ? Float64Array.from(x0) : new Float64Array(a.rows);
    const bb = Float64Array.from(b);
    const r = x0 ? new Float64Array(a.rows) : bb.slice();
    let best = x.slice();
    const st = {
      readbacks: 0,
      residualNorm: async () => {
        c.residualNorm++;
        st.readbacks++;
        const ax = csrSpmv(a, x);
        for (let i = 0; i < r.length; i++) r[i] = bb[i]! - ax[i]!;
        return norm(r);
      },
      correctionRhs: (s: number, out: Float64Array) => {
        c.correctionRhs++;
        for (let i = 0; i < r.length; i++) out[i] = Math.fround(s * r[i]!);
      },
      update: (alpha: number, d: Float64Array) => {
        c.update++;
        for (let i = 0; i < x.length; i++) x[i] = x[i]! + alpha * d[i]!;
      },
      saveBest: () => {
        c.saveBest++;
        best = x.slice();
      },
      restoreBest: () => {
        c.restoreBest++;
        x.set(best);
      },
      solution: async () => {
        c.solution++;
        st.readbacks++;
        return x.slice();
      },
      dispose: () => {
        c.dispose++;
      },
    };
    return st;
  }
}

/** The f32 operator of the tests, offering the capability like a GPU operator does. */
function withCapability(a: CsrMatrix): LinearOperator<Float64Array> & { cap: CountingCapability } {
  const cap = new CountingCapability(a);
  return Object.assign(f32Operator(a), { cap, extendedPrecision: async () => cap });
}

describe('refinedSolve with an extended-precision capability', () => {
  const space32 = new Float32HostSpace();

  it('extendedPrecisionOf finds the capability on an operator and nothing on a host operator', async () => {
    const a = generators.poisson2d(4);
    expect(await extendedPrecisionOf(withCapability(a))).toBeInstanceOf(CountingCapability);
    expect(await extendedPrecisionOf(HostOperator.fromCsr(a))).toBeUndefined();
  });

  for (const [method, a] of [
    ['cg', generators.poisson2d(12)],
    ['gmres', convectionDiffusion(10, 1.5)],
  ] as const) {
    it(`${method}: uses the capability (no hostOperator, no host products), one readback per outer step`, async () => {
      const op = withCapability(a);
      const b = rhs(a.rows);
      const res = await refinedSolve({ innerOperator: op, innerSpace: space32, b, rtol: 1e-10, inner: { method, rtol: 1e-4 } });
      expect(res.reason, res.detail).toBe('converged');
      expect(residual64(a, res.x, b).r).toBeLessThanOrEqual(1e-10 * norm(b));
      expect(res.outerPrecision).toBe('f64 stand-in');
      expect(res.hostMatvecs).toBe(0);
      const c = op.cap.calls;
      expect(c.residualNorm).toBe(res.outerIterations); // x0 = 0: r = b needs no product
      expect(c.correctionRhs).toBe(res.outerIterations);
      expect(c.update).toBe(res.outerIterations);
      expect(c.solution).toBe(1);
      expect(c.dispose).toBe(1);
      const innerReadbacks = res.stats.readbacks - res.outerIterations - 1;
      expect(innerReadbacks).toBeGreaterThan(0);
      expect(res.stats.matvecs).toBeGreaterThan(res.innerIterations);
    });
  }

  it('extended: false forces the host path; without a capability hostOperator is required', async () => {
    const a = generators.poisson2d(8);
    const op = withCapability(a);
    const b = rhs(a.rows);
    const res = await refinedSolve({ hostOperator: HostOperator.fromCsr(a), innerOperator: op, innerSpace: space32, b, extended: false, inner: { method: 'cg', rtol: 1e-4 } });
    expect(res.converged).toBe(true);
    expect(op.cap.calls.residualNorm).toBe(0);
    expect(res.hostMatvecs).toBe(res.outerIterations);
    expect(res.outerPrecision).toBe('f64 on the host');
    await expect(refinedSolve({ innerOperator: f32Operator(a), innerSpace: space32, b })).rejects.toThrow(/hostOperator/);
  });

  it('x0 costs one extra residual; an ill-conditioned matrix restores the best x through the capability', async () => {
    const a = generators.poisson2d(6);
    const op = withCapability(a);
    const b = rhs(a.rows);
    const x0 = rhs(a.rows, 3);
    const res = await refinedSolve({ innerOperator: op, innerSpace: space32, b, x0, inner: { method: 'cg', rtol: 1e-4 } });
    expect(res.converged).toBe(true);
    expect(op.cap.calls.residualNorm).toBe(res.outerIterations + 1);
    const n = 10;
    const h = csrFromDense(Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => 1 / (i + j + 1))));
    const hop = withCapability(h);
    const bh = rhs(n);
    const bad = await refinedSolve({ innerOperator: hop, innerSpace: space32, b: bh, rtol: 1e-10, inner: { method: 'gmres', rtol: 1e-4 } });
    expect(bad.converged).toBe(false);
    expect(residual64(h, bad.x, bh).r).toBeCloseTo(bad.trueResidual, 12);
    if (bad.reason === 'breakdown') expect(hop.cap.calls.restoreBest).toBe(1);
  });
});
