import { describe, expect, it } from 'vitest';
import { DimensionMismatchError, InvalidMatrixError, InvalidParameterError } from '../src/core/errors';
import { csr, csrFromDense, csrSpmv } from '../src/csr/csr';
import { type EllMatrix, ellFormat, ellFromCsr, ellSpmv, ellStorageFormula, ellToCsr, PaddingOverflowError } from '../src/ell/index';
import { ellRFormat, ellRFromCsr, ellRSpmv, ellRToCsr } from '../src/ell-r/index';
import { oneDenseRow } from '../src/generators/index';
import { hybridFormat } from '../src/hybrid/index';
import { readMatrixMarket } from '../src/mtx/index';
import { sellFormat } from '../src/sell/index';
import { type AnyFormat, getFormat } from '../src/registry';
import { slicedEllFormat, slicedEllFromCsr, slicedEllSpmv, slicedEllToCsr } from '../src/sliced-ell/index';
import { slicedEllRFormat, slicedEllRFromCsr, slicedEllRToCsr } from '../src/sliced-ell-r/index';
import { expectSameCsr, expectSpmvMatches, familyCases, lengthsOf, seedEllDense, surveyEllDense, vectorFor } from './ell-family-cases';
import { dataFile } from '../../../testdata/index';

const x5 = Float64Array.from([1, 2, 3, 4, 5]);

/** What a branch-free GPU kernel computes: every slot multiplied, padding included. */
function allSlotsEll(m: { rows: number; width: number; colIdx: Int32Array; values: Float64Array }, x: Float64Array): number[] {
  const y = new Array<number>(m.rows).fill(0);
  for (let i = 0; i < m.rows; i++) for (let k = 0; k < m.width; k++) y[i] += m.values[k * m.rows + i]! * x[m.colIdx[k * m.rows + i]!]!;
  return y;
}

