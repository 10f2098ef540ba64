import { describe, expect, it } from 'vitest';
import { axcFormat, axcFromCsr, axcLoadX, axcSpmvReference, axcStorageBytes, axcToCsr } from '../src/axc/index';
import { axtFromCsr, axtLoadX } from '../src/axt/index';
import { DimensionMismatchError, InvalidMatrixError, InvalidParameterError } from '../src/core/errors';
import type { CsrMatrix } from '../src/core/types';
import { csr, csrEquals, csrFromTriplets, csrNnz, csrSpmv } from '../src/csr/csr';
import * as gen from '../src/generators/index';
import { readMatrixMarket } from '../src/mtx/index';
import { formats } from '../src/registry';
import { dataFile } from '../../../testdata/index';

/*
 * Fig. 1 of seed 004 is an image that the markdown does not contain; this is the same
 * reconstruction as in axt.test.ts: HBRs = THW = 4, a 6×6 matrix with row lengths 2, 1, 3, 6, 1, 3,
 * values a_ij = 10(i+1) + (j+1), x_j = j + 1. §2.3.1 states that AXTUH1's ax[] is identical to
 * AXC's, which is checked below.
 */
const FIG1 = csrFromTriplets(
  6,
  6,
  [0, 0, 1, 2, 2, 2, 3, 3, 3, 3, 3, 3, 4, 5, 5, 5],
  [0, 2, 1, 0, 3, 5, 0, 1, 2, 3, 4, 5, 4, 1, 3, 5],
  [11, 13, 22, 31, 34, 36, 41, 42, 43, 44, 45, 46, 55, 62, 64, 66],
);
const X6 = Float64Array.from([1, 2, 3, 4, 5, 6]);

describe('AXC reference tier: the Fig. 1 example (reconstructed)', () => {
  it('bricks of HBRs entries then HBRs x values; brp points at each row\'s first brick', () => {
    const m = axcFromCsr(FIG1, { hbrs: 4 });
    expect(m.nBricks).toBe(7);
    axcLoadX(m, X6);
    expect(Array.from(m.ax)).toEqual([
      11, 13, 0, 0, 1, 3, 0, 0, //   row 0
      22, 0, 0, 0, 2, 0, 0, 0, //    row 1
      31, 34, 36, 0, 1, 4, 6, 0, //  row 2
      41, 42, 43, 44, 1, 2, 3, 4, // row 3, brick 1
      45, 46, 0, 0, 5, 6, 0, 0, //   row 3, brick 2
      55, 0, 0, 0, 5, 0, 0, 0, //    row 4
      62, 64, 66, 0, 2, 4, 6, 0, //  row 5
    ]);
    expect(Array.from(m.brp)).toEqual([0, 8, 16, 24, 40, 48, 56]);
    expect(Array.from(m.xIdx)).toEqual([0, 2, -1, -1, 1, -1, -1, -1, 0, 3, 5, -1, 0, 1, 2, 3, 4, 5, -1, -1, 4, -1, -1, -1, 1, 3, 5, -1]);
    expect(Array.from(axcSpmvReference(m, X6))).toEqual([50, 44, 383, 931, 275, 776]);
    expect(csrEquals(axcToCsr(m), FIG1)).toBe(true);
  });
  it('has the same ax[] as AXTUH1 with THW = HBRs (§2.3.1)', () => {
    for (const hbrs of [1, 2, 4, 8]) {
      const c = axcFromCsr(FIG1, { hbrs });
      const t = axtFromCsr(FIG1, { thw: hbrs, th: 1, mode: 'UNC' });
      axcLoadX(c, X6);
      axtLoadX(t, X6);
      expect(Array.from(c.ax)).toEqual(Array.from(t.ax));
      expect(Array.from(c.xIdx)).toEqual(Array.from(t.xIdx));
    }
  });
  it('counts storage and β by hand', () => {
    const m = axcFromCsr(FIG1, { hbrs: 4 });
    const st = axcStorageBytes(m);
    // 28 slots: ax 2·28 float64, brp 7 int32, xIdx 28 int32
    expect(st.arrays).toEqual({ ax: 448, brp: 28, xIdx: 112 });
    expect(st.bytes).toBe(588);
    expect(st.storedElements).toBe(28);
    expect(st.beta).toBe(16 / 28);
    expect(st.padding).toBe(12);
    expect(axcStorageBytes(m, { valueBytes: 4, indexBytes: 8 }).arrays).toEqual({ ax: 224, brp: 56, xIdx: 224 });
    // the paper's Table 2 counting for M04 (every row ≤ 4 entries, HBRs = 8): β = 4 / 8
    const rows4 = gen.uniformRandom(64, 64, 4, 3);
    expect(axcStorageBytes(axcFromCsr(rows4, { hbrs: 8 })).beta).toBe(0.5);
    expect(axcStorageBytes(axcFromCsr(rows4, { hbrs: 4 })).beta).toBe(1);
  });
});

