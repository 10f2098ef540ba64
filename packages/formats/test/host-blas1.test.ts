/**
 * HostVectorSpace BLAS-1: the chunked four-vector combine and multiDot against straightforward
 * float64 loops, on lengths around the chunk (4096) and unroll (2, 4) boundaries; dot/multiDot
 * bit-identity; norm2's fast path and its scaled fallback.
 */
import { describe, expect, it } from 'vitest';
import { DimensionMismatchError } from '../src/core/errors';
import { BLAS1_CHUNK, combineF64, dotF64, multiDotF64, norm2F64 } from '../src/operator/blas1-host';
import { HostVectorSpace } from '../src/operator/host';

const sp = new HostVectorSpace();
const U = 2 ** -53;

/** Seeded xorshift32 values in [−1, 1), with a spread of magnitudes so rounding matters. */
function randomVector(n: number, seed: number): Float64Array {
  const v = new Float64Array(n);
  let s = seed >>> 0 || 1;
  const next = () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 2 ** 32;
  };
  for (let i = 0; i < n; i++) v[i] = (2 * next() - 1) * 2 ** Math.floor(8 * next() - 4);
  return v;
}

/** The straightforward form: y = β·y (β = 0: zero), then one y += cⱼ·xⱼ pass per vector. */
function combineReference(c: readonly number[], xs: readonly Float64Array[], beta: number, y0: Float64Array): Float64Array {
  const y = y0.slice();
  for (let i = 0; i < y.length; i++) y[i] = beta === 0 ? 0 : beta * y[i]!;
  for (let j = 0; j < xs.length; j++) for (let i = 0; i < y.length; i++) y[i] = y[i]! + c[j]! * xs[j]![i]!;
  return y;
}

/** One-accumulator dot and Σ|xᵢyᵢ| (for the error bound n·u·Σ|xᵢyᵢ| of each summation order). */
function dotReference(x: Float64Array, y: Float64Array): { value: number; abs: number } {
  let value = 0;
  let abs = 0;
  for (let i = 0; i < x.length; i++) {
    value += x[i]! * y[i]!;
    abs += Math.abs(x[i]! * y[i]!);
  }
  return { value, abs };
}

function firstDifference(got: Float64Array, want: Float64Array): string {
  for (let i = 0; i < want.length; i++) {
    if (!Object.is(got[i], want[i])) return `index ${i}: got ${got[i]}, expected ${want[i]}`;
  }
  return 'none';
}

const LENGTHS = [0, 1, 3, 4, 4097, 2 * BLAS1_CHUNK + 1, 100_003];

describe('HostVectorSpace combine (chunked, four vectors at a time)', () => {
  for (const n of LENGTHS) {
    it(`n = ${n}: bit-identical to scale-then-axpy for k = 0..13, β ∈ {0, 1, −0.5}`, () => {
      const xs = Array.from({ length: 13 }, (_, j) => randomVector(n, 101 + 7 * j + n));
      const y0 = randomVector(n, 3 + n);
      for (const beta of [0, 1, -0.5]) {
        for (let k = 0; k <= 13; k++) {
          const c = Array.from({ length: k }, (_, j) => (j % 3 === 1 ? -1 : 1) * (0.3 + 0.17 * j));
          const want = combineReference(c, xs.slice(0, k), beta, y0);
          const got = y0.slice();
          sp.combine(c, xs.slice(0, k), beta, got);
          expect(firstDifference(got, want), `β = ${beta}, k = ${k}`).toBe('none');
          // boxed scalars are accepted and give the same bits
          const boxed = y0.slice();
          sp.combine(
            c.map((v) => sp.scalar(v)),
            xs.slice(0, k),
            sp.scalar(beta),
            boxed,
          );
          expect(firstDifference(boxed, want), `boxed β = ${beta}, k = ${k}`).toBe('none');
        }
      }
    });
  }

  it('agrees with an exact-order-free reference to rounding (k = 12, β = −0.5, n = 100 003)', () => {
    const n = 100_003;
    const xs = Array.from({ length: 12 }, (_, j) => randomVector(n, 900 + j));
    const y0 = randomVector(n, 77);
    const c = Array.from({ length: 12 }, (_, j) => 0.1 * (j - 5.5));
    const got = y0.slice();
    sp.combine(c, xs, -0.5, got);
    for (let i = 0; i < n; i++) {
      // sum in reverse order: a different rounding path; bound 2·(k+1)·u·Σ|terms|
      let r = 0;
      let a = 0;
      for (let j = 11; j >= 0; j--) {
        r += c[j]! * xs[j]![i]!;
        a += Math.abs(c[j]! * xs[j]![i]!);
      }
      r += -0.5 * y0[i]!;
      a += Math.abs(0.5 * y0[i]!);
      expect(Math.abs(got[i]! - r)).toBeLessThanOrEqual(2 * 13 * U * a);
    }
  });

  it('β = 0 ignores NaN and ∞ already in y', () => {
    const n = 5000;
    const x = randomVector(n, 5);
    const y = new Float64Array(n).fill(Number.NaN);
    y[4096] = Number.POSITIVE_INFINITY;
    sp.combine([2], [x], 0, y);
    for (let i = 0; i < n; i++) expect(y[i]).toBe(2 * x[i]!);
    const z = new Float64Array(3).fill(Number.NaN);
    sp.combine([], [], 0, z);
    expect(Array.from(z)).toEqual([0, 0, 0]);
  });

  it('y among the xs (aliasing) keeps the sequential semantics', () => {
    for (const n of [3, 4097]) {
      const a = randomVector(n, 11);
      const b = randomVector(n, 12);
      const y0 = randomVector(n, 13);
      for (const beta of [0, 1, -0.5]) {
        const y = y0.slice();
        // the sequential form reads the running y (scaled, then updated) where xs[1] is y
        const seq = y0.slice();
        for (let i = 0; i < n; i++) seq[i] = beta === 0 ? 0 : beta * seq[i]!;
        for (let i = 0; i < n; i++) seq[i] = seq[i]! + 0.5 * a[i]!;
        for (let i = 0; i < n; i++) seq[i] = seq[i]! + -2 * seq[i]!;
        for (let i = 0; i < n; i++) seq[i] = seq[i]! + 0.25 * b[i]!;
        sp.combine([0.5, -2, 0.25], [a, y, b], beta, y);
        expect(firstDifference(y, seq), `n = ${n}, β = ${beta}`).toBe('none');
      }
      // a view overlapping y with an offset also takes the sequential path
      const buf = randomVector(2 * n, 14);
      const yv = buf.subarray(0, n);
      const xv = buf.subarray(1, n + 1);
      const seq = buf.slice();
      for (let i = 0; i < n; i++) seq[i] = seq[i]! + 3 * seq[i + 1]!;
      combineF64([3], [xv], 1, yv);
      expect(firstDifference(buf, seq)).toBe('none');
    }
  });

  it('names the offending vector on a length or count mismatch', () => {
    const y = new Float64Array(4);
    expect(() => sp.combine([1, 1], [new Float64Array(4), new Float64Array(5)], 1, y)).toThrow(DimensionMismatchError);
    expect(() => sp.combine([1, 1], [new Float64Array(4), new Float64Array(5)], 1, y)).toThrow(
      'combine xs[1]: expected length 4, got 5',
    );
    expect(() => sp.combine([1], [new Float64Array(4), new Float64Array(4)], 1, y)).toThrow('combine coeffs');
  });
});