describe('ELL (seed 001 §3.2) reference tier', () => {
  it('stores the seed example column-major with repeated-column padding', () => {
    const e = ellFromCsr(csrFromDense(seedEllDense));
    expect(e.width).toBe(2);
    expect(e.nnz).toBe(8);
    // NonZerosEntries [[1,0],[2,3],[4,5],[6,0],[7,0],[8,0]] read column by column
    expect(Array.from(e.values)).toEqual([1, 2, 4, 6, 7, 8, 0, 3, 5, 0, 0, 0]);
    // Column [[0,-1],[2,4],[1,4],[2,-1],[3,-1],[4,-1]] with −1 replaced by the row's last column
    expect(Array.from(e.colIdx)).toEqual([0, 2, 1, 2, 3, 4, 0, 4, 4, 2, 3, 4]);
    expect(Array.from(e.emptyRows)).toEqual([]);
    expect(Array.from(ellSpmv(e, x5))).toEqual([1, 21, 33, 18, 28, 40]);
  });

  it('stores the survey example (eq. 2.3–2.4) and its storage 2·Nmnzr·m (eq. 2.5)', () => {
    const e = ellFromCsr(csrFromDense(surveyEllDense));
    expect(e.width).toBe(3);
    // Data [[4,7,*],[2,3,6],[5,*,*],[2,*,*],[1,6,*]], column-major
    expect(Array.from(e.values)).toEqual([4, 2, 5, 2, 1, 7, 3, 0, 0, 6, 0, 6, 0, 0, 0]);
    expect(Array.from(e.colIdx)).toEqual([1, 0, 1, 4, 0, 3, 2, 1, 4, 3, 3, 4, 1, 4, 3]);
    const s = ellFormat.storageBytes(e, { valueBytes: 4, indexBytes: 4 });
    expect(s.storedElements).toBe(15);
    expect(s.bytes).toBe(2 * 3 * 5 * 4); // 2·(Nmnzr × m) elements of 4 bytes
    expect(s.beta).toBe(9 / 15);
    expect(s.padding).toBe(6);
    expect(Array.from(ellSpmv(e, x5))).toEqual([36, 41, 10, 10, 25]);
  });

  it('seed 001 formula (1): ROWS·MaxNonZeros·(sizeof(double) + sizeof(int))', () => {
    const e = ellFromCsr(csrFromDense(seedEllDense));
    const s = ellFormat.storageBytes(e);
    expect(s.bytes).toBe(6 * 2 * (8 + 4));
    expect(s.arrays).toEqual({ values: 96, colIdx: 48 });
    expect(s.beta).toBe(8 / 12);
    expect(ellStorageFormula(10, 10, 19).bytes).toBe(100 * 12); // §3.2: diagonal + one full row stores 100
  });

  it('tells an empty row from a row holding one explicit zero', () => {
    const a = csr(3, 3, [0, 1, 1, 2], [0, 1], [-0, 5]); // row 0: explicit −0 at col 0; row 1 empty
    const e = ellFromCsr(a);
    expect(e.width).toBe(1);
    expect(Array.from(e.colIdx)).toEqual([0, 0, 1]);
    expect(Array.from(e.emptyRows)).toEqual([1]);
    expectSameCsr(ellToCsr(e), a);
    const onlyEmpty = ellFromCsr(csrFromDense([[0, 0, 0], [0, 5, 0], [0, 0, 0]]));
    expect(Array.from(onlyEmpty.colIdx)).toEqual([0, 1, 0]);
    expect(Array.from(onlyEmpty.values)).toEqual([0, 5, 0]);
    expect(Array.from(onlyEmpty.emptyRows)).toEqual([0, 2]);
  });

  it('rejects corrupted arrays naming the row and slot', () => {
    const e = ellFromCsr(csrFromDense(seedEllDense));
    const badPad: EllMatrix = { ...e, values: e.values.slice() };
    badPad.values[6 + 0] = 9; // row 0, slot 1 is padding (column repeats) but holds 9
    expect(() => ellToCsr(badPad)).toThrow(InvalidMatrixError);
    expect(() => ellToCsr(badPad)).toThrow(/row 0, slot 1/);
    expect(() => ellSpmv(badPad, x5)).toThrow(/row 0, slot 1/); // a GPU kernel would add 9·x[0]
    const badCol: EllMatrix = { ...e, colIdx: e.colIdx.slice() };
    badCol.colIdx[1] = 7; // row 1 slot 0 outside 5 columns
    expect(() => ellToCsr(badCol)).toThrow(/row 1, slot 0/);
    expect(() => ellSpmv(badCol, x5)).toThrow(InvalidMatrixError);
    expect(() => ellToCsr({ ...e, emptyRows: Int32Array.of(3, 2) })).toThrow(/emptyRows/);
    expect(() => ellToCsr({ ...e, colIdx: e.colIdx.subarray(1) })).toThrow(/colIdx/);
    expect(() => ellSpmv(e, new Float64Array(4))).toThrow(DimensionMismatchError);
    expect(() => ellSpmv(e, x5, new Float64Array(5))).toThrow(DimensionMismatchError);
    expect(() => ellFromCsr(csr(1, 3, [0, 2], [2, 1], [1, 1], { validate: false }))).toThrow(/not sorted/);
  });

  it('refuses padding beyond 2^31 − 1 slots', () => {
    // 70 000 rows × one row of 40 000 entries = 2.8e9 slots (rows not materialised: only row 0 is long)
    const rows = 70_000;
    const rowPtr = new Int32Array(rows + 1).fill(40_000);
    rowPtr[0] = 0;
    const colIdx = Int32Array.from({ length: 40_000 }, (_, j) => j);
    const a = { format: 'csr' as const, rows, cols: 40_000, rowPtr, colIdx, values: new Float64Array(40_000) };
    expect(() => ellFromCsr(a)).toThrow(PaddingOverflowError);
    expect(() => ellFromCsr(a)).toThrow(/row 0/);
  });
});

describe('ELL-R (seed 001 §3.3) reference tier', () => {
  it('adds RowLength to the seed example', () => {
    const e = ellRFromCsr(csrFromDense(seedEllDense));
    expect(Array.from(e.rowLength)).toEqual([1, 2, 2, 1, 1, 1]);
    expect(Array.from(e.values)).toEqual([1, 2, 4, 6, 7, 8, 0, 3, 5, 0, 0, 0]);
    expect(Array.from(e.colIdx)).toEqual([0, 2, 1, 2, 3, 4, 0, 4, 4, 2, 3, 4]);
    expect(Array.from(ellRSpmv(e, x5))).toEqual([1, 21, 33, 18, 28, 40]);
    const s = ellRFormat.storageBytes(e);
    expect(s.bytes).toBe(6 * 2 * 12 + 6 * 4);
    expect(s.arrays.rowLength).toBe(24);
  });

  it('rejects a row length beyond the width or a bad padding value', () => {
    const e = ellRFromCsr(csrFromDense(seedEllDense));
    const rl = e.rowLength.slice();
    rl[3] = 3;
    expect(() => ellRToCsr({ ...e, rowLength: rl })).toThrow(/row 3: rowLength 3 outside \[0, 2\]/);
    expect(() => ellRSpmv({ ...e, rowLength: rl }, x5)).toThrow(InvalidMatrixError);
    const v = e.values.slice();
    v[9] = 1; // row 3 slot 1 is padding
    expect(() => ellRToCsr({ ...e, values: v })).toThrow(/row 3, slot 1: padding value must be 0/);
  });
});

