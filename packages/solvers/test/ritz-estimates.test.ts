import { describe, expect, it } from 'vitest';
import { symmetricEigen } from '../src/eigen/dense';
import { ritzEstimates } from '../src/eigen/ritz-estimates';

/** A seeded pseudo-random number in [−1, 1). */
function rng(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 2 ** 31 - 1;
  };
}

/** The Lanczos shapes: tridiagonal, arrowhead + tridiagonal (after a thick restart), dense with tiny off-band entries. */
function projected(m: number, kind: 'tri' | 'arrow' | 'dense', seed: number): number[][] {
  const r = rng(seed);
  const h = Array.from({ length: m }, () => new Array<number>(m).fill(0));
  const set = (i: number, j: number, x: number) => {
    h[i]![j] = x;
    h[j]![i] = x;
  };
  const nKeep = kind === 'arrow' ? Math.floor(m / 2) : 0;
  for (let i = 0; i < m; i++) set(i, i, 10 * r());
  for (let i = 0; i < nKeep; i++) set(i, nKeep, r()); // arrow column
  for (let i = Math.max(nKeep, 0); i + 1 < m; i++) set(i, i + 1, 1 + r());
  if (kind === 'dense') for (let i = 0; i < m; i++) for (let j = i + 2; j < m; j++) set(i, j, 1e-13 * r());
  return h;
}

function expectMatchesMlMatrix(h: number[][]): void {
  const m = h.length;
  const full = symmetricEigen(h)!;
  const est = ritzEstimates(h, m)!;
  const scale = Math.max(...full.values.map(Math.abs), 1);
  for (let i = 0; i < m; i++) {
    expect(Math.abs(est.values[i]! - full.values[i]!)).toBeLessThan(1e-13 * scale);
    // last components up to sign; a cluster's vectors are not unique, so compare only separated values
    const gap = Math.min(i > 0 ? full.values[i]! - full.values[i - 1]! : Infinity, i + 1 < m ? full.values[i + 1]! - full.values[i]! : Infinity);
    if (gap > 1e-6 * scale) expect(Math.abs(Math.abs(est.last[i]!) - Math.abs(full.vectors[i]![m - 1]!))).toBeLessThan(1e-10);
  }
}

describe('ritzEstimates (values + last eigenvector components) against ml-matrix', () => {
  it('tridiagonal, arrowhead + tridiagonal and dense projected matrices, m = 1 … 40', () => {
    for (const kind of ['tri', 'arrow', 'dense'] as const) for (const m of [1, 2, 3, 5, 12, 20, 31, 40]) expectMatchesMlMatrix(projected(m, kind, 17 * m + kind.length));
  });

  it('reads only the leading m×m block and the symmetric part', () => {
    const h = projected(10, 'tri', 3);
    const big = h.map((row) => [...row, 99]);
    big.push(new Array<number>(11).fill(99));
    big[0]![1] = big[0]![1]! + 0.5; // non-symmetric: (h + hᵀ)/2 is used
    const sym = h.map((row) => [...row]);
    sym[0]![1] = sym[0]![1]! + 0.25;
    sym[1]![0] = sym[1]![0]! + 0.25;
    const a = ritzEstimates(big, 10)!;
    const b = ritzEstimates(sym, 10)!;
    expect(a.values).toEqual(b.values);
  });

  it('a diagonal matrix, repeated eigenvalues and a zero matrix', () => {
    expect(ritzEstimates([[3, 0, 0], [0, 1, 0], [0, 0, 2]], 3)).toEqual({ values: [1, 2, 3], last: [0, 1, 0] });
    const rep = ritzEstimates([[2, 0, 0, 0], [0, 2, 0, 1], [0, 0, 2, 0], [0, 1, 0, 2]], 4)!;
    expect(rep.values.map((x) => Number(x.toFixed(12)))).toEqual([1, 2, 2, 3]);
    expect(rep.last.map((x) => x * x).reduce((s, x) => s + x, 0)).toBeCloseTo(1, 14);
    expect(ritzEstimates([[0, 0], [0, 0]], 2)!.values).toEqual([0, 0]);
  });

  it('a non-finite entry gives undefined, an empty block empty lists', () => {
    expect(ritzEstimates([[1, Number.NaN], [Number.NaN, 1]], 2)).toBeUndefined();
    expect(ritzEstimates([[Infinity]], 1)).toBeUndefined();
    expect(ritzEstimates([], 0)).toEqual({ values: [], last: [] });
  });
});
