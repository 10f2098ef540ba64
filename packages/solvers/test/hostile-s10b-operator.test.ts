/**
 * Session 10 hardening: a caller's LinearOperator whose product is an `async` function (it
 * type-checks: a Promise-returning function is assignable to one returning void). Its y is
 * written after the solver read it: lanczos reported λ = 0 "converged" for the 1-D Laplacian of
 * order 4 (smallest 0.382), davidson 'breakdown', cg 'non-finite'. Now every solver refuses it
 * before the first product, naming the method. Also: rows given as a string ('4') came out as
 * "expected length 4, got 4".
 */
import { HostVectorSpace, InvalidParameterError, type LinearOperator } from '@gpusparse/formats';
import { describe, expect, it } from 'vitest';
import { bicg, bicgstab, cg, davidson, gmres, lanczos, lobpcg } from '../src/index';

const space = new HostVectorSpace();
const n = 4;
/** y = L·x, L the 1-D Laplacian tridiag(−1, 2, −1) of order n (λ_min = 2 − 2cos(π/5) ≈ 0.382). */
function lap(x: Float64Array, y: Float64Array): void {
  for (let i = 0; i < n; i++) y[i] = 2 * x[i]! - (i > 0 ? x[i - 1]! : 0) - (i < n - 1 ? x[i + 1]! : 0);
}
function scaled(a: number, x: Float64Array, b: number, y: Float64Array): void {
  const t = new Float64Array(n);
  lap(x, t);
  for (let i = 0; i < n; i++) y[i] = a * t[i]! + b * y[i]!;
}
const lambdaMin = 2 - 2 * Math.cos(Math.PI / (n + 1));
const syncOp = { rows: n, cols: n, label: 'lap4', apply: lap, applyScaled: scaled, applyTranspose: lap } as LinearOperator<Float64Array>;
const variants: Record<string, LinearOperator<Float64Array>> = {
  'async apply': { ...syncOp, async apply(x: Float64Array, y: Float64Array) { await null; lap(x, y); } },
  'async applyScaled': { ...syncOp, async applyScaled(a: number, x: Float64Array, b: number, y: Float64Array) { await null; scaled(a, x, b, y); } },
  'async applyTranspose': { ...syncOp, async applyTranspose(x: Float64Array, y: Float64Array) { await null; lap(x, y); } },
};
const b = () => space.fromArray([1, 0, 0, 1]);
const solvers = {
  cg: (op: LinearOperator<Float64Array>) => cg(space, op, b(), { rtol: 1e-10 }),
  gmres: (op: LinearOperator<Float64Array>) => gmres(space, op, b(), { rtol: 1e-10 }),
  bicgstab: (op: LinearOperator<Float64Array>) => bicgstab(space, op, b(), { rtol: 1e-10 }),
  bicg: (op: LinearOperator<Float64Array>) => bicg(space, op, b(), { rtol: 1e-10 }),
  lanczos: (op: LinearOperator<Float64Array>) => lanczos(space, op, { k: 1 }),
  davidson: (op: LinearOperator<Float64Array>) => davidson(space, op, { k: 1, diagonal: new Float64Array(n).fill(2) }),
  lobpcg: (op: LinearOperator<Float64Array>) => lobpcg(space, op, { k: 1 }),
};

describe('a LinearOperator with an async product', () => {
  for (const [name, run] of Object.entries(solvers)) {
    it(`${name}: async apply / applyScaled / applyTranspose are InvalidParameterError naming the product (lanczos returned λ = 0, converged)`, async () => {
      for (const [what, op] of Object.entries(variants)) {
        const key = what.split(' ')[1]!;
        await expect(run(op), what).rejects.toThrow(InvalidParameterError);
        await expect(run(op), what).rejects.toThrow(new RegExp(`operator ${key}: expected a synchronous product.*got an async function`));
      }
    });
  }
  it('a preconditioner with an async apply is refused too', async () => {
    const m = { ...syncOp, label: 'M', async apply(x: Float64Array, y: Float64Array) { await null; y.set(x); } } as LinearOperator<Float64Array>;
    await expect(cg(space, syncOp, b(), { preconditioner: m })).rejects.toThrow(/cg preconditioner operator apply: expected a synchronous product/);
  });
  it('the same operator with synchronous products solves: x = L⁻¹b, λ_min ≈ 0.382', async () => {
    for (const [name, run] of Object.entries(solvers)) {
      const r = (await run(syncOp)) as { converged: boolean; x?: Float64Array; values?: number[] };
      expect(r.converged, name).toBe(true);
      if (r.x) {
        for (const v of r.x) expect(v, name).toBeCloseTo(1, 8); // L·1 = [1, 0, 0, 1]
      } else expect(r.values![0]!, name).toBeCloseTo(lambdaMin, 8);
    }
  });
});

describe('operator sizes that are not numbers', () => {
  it("rows / cols '4' (strings) name the field (was \"expected length 4, got 4\"); −1 and 2.5 too", async () => {
    for (const bad of [{ rows: '4' }, { cols: '4' }, { rows: -1, cols: -1 }, { rows: 2.5, cols: 2.5 }]) {
      const op = { ...syncOp, ...bad } as unknown as LinearOperator<Float64Array>;
      const field = 'rows' in bad ? 'rows' : 'cols';
      await expect(cg(space, op, b()), JSON.stringify(bad)).rejects.toThrow(new RegExp(`parameter cg operator ${field}: expected an integer ≥ 0`));
      await expect(lanczos(space, op, { k: 1 }), JSON.stringify(bad)).rejects.toThrow(InvalidParameterError);
    }
  });
});
