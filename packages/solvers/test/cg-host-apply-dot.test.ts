import { generators as g, type LinearOperator, type WasmCsrOperator, WasmVectorSpace } from '@gpusparse/formats';
import { afterAll, describe, expect, it } from 'vitest';
import { cg } from '../src/index';

const spaces: WasmVectorSpace[] = [];
afterAll(() => {
  for (const s of spaces) s.dispose();
});

/** The same operator without applyDot: CG takes apply, then the space's dot. */
function plain(op: LinearOperator<Float64Array>): LinearOperator<Float64Array> {
  return { rows: op.rows, cols: op.cols, label: 'plain', apply: (x, y) => op.apply(x, y), applyScaled: (al, x, be, y) => op.applyScaled(al, x, be, y) };
}

describe('host CG with the product and ⟨p, A·p⟩ in one sweep (WasmCsrOperator.applyDot)', () => {
  it.each([1, 2])('the same iterates bit for bit as apply + dot, %i thread(s), and the same counts', async (threads) => {
    const space = WasmVectorSpace.create({ threads, parallelMinLength: 1, parallelMinNnz: 1 })!;
    spaces.push(space);
    const a = g.poisson3d(18); // 5 832 rows: two dot blocks
    const op = space.csrOperator(a);
    let fused = 0;
    const applyDot = op.applyDot.bind(op);
    op.applyDot = (x, y, s) => {
      fused++;
      return applyDot(x, y, s);
    };
    // without the pair product of the step near the exit (tested below): every step takes applyDot
    (op as { applyPairDot?: unknown }).applyPairDot = undefined;
    const b = space.fromArray(Array.from({ length: a.rows }, (_, i) => Math.sin(i + 1)));
    const one = await cg(space, op, b, { rtol: 1e-10 });
    const two = await cg(space, plain(op), b, { rtol: 1e-10 });
    expect(one.converged).toBe(true);
    expect(one.iterations).toBe(two.iterations);
    expect(one.stats.matvecs).toBe(two.stats.matvecs);
    expect(fused).toBe(one.iterations); // one fused product per iteration
    expect(Array.from(one.x)).toEqual(Array.from(two.x));
    expect(one.trueResidual).toBe(two.trueResidual);
  });
});

/** Counts the operator's applyPairDot calls (CG's true-residual step). */
function countPairs(op: WasmCsrOperator): { n: number } {
  const count = { n: 0 };
  const pair = op.applyPairDot.bind(op);
  op.applyPairDot = (x, y, x2, y2, s) => {
    count.n++;
    return pair(x, y, x2, y2, s);
  };
  return count;
}

describe('host CG near its exit: q = A·p and A·x in one sweep, the true residual without a product of its own', () => {
  const problems = [
    ['banded SPD, fast convergence', g.banded(20_000, 4, 4, { seed: 1, spd: true })],
    ['3-D stencil, slow convergence', g.poisson3d(18)],
  ] as const;
  it.each(problems)('%s: the same x bit for bit as apply + dot and its exit product, one sweep of A fewer, a true residual', async (_, a) => {
    for (const threads of [1, 2]) {
      const space = WasmVectorSpace.create({ threads, parallelMinLength: 1, parallelMinNnz: 1 })!;
      spaces.push(space);
      const op = space.csrOperator(a);
      const count = countPairs(op);
      const b = space.fromArray(Array.from({ length: a.rows }, (_, i) => Math.sin(i + 1)));
      const one = await cg(space, op, b, { rtol: 1e-10 });
      const two = await cg(space, plain(op), b, { rtol: 1e-10 });
      const pairs = count.n;
      expect(one.converged && two.converged).toBe(true);
      expect(one.iterations).toBe(two.iterations);
      expect(pairs).toBeGreaterThanOrEqual(1);
      expect(pairs).toBeLessThanOrEqual(3); // predicted near the exit only
      // products: the pair counts two; the plain run's exit check one more than its iterations
      expect(one.stats.matvecs).toBe(one.iterations + pairs);
      expect(two.stats.matvecs).toBe(two.iterations + 1);
      // a pair that fired before the last step replaced r (residual replacement): the bits of later steps differ
      if (pairs === 1) expect(Array.from(one.x)).toEqual(Array.from(two.x));
      // the reported residual is b − A·x of the returned x (up to one rounding of x + α·p)
      const r = space.create(a.rows);
      op.apply(one.x, r);
      space.axpby(1, b, -1, r);
      const direct = space.norm2(r).value;
      expect(Math.abs(one.trueResidual - direct)).toBeLessThanOrEqual(1e-6 * direct);
      expect(Math.abs(one.trueResidual - two.trueResidual)).toBeLessThanOrEqual(1e-6 * two.trueResidual);
      expect(one.trueResidual).toBeLessThanOrEqual(1e-10 * one.bNorm);
    }
  });

  it('a residual whose square leaves the safe range (b ≈ 1e-150: ‖r‖² ≈ 1e-312) takes the exit product, and the answer stays right', async () => {
    const space = WasmVectorSpace.create({ threads: 1 })!;
    spaces.push(space);
    const a = g.banded(5000, 4, 4, { seed: 2, spd: true });
    const op = space.csrOperator(a);
    const count = countPairs(op);
    const b = space.fromArray(Array.from({ length: a.rows }, (_, i) => 1e-150 * Math.cos(i)));
    const res = await cg(space, op, b, { rtol: 1e-8 });
    expect(res.converged).toBe(true);
    const r = space.create(a.rows);
    op.apply(res.x, r);
    space.axpby(1, b, -1, r);
    expect(space.norm2(r).value).toBeLessThanOrEqual(1e-8 * res.bNorm);
    expect(count.n).toBe(1);
    expect(res.stats.matvecs).toBe(res.iterations + 2); // the pair's second product, then the exit's own
  });

  it('a product that goes non-finite in the pair sweep is caught as before (no NaN x labelled converged)', async () => {
    const space = WasmVectorSpace.create({ threads: 1 })!;
    spaces.push(space);
    const a = g.banded(8000, 4, 4, { seed: 3, spd: true });
    const op = space.csrOperator(a);
    const pair = op.applyPairDot.bind(op);
    op.applyPairDot = (x, y, x2, y2, s) => {
      const d = pair(x, y, x2, y2, s);
      y2[17] = Number.NaN; // A·x poisoned: the true residual must see it
      return d;
    };
    const b = space.fromArray(Array.from({ length: a.rows }, (_, i) => Math.cos(i)));
    const res = await cg(space, op, b, { rtol: 1e-8, maxIterations: 60 });
    if (res.converged) {
      const r = space.create(a.rows);
      op.apply(res.x, r);
      space.axpby(1, b, -1, r);
      expect(space.norm2(r).value).toBeLessThanOrEqual(1e-8 * res.bNorm);
    } else expect(res.reason).not.toBe('converged');
    expect(Array.from(res.x).every(Number.isFinite)).toBe(true);
  });
});
