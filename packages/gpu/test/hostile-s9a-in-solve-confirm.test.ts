/**
 * Session 9: in-solve tuning switched to a candidate whose tuning products were right, and that
 * goes wrong later (after N more products: a fault for some x, a driver hiccup). Every solver
 * path that can end 'converged' on such an operator must confirm the verdict on the verified
 * kernel, fall back to it on a mismatch (warning in stats.warnings) and go on — never hand back
 * a wrong x or λ labelled converged.
 */
import { csrSpmv, generators as g, HostOperator, HostVectorSpace } from '@gpusparse/formats';
import { afterAll, describe, expect, it } from 'vitest';
import { bicgstab, cg, davidsonWith, gmres, lanczos, lobpcg } from '../../solvers/src/index';
import { type GpuOperator, GpuVectorSpace, InSolveOperator } from '../src/index';
import { testContext, trueRelative } from './helpers';
import { internals, switchedThenWrong as switchedThenWrongOn, type Tuned } from './support/faults';

afterAll(async () => (await testContext()).dispose());

const CANDIDATES = ['csr-scalar', 'csr-vector', 'ell', 'sliced-ell'];
const a = g.poisson2d(16);
const ones = new Float64Array(a.rows).fill(1);
const b = csrSpmv(a, ones);

/**
 * An in-solve operator whose tuning (real tuning products, checked on the device) chose
 * candidate 1 (its timestamps are made the fastest), and whose candidate 1 then gives
 * products scaled by `factor` from the `after`-th product after the switch on.
 */
async function switchedThenWrong(factor: number | ((k: number) => number), after: number): Promise<{ op: Tuned; bad: string; wrong: () => number }> {
  const { op, cand, wrong } = await switchedThenWrongOn(await testContext(), a, CANDIDATES, factor, after);
  expect(op).toBeInstanceOf(InSolveOperator);
  expect(internals(op).candidates.length).toBeGreaterThanOrEqual(2);
  expect(op.activeLabel).toBe(cand.label);
  expect(op.runsUnverified()).toBe(true);
  return { op, bad: cand.label, wrong };
}

function expectFellBack(op: Tuned, bad: string, warnings: string[] | undefined): void {
  expect(op.runsUnverified()).toBe(false);
  expect(op.activeLabel).toBe(op.label);
  expect(op.activeLabel).not.toBe(bad);
  expect((warnings ?? []).join('\n')).toMatch(new RegExp(`tuned kernel ${bad.replace(/[()]/g, '\\$&')} gave .*verified kernel ${op.label.replace(/[()]/g, '\\$&')}.*fell back to the verified kernel`));
  expect(op.tuning.trials.some((t) => t.status === 'error' && /chosen by the tuning/.test(t.error ?? ''))).toBe(true);
}

