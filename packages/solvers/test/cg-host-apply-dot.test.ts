import { generators as g, type LinearOperator, WasmVectorSpace } from '@gpusparse/formats';
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
