import { describe, expect, it } from 'vitest';
import { rowLengthPercentile, rowLengthStats, sortedRowLengths } from '../src/core/row-stats';
import { csr, csrFromDense } from '../src/csr/csr';
import { banded, laplacian1d, poisson2d } from '../src/generators/index';
import { familyCases, lengthsOf } from './ell-family-cases';

describe('rowLengthStats reference tier', () => {
  it('computes every field of a 4×3 matrix by hand', () => {
    const s = rowLengthStats(
      csrFromDense([
        [1, 0, 0],
        [2, 3, 0],
        [0, 0, 0],
        [4, 5, 6],
      ]),
    );
    expect(s.rows).toBe(4);
    expect(s.cols).toBe(3);
    expect(s.nnz).toBe(6);
    expect(s.min).toBe(0);
    expect(s.max).toBe(3);
    expect(s.mean).toBe(1.5);
    // lengths 1 2 0 3: Σ(len − 1.5)² = 0.25 + 0.25 + 2.25 + 2.25 = 5, /4 = 1.25
    expect(s.rsd).toBeCloseTo(Math.sqrt(1.25), 15);
    expect(s.rsdp).toBeCloseTo((100 * Math.sqrt(1.25)) / 1.5, 12);
    // sorted 0 1 2 3: positions floor(4/3) = 1, 2, floor(3.6) = 3, floor(3.96) = 3
    expect([s.p33, s.p50, s.p90, s.p99]).toEqual([1, 2, 3, 3]);
    expect(s.emptyRows).toBe(1);
    // offsets j − i: 0, −1, 0, −3, −2, −1 → {0, −1, −2, −3}
    expect(s.occupiedDiagonals).toBe(4);
    expect(s.bandwidth).toBe(3);
    expect(s.lowerBandwidth).toBe(3);
    expect(s.upperBandwidth).toBe(0);
  });

  it('rectangular, upper-only and explicit zeros', () => {
    const s = rowLengthStats(csr(2, 4, [0, 2, 3], [1, 3, 2], [0, 7, -0]));
    expect(s.nnz).toBe(3); // explicit zeros are stored entries
    expect(s.min).toBe(1);
    expect(s.max).toBe(2);
    expect(s.occupiedDiagonals).toBe(2); // offsets 1, 3, 1
    expect(s.upperBandwidth).toBe(3);
    expect(s.lowerBandwidth).toBe(0);
    expect(s.bandwidth).toBe(3);
    expect(s.rsd).toBe(0.5);
    expect(s.rsdp).toBeCloseTo(100 / 3, 12);
  });

  it('empty shapes give zeros, never NaN', () => {
    for (const a of [csr(0, 0, [0], [], []), csr(3, 0, [0, 0, 0, 0], [], []), csr(2, 2, [0, 0, 0], [], [])]) {
      const s = rowLengthStats(a);
      for (const [k, v] of Object.entries(s)) expect(Number.isFinite(v), k).toBe(true);
      expect([s.min, s.max, s.mean, s.rsd, s.rsdp, s.p33, s.p99, s.occupiedDiagonals, s.bandwidth]).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 0]);
      expect(s.emptyRows).toBe(a.rows);
    }
  });

  it('knows the structure of banded and Laplacian matrices', () => {
    const b = rowLengthStats(banded(50, 2, 3, { seed: 1 }));
    expect(b.occupiedDiagonals).toBe(6);
    expect([b.lowerBandwidth, b.upperBandwidth, b.bandwidth]).toEqual([2, 3, 3]);
    expect(b.min).toBe(3); // row 49: columns 47..49
    expect(b.max).toBe(6);
    const p = rowLengthStats(poisson2d(8));
    expect(p.occupiedDiagonals).toBe(5);
    expect(p.bandwidth).toBe(8);
    expect([p.min, p.max, p.p50]).toEqual([3, 5, 5]);
    const l = rowLengthStats(laplacian1d(10));
    expect(l.mean).toBe(2.8);
    expect(l.rsd).toBeCloseTo(Math.sqrt((8 * 0.04 + 2 * 0.64) / 10), 14);
  });

  it('agrees with a naive computation on the generator families', () => {
    for (const { name, a } of familyCases()) {
      const s = rowLengthStats(a);
      const len = lengthsOf(a);
      const n = len.length;
      const mean = n ? len.reduce((p, q) => p + q, 0) / n : 0;
      const sd = n ? Math.sqrt(len.reduce((p, q) => p + (q - mean) ** 2, 0) / n) : 0;
      const sorted = [...len].sort((p, q) => p - q);
      const at = (q: number) => (n ? sorted[Math.min(n - 1, Math.floor(n * q))]! : 0);
      expect(s.mean, name).toBeCloseTo(mean, 12);
      expect(s.rsd, name).toBeCloseTo(sd, 12);
      expect([s.min, s.max], name).toEqual([n ? sorted[0] : 0, n ? sorted[n - 1] : 0]);
      expect([s.p33, s.p50, s.p90, s.p99], name).toEqual([at(1 / 3), at(0.5), at(0.9), at(0.99)]);
      expect(s.emptyRows, name).toBe(len.filter((l) => l === 0).length);
      const offsets = new Set<number>();
      let bw = 0;
      for (let i = 0; i < a.rows; i++)
        for (let k = a.rowPtr[i]!; k < a.rowPtr[i + 1]!; k++) {
          offsets.add(a.colIdx[k]! - i);
          bw = Math.max(bw, Math.abs(a.colIdx[k]! - i));
        }
      expect(s.occupiedDiagonals, name).toBe(offsets.size);
      expect(s.bandwidth, name).toBe(bw);
    }
  });

  it('rowLengthPercentile uses the lower nearest rank and clamps q', () => {
    const s = sortedRowLengths(csrFromDense([[1, 1, 1], [1, 0, 0], [1, 1, 0]]));
    expect(Array.from(s)).toEqual([1, 2, 3]);
    expect(rowLengthPercentile(s, 1 / 3)).toBe(2);
    expect(rowLengthPercentile(s, 0)).toBe(1);
    expect(rowLengthPercentile(s, 1)).toBe(3);
    expect(rowLengthPercentile(s, 2)).toBe(3);
    expect(rowLengthPercentile(s, -1)).toBe(1);
    expect(rowLengthPercentile(new Int32Array(0), 0.5)).toBe(0);
    // n·(1/3) lands on the integer rank for every multiple of 3 tried
    for (let n = 3; n < 3000; n += 3) expect(Math.floor(n * (1 / 3))).toBe(n / 3);
  });
});