describe('sliced ELL and sliced ELL-R (seed 001 §3.4–3.5) reference tier', () => {
  it('slices the seed example in slices of 2 rows: widths 2, 2, 1', () => {
    const s = slicedEllFromCsr(csrFromDense(seedEllDense), { sliceHeight: 2 });
    expect(s.numSlices).toBe(3);
    expect(Array.from(s.sliceWidth)).toEqual([2, 2, 1]);
    expect(Array.from(s.slicePtr)).toEqual([0, 4, 8, 10]);
    // NonZerosEntries1 [[1,0],[2,3]], NonZerosEntries2 [[4,5],[6,0]], NonZerosEntries3 [[7],[8]], each column-major
    expect(Array.from(s.values)).toEqual([1, 2, 0, 3, 4, 6, 5, 0, 7, 8]);
    expect(Array.from(s.colIdx)).toEqual([0, 2, 0, 4, 1, 2, 4, 2, 3, 4]);
    expect(Array.from(slicedEllSpmv(s, x5))).toEqual([1, 21, 33, 18, 28, 40]);
    const st = slicedEllFormat.storageBytes(s);
    // seed 001 §4.1: the sum of the slices' ELL storage, 2·2·12 + 2·2·12 + 2·1·12 = 120
    expect(st.arrays.values! + st.arrays.colIdx!).toBe(120);
    expect(st.bytes).toBe(120 + 4 * 4 + 3 * 4); // + slicePtr (Ns + 1) + sliceWidth Ns
    expect(st.beta).toBe(8 / 10);
  });

  it('stores a short last slice with its own height (no phantom rows)', () => {
    const s = slicedEllFromCsr(csrFromDense(surveyEllDense), { sliceHeight: 2 });
    expect(Array.from(s.sliceWidth)).toEqual([3, 1, 2]);
    expect(Array.from(s.slicePtr)).toEqual([0, 6, 8, 10]); // last slice: 1 row × 2
    expect(Array.from(s.values.subarray(8))).toEqual([1, 6]);
    expect(Array.from(s.colIdx.subarray(8))).toEqual([0, 3]);
    expectSameCsr(slicedEllToCsr(s), csrFromDense(surveyEllDense));
  });

  it('sliced ELL-R adds rl[] and stops there', () => {
    const a = csrFromDense(seedEllDense);
    const s = slicedEllRFromCsr(a, { sliceHeight: 2 });
    expect(Array.from(s.rowLength)).toEqual([1, 2, 2, 1, 1, 1]);
    expect(Array.from(slicedEllRFormat.spmvReference(s, x5))).toEqual([1, 21, 33, 18, 28, 40]);
    expect(slicedEllRFormat.storageBytes(s).bytes).toBe(120 + 16 + 12 + 6 * 4);
    const rl = s.rowLength.slice();
    rl[5] = 2; // slice 3 has width 1
    expect(() => slicedEllRToCsr({ ...s, rowLength: rl })).toThrow(/row 5: rowLength 2 outside \[0, 1\]/);
  });

  it('validates sliceHeight and the slice pointers', () => {
    const a = csrFromDense(seedEllDense);
    for (const h of [0, -1, 1.5, Number.NaN]) expect(() => slicedEllFromCsr(a, { sliceHeight: h })).toThrow(InvalidParameterError);
    expect(() => slicedEllRFromCsr(a, { sliceHeight: 0 })).toThrow(/parameter sliceHeight: expected an integer ≥ 1, got 0/);
    const s = slicedEllFromCsr(a, { sliceHeight: 2 });
    const ptr = s.slicePtr.slice();
    ptr[1] = 3;
    expect(() => slicedEllToCsr({ ...s, slicePtr: ptr })).toThrow(/slice 0/);
  });
});

