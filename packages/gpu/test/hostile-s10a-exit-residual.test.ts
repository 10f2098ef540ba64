/**
 * Session 10: exits without convergence on an operator whose in-solve tuning switched to a
 * kernel that went wrong after the switch. Before, a 'max-iterations' / 'stopped' /
 * 'breakdown' result reported ‖b − A·x‖ computed with the switched-to kernel — a wrong figure
 * the user would trust. Every such exit of CG/PCG/BiCG/BiCGStab/GMRES now reports the residual
 * recomputed on the verified kernel (two products — the tuned one too — and one readback), falls
 * back to it when the two kernels' products disagree, and says so in stats.warnings. Eigensolvers recompute their exit residuals on the
 * verified kernel already (finishEigen): checked here too.
 */
import { csrSpmv, generators as g, HostOperator, type LinearOperator } from '@gpusparse/formats';
import { afterAll, describe, expect, it } from 'vitest';
import { bicg, bicgstab, cg, davidsonWith, gmres, jacobi, lobpcg, refinedSolve, type SolveResult } from '../../solvers/src/index';
import { type GpuOperator, type GpuVector, GpuVectorSpace, InSolveOperator } from '../src/index';
import { testContext, trueRelative } from './helpers';
import { internals, switchedThenWrong as switchedThenWrongOn, type Tuned } from './support/faults';

afterAll(async () => (await testContext()).dispose());

const a = g.poisson2d(16);
const ones = new Float64Array(a.rows).fill(1);
const b = csrSpmv(a, ones);
const bNorm = Math.hypot(...b);

const CANDIDATES = ['csr-scalar', 'csr-vector', 'ell'];

/** In-solve tuning made to choose candidate 1, whose products are × `factor` from the `after`-th after the switch on. */
async function switchedThenWrong(factor: number, after: number): Promise<{ op: Tuned; bad: string }> {
  const { op, cand } = await switchedThenWrongOn(await testContext(), a, CANDIDATES, factor, after);
  expect(op).toBeInstanceOf(InSolveOperator);
  expect(op.activeLabel).toBe(cand.label);
  return { op, bad: cand.label };
}

/** The reported residual is the true one of the returned x (float64 on the host), within float32 rounding. */
async function expectTrueFigure(space: GpuVectorSpace, r: SolveResult<GpuVector>): Promise<number> {
  const host = trueRelative(a, await space.toArray(r.x), b) * bNorm;
  expect(Math.abs(r.trueResidual - host)).toBeLessThan(1e-4 * bNorm);
  return host;
}

function expectFellBack(op: Tuned, bad: string, r: SolveResult<GpuVector>): void {
  expect(op.runsUnverified()).toBe(false);
  expect(op.activeLabel).not.toBe(bad);
  expect((r.stats.warnings ?? []).join('\n')).toMatch(/exit where the verified kernel .* gives .*fell back to the verified kernel and the result reports the verified residual/);
  expect(r.detail ?? '').toMatch(/trueResidual recomputed on the verified kernel/);
}

type Solve = (space: GpuVectorSpace, op: LinearOperator<GpuVector>, b: GpuVector, o: Record<string, unknown>) => Promise<SolveResult<GpuVector>>;
const solvers: [string, Solve][] = [
  ['cg', (s, op, rhs, o) => cg(s, op, rhs, o)],
  ['pcg (Jacobi)', (s, op, rhs, o) => cg(s, op, rhs, { ...o, preconditioner: jacobi(s, a.rows === op.rows ? (op as GpuOperator).diagonal!() : new Float64Array()) })],
  ['bicg', (s, op, rhs, o) => bicg(s, op, rhs, o)],
  ['bicgstab', (s, op, rhs, o) => bicgstab(s, op, rhs, o)],
  ['gmres', (s, op, rhs, o) => gmres(s, op, rhs, { restart: 8, ...o })],
];

