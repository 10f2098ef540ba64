import { describe, expect, it } from 'vitest';
import { DimensionMismatchError } from '../src/core/errors';
import type { CsrMatrix } from '../src/core/types';
import { csrFromTriplets, csrSpmv } from '../src/csr/csr';
import { powerLaw, rng } from '../src/generators/index';

/** Plain sequential float64 reference y_i = Σ_k a_ik x_k, plus Σ|a_ik x_k| for the tolerance. */
function reference(a: CsrMatrix, x: Float64Array): { y: Float64Array; abs: Float64Array } {
  const y = new Float64Array(a.rows);
  const abs = new Float64Array(a.rows);
  for (let i = 0; i < a.rows; i++) {
    for (let k = a.rowPtr[i]!; k < a.rowPtr[i + 1]!; k++) {
      y[i]! += a.values[k]! * x[a.colIdx[k]!]!;
      abs[i]! += Math.abs(a.values[k]! * x[a.colIdx[k]!]!);
    }
  }
  return { y, abs };
}

function expectClose(a: CsrMatrix, x: Float64Array, y: Float64Array): void {
  const ref = reference(a, x);
  for (let i = 0; i < a.rows; i++) {
    const len = a.rowPtr[i + 1]! - a.rowPtr[i]!;
    // |y − y_ref| ≤ 2·len·ε·Σ|a_ij x_j| (both sums are float64, in different orders)
    expect(Math.abs(y[i]! - ref.y[i]!)).toBeLessThanOrEqual(2 * len * Number.EPSILON * ref.abs[i]!);
  }
}

describe('csrSpmv (unrolled host kernel) against a sequential float64 reference', () => {
  it('every row length 0…13 (all unroll tails), exact on integers', () => {
    const ri: number[] = [];
    const ci: number[] = [];
    const v: number[] = [];
    for (let i = 0; i < 14; i++) {
      for (let j = 0; j < i; j++) {
        ri.push(i);
        ci.push((j * 3) % 20);
        v.push(j + 1);
      }
    }
    const a = csrFromTriplets(14, 20, ri, ci, v);
    const x = Float64Array.from({ length: 20 }, (_, j) => j - 5);
    const y = csrSpmv(a, x);
    expect(Array.from(y)).toEqual(Array.from(reference(a, x).y));
  });
  it('random power-law matrices, into a given y and a fresh one', () => {
    for (const seed of [1, 2, 3]) {
      const a = powerLaw(300, 250, { seed, minLen: 0, maxLen: 40 });
      const r = rng(seed);
      const x = Float64Array.from({ length: 250 }, () => r() * 2 - 1);
      expectClose(a, x, csrSpmv(a, x));
      const y = new Float64Array(300).fill(Number.NaN);
      expect(csrSpmv(a, x, y)).toBe(y);
      expectClose(a, x, y);
    }
  });
  it('keeps its shape checks', () => {
    const a = csrFromTriplets(2, 3, [0], [2], [1]);
    expect(() => csrSpmv(a, new Float64Array(2))).toThrow(DimensionMismatchError);
    expect(() => csrSpmv(a, new Float64Array(3), new Float64Array(3))).toThrow(DimensionMismatchError);
  });
});