describe('ELL family on the generator families', () => {
  const variants: { name: string; fmt: AnyFormat; params: object }[] = [
    { name: 'ell', fmt: ellFormat, params: {} },
    { name: 'ell-r', fmt: ellRFormat, params: {} },
    ...[1, 2, 3, 8, 32].map((h) => ({ name: `sliced-ell h=${h}`, fmt: slicedEllFormat, params: { sliceHeight: h } })),
    ...[1, 5, 32].map((h) => ({ name: `sliced-ell-r h=${h}`, fmt: slicedEllRFormat, params: { sliceHeight: h } })),
  ];
  for (const { name, a } of familyCases()) {
    it(`round trip, product and storage: ${name}`, () => {
      const x = vectorFor(a.cols);
      const len = lengthsOf(a);
      const maxLen = len.reduce((p, q) => Math.max(p, q), 0);
      for (const v of variants) {
        const m = v.fmt.fromCsr(a, v.params);
        expectSameCsr(v.fmt.toCsr(m), a);
        expectSpmvMatches(a, x, v.fmt.spmvReference(m, x));
        const st = v.fmt.storageBytes(m, { valueBytes: 4, indexBytes: 4 });
        const h = (v.params as { sliceHeight?: number }).sliceHeight;
        if (h === undefined) {
          expect(st.storedElements).toBe(a.rows * maxLen);
          expect(st.bytes).toBe(a.rows * maxLen * 8 + (v.name === 'ell-r' ? 4 * a.rows : 0));
        } else {
          // Σ over slices of (rows in slice)·(longest row in slice), computed independently
          let slots = 0;
          const ns = Math.ceil(a.rows / h);
          for (let s = 0; s < ns; s++) {
            const part = len.slice(s * h, (s + 1) * h);
            slots += part.length * part.reduce((p, q) => Math.max(p, q), 0);
          }
          expect(st.storedElements).toBe(slots);
          expect(st.bytes).toBe(slots * 8 + (ns + 1) * 4 + ns * 4 + (v.name.startsWith('sliced-ell-r') ? 4 * a.rows : 0));
        }
        expect(st.nnz).toBe(a.rowPtr[a.rows]);
        expect(st.beta).toBe(st.storedElements === 0 ? 1 : st.nnz / st.storedElements);
      }
    });
  }

  it('padding is safe for a branch-free GPU kernel: multiplying every slot gives the exact product', () => {
    for (const { a } of familyCases()) {
      const x = vectorFor(a.cols, 5);
      const e = ellFromCsr(a);
      for (const c of e.colIdx) expect(c >= 0 && c < a.cols).toBe(true);
      expect(allSlotsEll(e, x)).toEqual(Array.from(ellSpmv(e, x)).map((v) => v + 0));
      const s = slicedEllFromCsr(a, { sliceHeight: 4 });
      for (const c of s.colIdx) expect(c >= 0 && c < a.cols).toBe(true);
    }
  });

  it('the registry lists the ELL family by name', () => {
    for (const n of ['ell', 'ell-r', 'sliced-ell', 'sliced-ell-r', 'sell', 'hybrid']) expect(getFormat(n).name).toBe(n);
    const a = oneDenseRow(20, 20, 2, 20, 3);
    const ell = getFormat('ell');
    expect(ell.storageBytes(ell.fromCsr(a)).storedElements).toBe(400); // one dense row pads every row
    const sl = getFormat('sliced-ell');
    expect(sl.storageBytes(sl.fromCsr(a, { sliceHeight: 4 })).storedElements).toBe(4 * 20 + 4 * 2 * 4);
    expect(Array.from(csrSpmv(a, vectorFor(20)))).toEqual(Array.from(csrSpmv(ell.toCsr(ell.fromCsr(a)), vectorFor(20))));
  });
});

describe('ELL family on real matrices (shared/data/matrices)', () => {
  it('round trip and product for every ELL-family format', async () => {
    const all = [ellFormat, ellRFormat, slicedEllFormat, slicedEllRFormat, sellFormat, hybridFormat] as unknown as AnyFormat[];
    for (const file of ['bcsstk01.mtx', 'LFAT5.mtx', 'arc130.mtx', '1138_bus.mtx']) {
      const { matrix: a } = await readMatrixMarket(dataFile('matrices', file));
      const x = vectorFor(a.cols, 13);
      for (const f of all) {
        const m = f.fromCsr(a);
        expectSameCsr(f.toCsr(m), a);
        expectSpmvMatches(a, x, f.spmvReference(m, x));
        const st = f.storageBytes(m);
        expect(st.beta, `${file} ${f.name}`).toBeGreaterThan(0);
        expect(st.beta).toBeLessThanOrEqual(1);
      }
    }
  });
});
