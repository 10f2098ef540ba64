import { csrFromDense, generators, HostOperator, HostVectorSpace } from '@gpusparse/formats';
import { describe, expect, it } from 'vitest';
import { cg, correctionTolerance, jacobi, LAST_STEP_MARGIN, refinedSolve } from '../src/index';
import { f32Operator, Float32HostSpace } from './krylov-f32-space';
import { convectionDiffusion, loadShared, norm, residual64, rhs } from './krylov-matrices';

describe('mixed-precision iterative refinement', () => {
  const space32 = new Float32HostSpace();

  for (const [method, matrix] of [
    ['cg', generators.poisson2d(12)],
    ['gmres', convectionDiffusion(10, 1.5)],
    ['bicgstab', convectionDiffusion(10, 1.5)],
  ] as const) {
    it(`${method} inner solves in float32 reach ‖b − A·x‖ ≤ 1e-10·‖b‖ in float64`, async () => {
      const a = matrix;
      const b = rhs(a.rows);
      const res = await refinedSolve({
        hostOperator: HostOperator.fromCsr(a),
        innerOperator: f32Operator(a),
        innerSpace: space32,
        b,
        rtol: 1e-10,
        inner: { method, rtol: 1e-4 },
      });
      expect(res.reason, res.detail).toBe('converged');
      const { r } = residual64(a, res.x, b);
      expect(r).toBeLessThanOrEqual(1e-10 * norm(b));
      expect(Math.abs(res.trueResidual - r)).toBeLessThanOrEqual(1e-3 * r);
      // each outer step gains ~3–4 digits: 1e-10 needs 3 or 4 of them
      expect(res.outerIterations).toBeGreaterThanOrEqual(2);
      expect(res.outerIterations).toBeLessThanOrEqual(6);
      expect(res.innerIterations).toBe(res.inner.reduce((s, i) => s + i.iterations, 0));
      expect(res.history.at(-1)!.residual).toBe(res.trueResidual);
      expect(res.method).toBe(method === 'cg' ? 'refined(cg reliable, f32)' : `refined(${method}, f32)`);
    });
  }

  it('reliable-update CG keeps its Krylov space: float64 CG iteration counts on Poisson, where restarted refinement needs more', async () => {
    // On matrices of moderate κ the float32 recurrence tracks float64 CG and only the restarts
    // cost iterations. (On ill-conditioned ones, e.g. bcsstk05/06, float32 rounding in the
    // recurrence itself delays CG and reliable ≈ restarted: both 1.3–3× float64 CG.)
    for (const a of [generators.poisson2d(60), generators.poisson3d(20)]) {
      const slack = 1.1;
      const b = rhs(a.rows);
      const host = new HostVectorSpace();
      const ref = await cg(host, HostOperator.fromCsr(a), host.fromArray(b), { rtol: 1e-8, maxIterations: 5000, checkEvery: 1 });
      const common = { hostOperator: HostOperator.fromCsr(a), innerOperator: f32Operator(a), innerSpace: space32, b, rtol: 1e-8 };
      const reliable = await refinedSolve({ ...common, inner: { method: 'cg', checkEvery: 8 } });
      expect(reliable.reason, reliable.detail).toBe('converged');
      expect(residual64(a, reliable.x, b).r).toBeLessThanOrEqual(1e-8 * norm(b));
      expect(reliable.innerIterations).toBeLessThanOrEqual(slack * ref.iterations);
      expect(reliable.hostMatvecs).toBe(reliable.outerIterations); // one float64 residual per replacement
      expect(reliable.inner.every((s) => s.method === 'cg (reliable)')).toBe(true);
      const restarted = await refinedSolve({ ...common, inner: { method: 'cg', checkEvery: 8, rtol: 1e-4, reliable: false } });
      expect(restarted.converged).toBe(true);
      expect(restarted.innerIterations).toBeGreaterThan(reliable.innerIterations);
      // default checkEvery (32): the next check is planned from the observed rate, so the solve
      // stops near the float64 count instead of up to 31 iterations late
      const sparse = await refinedSolve({ ...common, inner: { method: 'cg' } });
      expect(sparse.converged).toBe(true);
      expect(sparse.innerIterations).toBeLessThanOrEqual(slack * ref.iterations + 4);
      expect(sparse.stats.readbacks).toBeLessThan(reliable.stats.readbacks);
      console.log(`checkEvery 32: ${sparse.innerIterations} iterations, ${sparse.stats.readbacks} readbacks (checkEvery 8: ${reliable.stats.readbacks})`);
      console.log(`n = ${a.rows}: float64 CG ${ref.iterations}, reliable ${reliable.innerIterations} (${reliable.outerIterations} replacements), restarted ${restarted.innerIterations}`);
    }
  });

  it('reliable-update CG with a preconditioner, and a vanishing ⟨p, A·p⟩ reported as a breakdown', async () => {
    const a = await loadShared('bcsstk05.mtx');
    const b = rhs(a.rows);
    const pre = await refinedSolve({
      hostOperator: HostOperator.fromCsr(a),
      innerOperator: f32Operator(a),
      innerSpace: space32,
      b,
      rtol: 1e-10,
      inner: { method: 'cg', preconditioner: jacobi(space32, HostOperator.fromCsr(a)) },
    });
    expect(pre.reason, pre.detail).toBe('converged');
    expect(residual64(a, pre.x, b).r).toBeLessThanOrEqual(1e-10 * norm(b));
    expect(pre.stats.precondApplies).toBeGreaterThanOrEqual(pre.innerIterations);
    // [[0, 1], [1, 0]] with b = e₁: p = e₁, A·p = e₂, ⟨p, A·p⟩ = 0 at the first iteration
    const swap = csrFromDense([
      [0, 1],
      [1, 0],
    ]);
    const bad = await refinedSolve({ hostOperator: HostOperator.fromCsr(swap), innerOperator: f32Operator(swap), innerSpace: space32, b: [1, 0], inner: { method: 'cg' } });
    expect(bad.reason).toBe('breakdown');
    expect(bad.detail).toMatch(/⟨p, A·p⟩ = 0 at iteration 1/);
    expect(Array.from(bad.x).every(Number.isFinite)).toBe(true);
    expect(bad.trueResidual).toBeCloseTo(1, 12);
  });

  it('GMRES corrections: one Gram–Schmidt pass per step and one Hessenberg read per restart cycle by default', async () => {
    class Counting extends Float32HostSpace {
      multiDots = 0;
      override multiDot(xs: readonly Float64Array[], y: Float64Array) {
        this.multiDots++;
        return super.multiDot(xs, y);
      }
    }
    const a = convectionDiffusion(16, 1.5);
    const b = rhs(a.rows);
    const run = async (inner: { orthogonalization?: 'cgs' | 'cgs2'; checkEvery?: number }) => {
      const space = new Counting();
      const res = await refinedSolve({ hostOperator: HostOperator.fromCsr(a), innerOperator: f32Operator(a), innerSpace: space, b, rtol: 1e-10, inner: { method: 'gmres', rtol: 1e-4, restart: 10, ...inner } });
      expect(res.reason, res.detail).toBe('converged');
      expect(residual64(a, res.x, b).r).toBeLessThanOrEqual(1e-10 * norm(b));
      return { res, multiDots: space.multiDots };
    };
    const dflt = await run({});
    const cgs2 = await run({ orthogonalization: 'cgs2', checkEvery: 4 });
    // cgs: one multiDot per step (steps past the passing column included); cgs2: two
    expect(dflt.multiDots).toBeLessThanOrEqual(dflt.res.innerIterations + 10 * dflt.res.outerIterations);
    expect(cgs2.multiDots).toBeGreaterThanOrEqual(2 * cgs2.res.innerIterations);
    // readbacks of each correction solve: ‖b‖, the first step's check, then per cycle one read (the
    // Hessenberg batch, with the restart residual of the cycle before), and the last residual
    const cycles = dflt.res.inner.reduce((s, i) => s + Math.ceil(i.iterations / 10), 0);
    const innerReadbacks = dflt.res.stats.readbacks - 2 * dflt.res.outerIterations;
    expect(innerReadbacks).toBeLessThanOrEqual(cycles + 3 * dflt.res.outerIterations);
    expect(innerReadbacks).toBeLessThan(cgs2.res.stats.readbacks - 2 * cgs2.res.outerIterations);
  });

  it('the last correction solve aims only at what the outer tolerance needs', async () => {
    expect(correctionTolerance(1e-4, 1e-8, 1e-3)).toBe(1e-4);
    expect(correctionTolerance(1e-4, 1e-8, 1.3e-8)).toBeCloseTo((LAST_STEP_MARGIN * 1e-8) / 1.3e-8, 12);
    expect(correctionTolerance(1e-4, 0, 1)).toBe(1e-4);
    // 1e-5 after a first step at 1e-4 needs only a 1e-1 reduction from the second correction
    const a = convectionDiffusion(16, 1.5);
    const b = rhs(a.rows);
    const common = { hostOperator: HostOperator.fromCsr(a), innerOperator: f32Operator(a), innerSpace: space32, b };
    const res = await refinedSolve({ ...common, rtol: 1e-5, inner: { method: 'gmres', rtol: 1e-4, restart: 10 } });
    expect(res.reason, res.detail).toBe('converged');
    expect(residual64(a, res.x, b).r).toBeLessThanOrEqual(1e-5 * norm(b));
    const first = res.history[1]!.residual / res.bNorm;
    expect(first).toBeLessThanOrEqual(1e-4);
    expect(first).toBeGreaterThan(1e-5); // the test needs a second step
    const last = res.inner.at(-1)!;
    expect(last.reason).toBe('converged');
    expect(last.relativeResidual).toBeGreaterThan(1e-4); // stopped at ~θ·tol/‖r‖, not at the inner rtol
    expect(last.relativeResidual).toBeLessThanOrEqual(((LAST_STEP_MARGIN * 1e-5) / first) * 1.01);
  });

  it('the same float32 space alone cannot reach 1e-10 (why refinement exists)', async () => {
    const a = generators.poisson2d(12);
    const b = rhs(a.rows);
    const res = await cg(space32, f32Operator(a), space32.fromArray(b), { rtol: 1e-10, maxIterations: 2000 });
    expect(res.converged).toBe(false);
    expect(residual64(a, res.x, b).r).toBeGreaterThan(1e-9 * norm(b));
  });

  it('refines on a real matrix (bcsstk05, κ ≈ 1e4) with Jacobi-free CG inner solves', async () => {
    const a = await loadShared('bcsstk05.mtx');
    const b = rhs(a.rows);
    const res = await refinedSolve({ hostOperator: HostOperator.fromCsr(a), innerOperator: f32Operator(a), innerSpace: space32, b, rtol: 1e-10, inner: { method: 'cg', rtol: 1e-3 } });
    expect(res.reason, res.detail).toBe('converged');
    expect(residual64(a, res.x, b).r).toBeLessThanOrEqual(1e-10 * norm(b));
  });

  it('zero b, NaN b, x0 untouched, stop callback', async () => {
    const a = generators.poisson2d(4);
    const common = { hostOperator: HostOperator.fromCsr(a), innerOperator: f32Operator(a), innerSpace: space32 };
    const zero = await refinedSolve({ ...common, b: new Float64Array(16) });
    expect(zero.converged).toBe(true);
    expect(zero.outerIterations).toBe(0);
    expect(Array.from(zero.x)).toEqual(new Array(16).fill(0));
    const bad = rhs(16);
    bad[0] = Number.POSITIVE_INFINITY;
    expect((await refinedSolve({ ...common, b: bad })).reason).toBe('non-finite');
    const x0 = rhs(16, 9);
    const copy = x0.slice();
    const stopped = await refinedSolve({ ...common, b: rhs(16), x0, onOuterIteration: () => false });
    expect(stopped.reason).toBe('stopped');
    expect(stopped.outerIterations).toBe(1);
    expect(Array.from(x0)).toEqual(Array.from(copy));
  });

  it('a matrix too ill-conditioned for float32 stops with a reason and the best x', async () => {
    // Hilbert matrix of order 10: κ ≈ 1.6e13, far beyond 1/ε_f32
    const n = 10;
    const h = csrFromDense(Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => 1 / (i + j + 1))));
    const b = rhs(n);
    const res = await refinedSolve({ hostOperator: HostOperator.fromCsr(h), innerOperator: f32Operator(h), innerSpace: space32, b, rtol: 1e-10, inner: { method: 'gmres', rtol: 1e-4 } });
    expect(res.converged).toBe(false);
    expect(['breakdown', 'max-iterations', 'non-finite']).toContain(res.reason);
    expect(res.trueResidual).toBeLessThanOrEqual(norm(b));
    expect(residual64(h, res.x, b).r).toBeCloseTo(res.trueResidual, 12);
  });

  it('runs with a float64 inner space too (plain host)', async () => {
    const a = generators.poisson2d(8);
    const b = rhs(64);
    const res = await refinedSolve({ hostOperator: HostOperator.fromCsr(a), innerOperator: HostOperator.fromCsr(a), innerSpace: new HostVectorSpace(), b, rtol: 1e-12, inner: { method: 'cg', rtol: 1e-6 } });
    expect(res.converged).toBe(true);
    expect(res.outerIterations).toBeLessThanOrEqual(3);
  });
});