const GENERATED: [string, CsrMatrix][] = [
  ['uniform', gen.uniformRandom(50, 40, 5, 11)],
  ['power-law', gen.powerLaw(80, 60, { seed: 12 })],
  ['empty rows', gen.withEmptyRows(60, 50, 4, 0.4, 13)],
  ['one dense row', gen.oneDenseRow(40, 300, 3, 260, 7, 14)],
  ['banded', gen.banded(50, 2, 3, { seed: 15 })],
  ['block-structured', gen.blockStructured(6, 8, 3, 2, 2, 16)],
  ['rectangular wide', gen.uniformRandom(30, 70, 6, 17)],
  ['rectangular tall', gen.uniformRandom(70, 30, 3, 18)],
  ['n = 0', csr(0, 0, [0], [], [])],
  ['5 × 0', csr(5, 0, [0, 0, 0, 0, 0, 0], [], [])],
  ['n = 1', gen.uniformRandom(1, 1, 1, 19)],
  ['n = 1 empty', csr(1, 1, [0, 0], [], [])],
];

describe('AXC conformance on the generators × HBRs', () => {
  for (const [name, a] of GENERATED) {
    it(`${name}: round trip, product against CSR, brick counts`, () => {
      const x = Float64Array.from({ length: a.cols }, (_, j) => Math.cos(j) - 0.1);
      const ref = csrSpmv(a, x);
      for (const hbrs of [1, 2, 8, 32, 64]) {
        const label = `${name} hbrs=${hbrs}`;
        const m = axcFromCsr(a, { hbrs });
        expect(csrEquals(axcToCsr(m), a), label).toBe(true);
        let bricks = 0;
        for (let i = 0; i < a.rows; i++) bricks += Math.ceil((a.rowPtr[i + 1]! - a.rowPtr[i]!) / hbrs);
        expect(m.nBricks, label).toBe(bricks);
        expect(m.ax.length, label).toBe(2 * hbrs * bricks);
        expect(m.brp[a.rows], label).toBe(m.ax.length);
        expect(axcStorageBytes(m).beta, label).toBe(bricks === 0 ? 1 : csrNnz(a) / (hbrs * bricks));
        const y = axcSpmvReference(m, x);
        for (let i = 0; i < a.rows; i++) {
          let abs = 0;
          for (let k = a.rowPtr[i]!; k < a.rowPtr[i + 1]!; k++) abs += Math.abs(a.values[k]! * x[a.colIdx[k]!]!);
          const tol = 4 * 2 ** -52 * (a.rowPtr[i + 1]! - a.rowPtr[i]! + 2) * abs;
          expect(Math.abs(y[i]! - ref[i]!), `${label} row ${i}`).toBeLessThanOrEqual(tol);
        }
      }
    });
  }
  it('real matrices (shared/data/matrices): round trip and product with HBRs = 8 and 32', async () => {
    for (const file of ['west0479.mtx', 'bcsstk08.mtx']) {
      const { matrix: a } = await readMatrixMarket(dataFile('matrices', file));
      const x = Float64Array.from({ length: a.cols }, (_, j) => Math.sin(j + 1));
      const ref = csrSpmv(a, x);
      for (const hbrs of [8, 32]) {
        const m = axcFromCsr(a, { hbrs });
        expect(csrEquals(axcToCsr(m), a)).toBe(true);
        const y = axcSpmvReference(m, x);
        for (let i = 0; i < a.rows; i++) {
          let abs = 0;
          for (let k = a.rowPtr[i]!; k < a.rowPtr[i + 1]!; k++) abs += Math.abs(a.values[k]! * x[a.colIdx[k]!]!);
          expect(Math.abs(y[i]! - ref[i]!), `${file} hbrs=${hbrs} row ${i}`).toBeLessThanOrEqual(4 * 2 ** -52 * (a.rowPtr[i + 1]! - a.rowPtr[i]! + 2) * abs);
        }
      }
    }
  });
  it('is in the registry and works through its descriptor', () => {
    expect(formats).toContain(axcFormat);
    const a = gen.powerLaw(50, 50, { seed: 5 });
    const m = axcFormat.fromCsr(a);
    expect(m.hbrs).toBe(32);
    expect(csrEquals(axcFormat.toCsr(m), a)).toBe(true);
    const x = Float64Array.from({ length: 50 }, (_, j) => j % 3);
    const y = axcFormat.spmvReference(m, x);
    const ref = csrSpmv(a, x);
    for (let i = 0; i < 50; i++) expect(y[i]).toBeCloseTo(ref[i]!, 12);
  });
});

