import { InvalidParameterError } from '@gpusparse/formats';
import { describe, expect, it } from 'vitest';
import { denseSymmetricEigen } from '../src/index';

/** The 1-D Laplacian tridiag(−1, 2, −1) of order n, row-major; only its lower triangle filled when `lower`. */
function laplacian(n: number, lower = false): Float64Array {
  const a = new Float64Array(n * n);
  for (let i = 0; i < n; i++) {
    a[i * n + i] = 2;
    if (i > 0) a[i * n + i - 1] = -1;
    if (i + 1 < n && !lower) a[i * n + i + 1] = -1;
  }
  return a;
}

describe('denseSymmetricEigen (ml-matrix EigenvalueDecomposition)', () => {
  it('the 1-D Laplacian: closed-form eigenvalues ascending, orthonormal vectors with A v = λ v', () => {
    const n = 60;
    const a = laplacian(n);
    const { values, vectors } = denseSymmetricEigen(a, n);
    for (let k = 0; k < n; k++) expect(values[k]).toBeCloseTo(2 - 2 * Math.cos(((k + 1) * Math.PI) / (n + 1)), 12);
    for (let k = 0; k < n; k += 7) {
      const v = vectors[k]!;
      let res = 0;
      for (let i = 0; i < n; i++) {
        let av = 0;
        for (let j = 0; j < n; j++) av += a[i * n + j]! * v[j]!;
        res = Math.max(res, Math.abs(av - values[k]! * v[i]!));
      }
      expect(res).toBeLessThan(1e-12);
      for (let l = 0; l < n; l += 11) {
        let d = 0;
        for (let i = 0; i < n; i++) d += v[i]! * vectors[l]![i]!;
        expect(d).toBeCloseTo(k === l ? 1 : 0, 12);
      }
    }
  });

  it('reads only the lower triangle', () => {
    const full = denseSymmetricEigen(laplacian(20), 20).values;
    expect(Array.from(denseSymmetricEigen(laplacian(20, true), 20).values)).toEqual(Array.from(full));
  });

  it('refuses a non-finite entry (naming it) and a wrong length', () => {
    const a = laplacian(4);
    a[2 * 4 + 1] = Number.NaN;
    expect(() => denseSymmetricEigen(a, 4)).toThrow(InvalidParameterError);
    expect(() => denseSymmetricEigen(a, 4)).toThrow(/a\[2\]\[1\]/);
    expect(() => denseSymmetricEigen(new Float64Array(5), 2)).toThrow(/row-major 2×2/);
    expect(denseSymmetricEigen(new Float64Array(0), 0).values.length).toBe(0);
  });
});