describe('in-solve tuning: a chosen kernel that goes wrong after the switch', () => {
  for (const [name, solve] of [
    ['cg', cg],
    ['bicgstab', bicgstab],
    ['gmres', gmres],
  ] as const) {
    it(`${name}: the final check on the verified kernel catches it, the solve goes on and converges to the right x`, async () => {
      const ctx = await testContext();
      const space = new GpuVectorSpace(ctx);
      const { op, bad, wrong } = await switchedThenWrong(1.1, 5);
      const r = await solve(space, op, space.fromArray(b), { rtol: 1e-5, maxIterations: 2000 });
      expect(wrong()).toBeGreaterThan(0);
      expect(r.converged).toBe(true);
      expect(trueRelative(a, await space.toArray(r.x), b)).toBeLessThan(1e-4);
      expectFellBack(op, bad, r.stats.warnings);
      op.dispose();
    });
  }

  for (const [name, solve] of [
    ['cg', cg],
    ['gmres', gmres],
  ] as const) {
    it(`${name}: a chosen kernel whose products are inconsistent (×1.1, ×0.9, …) stalls the solve; the stall is rechecked on the verified kernel and the solve goes on`, async () => {
      const ctx = await testContext();
      const space = new GpuVectorSpace(ctx);
      const { op, bad, wrong } = await switchedThenWrong((k) => (k % 2 === 0 ? 1.1 : 0.9), 5);
      const r = await solve(space, op, space.fromArray(b), { rtol: 1e-5, maxIterations: 3000 });
      expect(wrong()).toBeGreaterThan(0);
      expect(r.converged).toBe(true);
      expect(trueRelative(a, await space.toArray(r.x), b)).toBeLessThan(1e-4);
      expectFellBack(op, bad, r.stats.warnings);
      op.dispose();
    });
  }

  it('a chosen kernel that stays right: the check passes, no warning, no fallback', async () => {
    const ctx = await testContext();
    const space = new GpuVectorSpace(ctx);
    const { op, bad } = await switchedThenWrong(1, 1);
    const r = await cg(space, op, space.fromArray(b), { rtol: 1e-5 });
    expect(r.converged).toBe(true);
    expect(r.stats.warnings).toBeUndefined();
    expect(op.activeLabel).toBe(bad);
    op.dispose();
  });

  it('x0 already "converged" on the wrong kernel: checked at iteration 0, then solved on the verified one', async () => {
    const ctx = await testContext();
    const space = new GpuVectorSpace(ctx);
    const { op, bad } = await switchedThenWrong(1.1, 1);
    // x0 = A⁻¹b / 1.1 solves the wrong operator exactly
    const x0 = space.fromArray(ones.map((v) => v / 1.1));
    const r = await cg(space, op, space.fromArray(b), { rtol: 1e-5, x0 });
    expect(r.converged).toBe(true);
    expect(trueRelative(a, await space.toArray(r.x), b)).toBeLessThan(1e-4);
    expectFellBack(op, bad, r.stats.warnings);
    op.dispose();
  });
});

describe('in-solve tuning: eigensolvers on a chosen kernel that goes wrong after the switch', () => {
  const host = new HostVectorSpace();
  const hostOp = HostOperator.fromCsr(a);

  for (const [name, run] of [
    ['lanczos', (space: GpuVectorSpace, op: GpuOperator) => lanczos(space, op, { k: 1, checkMultiplicity: false })],
    ['lobpcg', (space: GpuVectorSpace, op: GpuOperator) => lobpcg(space, op, { k: 2 })],
    ['davidsonWith (recomputeResiduals: false)', (space: GpuVectorSpace, op: GpuOperator) => davidsonWith(space, op, { k: 2, diagonal: op.diagonal!(), recomputeResiduals: false })],
  ] as const) {
    it(`${name}: never converged with λ of the wrong kernel; run again on the verified kernel`, async () => {
      const ctx = await testContext();
      const space = new GpuVectorSpace(ctx);
      const { op, bad, wrong } = await switchedThenWrong(1.1, 1);
      const r = await run(space, op);
      expect(wrong()).toBeGreaterThan(0);
      const want = await lanczos(host, hostOp, { k: r.values.length, checkMultiplicity: false });
      expect(r.converged).toBe(true);
      for (let i = 0; i < r.values.length; i++) expect(Math.abs(r.values[i]! - want.values[i]!)).toBeLessThan(1e-4 * Math.abs(want.values[i]!) + 1e-5);
      expectFellBack(op, bad, r.stats.warnings);
      expect(r.stats.warnings!.join('\n')).toMatch(/run again on the verified kernel/);
      op.dispose();
    });
  }

  it('lanczos with the fault from the middle of the run on: a non-converged result that says why, or the right λ', async () => {
    const ctx = await testContext();
    const space = new GpuVectorSpace(ctx);
    const { op, wrong } = await switchedThenWrong(1.1, 6);
    const r = await lanczos(space, op, { k: 1, checkMultiplicity: false, maxIterations: 150 });
    expect(wrong()).toBeGreaterThan(0);
    const want = await lanczos(host, hostOp, { k: 1, checkMultiplicity: false });
    if (r.converged) expect(Math.abs(r.values[0]! - want.values[0]!)).toBeLessThan(1e-4 * want.values[0]!);
    else expect(['max-iterations', 'breakdown', 'non-finite']).toContain(r.reason);
    op.dispose();
  });
});
