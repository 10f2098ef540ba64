import { HostOperator, HostVectorSpace } from '@gpusparse/formats';
import { describe, expect, it } from 'vitest';
import { gmres } from '../src/index';
import { f32Operator, Float32HostSpace } from './krylov-f32-space';
import { convectionDiffusion, norm, residual64, rhs } from './krylov-matrices';

/**
 * GMRES with batched Hessenberg reads (checkEvery > 1) reads the restart residual ‖r‖ of a cycle
 * together with the next cycle's first batch: one readback per restart cycle, not two.
 */
describe('gmres: the restart residual travels with the next Hessenberg batch', () => {
  const a = convectionDiffusion(24, 1.5);
  const b = rhs(a.rows);

  for (const [label, makeSpace] of [
    ['float64 host space', () => new HostVectorSpace()],
    ['float32 stand-in', () => new Float32HostSpace()],
  ] as const) {
    it(`${label}: one readback per cycle, the same answer quality as checking every step`, async () => {
      const space = makeSpace();
      const op = label.startsWith('float32') ? f32Operator(a) : HostOperator.fromCsr(a);
      const rtol = label.startsWith('float32') ? 1e-5 : 1e-10;
      const res = await gmres(space, op, space.fromArray(b), { restart: 10, checkEvery: 10, orthogonalization: 'cgs', rtol });
      expect(res.reason, res.detail).toBe('converged');
      const cycles = Math.ceil(res.iterations / 10);
      expect(cycles).toBeGreaterThanOrEqual(6);
      // ‖b‖, the check at iteration 1, one per cycle, and the true residual of the last cycle
      expect(res.stats.readbacks).toBeLessThanOrEqual(cycles + 3);
      expect(residual64(a, res.x as Float64Array, b).r).toBeLessThanOrEqual(rtol * norm(b) * 1.01);
      // every-step checks (the β read at once) take about as many iterations
      const every = await gmres(space, op, space.fromArray(b), { restart: 10, checkEvery: 1, orthogonalization: 'cgs', rtol });
      expect(Math.abs(every.iterations - res.iterations)).toBeLessThanOrEqual(10);
      // a history entry per restart, with the β read late
      const starts = res.history.filter((h) => h.iteration > 0 && h.iteration % 10 === 0);
      expect(starts.length).toBeGreaterThanOrEqual(cycles - 1);
    });
  }

  it('a non-finite restart residual stops with reason non-finite, found at the deferred read', async () => {
    // an operator that returns NaN from the 11th product on: cycle 1 (10 products) is clean, its
    // restart residual (product 11) is NaN and is read only with cycle 2's Hessenberg batch
    const base = HostOperator.fromCsr(a);
    let products = 0;
    const op = {
      rows: a.rows,
      cols: a.cols,
      apply(x: Float64Array, y: Float64Array) {
        products++;
        base.apply(x, y);
        if (products >= 11) y.fill(Number.NaN);
      },
      applyScaled(alpha: number, x: Float64Array, beta: number, y: Float64Array) {
        products++;
        base.applyScaled(alpha, x, beta, y);
        if (products >= 11) y.fill(Number.NaN);
      },
    };
    const space = new HostVectorSpace();
    const res = await gmres(space, op, space.fromArray(b), { restart: 10, checkEvery: 10, orthogonalization: 'cgs', rtol: 1e-12 });
    expect(res.reason).toBe('non-finite');
    expect(res.converged).toBe(false);
    expect(res.iterations).toBe(10);
    expect(res.detail).toMatch(/‖b − A·x‖ = NaN at iteration 10/);
  });
});
