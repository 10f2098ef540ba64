import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { JACOBI_MAX_ORDER, jacobiSymmetricEigen, symmetricEigen } from '../src/eigen/dense';
import { mlMatrix } from '../src/eigen/ml-matrix-lazy';
import { denseSymmetricEigen } from '../src/index';

/** A reproducible symmetric m×m matrix with entries in [−1, 1) (plus `shift` on the diagonal). */
function randomSymmetric(m: number, seed: number, shift = 0): number[][] {
  let s = seed;
  const rnd = (): number => ((s = (s * 1103515245 + 12345) % 2147483648) / 1073741824) - 1;
  const h = Array.from({ length: m }, () => new Array<number>(m).fill(0));
  for (let i = 0; i < m; i++) for (let j = 0; j <= i; j++) h[i]![j] = h[j]![i] = rnd() + (i === j ? shift : 0);
  return h;
}

function maxResidual(h: number[][], values: ArrayLike<number>, vectors: ArrayLike<number>[]): number {
  let worst = 0;
  for (let k = 0; k < values.length; k++) {
    for (let i = 0; i < h.length; i++) {
      let hv = 0;
      for (let j = 0; j < h.length; j++) hv += h[i]![j]! * vectors[k]![j]!;
      worst = Math.max(worst, Math.abs(hv - values[k]! * vectors[k]![i]!));
    }
  }
  return worst;
}

describe('cyclic Jacobi (jacobiSymmetricEigen; denseSymmetricEigen up to JACOBI_MAX_ORDER)', () => {
  it('matches symmetricEigen (Householder + QR) on a padded problem to 1e-13 with residuals ≤ 1e-13 and orthonormal vectors', () => {
    for (const m of [1, 2, 5, 12, JACOBI_MAX_ORDER]) {
      const h = randomSymmetric(m, 7 + m, m === 12 ? -76 : 0);
      const jac = jacobiSymmetricEigen(h)!;
      // h padded with far-away eigenvalues: the same leading eigenvalues by the other method
      const ref = symmetricEigen(padTo(h, JACOBI_MAX_ORDER + 1))!;
      for (let k = 0; k < m; k++) expect(Math.abs(jac.values[k]! - ref.values[k]!)).toBeLessThan(1e-13 * Math.max(1, Math.abs(ref.values[k]!)));
      expect(maxResidual(h, jac.values, jac.vectors)).toBeLessThan(1e-13 * Math.max(1, Math.abs(jac.values[0]!)));
      for (let p = 0; p < m; p++) {
        for (let q = 0; q < m; q++) {
          let d = 0;
          for (let i = 0; i < m; i++) d += jac.vectors[p]![i]! * jac.vectors[q]![i]!;
          expect(Math.abs(d - (p === q ? 1 : 0))).toBeLessThan(1e-14);
        }
      }
    }
  });

  it('degenerate and diagonal inputs: exact values, ascending; non-finite entry → undefined', () => {
    const eye = jacobiSymmetricEigen([[3, 0, 0], [0, 1, 0], [0, 0, 1]])!;
    expect(eye.values).toEqual([1, 1, 3]);
    const deg = jacobiSymmetricEigen([[2, 1, 1], [1, 2, 1], [1, 1, 2]])!; // eigenvalues 1, 1, 4
    expect(deg.values[0]).toBeCloseTo(1, 14);
    expect(deg.values[1]).toBeCloseTo(1, 14);
    expect(deg.values[2]).toBeCloseTo(4, 14);
    expect(jacobiSymmetricEigen([[1, Number.NaN], [Number.NaN, 1]])).toBeUndefined();
  });

  it('denseSymmetricEigen reads only the lower triangle on the Jacobi path too', () => {
    const a = Float64Array.from([2, 99, 1, 2]); // upper entry ignored: [[2, 1], [1, 2]]
    const { values } = denseSymmetricEigen(a, 2);
    expect(values[0]).toBeCloseTo(1, 14);
    expect(values[1]).toBeCloseTo(3, 14);
  });

  it('ml-matrix is one static import behind mlMatrix() (no lazy load: a browser call before a dynamic import settled would fail)', () => {
    const dir = join(__dirname, '../src');
    const files = readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'));
    const importers = files.filter((f) => /^import\s+(?!type\b)[^;]*from\s+'ml-matrix'/m.test(readFileSync(join(dir, f), 'utf8')));
    expect(importers.map((f) => f.replace(/\\/g, '/'))).toEqual(['eigen/ml-matrix-lazy.ts']);
    expect(typeof mlMatrix().Matrix).toBe('function');
  });
});

/** h padded with far-away diagonal entries to order n. */
function padTo(h: number[][], n: number): number[][] {
  const m = h.length;
  return Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => (i < m && j < m ? h[i]![j]! : i === j ? 1e3 + i : 0)));
}
