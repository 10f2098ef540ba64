import { describe, expect, it } from 'vitest';
import { DimensionMismatchError } from '../src/core/errors';
import type { CsrMatrix } from '../src/core/types';
import * as g from '../src/generators/index';
import { DOT_BLOCK, type WasmVectorSpace } from '../src/host/index';
import { HostVectorSpace } from '../src/operator/host';
import { bits, values, wasmSpaces } from './support/wasm-space';

const space = wasmSpaces();

/** The unfused result: apply, then the space's dot. */
function unfused(s: WasmVectorSpace, a: CsrMatrix, x: Float64Array): { y: Float64Array; d: number } {
  const op = s.csrOperator(a);
  const xs = s.fromArray(x);
  const y = s.create(a.rows);
  op.apply(xs, y);
  return { y: Float64Array.from(y), d: s.dot(xs, y).value };
}

describe('WasmCsrOperator.applyDot: y = A·x and ⟨x, y⟩ in one sweep', () => {
  // sizes around the dot block: one short block, exactly one, one plus a tail of 1, 2, 3, several blocks
  const sizes = [1, 7, 1000, DOT_BLOCK, DOT_BLOCK + 1, DOT_BLOCK + 2, DOT_BLOCK + 3, 3 * DOT_BLOCK + 5, 40_000];
  it.each(sizes)('n = %i: bit-identical to apply then dot, 1 and 2 threads (split even when small)', (n) => {
    const a = { ...g.banded(n, 3, 2, { seed: n }), values: values(g.banded(n, 3, 2, { seed: n }).values.length, 7 + n) } as CsrMatrix;
    const x = values(n, 11 + n);
    const ref = unfused(space(1), a, x);
    for (const s of [space(1), space(2, true)]) {
      const op = s.csrOperator(a);
      const xs = s.fromArray(x);
      const y = s.create(n);
      const d = op.applyDot(xs, y, s);
      expect(d).toBeDefined();
      expect(bits(Float64Array.of(d!.value))).toEqual(bits(Float64Array.of(ref.d)));
      expect(bits(y)).toEqual(bits(ref.y));
    }
  });

  it("a vector made before the memory grew is still the heap's (every op stays on the wasm kernels)", () => {
    const s = space(2, true);
    const x = s.fromArray(values(1000, 1));
    const big = s.create(1 << 20); // grows the memory
    expect(s.heap.owns(x)).toBe(true);
    expect(s.heap.owns(big)).toBe(true);
    expect(s.heap.owns(new Float64Array(new SharedArrayBuffer(8 * 1000)))).toBe(false);
    // views the heap did not make itself (the path behind the fast lookup of its own vectors)
    expect(s.heap.owns(x.subarray(10, 20))).toBe(true);
    expect(s.heap.owns(new Float64Array(s.heap.memory.buffer, x.byteOffset, 4))).toBe(true);
    expect(s.heap.owns(Float64Array.from(x))).toBe(false);
  });

  it('a stencil split over 2 threads in parts of whole blocks gives the same bits', () => {
    const a = g.poisson3d(24); // 13 824 rows: 4 blocks, product parts rounded to block multiples
    const x = values(a.rows, 3);
    const ref = unfused(space(1), a, x);
    const s = space(2, true);
    const op = s.csrOperator(a);
    expect(op.threads).toBe(2);
    const xs = s.fromArray(x);
    const y = s.create(a.rows);
    expect(op.applyDot(xs, y, s)!.value).toBe(ref.d);
    expect(bits(y)).toEqual(bits(ref.y));
  });

  it('declines (undefined, y untouched) where it cannot fuse: another space, a rectangular A, vectors outside the heap or overlapping', () => {
    const s = space(1);
    const a = g.poisson2d(20);
    const op = s.csrOperator(a);
    const x = s.fromArray(values(a.rows, 5));
    const y = s.create(a.rows);
    expect(op.applyDot(x, y, new HostVectorSpace())).toBeUndefined();
    expect(op.applyDot(x, y, space(1))).toBeUndefined();
    expect(op.applyDot(Float64Array.from(x), y, s)).toBeUndefined();
    expect(op.applyDot(x, x, s)).toBeUndefined();
    const other = space(2);
    const foreign = other.fromArray(values(a.rows, 5));
    expect(s.heap.owns(foreign)).toBe(false); // another heap's memory, whatever its SharedArrayBuffer object
    expect(op.applyDot(foreign, y, s)).toBeUndefined();
    expect(y.every((v) => v === 0)).toBe(true);
    const rect = s.csrOperator(g.uniformRandom(30, 40, 3, 1));
    expect(rect.applyDot(s.create(40), s.create(30), s)).toBeUndefined();
    expect(() => op.applyDot(s.create(a.rows + 1), y, s)).toThrow(DimensionMismatchError);
  });
});

