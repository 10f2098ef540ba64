/**
 * Session 7 hardening: a Krylov solve whose b is so small or large that ⟨p, A·p⟩ leaves float64.
 * Host CG with b = A·1 × 1e-200 stopped with "⟨p, A·p⟩ = 0" — read as a singular or indefinite A
 * — and with b × 1e300 with "= Infinity"; the detail now names ‖b‖ and what to do.
 */
import { csrSpmv, generators, HostOperator, HostVectorSpace } from '@gpusparse/formats';
import { describe, expect, it } from 'vitest';
import { cg } from '../src/index';

describe('CG with b at the edges of float64', () => {
  const a = generators.poisson2d(6);
  const b1 = csrSpmv(a, new Float64Array(a.rows).fill(1));
  const space = new HostVectorSpace();
  for (const [scale, reason] of [[1e-200, 'breakdown'], [1e300, 'non-finite']] as const) {
    it(`b = A·1 × ${scale}: ${reason} with ‖b‖ and the advice in the detail`, async () => {
      const r = await cg(space, HostOperator.fromCsr(a), space.fromArray(b1.map((v) => v * scale)));
      expect(r.reason).toBe(reason);
      expect(r.detail).toMatch(/‖b‖ = \d\.\d\de[+-]\d+: products of vectors that size leave float64's range; scale b by a power of two, or use refinedSolve/);
    });
  }
  it('an ordinary system (1-D Laplacian, b of norm √2): no range hint in the detail', async () => {
    const r = await cg(space, HostOperator.fromCsr(generators.laplacian1d(3)), space.fromArray([1, 0, -1]), { maxIterations: 50 });
    expect(r.detail ?? '').not.toMatch(/float64's range/);
  });
});
