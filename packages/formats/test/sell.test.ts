import { describe, expect, it } from 'vitest';
import { DimensionMismatchError, InvalidMatrixError, InvalidParameterError } from '../src/core/errors';
import { csrFromDense } from '../src/csr/csr';
import { powerLaw, withEmptyRows } from '../src/generators/index';
import { type SellMatrix, sellFormat, sellFromCsr, sellRowOrder, sellSpmv, sellToCsr } from '../src/sell/index';
import { slicedEllFromCsr } from '../src/sliced-ell/index';
import { expectSameCsr, expectSpmvMatches, familyCases, lengthsOf, surveySellDense, vectorFor } from './ell-family-cases';

const x5 = Float64Array.from([1, 2, 3, 4, 5]);
// survey eq. 2.56 times x5: rows [0 4 0 7 0], [2 0 3 0 6], [0 5 0 0 0], [0 0 0 0 2], [1 0 0 6 0], [2 4 0 0 5]
const y5 = [36, 41, 10, 10, 25, 35];

describe('SELL-C-σ (survey §2.3.4) reference tier', () => {
  it('C = 2, σ = 1 reproduces the survey arrays (eq. 2.57–2.59)', () => {
    const s = sellFromCsr(csrFromDense(surveySellDense), { C: 2, sigma: 1 });
    expect(s.numChunks).toBe(3);
    // Value = 4 2 7 3 0 6 | 5 2 | 1 2 6 4 0 5 (eq. 2.58)
    expect(Array.from(s.values)).toEqual([4, 2, 7, 3, 0, 6, 5, 2, 1, 2, 6, 4, 0, 5]);
    // Column = 1 0 3 2 * 4 | 1 4 | 0 0 3 1 * 4 (eq. 2.59), * = the row's last column
    expect(Array.from(s.colIdx)).toEqual([1, 0, 3, 2, 3, 4, 1, 4, 0, 0, 3, 1, 3, 4]);
    // eq. 2.57 prints 0 6 9 15, but its own Value array has 14 entries: the pointers are 0 6 8 14
    expect(Array.from(s.chunkPtr)).toEqual([0, 6, 8, 14]);
    expect(Array.from(s.chunkWidth)).toEqual([3, 1, 3]);
    expect(Array.from(s.rowPerm)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(Array.from(sellSpmv(s, x5))).toEqual(y5);
    // survey eq. 2.60: N_s + 1 + 4·Σ N_nzv = 4 + 4·7 = 32 elements (C = 2: two arrays × C rows)
    const st = sellFormat.storageBytes(s, { valueBytes: 4, indexBytes: 4 });
    expect(st.arrays.values! + st.arrays.colIdx! + st.arrays.chunkPtr!).toBe(32 * 4);
    expect(st.bytes).toBe(32 * 4 + 3 * 4); // + chunkWidth; σ = 1: no permutation stored
    expect(st.arrays.rowPerm).toBeUndefined();
    expect(st.storedElements).toBe(14);
    expect(st.beta).toBe(12 / 14);
  });

  it('C = 2, σ = 4 sorts rows by length inside each window of 4 rows', () => {
    const s = sellFromCsr(csrFromDense(surveySellDense), { C: 2, sigma: 4 });
    // lengths 2 3 1 1 | 2 3 → window 0: rows 1, 0, 2, 3; window 1: rows 5, 4
    expect(Array.from(s.rowPerm)).toEqual([1, 0, 2, 3, 5, 4]);
    expect(Array.from(s.chunkWidth)).toEqual([3, 1, 3]);
    expect(Array.from(s.chunkPtr)).toEqual([0, 6, 8, 14]);
    expect(Array.from(s.values)).toEqual([2, 4, 3, 7, 6, 0, 5, 2, 2, 1, 4, 6, 5, 0]);
    expect(Array.from(s.colIdx)).toEqual([0, 1, 2, 3, 4, 3, 1, 4, 0, 0, 1, 3, 4, 3]);
    expect(Array.from(sellSpmv(s, x5))).toEqual(y5); // original row order
    expect(sellFormat.storageBytes(s, { valueBytes: 4, indexBytes: 4 }).bytes).toBe(32 * 4 + 3 * 4 + 6 * 4);
    expectSameCsr(sellToCsr(s), csrFromDense(surveySellDense));
  });

  it('C = 4, σ = 4 pads the last chunk with phantom rows (value 0, column 0)', () => {
    const s = sellFromCsr(csrFromDense(surveySellDense), { C: 4, sigma: 4 });
    expect(Array.from(s.rowPerm)).toEqual([1, 0, 2, 3, 5, 4]);
    expect(Array.from(s.chunkWidth)).toEqual([3, 3]);
    expect(Array.from(s.chunkPtr)).toEqual([0, 12, 24]);
    // chunk 1: positions 4, 5 = rows 5, 4; positions 6, 7 phantom
    expect(Array.from(s.values.subarray(12))).toEqual([2, 1, 0, 0, 4, 6, 0, 0, 5, 0, 0, 0]);
    expect(Array.from(s.colIdx.subarray(12))).toEqual([0, 0, 0, 0, 1, 3, 0, 0, 4, 3, 0, 0]);
    expect(sellFormat.storageBytes(s).beta).toBe(12 / 24);
    expect(Array.from(sellSpmv(s, x5))).toEqual(y5);
    expectSameCsr(sellToCsr(s), csrFromDense(surveySellDense));
  });

  it('sellRowOrder: stable descending sort inside windows; σ = 1 is the identity', () => {
    expect(Array.from(sellRowOrder(Int32Array.of(2, 3, 1, 1, 2, 3), 4))).toEqual([1, 0, 2, 3, 5, 4]);
    expect(Array.from(sellRowOrder(Int32Array.of(1, 1, 1, 5), 2))).toEqual([0, 1, 3, 2]);
    expect(Array.from(sellRowOrder(Int32Array.of(1, 2, 3), 1))).toEqual([0, 1, 2]);
    expect(Array.from(sellRowOrder(Int32Array.of(0, 2, 0, 2), 64))).toEqual([1, 3, 0, 2]);
  });

  it('keeps empty rows and explicit zeros through sorting', () => {
    const a = csrFromDense([
      [0, 0, 0],
      [1, 2, 3],
      [0, 0, 0],
      [0, 4, 0],
    ]);
    const s = sellFromCsr(a, { C: 2, sigma: 4 });
    expect(Array.from(s.rowPerm)).toEqual([1, 3, 0, 2]);
    expect(Array.from(s.emptyRows)).toEqual([0, 2]);
    expect(Array.from(s.chunkWidth)).toEqual([3, 0]);
    expectSameCsr(sellToCsr(s), a);
    expect(Array.from(sellSpmv(s, Float64Array.of(1, 1, 1)))).toEqual([0, 6, 0, 4]);
  });

  it('validates C and σ with InvalidParameterError', () => {
    const a = csrFromDense(surveySellDense);
    const bad: [number, number][] = [
      [0, 1],
      [-2, 4],
      [1.5, 3],
      [2, 0],
      [2, 3],
      [4, 6],
      [Number.NaN, 1],
      [2, Number.POSITIVE_INFINITY],
    ];
    for (const [C, sigma] of bad) expect(() => sellFromCsr(a, { C, sigma }), `C=${C} σ=${sigma}`).toThrow(InvalidParameterError);
    expect(() => sellFromCsr(a, { C: 2, sigma: 3 })).toThrow(/parameter sigma: expected 1 or a multiple of C = 2, got 3/);
    expect(() => sellFromCsr(a, { C: 0 })).toThrow(/parameter C/);
    for (const [C, sigma] of [
      [2, 1],
      [3, 9],
      [1, 7],
      [8, 8],
    ] as const) {
      expect(sellFromCsr(a, { C, sigma }).C).toBe(C);
    }
    expect(sellFormat.defaultParams).toEqual({ C: 32, sigma: 128 });
  });

  it('rejects corrupted arrays', () => {
    const s = sellFromCsr(csrFromDense(surveySellDense), { C: 2, sigma: 4 });
    const perm = s.rowPerm.slice();
    perm[1] = 1; // row 1 twice
    expect(() => sellToCsr({ ...s, rowPerm: perm })).toThrow(/rowPerm\[1\] = 1: not a permutation/);
    expect(() => sellSpmv({ ...s, rowPerm: perm }, x5)).toThrow(/not a permutation/);
    const v = s.values.slice();
    v[5] = 7; // position 1 (row 0), slot 2: padding
    expect(() => sellToCsr({ ...s, values: v } as SellMatrix)).toThrow(InvalidMatrixError);
    expect(() => sellSpmv({ ...s, values: v }, x5)).toThrow(/padding/);
    const ph = sellFromCsr(csrFromDense(surveySellDense), { C: 4, sigma: 4 });
    const pv = ph.values.slice();
    pv[12 + 2] = 1; // phantom row, slot 0
    expect(() => sellToCsr({ ...ph, values: pv })).toThrow(/row 6, slot 0: padding value must be 0/);
    expect(() => sellSpmv(s, new Float64Array(3))).toThrow(DimensionMismatchError);
  });
});

describe('SELL-C-σ on the generator families', () => {
  const params: [number, number][] = [
    [1, 1],
    [2, 1],
    [4, 8],
    [3, 9],
    [32, 1],
    [32, 128],
    [8, 1024],
  ];
  for (const { name, a } of familyCases()) {
    it(`round trip, product, storage: ${name}`, () => {
      const x = vectorFor(a.cols, 3);
      const len = lengthsOf(a);
      for (const [C, sigma] of params) {
        const s = sellFromCsr(a, { C, sigma });
        expectSameCsr(sellToCsr(s), a);
        expectSpmvMatches(a, x, sellSpmv(s, x));
        // independent storage: sort each window, Σ over chunks of C·(longest row in chunk)
        const order = Array.from({ length: a.rows }, (_, i) => i);
        if (sigma > 1) for (let w = 0; w < a.rows; w += sigma) order.splice(w, Math.min(sigma, a.rows - w), ...order.slice(w, w + sigma).sort((p, q) => len[q]! - len[p]! || p - q));
        let slots = 0;
        for (let c = 0; c * C < a.rows; c++) slots += C * order.slice(c * C, (c + 1) * C).reduce((m, i) => Math.max(m, len[i]!), 0);
        const nc = Math.ceil(a.rows / C);
        const st = sellFormat.storageBytes(s, { valueBytes: 4, indexBytes: 4 });
        expect(st.storedElements).toBe(slots);
        expect(st.bytes).toBe(slots * 8 + (nc + 1) * 4 + nc * 4 + (sigma > 1 ? a.rows * 4 : 0));
        for (const c of s.colIdx) expect(c >= 0 && (c < a.cols || (a.cols === 0 && c === 0))).toBe(true);
      }
    });
  }

  it('sorting within σ never adds padding, and removes most of it on power-law rows', () => {
    const a = powerLaw(512, 512, { seed: 21, maxLen: 128 });
    const unsorted = sellFormat.storageBytes(sellFromCsr(a, { C: 32, sigma: 1 }));
    let prev = unsorted.storedElements;
    for (const sigma of [32, 128, 512]) {
      const st = sellFormat.storageBytes(sellFromCsr(a, { C: 32, sigma }));
      expect(st.storedElements).toBeLessThanOrEqual(prev);
      prev = st.storedElements;
    }
    expect(prev).toBeLessThan(0.6 * unsorted.storedElements);
    const e = withEmptyRows(100, 100, 5, 0.5, 3);
    expect(sellFormat.storageBytes(sellFromCsr(e, { C: 4, sigma: 100 * 4 })).storedElements).toBeLessThanOrEqual(
      sellFormat.storageBytes(sellFromCsr(e, { C: 4, sigma: 1 })).storedElements,
    );
  });

  it('σ = 1 stores the same slots as sliced ELL when C divides the rows', () => {
    const a = powerLaw(96, 80, { seed: 2, maxLen: 40 });
    const s = sellFromCsr(a, { C: 16, sigma: 1 });
    const l = slicedEllFromCsr(a, { sliceHeight: 16 });
    expect(Array.from(s.values)).toEqual(Array.from(l.values));
    expect(Array.from(s.colIdx)).toEqual(Array.from(l.colIdx));
    expect(Array.from(s.chunkPtr)).toEqual(Array.from(l.slicePtr));
  });
});
