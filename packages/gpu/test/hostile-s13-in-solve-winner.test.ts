/**
 * Session 13: in-solve tuning whose probed first candidate fails verification. The candidates left
 * have no product time until the solve's timestamps are read; the report used to name the next one
 * as its winner with `ms` undefined (typed as a number). Now it names no winner until the solve has
 * timed them, then the fastest with its measured time, and the solve's answer is right.
 */
import { csrSpmv, generators as g } from '@gpusparse/formats';
import { afterAll, describe, expect, it } from 'vitest';
import { cg } from '../../solvers/src/index';
import { type AnySpmvKernel, csrVectorKernel, GpuVectorSpace, InSolveOperator, tunedOperator } from '../src/index';
import { testContext } from './helpers';

afterAll(async () => (await testContext()).dispose());

describe('in-solve tuning, the probed candidate rejected', () => {
  it('no winner without a product time; the solve times the verified ones and converges', async () => {
    const ctx = await testContext();
    if (!ctx.caps.timestampQuery) throw new Error('expected an adapter with timestamp queries (lavapipe has them)');
    const encoded: string[] = [];
    // three copies of csr-vector (one model prediction, the candidates' order decides): the first scales
    // the product by 1.5 (wrong), the two others are right
    const copy = (id: string, scale: number): AnySpmvKernel => ({
      ...csrVectorKernel,
      id,
      encode: (c, h, x, y, sc) => {
        encoded.push(id);
        csrVectorKernel.encode(c, h, x, y, { alpha: scale * (sc?.alpha ?? 1), beta: sc?.beta ?? 0 });
      },
    });
    const ks = [copy('test-wrong', 1.5), copy('test-right-a', 1), copy('test-right-b', 1)];
    const a = g.poisson2d(40);
    const op = await tunedOperator(ctx, a, {
      warn: () => {},
      cache: false,
      budgetMs: 1e6,
      expectedProducts: 1e4,
      maxTimed: 3,
      kernels: ks,
      candidates: ks.map((k) => ({ kernel: k.id, params: { lanes: 8 } })),
      inSolve: true,
    });
    const rep = op.tuning;
    // the first candidate encoded (its probe) is the wrong one, and verification rejected it
    expect(encoded[0]).toBe('test-wrong');
    const wrong = rep.trials.find((t) => t.kernel === 'test-wrong')!;
    expect(wrong.verified).toBe(false);
    expect(wrong.error).toMatch(/verification failed/);
    if (!(op instanceof InSolveOperator)) throw new Error(`expected an InSolveOperator (two candidates verified), got ${op.constructor.name}`);
    // before the solve: no winner, or one with a measured time — never a winner without its ms
    if (rep.winner) expect(Number.isFinite(rep.winner.ms)).toBe(true);
    expect(rep.decision?.note).toMatch(/in-solve: 2 verified candidates/);
    const space = new GpuVectorSpace(ctx);
    const xs = new Float64Array(a.rows).fill(1);
    const b = space.fromArray(csrSpmv(a, xs));
    const r = await cg(space, op, b, { rtol: 1e-5, maxIterations: 2000 });
    expect(r.converged).toBe(true);
    await op.decided;
    // after the solve's timing: the winner is a verified one with its measured time
    expect(['test-right-a', 'test-right-b']).toContain(rep.winner?.kernel);
    expect(rep.winner!.ms).toBeGreaterThan(0);
    const x = await space.toArray(r.x);
    let err = 0;
    for (let i = 0; i < a.rows; i++) err = Math.max(err, Math.abs(x[i]! - 1));
    expect(err).toBeLessThan(1e-2);
    op.dispose();
  });
});
