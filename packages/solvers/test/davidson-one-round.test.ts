import { csrDiagonal, HostOperator, type HostScalar, HostVectorSpace } from '@gpusparse/formats';
import { describe, expect, it } from 'vitest';
import { davidson } from '../src/eigen/davidson';
import { Float32HostSpace, float32CsrOperator } from './eigen-f32-space';
import { ciLike, csrToDense, denseEigenvalues, residualF64 } from './eigen-matrices';

const dot = (x: Float64Array, y: Float64Array): number => x.reduce((s, xi, i) => s + xi * y[i]!, 0);

/** The host float64 space with its multi-dot calls counted (each CGS pass is one per correction). */
class CountingSpace extends HostVectorSpace {
  multiDots = 0;
  override multiDot(xs: readonly Float64Array[], y: Float64Array): HostScalar[] {
    this.multiDots++;
    return super.multiDot(xs, y);
  }
}

describe('davidson: one orthogonalisation round on float64 when the first keeps enough norm', () => {
  const a = ciLike(300, 5);
  const ref = denseEigenvalues(csrToDense(a)).slice(0, 3);

  it('float64: energies to 1e-10, residuals ≤ 1e-8, an orthonormal final basis, and the pinned (fewer) multi-dots', async () => {
    const space = new CountingSpace();
    const r = await davidson(space, HostOperator.fromCsr(a), { k: 3, diagonal: csrDiagonal(a), residualTol: 1e-8 });
    expect(r.reason, r.detail).toBe('converged');
    for (let i = 0; i < 3; i++) {
      expect(Math.abs(r.values[i]! - ref[i]!), `E${i}`).toBeLessThan(1e-10);
      expect(residualF64(a, r.values[i]!, r.vectors[i]!), `residual ${i}`).toBeLessThan(1e-8);
      for (let j = 0; j <= i; j++) expect(Math.abs(dot(r.vectors[i]!, r.vectors[j]!) - (i === j ? 1 : 0))).toBeLessThan(1e-12);
    }
    // both rounds every iteration (before): [34, 136, 435]
    expect([r.iterations, r.stats.readbacks, space.multiDots]).toEqual([34, 104, 258]);
  });

  it('float32: both rounds as before (pinned readbacks)', async () => {
    const r = await davidson(new Float32HostSpace(), float32CsrOperator(a), { k: 3, diagonal: csrDiagonal(a), residualTol: 1e-4, tol: 1e-6 });
    expect(r.reason, r.detail).toBe('converged');
    for (let i = 0; i < 3; i++) expect(Math.abs(r.values[i]! - ref[i]!), `E${i}`).toBeLessThan(1e-5);
    expect([r.iterations, r.stats.readbacks]).toEqual([21, 84]);
  });
});
