import { afterAll, describe, expect, it } from 'vitest';
import { DimensionMismatchError } from '../src/core/errors';
import { WasmVectorSpace } from '../src/host/index';

/** Deterministic pseudo-random values in [-1, 1) with a wide exponent range. */
function values(n: number, seed: number): Float64Array {
  const v = new Float64Array(n);
  let s = seed >>> 0;
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    v[i] = ((s / 2 ** 32) * 2 - 1) * 2 ** ((s % 13) - 6);
  }
  return v;
}
const bits = (a: Float64Array) => Array.from(new BigUint64Array(a.buffer.slice(a.byteOffset, a.byteOffset + a.byteLength)));

const spaces: WasmVectorSpace[] = [];
function space(threads = 1, small = false): WasmVectorSpace {
  const s = WasmVectorSpace.create({ threads, ...(small ? { parallelMinLength: 1 } : {}) });
  if (!s) throw new Error('WebAssembly SIMD with shared memory is expected in node 20');
  spaces.push(s);
  return s;
}
afterAll(() => {
  for (const s of spaces) s.dispose();
});

describe('WasmVectorSpace.combineMany: several combinations of one basis in one sweep', () => {
  it('each output is bit-identical to combine(coeffs[t], xs, 0, y), for basis sizes and lengths across the row blocks', () => {
    const sp = space();
    // lengths below, at and across the row block (32 768 / k elements rounded to 4), odd tails
    for (const [k, n] of [
      [1, 7],
      [3, 1001],
      [5, 6554],
      [20, 1640],
      [20, 5041],
      [21, 4099],
    ] as const) {
      const xs = Array.from({ length: k }, (_, j) => sp.fromArray(values(n, 11 + j)));
      const coeffs = Array.from({ length: 6 }, (_, t) => Array.from(values(k, 100 + t)));
      const ys = coeffs.map(() => sp.createUninitialized(n));
      for (const y of ys) sp.fill(y, Number.NaN); // every element must be written
      sp.combineMany(coeffs, xs, ys);
      coeffs.forEach((c, t) => {
        const ref = sp.create(n);
        sp.combine(c, xs, 0, ref);
        expect(bits(ys[t]!), `k ${k}, n ${n}, output ${t}`).toEqual(bits(ref));
      });
    }
  });

  it('outputs overlapping the basis, arrays outside the heap and the worker pool take one combine per output (same values)', () => {
    const one = space();
    const two = space(2, true);
    for (const sp of [one, two]) {
      const n = 3000;
      const xs = [0, 1, 2].map((j) => sp.fromArray(values(n, j + 1)));
      const coeffs = [
        [1, 2, 3],
        [0.5, -1, 0.25],
      ];
      const ref = coeffs.map((c) => {
        const r = new Float64Array(n);
        for (let i = 0; i < n; i++) r[i] = ((0 * 0 + c[0]! * xs[0]![i]!) + c[1]! * xs[1]![i]!) + c[2]! * xs[2]![i]!;
        return r;
      });
      const ys = [sp.create(n), new Float64Array(n)]; // the second outside the heap
      sp.combineMany(coeffs, xs, ys);
      expect(bits(ys[0]!)).toEqual(bits(ref[0]!));
      expect(bits(ys[1]!)).toEqual(bits(ref[1]!));
    }
    // an output that is also an input: whatever combine does with that aliasing, combineMany does too
    const sp = one;
    const xs = [sp.fromArray([1, 2, 3]), sp.fromArray([4, 5, 6])];
    const ys = [sp.fromArray([1, 2, 3]), sp.fromArray([4, 5, 6])];
    sp.combineMany([[2, 1]], xs, [xs[1]!]);
    sp.combine([2, 1], ys, 0, ys[1]!);
    expect(Array.from(xs[1]!)).toEqual(Array.from(ys[1]!));
  });

  it('mismatched coefficient rows, outputs or lengths throw DimensionMismatchError', () => {
    const sp = space();
    const xs = [sp.create(4), sp.create(4)];
    expect(() => sp.combineMany([[1, 2]], xs, [sp.create(4), sp.create(4)])).toThrow(DimensionMismatchError);
    expect(() => sp.combineMany([[1]], xs, [sp.create(4)])).toThrow(DimensionMismatchError);
    expect(() => sp.combineMany([[1, 2]], xs, [sp.create(5)])).toThrow(DimensionMismatchError);
    expect(() => sp.combineMany([[1, 2]], [sp.create(4), sp.create(3)], [sp.create(4)])).toThrow(DimensionMismatchError);
  });

  it('multiDot and combine stay right after the memory grows (their tables live in whole-memory views remade at each grow)', () => {
    const sp = space();
    const n = 1000;
    const xs = [0, 1, 2, 3, 4].map((j) => sp.fromArray(values(n, 40 + j)));
    const y = sp.fromArray(values(n, 50));
    const before = sp.multiDot(xs, y).map((s) => s.value);
    const big = sp.create(3_000_000); // 24 MB: the memory grows
    const after = sp.multiDot(xs, y).map((s) => s.value);
    expect(after).toEqual(before);
    const many = Array.from({ length: 40 }, (_, j) => sp.fromArray(values(n, 60 + j))); // a larger table than before
    const d = sp.multiDot(many, y).map((s) => s.value);
    for (let j = 0; j < d.length; j++) expect(d[j]).toBe(sp.dot(many[j]!, y).value);
    const out = sp.create(n);
    sp.combine(Array.from(values(40, 7)), many, 0, out);
    const ref = new Float64Array(n);
    sp.combine(Array.from(values(40, 7)), many.map((v) => Float64Array.from(v)), 0, ref); // the JavaScript kernel
    expect(bits(out)).toEqual(bits(ref));
    sp.release(big);
  });
});