describe('HostVectorSpace multiDot (chunked, four vectors at a time) and dot', () => {
  for (const n of LENGTHS) {
    it(`n = ${n}: entry j bit-identical to dot(xs[j], y), within n·u·Σ|xy| of a plain loop, k = 0..13`, () => {
      const xs = Array.from({ length: 13 }, (_, j) => randomVector(n, 501 + 3 * j + n));
      const y = randomVector(n, 9 + n);
      for (let k = 0; k <= 13; k++) {
        const got = sp.multiDot(xs.slice(0, k), y);
        expect(got.length).toBe(k);
        for (let j = 0; j < k; j++) {
          const d = sp.dot(xs[j]!, y).value;
          expect(Object.is(got[j]!.value, d), `k = ${k}, j = ${j}: multiDot ${got[j]!.value} vs dot ${d}`).toBe(true);
          const ref = dotReference(xs[j]!, y);
          expect(Math.abs(d - ref.value)).toBeLessThanOrEqual(2 * Math.max(n, 1) * U * ref.abs);
        }
      }
      if (n > 0) {
        const x = xs[0]!;
        expect(Object.is(sp.multiDot([x], y)[0]!.value, sp.dot(x, y).value)).toBe(true);
        expect(Object.is(multiDotF64([x], y)[0], dotF64(x, y))).toBe(true);
      }
    });
  }

  it('multiDot with y among the xs equals the dots', () => {
    const y = randomVector(9001, 1);
    const x = randomVector(9001, 2);
    const md = sp.multiDot([y, x, y], y).map((s) => s.value);
    expect(md).toEqual([sp.dot(y, y).value, sp.dot(x, y).value, sp.dot(y, y).value]);
  });

  it('multiDot names the offending vector on a length mismatch', () => {
    expect(() => sp.multiDot([new Float64Array(3), new Float64Array(2)], new Float64Array(3))).toThrow(
      'multiDot xs[1]: expected length 3, got 2',
    );
  });
});

describe('HostVectorSpace norm2', () => {
  it('matches √Σx² to rounding on the fast path', () => {
    for (const n of LENGTHS) {
      const x = randomVector(n, 21 + n);
      let ss = 0;
      for (let i = 0; i < n; i++) ss += x[i]! * x[i]!;
      const got = sp.norm2(x).value;
      expect(Math.abs(got - Math.sqrt(ss))).toBeLessThanOrEqual((Math.max(n, 1) + 2) * U * Math.sqrt(ss));
    }
  });

  it('falls back to the scaled recurrence for huge, tiny, ∞ and NaN entries', () => {
    expect(norm2F64(Float64Array.of(3e200, 4e200))).toBeCloseTo(5e200, -186);
    expect(Math.abs(norm2F64(Float64Array.of(3e200, 4e200)) / 5e200 - 1)).toBeLessThan(4 * U);
    expect(Math.abs(norm2F64(Float64Array.of(3e-200, 4e-200)) / 5e-200 - 1)).toBeLessThan(4 * U);
    expect(Math.abs(norm2F64(Float64Array.of(0, 3e-320, 0, 4e-320)) / 5e-320 - 1)).toBeLessThan(1e-3); // subnormals
    expect(norm2F64(Float64Array.of(1, Number.NEGATIVE_INFINITY, 2))).toBe(Number.POSITIVE_INFINITY);
    expect(norm2F64(Float64Array.of(1, Number.NaN, 1e300))).toBeNaN();
    expect(norm2F64(Float64Array.of(Number.POSITIVE_INFINITY, Number.NaN))).toBeNaN();
    expect(norm2F64(new Float64Array(0))).toBe(0);
    expect(norm2F64(new Float64Array(7))).toBe(0);
    expect(sp.norm2(sp.fromArray([3, 4])).value).toBe(5);
    // one huge entry among ordinary ones: √(1e300² + …) without overflow
    const x = randomVector(4097, 8);
    x[4000] = 1e300;
    expect(Math.abs(norm2F64(x) / 1e300 - 1)).toBeLessThan(4 * U);
  });
});
