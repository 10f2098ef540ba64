/**
 * Reliable-update CG with a lagged check (inner.checkLag: the readback of a check is awaited k
 * iterations later, the direction update fused into the iteration): float64 accuracy, the
 * iteration cost of the lag, breakdown recovery with iterations recorded past the bad one, a
 * preconditioner, and the host default (lag 0: the synchronous check's results).
 */
import { csrFromDense, generators, HostOperator } from '@gpusparse/formats';
import { describe, expect, it } from 'vitest';
import { jacobi, refinedSolve } from '../src/index';
import { f32Operator, Float32HostSpace } from './krylov-f32-space';
import { loadShared, norm, residual64, rhs } from './krylov-matrices';

const space32 = new Float32HostSpace();

describe('reliable CG with a lagged check', () => {
  it.each([1, 4, 8])('lag %i: 1e-10 in float64 on Poisson 3-D within 2·lag iterations per replacement of the synchronous check', async (lag) => {
    const a = generators.poisson3d(18);
    const b = rhs(a.rows);
    const common = { hostOperator: HostOperator.fromCsr(a), innerOperator: f32Operator(a), innerSpace: space32, b, rtol: 1e-10 };
    const sync = await refinedSolve({ ...common, inner: { method: 'cg' } });
    const lagged = await refinedSolve({ ...common, inner: { method: 'cg', checkLag: lag } });
    for (const res of [sync, lagged]) {
      expect(res.reason, res.detail).toBe('converged');
      expect(residual64(a, res.x, b).r).toBeLessThanOrEqual(1e-10 * norm(b));
    }
    expect(lagged.innerIterations).toBeLessThanOrEqual(sync.innerIterations + 2 * lag * lagged.outerIterations);
    // the stop comes at most lag iterations (and one check gap) after the estimate passed
    expect(lagged.innerIterations).toBeGreaterThan(0.8 * sync.innerIterations);
    console.log(`poisson3d(18) 1e-10: synchronous check ${sync.innerIterations} iterations (${sync.outerIterations} replacements), lag ${lag}: ${lagged.innerIterations} (${lagged.outerIterations})`);
  });

  it('host spaces default to the synchronous check: the same iterations and x as checkLag 0', async () => {
    const a = generators.poisson2d(30);
    const b = rhs(a.rows);
    const common = { hostOperator: HostOperator.fromCsr(a), innerOperator: f32Operator(a), innerSpace: space32, b, rtol: 1e-9 };
    const byDefault = await refinedSolve({ ...common, inner: { method: 'cg' } });
    const zero = await refinedSolve({ ...common, inner: { method: 'cg', checkLag: 0 } });
    expect(byDefault.innerIterations).toBe(zero.innerIterations);
    expect(Array.from(byDefault.x)).toEqual(Array.from(zero.x));
  });

  it('refuses a check lag that is not an integer ≥ 0, naming the option', async () => {
    const a = generators.poisson2d(4);
    const common = { hostOperator: HostOperator.fromCsr(a), innerOperator: f32Operator(a), innerSpace: space32, b: rhs(a.rows) };
    for (const checkLag of [-1, 1.5, Number.NaN]) {
      await expect(refinedSolve({ ...common, inner: { method: 'cg', checkLag } })).rejects.toThrow(/inner\.checkLag.*integer ≥ 0/);
    }
  });

  it('with a Jacobi preconditioner on bcsstk05', async () => {
    const a = await loadShared('bcsstk05.mtx');
    const b = rhs(a.rows);
    const res = await refinedSolve({
      hostOperator: HostOperator.fromCsr(a),
      innerOperator: f32Operator(a),
      innerSpace: space32,
      b,
      rtol: 1e-10,
      inner: { method: 'cg', checkLag: 3, preconditioner: jacobi(space32, HostOperator.fromCsr(a)) },
    });
    expect(res.reason, res.detail).toBe('converged');
    expect(residual64(a, res.x, b).r).toBeLessThanOrEqual(1e-10 * norm(b));
  });

  it('a vanishing ⟨p, A·p⟩ with iterations recorded after it: a breakdown with the last clean x, never NaN', async () => {
    // [[0, 1], [1, 0]] with b = e₁: ⟨p, A·p⟩ = 0 at the first iteration; with lag 5 five more
    // iterations run on NaN before the check is read
    const swap = csrFromDense([
      [0, 1],
      [1, 0],
    ]);
    const bad = await refinedSolve({ hostOperator: HostOperator.fromCsr(swap), innerOperator: f32Operator(swap), innerSpace: space32, b: [1, 0], inner: { method: 'cg', checkLag: 5 } });
    expect(bad.reason).toBe('breakdown');
    expect(bad.detail).toMatch(/⟨p, A·p⟩ = 0 at iteration 1/);
    expect(Array.from(bad.x).every(Number.isFinite)).toBe(true);
    expect(bad.trueResidual).toBeCloseTo(1, 12);
  });

  it('short segments (inner.maxIterations below the lag) and an abort between replacements', async () => {
    const a = generators.poisson2d(24);
    const b = rhs(a.rows);
    const common = { hostOperator: HostOperator.fromCsr(a), innerOperator: f32Operator(a), innerSpace: space32, b, rtol: 1e-9 };
    // every segment ends at maxIterations = 10 while the lagged check would come at 16
    const short = await refinedSolve({ ...common, maxOuterIterations: 200, inner: { method: 'cg', checkLag: 16, maxIterations: 10 } });
    expect(short.reason, short.detail).toBe('converged');
    expect(residual64(a, short.x, b).r).toBeLessThanOrEqual(1e-9 * norm(b));
    expect(short.inner.every((s) => s.iterations <= 10)).toBe(true);
    // abort at the first replacement: 'stopped', x finite and its true residual reported
    const ctl = new AbortController();
    const stopped = await refinedSolve({ ...common, signal: ctl.signal, onOuterIteration: () => ctl.abort(), inner: { method: 'cg', checkLag: 4 } });
    expect(stopped.reason).toBe('stopped');
    expect(Array.from(stopped.x).every(Number.isFinite)).toBe(true);
    expect(Math.abs(stopped.trueResidual - residual64(a, stopped.x, b).r)).toBeLessThanOrEqual(1e-6 * norm(b));
  });

  it('iterations past exact convergence divide 0 by 0: the NaN never reaches x', async () => {
    // indefinite diag(1, −1), b = (1, 0.5): CG's residual vanishes at iteration 2, the next
    // iterations (recorded before the lagged check is read) divide 0 by 0; the recurrence reports
    // a breakdown and the restarted refinement it falls back to finishes
    const d = csrFromDense([
      [1, 0],
      [0, -1],
    ]);
    const res = await refinedSolve({ hostOperator: HostOperator.fromCsr(d), innerOperator: f32Operator(d), innerSpace: space32, b: [1, 0.5], rtol: 1e-10, inner: { method: 'cg', checkLag: 6 } });
    expect(res.reason, res.detail).toBe('converged');
    expect(res.method).toBe('refined(cg reliable → restarted, f32)');
    expect(Array.from(res.x).every(Number.isFinite)).toBe(true);
    expect(residual64(d, res.x, [1, 0.5]).r).toBeLessThanOrEqual(1e-10 * Math.hypot(1, 0.5));
  });
});
