/**
 * Hostile library calls (session 6 hardening probes): all passed before any change; kept as a
 * regression net for the rule "never report garbage as converged". Host float64, a few ms.
 */
import { DimensionMismatchError, generators, HostOperator, HostVectorSpace, InvalidParameterError, type LinearOperator } from '@gpusparse/formats';
import { describe, expect, it } from 'vitest';
import { bicg, bicgstab, cg, davidson, type EigenResult, gmres, lanczos, lobpcg } from '../src/index';

const space = new HostVectorSpace();
const a5 = HostOperator.fromCsr(generators.laplacian1d(5));
const ones = (n: number) => space.fromArray(new Array(n).fill(1));
/** A 2×2 operator from its apply (no storage). */
const op2 = (label: string, apply: (x: Float64Array, y: Float64Array) => void) => ({ rows: 2, cols: 2, label, apply }) as unknown as LinearOperator<Float64Array>;
const krylov = { cg, gmres, bicgstab, bicg } as const;

describe('Krylov solvers on hostile input', () => {
  for (const [name, solve] of Object.entries(krylov)) {
    it(`${name}: wrong b / x0 lengths and bad numbers are typed errors; b = 0 gives x = 0 converged; maxIterations 0 is not converged`, async () => {
      await expect(solve(space, a5, ones(2), {})).rejects.toThrow(DimensionMismatchError);
      await expect(solve(space, a5, ones(5), { x0: ones(1) })).rejects.toThrow(DimensionMismatchError);
      for (const bad of [{ rtol: Number.NaN }, { rtol: -1 }, { atol: Number.POSITIVE_INFINITY }, { maxIterations: 1.5 }]) {
        await expect(solve(space, a5, ones(5), bad)).rejects.toThrow(InvalidParameterError);
      }
      const zero = await solve(space, a5, space.fromArray([0, 0, 0, 0, 0]), { x0: space.fromArray([1, 2, 3, 4, 5]) });
      expect([zero.converged, Array.from(zero.x)]).toEqual([true, [0, 0, 0, 0, 0]]);
      const none = await solve(space, a5, ones(5), { maxIterations: 0 });
      expect([none.converged, none.reason]).toEqual([false, 'max-iterations']);
      const nan = await solve(space, a5, space.fromArray([1, Number.NaN, 1, 1, 1]), {});
      expect([nan.converged, nan.reason]).toEqual([false, 'non-finite']);
    });
  }
  it('CG on a singular (zero) and an indefinite operator reports breakdown, not convergence', async () => {
    const zero = await cg(space, op2('zero', (_x, y) => y.fill(0)), ones(2), {});
    const indefinite = await cg(space, op2('diag(1,-1)', (x, y) => { y[0] = x[0]!; y[1] = -x[1]!; }), ones(2), {});
    for (const r of [zero, indefinite]) expect([r.converged, r.reason]).toEqual([false, 'breakdown']);
  });
  it('an operator that returns NaN stops every solver as non-finite', async () => {
    const nanOp = op2('nan', (x, y) => { y[0] = Number.NaN; y[1] = x[1]!; });
    for (const solve of [cg, gmres, bicgstab]) expect((await solve(space, nanOp, ones(2), {})).reason).toBe('non-finite');
  });
});

describe('eigensolvers on hostile input', () => {
  const diagonal = new Float64Array(5).fill(2);
  type Eig = (s: HostVectorSpace, op: LinearOperator<Float64Array>, o: { k: number; tol?: number; diagonal: Float64Array }) => Promise<EigenResult<Float64Array>>;
  for (const [name, eig] of Object.entries({ lanczos, davidson, lobpcg } as Record<string, Eig>)) {
    it(`${name}: k outside 1..n, tol ≤ 0 or NaN and a non-square operator are typed errors; a NaN operator is not converged`, async () => {
      for (const k of [0, -1, 1.5, 6, Number.NaN]) await expect(eig(space, a5, { k, diagonal })).rejects.toThrow(InvalidParameterError);
      for (const tol of [0, -1, Number.NaN]) await expect(eig(space, a5, { k: 1, tol, diagonal })).rejects.toThrow(InvalidParameterError);
      const rect = { rows: 2, cols: 3, label: 'rect', apply() {} } as unknown as LinearOperator<Float64Array>;
      await expect(eig(space, rect, { k: 1, diagonal: new Float64Array(2) })).rejects.toThrow(DimensionMismatchError);
      const r = await eig(space, op2('nan', (x, y) => { y[0] = Number.NaN; y[1] = x[1]!; }), { k: 1, diagonal: new Float64Array([1, 1]) });
      expect([r.converged, r.reason]).toEqual([false, 'non-finite']);
      const all = await eig(space, a5, { k: 5, diagonal });
      expect(all.converged).toBe(true); // k = n is allowed: the whole spectrum of the 1-D Laplacian
      expect(Array.from(all.values)[0]).toBeCloseTo(2 - Math.sqrt(3), 10);
    });
  }
});
