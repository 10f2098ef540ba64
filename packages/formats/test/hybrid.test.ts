import { describe, expect, it } from 'vitest';
import { DimensionMismatchError, InvalidMatrixError, InvalidParameterError } from '../src/core/errors';
import { csr, csrFromDense } from '../src/csr/csr';
import { csrStorageBytes } from '../src/csr/index';
import { ciLike, uniformRandom } from '../src/generators/index';
import { type HybridMatrix, hybridAutoBoundary, hybridFormat, hybridFromCsr, hybridSpmv, hybridStorageFormula, hybridToCsr } from '../src/hybrid/index';
import { expectSameCsr, expectSpmvMatches, familyCases, lengthsOf, vectorFor } from './ell-family-cases';

const dense = [
  [1, 0, 2, 0, 3],
  [0, 4, 0, 0, 0],
  [0, 0, 0, 0, 0],
  [5, 6, 7, 8, 0],
];
const x5 = Float64Array.from([1, 2, 3, 4, 5]);
const y5 = [22, 8, 0, 70];

describe('hybrid ELL + CSR (seed 001 §4.1, Algorithm 6) reference tier', () => {
  it('splits each row after BOUNDARY = 2 entries', () => {
    const h = hybridFromCsr(csrFromDense(dense), { boundary: 2 });
    expect(h.boundary).toBe(2);
    // ELL part, column-major (slot k of row i at k·4 + i); row 2 empty → padding value 0, column 0
    expect(Array.from(h.ellValues)).toEqual([1, 4, 0, 5, 2, 0, 0, 6]);
    expect(Array.from(h.ellColIdx)).toEqual([0, 1, 0, 0, 2, 1, 0, 1]);
    // CSR part: row 0's third entry, row 3's third and fourth
    expect(Array.from(h.csrValues)).toEqual([3, 7, 8]);
    expect(Array.from(h.csrColIdx)).toEqual([4, 2, 3]);
    // StartArr/EndArr; rows with ≤ BOUNDARY entries get the empty range [Index, Index)
    expect(Array.from(h.startArr)).toEqual([0, 1, 1, 1]);
    expect(Array.from(h.endArr)).toEqual([1, 1, 1, 3]);
    expect(Array.from(h.rowLength)).toEqual([3, 1, 0, 4]);
    expect(h.ellNnz).toBe(5);
    expect(h.csrNnz).toBe(3);
    expect(Array.from(hybridSpmv(h, x5))).toEqual(y5);
  });

  it('storage: 3·ROWS·uint + ROWS·BOUNDARY·(double + int) + CSRNonZeros·(double + uint)', () => {
    const h = hybridFromCsr(csrFromDense(dense), { boundary: 2 });
    const s = hybridFormat.storageBytes(h);
    expect(s.bytes).toBe(3 * 4 * 4 + 4 * 2 * (8 + 4) + 3 * (8 + 4)); // 48 + 96 + 36 = 180
    expect(s.storedElements).toBe(8 + 3);
    expect(s.beta).toBe(8 / 11);
    expect(hybridFormat.storageBytes(h, { valueBytes: 4 }).bytes).toBe(48 + 64 + 24);
  });

  it('reproduces the "Pro. Model" memory column of seed 001 Table 5 from Table 3', () => {
    // Table 3: Reference non-zeros 21 463 040 = 32 768 rows × BOUNDARY 655; Expansion non-zeros per matrix
    const expansion = [9678327, 9673031, 9666827, 9670529, 9669733, 9673530, 9666857, 9670234, 9661419, 9670316];
    const table5 = [356.76, 356.7, 356.63, 356.67, 356.66, 356.7, 356.63, 356.67, 356.57, 356.67];
    expect(21463040 / 32768).toBe(655);
    expansion.forEach((e, t) => {
      const s = hybridStorageFormula(32768, 655, e, 21463040 + e);
      expect(Math.round((s.bytes / 2 ** 20) * 100) / 100, `Matrix ${t + 1}`).toBe(table5[t]);
    });
  });

  it('BOUNDARY = 0 is pure CSR, BOUNDARY ≥ longest row is pure ELL', () => {
    const a = csrFromDense(dense);
    const h0 = hybridFromCsr(a, { boundary: 0 });
    expect(h0.ellValues.length).toBe(0);
    expect(Array.from(h0.startArr)).toEqual(Array.from(a.rowPtr.subarray(0, 4)));
    expect(Array.from(h0.endArr)).toEqual(Array.from(a.rowPtr.subarray(1)));
    expect(Array.from(h0.csrValues)).toEqual(Array.from(a.values));
    // with BOUNDARY 0 the seed's formula is CSR's with RowPtr replaced by three row arrays
    expect(hybridFormat.storageBytes(h0).bytes - csrStorageBytes(a).bytes).toBe(3 * 4 * 4 - 5 * 4);
    const h9 = hybridFromCsr(a, { boundary: 9 });
    expect(h9.csrNnz).toBe(0);
    expect(Array.from(h9.startArr)).toEqual([0, 0, 0, 0]);
    expect(Array.from(h9.endArr)).toEqual([0, 0, 0, 0]);
    expect(h9.ellValues.length).toBe(36);
    expect(Array.from(hybridSpmv(h9, x5))).toEqual(y5);
    expectSameCsr(hybridToCsr(h0), a);
    expectSameCsr(hybridToCsr(h9), a);
  });

  it('validates BOUNDARY with InvalidParameterError', () => {
    const a = csrFromDense(dense);
    for (const b of [-1, 1.5, Number.NaN, 'x' as unknown as number]) expect(() => hybridFromCsr(a, { boundary: b })).toThrow(InvalidParameterError);
    expect(() => hybridFromCsr(a, { boundary: -1 })).toThrow(/parameter boundary: expected an integer ≥ 0 or 'auto', got -1/);
    expect(hybridFromCsr(a).boundary).toBe(hybridAutoBoundary(a));
    expect(hybridFromCsr(a, { boundary: 'auto' }).boundary).toBe(1); // lengths 0 1 3 4 → sorted[floor(4/3)] = 1
  });

  it('rejects corrupted StartArr/EndArr, row lengths and columns', () => {
    const h = hybridFromCsr(csrFromDense(dense), { boundary: 2 });
    const st = h.startArr.slice();
    st[3] = 2;
    expect(() => hybridToCsr({ ...h, startArr: st })).toThrow(/row 3: StartArr\/EndArr = \[2, 3\) but the row's CSR part must be \[1, 3\)/);
    const rl = h.rowLength.slice();
    rl[1] = 2;
    expect(() => hybridToCsr({ ...h, rowLength: rl })).toThrow(InvalidMatrixError);
    const rl3 = h.rowLength.slice();
    rl3[3] = 3; // EndArr − StartArr = 2 but rowLength − BOUNDARY = 1
    expect(() => hybridSpmv({ ...h, rowLength: rl3 }, x5)).toThrow(/row 3: \[StartArr, EndArr\) = \[1, 3\) must hold 1 entries/);
    const cc = h.csrColIdx.slice();
    cc[1] = 0; // row 3's CSR part must continue after column 1
    expect(() => hybridToCsr({ ...h, csrColIdx: cc } as HybridMatrix)).toThrow(/row 3, CSR entry 1: column 0 must exceed 1/);
    const bad = h.csrColIdx.slice();
    bad[0] = 5;
    expect(() => hybridSpmv({ ...h, csrColIdx: bad }, x5)).toThrow(/column 5 outside/);
    expect(() => hybridSpmv(h, new Float64Array(4))).toThrow(DimensionMismatchError);
  });
});

describe('hybridAutoBoundary (Ginkgo imbalance_limit, percent 1/3)', () => {
  it('takes the sorted row length at position floor(rows/3)', () => {
    expect(hybridAutoBoundary(csrFromDense([[1, 0, 0], [1, 1, 0], [1, 1, 1]]))).toBe(2);
    // lengths 5 0 5 0 5 5 → sorted 0 0 5 5 5 5, position 2
    const a = csrFromDense([
      [1, 1, 1, 1, 1],
      [0, 0, 0, 0, 0],
      [1, 1, 1, 1, 1],
      [0, 0, 0, 0, 0],
      [1, 1, 1, 1, 1],
      [1, 1, 1, 1, 1],
    ]);
    expect(hybridAutoBoundary(a)).toBe(5);
    expect(hybridAutoBoundary(a, { percent: 0 })).toBe(0);
    expect(hybridAutoBoundary(a, { percent: 1 })).toBe(5);
    expect(hybridAutoBoundary(a, { ratio: 0.5 })).toBe(3); // cap floor(6·0.5)
    expect(hybridAutoBoundary(csr(0, 0, [0], [], []))).toBe(0);
    expect(() => hybridAutoBoundary(a, { percent: 1.5 })).toThrow(InvalidParameterError);
    expect(() => hybridAutoBoundary(a, { ratio: -1 })).toThrow(InvalidParameterError);
  });

  it('on a CI-like matrix about two thirds of the rows reach BOUNDARY', () => {
    const a = ciLike(300, { seed: 3 });
    const b = hybridAutoBoundary(a);
    const len = lengthsOf(a);
    const shorter = len.filter((l) => l < b).length;
    expect(shorter).toBeLessThanOrEqual(100);
    expect(len.filter((l) => l <= b).length).toBeGreaterThan(100);
  });
});

describe('hybrid on the generator families', () => {
  for (const { name, a } of familyCases()) {
    it(`round trip, product, storage: ${name}`, () => {
      const x = vectorFor(a.cols, 7);
      const len = lengthsOf(a);
      for (const boundary of [0, 1, 2, 5, 'auto' as const, 64]) {
        const h = hybridFromCsr(a, { boundary });
        expectSameCsr(hybridToCsr(h), a);
        expectSpmvMatches(a, x, hybridSpmv(h, x));
        const B = h.boundary;
        const csrNonZeros = len.reduce((s, l) => s + Math.max(0, l - B), 0);
        expect(h.csrNnz).toBe(csrNonZeros);
        expect(h.ellNnz).toBe(len.reduce((s, l) => s + Math.min(l, B), 0));
        const st = hybridFormat.storageBytes(h, { valueBytes: 4, indexBytes: 4 });
        expect(st.bytes).toBe(3 * a.rows * 4 + a.rows * B * 8 + csrNonZeros * 8);
        // StartArr/EndArr non-decreasing, empty exactly for rows with ≤ BOUNDARY entries
        for (let i = 0; i < a.rows; i++) {
          expect(h.endArr[i]! - h.startArr[i]!).toBe(Math.max(0, len[i]! - B));
          if (i > 0) expect(h.startArr[i]).toBe(h.endArr[i - 1]);
        }
      }
    });
  }

  it('a wide random matrix round-trips through the descriptor with default params', () => {
    const a = uniformRandom(200, 300, 7, 5);
    const h = hybridFormat.fromCsr(a);
    expect(h.boundary).toBe(7);
    expect(h.csrNnz).toBe(0);
    expectSameCsr(hybridFormat.toCsr(h), a);
  });
});