describe('WasmVectorSpace.combine with overlapping views', () => {
  it('a y that overlaps an x (views the heap did not allocate) takes the JavaScript combine, as HostVectorSpace', () => {
    const s = space(1);
    const big = s.fromArray(values(3000, 9));
    const x1 = s.fromArray(values(1000, 10));
    const plainBig = Float64Array.from(big);
    const plainX1 = Float64Array.from(x1);
    s.combine([0.5, -2], [big.subarray(500, 1500), x1], 3, big.subarray(0, 1000));
    new HostVectorSpace().combine([0.5, -2], [plainBig.subarray(500, 1500), plainX1], 3, plainBig.subarray(0, 1000));
    expect(bits(big)).toEqual(bits(plainBig));
    // distinct heap vectors: the wasm kernel, bit-identical to HostVectorSpace's combine
    const y = s.fromArray(values(1000, 11));
    const plainY = Float64Array.from(y);
    s.combine([0.25, 1.5], [x1, big.subarray(0, 1000)], 1, y);
    new HostVectorSpace().combine([0.25, 1.5], [plainX1, plainBig.subarray(0, 1000)], 1, plainY);
    expect(bits(y)).toEqual(bits(plainY));
  });
});

describe('WasmVectorSpace.combineNorm: y = β·y + Σ c·x and ‖y‖ in one sweep', () => {
  const cases: [number, number, number][] = [
    [1, 1, 0],
    [1000, 3, -1],
    [DOT_BLOCK, 5, 1],
    [DOT_BLOCK + 3, 4, 0.5],
    [3 * DOT_BLOCK + 1, 7, 0],
    [20_000, 9, -1],
  ];
  it.each(cases)('n = %i, k = %i, β = %d: bit-identical to combine then norm2, 1 and 2 threads', (n, k, beta) => {
    const ref = space(1);
    const xsRef = Array.from({ length: k }, (_, j) => ref.fromArray(values(n, 20 + j)));
    const yRef = ref.fromArray(values(n, 99));
    const coeffs = Array.from({ length: k }, (_, j) => (j % 2 ? -1 : 1) * (0.25 + j / 7));
    ref.combine(coeffs, xsRef, beta, yRef);
    const normRef = ref.norm2(yRef).value;
    for (const s of [space(1), space(2, true)]) {
      const xs = Array.from({ length: k }, (_, j) => s.fromArray(values(n, 20 + j)));
      const y = s.fromArray(values(n, 99));
      const h = s.combineNorm(coeffs, xs, beta, y);
      expect(h.value).toBe(normRef);
      expect(bits(y)).toEqual(bits(yRef));
    }
  });

  it('a sum of squares that overflows takes the scaled pass, as norm2', () => {
    const s = space(1);
    const x = s.fromArray(new Array(5000).fill(1e200));
    const y = s.create(5000);
    const h = s.combineNorm([3], [x], 0, y);
    expect(h.value).toBeCloseTo(3e200 * Math.sqrt(5000), -190);
    expect(h.value).toBe(s.norm2(y).value);
  });
});

const pairSizes = [1, 7, 1000, DOT_BLOCK, DOT_BLOCK + 1, DOT_BLOCK + 3, 3 * DOT_BLOCK + 5, 40_000];

describe('WasmCsrOperator.applyPairDot: y = A·x, y2 = A·x2 and ⟨x, y⟩ in one sweep of A', () => {
  it.each(pairSizes)('n = %i: bit-identical to apply, apply, dot, 1 and 2 threads (split even when small)', (n) => {
    const shape = g.banded(n, 3, 2, { seed: n });
    const a = { ...shape, values: values(shape.values.length, 7 + n) } as CsrMatrix;
    const [x, x2] = [values(n, 11 + n), values(n, 5 + n)];
    const s0 = space(1);
    const op0 = s0.csrOperator(a);
    const [xr, x2r, yr, y2r] = [s0.fromArray(x), s0.fromArray(x2), s0.create(n), s0.create(n)];
    op0.apply(xr, yr);
    op0.apply(x2r, y2r);
    const d0 = s0.dot(xr, yr).value;
    for (const s of [space(1), space(2, true)]) {
      const op = s.csrOperator(a);
      const [xs, x2s, y, y2] = [s.fromArray(x), s.fromArray(x2), s.create(n), s.create(n)];
      const d = op.applyPairDot(xs, y, x2s, y2, s);
      expect(d).toBeDefined();
      expect(bits(Float64Array.of(d!.value))).toEqual(bits(Float64Array.of(d0)));
      expect(bits(y)).toEqual(bits(yr));
      expect(bits(y2)).toEqual(bits(y2r));
    }
  });

  it('rows of very different lengths (power law) over 2 threads give the same bits', () => {
    const a = g.powerLaw(9000, 9000, { alpha: 2.1, minLen: 1, maxLen: 3000, seed: 2 });
    const s = space(2, true);
    const op = s.csrOperator(a);
    const [x, x2] = [s.fromArray(values(a.rows, 1)), s.fromArray(values(a.rows, 2))];
    const [y, y2, yr, y2r] = [s.create(a.rows), s.create(a.rows), s.create(a.rows), s.create(a.rows)];
    const d = op.applyPairDot(x, y, x2, y2, s)!.value;
    op.apply(x, yr);
    op.apply(x2, y2r);
    expect(d).toBe(s.dot(x, yr).value);
    expect(bits(y)).toEqual(bits(yr));
    expect(bits(y2)).toEqual(bits(y2r));
  });

  it('declines (undefined, outputs untouched) where any two vectors overlap or one lies outside the heap', () => {
    const s = space(1);
    const a = g.poisson2d(20);
    const op = s.csrOperator(a);
    const [x, x2, y, y2] = [s.fromArray(values(a.rows, 5)), s.fromArray(values(a.rows, 6)), s.create(a.rows), s.create(a.rows)];
    expect(op.applyPairDot(x, y, x2, y, s)).toBeUndefined();
    expect(op.applyPairDot(x, y, x2, x2, s)).toBeUndefined();
    expect(op.applyPairDot(x, y, x, y2, s)).toBeUndefined();
    expect(op.applyPairDot(x, y, Float64Array.from(x2), y2, s)).toBeUndefined();
    expect(op.applyPairDot(x, y, x2, y2, new HostVectorSpace())).toBeUndefined();
    expect(y.every((v) => v === 0) && y2.every((v) => v === 0)).toBe(true);
  });
});

