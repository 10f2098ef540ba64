import { describe, expect, it } from 'vitest';
import { jacobiSymmetricEigen, symmetricEigen } from '../src/eigen/dense';

/** A reproducible symmetric m×m matrix with entries in [−1, 1), scaled by `scale`. */
function randomSymmetric(m: number, seed: number, scale = 1): number[][] {
  let s = seed;
  const rnd = (): number => ((s = (s * 1103515245 + 12345) % 2147483648) / 1073741824) - 1;
  const h = Array.from({ length: m }, () => new Array<number>(m).fill(0));
  for (let i = 0; i < m; i++) for (let j = 0; j <= i; j++) h[i]![j] = h[j]![i] = scale * rnd();
  return h;
}

/** A thick-restart Lanczos matrix: Ritz values θ on the diagonal of the first k rows, their couplings in row/column k, then a tridiagonal. */
function arrowhead(m: number, k: number, seed: number): number[][] {
  const r = randomSymmetric(m, seed);
  const h = Array.from({ length: m }, () => new Array<number>(m).fill(0));
  for (let i = 0; i < m; i++) h[i]![i] = i < k ? -3 + 0.01 * i : 2 + r[i]![i]!; // clustered Ritz values
  for (let i = 0; i < k; i++) h[i]![k] = h[k]![i] = 1e-6 * r[i]![k]!; // converging: small couplings
  for (let i = k; i < m - 1; i++) h[i]![i + 1] = h[i + 1]![i] = 0.5 + 0.5 * Math.abs(r[i]![i + 1]!);
  return h;
}

function norm(h: number[][]): number {
  const big = Math.max(...h.flat().map(Math.abs));
  return big === 0 ? 0 : big * Math.sqrt(h.flat().reduce((s, x) => s + (x / big) ** 2, 0)); // scaled: no underflow at 1e-300
}

/** max |h·v − λ·v| over the pairs, and max |VᵀV − I|. */
function quality(h: number[][], values: number[], vectors: number[][]): { residual: number; ortho: number } {
  const m = h.length;
  let residual = 0;
  let ortho = 0;
  for (let k = 0; k < m; k++) {
    for (let i = 0; i < m; i++) {
      let hv = 0;
      for (let j = 0; j < m; j++) hv += h[i]![j]! * vectors[k]![j]!;
      residual = Math.max(residual, Math.abs(hv - values[k]! * vectors[k]![i]!));
    }
    for (let p = 0; p < m; p++) {
      let d = 0;
      for (let i = 0; i < m; i++) d += vectors[k]![i]! * vectors[p]![i]!;
      ortho = Math.max(ortho, Math.abs(d - (k === p ? 1 : 0)));
    }
  }
  return { residual, ortho };
}

function expectMatchesJacobi(h: number[][]): void {
  const qr = symmetricEigen(h)!;
  const jac = jacobiSymmetricEigen(h)!;
  const nh = Math.max(norm(h), Number.MIN_VALUE);
  for (let k = 0; k < h.length; k++) expect(Math.abs(qr.values[k]! - jac.values[k]!)).toBeLessThanOrEqual(1e-14 * nh);
  for (let k = 1; k < h.length; k++) expect(qr.values[k]!).toBeGreaterThanOrEqual(qr.values[k - 1]!);
  const { residual, ortho } = quality(h, qr.values, qr.vectors);
  expect(residual).toBeLessThanOrEqual(1e-14 * nh);
  expect(ortho).toBeLessThanOrEqual(1e-14);
}

describe('symmetricEigen by Householder tridiagonalisation + implicit QR', () => {
  it('random symmetric matrices of orders 1–60: eigenvalues within 1e-14·‖h‖ of Jacobi, residuals ≤ 1e-14·‖h‖, orthonormal vectors', () => {
    for (const m of [1, 2, 3, 5, 12, 32, 33, 60]) expectMatchesJacobi(randomSymmetric(m, 11 + m));
  });

  it('thick-restart Lanczos matrices (arrowhead + tridiagonal, clustered Ritz values), tridiagonal and diagonal ones', () => {
    expectMatchesJacobi(arrowhead(40, 8, 3));
    expectMatchesJacobi(arrowhead(24, 4, 5));
    const tri = Array.from({ length: 30 }, (_, i) => Array.from({ length: 30 }, (_, j) => (i === j ? 2 : Math.abs(i - j) === 1 ? -1 : 0)));
    expectMatchesJacobi(tri);
    const qr = symmetricEigen(tri)!; // the 1-D Laplacian: 2 − 2cos(kπ/31)
    for (let k = 0; k < 30; k++) expect(Math.abs(qr.values[k]! - (2 - 2 * Math.cos(((k + 1) * Math.PI) / 31)))).toBeLessThan(1e-14 * 4);
    expect(symmetricEigen([[3, 0, 0], [0, 1, 0], [0, 0, 1]])!.values).toEqual([1, 1, 3]);
  });

  it('degenerate eigenvalues: the eigenspace is spanned orthonormally; a zero matrix gives zeros and the identity', () => {
    const deg = symmetricEigen([[2, 1, 1], [1, 2, 1], [1, 1, 2]])!; // 1, 1, 4
    expect(deg.values.map((x) => Math.round(x * 1e13) / 1e13)).toEqual([1, 1, 4]);
    expect(quality([[2, 1, 1], [1, 2, 1], [1, 1, 2]], deg.values, deg.vectors).ortho).toBeLessThan(1e-15);
    const z = symmetricEigen([[0, 0], [0, 0]])!;
    expect(z.values).toEqual([0, 0]);
    expect(quality([[0, 0], [0, 0]], z.values, z.vectors).ortho).toBe(0);
  });

  it('scales near overflow and underflow, and only the symmetric part is used; a non-finite entry gives undefined', () => {
    // (Jacobi's off-diagonal test squares the entries: no reference at these scales; the scaled problem is)
    const ref = jacobiSymmetricEigen(randomSymmetric(20, 9))!;
    for (const scale of [1e300, 1e-300]) {
      const h = randomSymmetric(20, 9, scale);
      const qr = symmetricEigen(h)!;
      for (let k = 0; k < 20; k++) expect(Math.abs(qr.values[k]! / scale - ref.values[k]!)).toBeLessThanOrEqual(1e-14 * norm(randomSymmetric(20, 9)));
      const unit = h.map((row) => row.map((x) => x / scale));
      const { residual, ortho } = quality(unit, qr.values.map((x) => x / scale), qr.vectors);
      expect(residual).toBeLessThanOrEqual(1e-14 * norm(unit));
      expect(ortho).toBeLessThanOrEqual(1e-14);
    }
    const h = randomSymmetric(10, 4);
    const skew = h.map((row, i) => row.map((x, j) => x + (i < j ? 0.25 : i > j ? -0.25 : 0)));
    expect(symmetricEigen(skew)!.values).toEqual(symmetricEigen(h)!.values);
    expect(symmetricEigen([[1, Number.NaN], [Number.NaN, 1]])).toBeUndefined();
    expect(symmetricEigen([[1, 0, 0], [0, Number.POSITIVE_INFINITY, 0], [0, 0, 1]])).toBeUndefined();
  });
});
