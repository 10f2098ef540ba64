import { generators, WasmVectorSpace } from '@gpusparse/formats';
import { afterAll, describe, expect, it } from 'vitest';
import { ascendingOrder } from '../src/eigen/dense-qr';
import { combineColumns } from '../src/eigen/ortho';
import { lanczos, lobpcg } from '../src/index';

const spaces: WasmVectorSpace[] = [];
function space(): WasmVectorSpace {
  const s = WasmVectorSpace.create({ threads: 1 });
  if (!s) throw new Error('WebAssembly SIMD with shared memory is expected in node 20');
  spaces.push(s);
  return s;
}
afterAll(() => {
  for (const s of spaces) s.dispose();
});

describe('host eigensolvers: Ritz vectors and restarts in one sweep over the basis (WasmVectorSpace.combineMany)', () => {
  it('combineColumns uses combineMany for two or more outputs of one width, and gives the same bits as one combine each', () => {
    const sp = space();
    let calls = 0;
    const many = sp.combineMany.bind(sp);
    sp.combineMany = (c, xs, ys) => {
      calls++;
      many(c, xs, ys);
    };
    const n = 3001;
    const basis = Array.from({ length: 9 }, (_, j) => sp.fromArray(Array.from({ length: n }, (_, i) => Math.sin(0.37 * i * (j + 1)) + 1e-3 * j)));
    const coeffs = Array.from({ length: 5 }, (_, t) => Array.from({ length: 9 }, (_, j) => Math.cos(t + 0.5 * j)));
    const ys = combineColumns(sp, basis, coeffs);
    expect(calls).toBe(1);
    coeffs.forEach((c, t) => {
      const ref = sp.create(n);
      sp.combine(c, basis, 0, ref);
      expect(Array.from(ys[t]!)).toEqual(Array.from(ref));
    });
    // rows of different widths (a prefix of the basis each): one combine per output
    combineColumns(sp, basis, [coeffs[0]!, coeffs[1]!.slice(0, 4)]);
    expect(calls).toBe(1);
  });

  it('lanczos and lobpcg on the wasm space give the same values, products and vectors with and without combineMany', async () => {
    const a = generators.poisson2d(40);
    for (const solve of [
      (s: WasmVectorSpace) => lanczos(s, s.csrOperator(a), { k: 4, tol: 1e-9 }),
      (s: WasmVectorSpace) => lobpcg(s, s.csrOperator(a), { k: 4, tol: 1e-9 }),
    ]) {
      const fused = await solve(space());
      const plain = space();
      Object.defineProperty(plain, 'combineMany', { value: undefined }); // one combine per output, as before it existed
      expect(typeof plain.combineMany).toBe('undefined');
      const per = await solve(plain);
      expect(fused.converged).toBe(true);
      expect(fused.values).toEqual(per.values);
      expect(fused.stats.matvecs).toBe(per.stats.matvecs);
      for (let j = 0; j < 4; j++) expect(Array.from(fused.vectors[j]!)).toEqual(Array.from(per.vectors[j]!));
    }
  });
});

describe('ascendingOrder (the dense eigensolvers sort their few dozen values without Array.from)', () => {
  it('orders values, keeps ties in index order, and terminates with NaN', () => {
    expect(Array.from(ascendingOrder(Float64Array.from([3, 1, 2, 1, -5]), 5))).toEqual([4, 1, 3, 2, 0]);
    expect(Array.from(ascendingOrder(new Float64Array(0), 0))).toEqual([]);
    const withNaN = ascendingOrder(Float64Array.from([2, Number.NaN, 1]), 3);
    expect([...withNaN].sort()).toEqual([0, 1, 2]);
  });
});