describe('exits without convergence on a tuned kernel that went wrong report the verified residual', () => {
  for (const [name, solve] of solvers) {
    it(`${name}: 'max-iterations' reports ‖b − A·x‖ of the verified kernel and falls back`, async () => {
      const ctx = await testContext();
      const space = new GpuVectorSpace(ctx);
      const { op, bad } = await switchedThenWrong(1.1, 2);
      const r = await solve(space, op, space.fromArray(b), { rtol: 1e-10, maxIterations: 12 });
      expect(r.reason).toBe('max-iterations');
      expect(r.converged).toBe(false);
      await expectTrueFigure(space, r);
      expectFellBack(op, bad, r);
      op.dispose();
    });
  }

  it("cg: 'stopped' by onIteration reports the verified residual", async () => {
    const ctx = await testContext();
    const space = new GpuVectorSpace(ctx);
    const { op, bad } = await switchedThenWrong(1.1, 2);
    const r = await cg(space, op, space.fromArray(b), { rtol: 1e-10, checkEvery: 1, onIteration: (i) => i.iteration < 6 });
    expect(r.reason).toBe('stopped');
    await expectTrueFigure(space, r);
    expectFellBack(op, bad, r);
    op.dispose();
  });

  it("gmres: 'stopped' by an aborted signal reports the verified residual", async () => {
    const ctx = await testContext();
    const space = new GpuVectorSpace(ctx);
    const { op, bad } = await switchedThenWrong(1.1, 2);
    const ac = new AbortController();
    const r = await gmres(space, op, space.fromArray(b), { rtol: 1e-10, restart: 4, checkEvery: 1, recordHistory: true, onIteration: (i) => { if (i.iteration >= 6) ac.abort(); }, signal: ac.signal });
    expect(r.reason).toBe('stopped');
    await expectTrueFigure(space, r);
    expectFellBack(op, bad, r);
    op.dispose();
  });

  it('a tuned kernel that stays right: the exit costs two products and one readback, no warning, no fallback', async () => {
    const ctx = await testContext();
    const space = new GpuVectorSpace(ctx);
    const { op, bad } = await switchedThenWrong(1, 1);
    const r = await cg(space, op, space.fromArray(b), { rtol: 1e-10, maxIterations: 12 });
    expect(r.reason).toBe('max-iterations');
    await expectTrueFigure(space, r);
    expect(r.stats.warnings).toBeUndefined();
    expect(op.activeLabel).toBe(bad);
    // the same solve on a plain operator: two products and one readback fewer
    const plain = await cg(space, internals(op).others[0]!, space.fromArray(b), { rtol: 1e-10, maxIterations: 12 });
    expect(r.stats.matvecs - plain.stats.matvecs).toBe(2);
    expect(r.stats.readbacks - plain.stats.readbacks).toBe(1);
    op.dispose();
  });
});

describe('eigensolvers: exit residuals without convergence come from the verified kernel (already so)', () => {
  for (const [name, run] of [
    ['lobpcg', (space: GpuVectorSpace, op: GpuOperator) => lobpcg(space, op, { k: 2, tol: 1e-12, maxIterations: 4 })],
    ['davidsonWith', (space: GpuVectorSpace, op: GpuOperator) => davidsonWith(space, op, { k: 2, diagonal: op.diagonal!(), tol: 1e-12, maxIterations: 4, recomputeResiduals: false })],
  ] as const) {
    it(`${name}: 'max-iterations' residual norms are those of A·v − λ·v with the true A`, async () => {
      const ctx = await testContext();
      const space = new GpuVectorSpace(ctx);
      const { op } = await switchedThenWrong(1.1, 1);
      const r = await run(space, op);
      expect(r.converged).toBe(false);
      for (let i = 0; i < r.values.length; i++) {
        const v = await space.toArray(r.vectors[i]!);
        const av = csrSpmv(a, v);
        const host = Math.hypot(...av.map((t, j) => t - r.values[i]! * v[j]!));
        expect(Math.abs(r.residualNorms[i]! - host)).toBeLessThan(1e-4 * 8);
      }
      op.dispose();
    });
  }
});

describe('refinedSolve: the outer residual never comes from the tuned kernel (already so)', () => {
  for (const [name, outer] of [
    ['host float64 outer residual', { hostOperator: HostOperator.fromCsr(a) }],
    ['device df64 outer residual', {}],
  ] as const) {
    it(`${name}: 'max-iterations' reports the true residual of x`, async () => {
      const ctx = await testContext();
      const space = new GpuVectorSpace(ctx);
      const { op } = await switchedThenWrong(1.1, 2);
      const r = await refinedSolve({ innerOperator: op, innerSpace: space, ...outer, b, rtol: 1e-14, maxOuterIterations: 1, inner: { method: 'cg', maxIterations: 6, reliable: false } });
      expect(r.converged).toBe(false);
      const host = trueRelative(a, r.x, b) * bNorm;
      expect(Math.abs(r.trueResidual - host)).toBeLessThan(1e-6 * bNorm);
      op.dispose();
    });
  }
});
