/**
 * Session 9 hardening: GMRES with a restart length beyond the order of A. `restart: 1e12` (or
 * `gpusparse solve --method gmres --restart 999999999999`) failed with "RangeError: Invalid typed
 * array length" from the Givens arrays sized by the request; a Krylov space of an n×n matrix has
 * at most n dimensions, so the cycle is capped at n (as SciPy does) and the solve runs.
 */
import { generators, HostOperator, HostVectorSpace } from '@gpusparse/formats';
import { describe, expect, it } from 'vitest';
import { gmres } from '../src/index';

describe('gmres restart longer than the matrix', () => {
  const space = new HostVectorSpace();
  const a = HostOperator.fromCsr(generators.laplacian1d(20));
  const b = new Float64Array(20).fill(1);
  it('restart 1e12 and 2^31: converged as restart n = 20, method says gmres(20)', async () => {
    const ref = await gmres(space, a, b, { restart: 20, rtol: 1e-10 });
    for (const restart of [1e12, 2 ** 31, 21]) {
      const r = await gmres(space, a, b, { restart, rtol: 1e-10 });
      expect([r.converged, r.method, r.iterations]).toEqual([true, 'gmres(20)', ref.iterations]);
    }
  });
  it('a restart below n is kept; 0 and 2.5 are still refused', async () => {
    expect((await gmres(space, a, b, { restart: 5 })).method).toBe('gmres(5)');
    for (const restart of [0, 2.5]) await expect(gmres(space, a, b, { restart })).rejects.toThrow(/gmres restart: expected an integer ≥ 1/);
  });
});
