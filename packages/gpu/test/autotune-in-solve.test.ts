/**
 * In-solve tuning (issue 16): the first products of a CG solve run the verified short-listed
 * kernels in turn, timed by GPU timestamps, then the operator switches to the fastest. The
 * solve gives the same answer as with the winner fixed from the start (to float32 rounding).
 */
import { generators as g } from '@gpusparse/formats';
import { afterAll, describe, expect, it } from 'vitest';
import { cg } from '../../solvers/src/index';
import { gpuOperatorFromCsr, GpuVectorSpace, InSolveOperator, tunedOperator } from '../src/index';
import { testContext } from './helpers';

afterAll(async () => (await testContext()).dispose());

const CANDIDATES = ['csr-scalar', 'csr-vector', 'ell', 'sliced-ell'];

describe('in-solve tuning', () => {
  it('CG with in-solve tuning converges to the same x as with the winner fixed, and the operator switches to the fastest', async () => {
    const ctx = await testContext();
    const a = g.poisson2d(32);
    const space = new GpuVectorSpace(ctx);
    const ones = new Float64Array(a.rows).fill(1);
    const op = await tunedOperator(ctx, a, { warn: () => {}, cache: false, inSolve: true, candidates: CANDIDATES, maxTimed: 4, budgetMs: 1e6, expectedProducts: 1e4 });
    expect(op).toBeInstanceOf(InSolveOperator);
    const ins = op as unknown as InSolveOperator;
    expect(op.tuning.decision?.note).toMatch(/in-solve: \d verified candidates will run/);
    const r1 = await cg(space, op, space.fromArray(ones), { rtol: 1e-4 });
    await ins.decided;
    const rep = op.tuning;
    expect(rep.decision?.note).toMatch(/in-solve: \d verified candidates ran \d+ products of the solve/);
    const cands = rep.trials.filter((t) => t.reason === 'timed in the solve');
    expect(cands.length).toBeGreaterThanOrEqual(2);
    for (const t of cands) expect(t.samples!.length).toBeGreaterThanOrEqual(2);
    const fastest = Math.min(...cands.map((t) => t.ms!));
    expect(rep.winner!.ms).toBe(fastest);
    expect(ins.activeLabel).toMatch(new RegExp(`^${rep.winner!.kernel}\\(`));
    const fixed = gpuOperatorFromCsr(ctx, a, { kernel: rep.winner!.kernel, params: { ...rep.winner!.params } });
    const r2 = await cg(space, fixed, space.fromArray(ones), { rtol: 1e-4 });
    expect(r1.reason).toBe('converged');
    expect(r2.reason).toBe('converged');
    expect(Math.abs(r1.iterations - r2.iterations)).toBeLessThanOrEqual(2);
    const x1 = await space.toArray(r1.x);
    const x2 = await space.toArray(r2.x);
    let d = 0;
    let n = 0;
    for (let i = 0; i < a.rows; i++) {
      d = Math.max(d, Math.abs(x1[i]! - x2[i]!));
      n = Math.max(n, Math.abs(x2[i]!));
    }
    expect(d / n).toBeLessThan(1e-4);
    op.dispose();
    fixed.dispose();
  });

  it('without inSolve (the default) tunedOperator times before the solve', async () => {
    const ctx = await testContext();
    const op = await tunedOperator(ctx, g.poisson2d(20), { warn: () => {}, cache: false, candidates: CANDIDATES, budgetMs: 1e6 });
    expect(op).not.toBeInstanceOf(InSolveOperator);
    op.dispose();
  });
});