describe('AXC explicit zeros, non-finite x, errors', () => {
  it('keeps explicit zeros (and −0) apart from padding', () => {
    const a = csr(3, 4, [0, 3, 3, 5], [0, 1, 3, 0, 2], [0, 2, -0, 5, 0]);
    for (const hbrs of [1, 2, 4, 64]) {
      const back = axcToCsr(axcFromCsr(a, { hbrs }));
      expect(csrEquals(back, a)).toBe(true);
      expect(Object.is(back.values[2], -0)).toBe(true);
    }
  });
  it('padding is loaded with x = 0, so a non-finite x meets only the rows that use it', () => {
    const a = gen.uniformRandom(30, 20, 3, 8);
    const x = Float64Array.from({ length: 20 }, (_, j) => (j === 0 ? Number.POSITIVE_INFINITY : 1));
    const ref = csrSpmv(a, x);
    const y = axcSpmvReference(axcFromCsr(a, { hbrs: 8 }), x);
    for (let i = 0; i < 30; i++) {
      if (Number.isFinite(ref[i]!)) expect(y[i]).toBeCloseTo(ref[i]!, 12);
      else expect(y[i]).toBe(ref[i]);
    }
  });
  it('rejects a bad HBRs, wrong lengths and a corrupted brp', () => {
    const a = gen.uniformRandom(10, 10, 3, 9);
    for (const hbrs of [0, 3, 128, 2.5]) expect(() => axcFromCsr(a, { hbrs })).toThrow(InvalidParameterError);
    expect(() => axcFromCsr(a, { hbrs: 3 })).toThrow(/parameter hbrs: expected a power of two in 1…64/);
    const m = axcFromCsr(a, { hbrs: 4 });
    expect(() => axcSpmvReference(m, new Float64Array(11))).toThrow(DimensionMismatchError);
    expect(() => axcSpmvReference(m, new Float64Array(10), new Float64Array(2))).toThrow(/expected length 10, got 2/);
    const brp = m.brp.slice();
    brp[3] = brp[3]! + 1;
    expect(() => axcToCsr({ ...m, brp })).toThrow(/row 2: brp/);
    const xIdx = m.xIdx.slice();
    xIdx[0] = 99;
    expect(() => axcToCsr({ ...m, xIdx })).toThrow(InvalidMatrixError);
    expect(() => axcLoadX({ ...m, xIdx }, new Float64Array(10))).toThrow(/column 99/);
  });
});
