import { generators as g, HostOperator, HostVectorSpace, type LinearOperator } from '@gpusparse/formats';
import { describe, expect, it } from 'vitest';
import { cg } from '../src/index';

/** HostVectorSpace counting its vector copies. */
class CountingSpace extends HostVectorSpace {
  copies = 0;
  override copy(src: Float64Array, dst: Float64Array): void {
    this.copies++;
    super.copy(src, dst);
  }
}

/** `op` whose products from number `bad` (1-based) on return NaN in one element. */
function poisoned(op: LinearOperator<Float64Array>, bad: number): LinearOperator<Float64Array> {
  let calls = 0;
  return {
    rows: op.rows,
    cols: op.cols,
    apply(x, y) {
      op.apply(x, y);
      if (++calls >= bad) y[3] = Number.NaN;
    },
    applyScaled: (a, x, b, y) => op.applyScaled(a, x, b, y),
  };
}

describe('short-recurrence driver: one vector copy per improving check', () => {
  const a = g.poisson2d(30);
  const b = Array.from({ length: a.rows }, (_, i) => Math.cos(i));

  it('host CG copies x once per check that improves the best estimate (was twice per check)', async () => {
    const space = new CountingSpace();
    const res = await cg(space, HostOperator.fromCsr(a), space.fromArray(b), { rtol: 1e-10 });
    expect(res.converged).toBe(true);
    // checks = iterations on the host; two copies at the start; one per check, two at a non-improving one
    expect(space.copies).toBeGreaterThanOrEqual(res.iterations);
    expect(space.copies).toBeLessThan(1.5 * res.iterations);
  });

  it('a NaN product rolls x back to the last check, whether that check was the best or not', async () => {
    for (const bad of [6, 17, 40]) {
      const space = new HostVectorSpace();
      const op = HostOperator.fromCsr(a);
      const hurt = await cg(space, poisoned(op, bad), space.fromArray(b), { rtol: 1e-12, maxIterations: 500 });
      // the same solve stopped just before that product: the iterate the rollback must return
      const clean = await cg(space, op, space.fromArray(b), { rtol: 1e-12, maxIterations: bad - 1 });
      expect(hurt.converged).toBe(false);
      expect(hurt.x.every(Number.isFinite)).toBe(true);
      expect(Array.from(hurt.x)).toEqual(Array.from(clean.x));
    }
  });
});
