/**
 * Hostile library calls, second sweep (session 6): `maxIterations: 0` means no iteration for
 * every eigensolver, as for cg/gmres/lanczos (davidson and lobpcg ran one before). Host float64.
 */
import { generators, HostOperator, HostVectorSpace } from '@gpusparse/formats';
import { describe, expect, it } from 'vitest';
import { davidson, lanczos, lobpcg } from '../src/index';

const space = new HostVectorSpace();
const n = 30;
const a = HostOperator.fromCsr(generators.laplacian1d(n));

describe('eigensolvers with maxIterations 0', () => {
  it('lanczos, davidson, lobpcg: 0 iterations, reason max-iterations, not converged, k start vectors, no Ritz values', async () => {
    const diagonal = new Float64Array(n).fill(2);
    for (const [name, solve] of Object.entries({ lanczos, davidson, lobpcg })) {
      const r = await (solve as typeof davidson)(space, a, { k: 2, maxIterations: 0, diagonal });
      expect([name, r.converged, r.reason, r.iterations, r.vectors.length]).toEqual([name, false, 'max-iterations', 0, 2]);
      expect(r.values.every(Number.isNaN)).toBe(true);
    }
  });
  it('an exact eigenvector as the start is still not "converged" without an iteration (davidson, lobpcg)', async () => {
    // laplacian1d(n): eigenvectors sin(j·π·i/(n+1)); give the two lowest
    const v = (j: number) => space.fromArray(Array.from({ length: n }, (_, i) => Math.sin((j * Math.PI * (i + 1)) / (n + 1))));
    const diagonal = new Float64Array(n).fill(2);
    for (const solve of [davidson, lobpcg]) {
      const r = await (solve as typeof davidson)(space, a, { k: 2, maxIterations: 0, diagonal, initialVectors: [v(1), v(2)] });
      expect([r.converged, r.reason, r.iterations]).toEqual([false, 'max-iterations', 0]);
      // and with one iteration they converge at once (the start was right)
      const one = await (solve as typeof davidson)(space, a, { k: 2, maxIterations: 1, diagonal, initialVectors: [v(1), v(2)] });
      expect(one.iterations).toBe(1);
    }
  });
});
