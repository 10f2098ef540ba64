import { generators, HostOperator, HostVectorSpace, InvalidParameterError } from '@gpusparse/formats';
import { describe, expect, it } from 'vitest';
import { davidson, davidsonWith, lanczos, lobpcg } from '../src/index';

// Laplacian 1-D of n = 40: eigenvalues 2 − 2cos(jπ/(n+1)), known in closed form.
const n = 40;
const exact = Array.from({ length: 3 }, (_, j) => 2 - 2 * Math.cos(((j + 1) * Math.PI) / (n + 1)));
const a = generators.laplacian1d(n);

describe('solver argument order: space first, operator first still accepted (deprecated)', () => {
  const cases = [
    ['lanczos', (s: HostVectorSpace, o: HostOperator) => lanczos(s, o, { k: 3, which: 'smallest', tol: 1e-10 }), (s: HostVectorSpace, o: HostOperator) => lanczos(o, s, { k: 3, which: 'smallest', tol: 1e-10 })],
    ['davidson', (s: HostVectorSpace, o: HostOperator) => davidson(s, o, { k: 3, diagonal: o.diagonal!(), tol: 1e-10 }), (s: HostVectorSpace, o: HostOperator) => davidson(o, s, { k: 3, diagonal: o.diagonal!(), tol: 1e-10 })],
    ['davidsonWith', (s: HostVectorSpace, o: HostOperator) => davidsonWith(s, o, { k: 3, diagonal: o.diagonal!(), tol: 1e-10 }), (s: HostVectorSpace, o: HostOperator) => davidsonWith(o, s, { k: 3, diagonal: o.diagonal!(), tol: 1e-10 })],
    ['lobpcg', (s: HostVectorSpace, o: HostOperator) => lobpcg(s, o, { k: 3, tol: 1e-8, maxIterations: 2000 }), (s: HostVectorSpace, o: HostOperator) => lobpcg(o, s, { k: 3, tol: 1e-8, maxIterations: 2000 })],
  ] as const;
  for (const [name, spaceFirst, opFirst] of cases) {
    it(`${name}: both orders give the exact eigenvalues, the same in either order`, async () => {
      const space = new HostVectorSpace();
      const op = HostOperator.fromCsr(a);
      const r1 = await spaceFirst(space, op);
      const r2 = await opFirst(space, op);
      expect(r1.converged).toBe(true);
      for (let j = 0; j < 3; j++) expect(r1.values[j]).toBeCloseTo(exact[j]!, 7);
      expect(r2.values).toEqual(r1.values);
    });
  }

  it('two operators (no space) are refused, naming the solver and what came', async () => {
    const op = HostOperator.fromCsr(a);
    const bad = lanczos(op as unknown as HostVectorSpace, op, { k: 2 });
    await expect(bad).rejects.toBeInstanceOf(InvalidParameterError);
    await expect(lanczos(op as unknown as HostVectorSpace, op, { k: 2 })).rejects.toThrow(/lanczos\(space, op, …\).*a LinearOperator and a LinearOperator/);
  });
});