describe('WasmVectorSpace.cgTrueUpdate: x += α·p, r = (b − r) − α·q and ⟨r, r⟩ in one pass', () => {
  it.each(pairSizes)('n = %i: bit-identical to axpby, axpby, axpby, dot, 1 and 2 threads', (n) => {
    const alpha = 0.37;
    const ref = space(1);
    const [p, q, x, r, b] = [1, 2, 3, 4, 5].map((k) => ref.fromArray(values(n, k + n))) as [Float64Array, Float64Array, Float64Array, Float64Array, Float64Array];
    ref.axpby(alpha, p, 1, x);
    ref.axpby(1, b, -1, r);
    ref.axpby(-alpha, q, 1, r);
    const rr = ref.dot(r, r).value;
    for (const s of [space(1), space(2, true)]) {
      const [ps, qs, xs, rs, bs] = [1, 2, 3, 4, 5].map((k) => s.fromArray(values(n, k + n))) as [Float64Array, Float64Array, Float64Array, Float64Array, Float64Array];
      const got = s.cgTrueUpdate(alpha, ps, qs, xs, rs, bs).value;
      expect(bits(Float64Array.of(got))).toEqual(bits(Float64Array.of(rr)));
      expect(bits(xs)).toEqual(bits(x));
      expect(bits(rs)).toEqual(bits(r));
    }
  });

  it('overlapping vectors or arrays outside the heap take the separate operations (the same values)', () => {
    const s = space(1);
    const n = 500;
    const [p, q, x, r] = [1, 2, 3, 4].map((k) => s.fromArray(values(n, k))) as [Float64Array, Float64Array, Float64Array, Float64Array];
    const b = Float64Array.from(values(n, 5)); // a plain array
    const [x2, r2] = [Float64Array.from(x), Float64Array.from(r)];
    const got = s.cgTrueUpdate(-1.5, p, q, x, r, b).value;
    const h = new HostVectorSpace();
    h.axpby(-1.5, p, 1, x2);
    h.axpby(1, b, -1, r2);
    h.axpby(1.5, q, 1, r2);
    expect(Array.from(x)).toEqual(Array.from(x2));
    expect(Array.from(r)).toEqual(Array.from(r2));
    const want = h.dot(r2, r2).value; // the same terms, summed in another order
    expect(Math.abs(got - want)).toBeLessThanOrEqual(1e-13 * want);
  });
});

describe('WasmVectorSpace.multiDotCopy: multiDot and a copy of y in one pass', () => {
  it.each([7, DOT_BLOCK + 3, 40_000])('n = %i: the same bits as multiDot then copy, 1 and 2 threads; outside the heap the two calls', (n) => {
    const ref = space(1);
    const xs0 = [1, 2, 3, 4, 5].map((k) => ref.fromArray(values(n, k + n)));
    const y0 = ref.fromArray(values(n, 9 + n));
    const want = ref.multiDot([...xs0, y0], y0).map((d) => d.value);
    for (const s of [space(1), space(2, true)]) {
      const xs = [1, 2, 3, 4, 5].map((k) => s.fromArray(values(n, k + n)));
      const y = s.fromArray(values(n, 9 + n));
      const dst = s.create(n);
      const got = s.multiDotCopy([...xs, y], y, dst).map((d) => d.value);
      expect(bits(Float64Array.from(got))).toEqual(bits(Float64Array.from(want)));
      expect(bits(dst)).toEqual(bits(y0));
      const plain = new Float64Array(n);
      expect(s.multiDotCopy(xs, y, plain).map((d) => d.value)).toEqual(want.slice(0, 5));
      expect(bits(plain)).toEqual(bits(y0));
    }
  });
});
