/**
 * CSR-VI with column windows (issue 20, session 13): lossless round trips (bits of −0, NaN, ±Inf,
 * subnormals kept), the float64 product against csrSpmv, segments at window boundaries, empty and
 * one-entry rows, every v from 1 to 16, an all-raw and an all-table matrix, the plan's choice on a
 * CI-like matrix, refusals with their reasons, and validateCsrVi on corrupted copies.
 */
import { describe, expect, it } from 'vitest';
import { type CsrMatrix, csrFromTriplets, generators as g, csrSpmv, csrViFormat, csrViFromCsr, csrViFromCsrParallel, csrViPlan, csrViSpmv, csrViStorageBytes, csrViToCsr, getFormat, InvalidMatrixError, InvalidParameterError, validateCsrVi } from '../src/index';

const ciLike = g.repeatedValues;

const bits = (a: Float64Array) => [...new Uint32Array(a.buffer, a.byteOffset, 2 * a.length)];

function expectSame(b: CsrMatrix, a: CsrMatrix): void {
  expect([...b.rowPtr]).toEqual([...a.rowPtr]);
  expect([...b.colIdx]).toEqual([...a.colIdx]);
  expect(bits(b.values)).toEqual(bits(a.values));
}

function expectProduct(a: CsrMatrix, m = csrViFromCsr(a)): void {
  const x = Float64Array.from({ length: a.cols }, (_, i) => Math.sin(i + 1));
  const want = csrSpmv(a, x);
  const got = csrViSpmv(m, x);
  for (let i = 0; i < a.rows; i++) expect(Math.abs(got[i]! - want[i]!)).toBeLessThanOrEqual(1e-12 * (1 + Math.abs(want[i]!)));
}

describe('csr-vi format', () => {
  it('is registered, with valueBits 0 (chosen from the matrix) as its default', () => {
    expect(getFormat('csr-vi')).toBe(csrViFormat);
    expect(csrViFormat.defaultParams).toEqual({ valueBits: 0 });
  });

  // 300 017 columns: windows of 2^16 cut every row into several segments at v = 16
  const wide = ciLike(400, 300_017, 40, 50, 0.1, 7);
  for (const v of [1, 4, 8, 11, 12, 15, 16]) {
    it(`v = ${v}: round trip bit for bit, the product, every entry in a word or the raw stream`, () => {
      const m = csrViFromCsr(wide, { valueBits: v });
      expect(m.valueBits).toBe(v);
      expect(m.table.length).toBeLessThanOrEqual(2 ** v);
      expect(m.packed.length + m.rawCols.length).toBe(m.nnz);
      validateCsrVi(m);
      expectSame(csrViToCsr(m), wide);
      expectProduct(wide, m);
      // a row's segments: one per window it touches, each base a multiple of 2^(32 − v)
      for (let s = 0; s < m.segBase.length; s++) expect(m.segBase[s]! % 2 ** (32 - v)).toBe(0);
    });
  }

  it('v = 16 on 300 017 columns: rows of several segments, windows at every boundary', () => {
    const m = csrViFromCsr(wide, { valueBits: 16 });
    expect(m.segEnd.length / m.rows).toBeGreaterThan(2);
    expect(new Set(m.segBase)).toEqual(new Set([0, 65536, 131072, 196608, 262144]));
  });

  it('keeps −0, NaN (payload), ±Inf and subnormals bit for bit; −0 and NaN in the raw stream', () => {
    const nan = new Float64Array(new Uint32Array([0x1234, 0x7ff80001]).buffer)[0]!;
    const vals = [-0, -0, nan, nan, Infinity, Infinity, -Infinity, 5e-324, 5e-324, 0, 0, 1.5, 1.5];
    const a = csrFromTriplets(2, 70_000, vals.map((_, i) => i % 2), vals.map((_, i) => i * 5000), vals);
    const m = csrViFromCsr(a, { valueBits: 16 });
    expectSame(csrViToCsr(m), a);
    const raw = new Set(bits(m.rawValues));
    expect(raw.has(0x80000000)).toBe(true); // −0's high word
    expect(raw.has(0x7ff80001)).toBe(true);
    expect([...m.table].some((t) => Object.is(t, -0) || Number.isNaN(t))).toBe(false);
  });

  it('an empty matrix, a matrix of empty rows, one-entry rows, all-raw and all-table matrices', () => {
    for (const a of [
      csrFromTriplets(0, 0, [], [], []),
      csrFromTriplets(5, 3, [], [], []),
      csrFromTriplets(4, 100_000, [0, 1, 2, 3], [99_999, 0, 65_535, 65_536], [2, 2, 2, 2]),
      ciLike(50, 1000, 9, 1, 1, 3), // every value unique: all raw
      ciLike(50, 1000, 9, 3, 0, 4), // three values: all in the table
    ]) {
      const m = csrViFromCsr(a);
      validateCsrVi(m);
      expectSame(csrViToCsr(m), a);
      expectProduct(a, m);
    }
    expect(csrViFromCsr(ciLike(50, 1000, 9, 1, 1, 3)).packed.length).toBe(0);
    expect(csrViFromCsr(ciLike(50, 1000, 9, 3, 0, 4)).rawCols.length).toBe(0);
  });

  it('the plan: on a CI-like matrix (3 000 values over 97 % of entries, 300 per row) it chooses ≥ 12 bits and < 4.5 bytes per entry', () => {
    const a = ciLike(1000, 2_000_000, 300, 3000, 0.03, 9);
    const plan = csrViPlan(a);
    expect(plan.valueBits).toBeGreaterThanOrEqual(12);
    const m = csrViFromCsr(a);
    const b = csrViStorageBytes(m, { valueBytes: 4, indexBytes: 4 }).bytes / m.nnz;
    expect(b).toBeGreaterThan(4);
    expect(b).toBeLessThan(4.5);
    expect(plan.bytesPerEntry).toHaveLength(16);
  });

  it('refuses bad parameters and non-canonical CSR, naming what was expected', () => {
    expect(() => csrViFromCsr(wide, { valueBits: 17 })).toThrow(InvalidParameterError);
    expect(() => csrViFromCsr(wide, { valueBits: 2.5 })).toThrow(/an integer in 1…16, or 0/);
    const unsorted: CsrMatrix = { format: 'csr', rows: 1, cols: 4, rowPtr: Int32Array.of(0, 2), colIdx: Int32Array.of(3, 1), values: Float64Array.of(1, 2) };
    expect(() => csrViFromCsr(unsorted)).toThrow(InvalidMatrixError);
  });

  it('validateCsrVi names a corrupted segment end, base, column and table index', () => {
    const m = csrViFromCsr(wide, { valueBits: 16 });
    expect(() => validateCsrVi({ ...m, segEnd: m.segEnd.map((e, i) => (i === 3 ? e + 1000 : e)) })).toThrow(/segment 3: end/);
    expect(() => validateCsrVi({ ...m, segBase: m.segBase.map((b, i) => (i === 2 ? b + 1 : b)) })).toThrow(/not a multiple of 2\^16/);
    const last = m.segBase.length - 1;
    expect(() => validateCsrVi({ ...m, segBase: m.segBase.map((b, i) => (i === last ? 327_680 : b)) })).toThrow(/column \d+ \(of 300017\)/);
    expect(() => validateCsrVi({ ...m, table: m.table.subarray(0, 1) })).toThrow(/table index \d+ \(of 1\)/);
    expect(() => validateCsrVi({ ...m, valueBits: 0 })).toThrow(/valueBits 0/);
  });

  it('the product refuses x and y of the wrong lengths', () => {
    const m = csrViFromCsr(wide);
    expect(() => csrViSpmv(m, new Float64Array(3))).toThrow(/x: expected length 300017/);
    expect(() => csrViSpmv(m, new Float64Array(300_017), new Float64Array(2))).toThrow(/y: expected length 400/);
  });

  it('on worker threads: the serial result array for array (3 and 1 workers, a row range per worker)', async () => {
    const a = ciLike(3001, 2_000_000, 60, 500, 0.05, 21);
    const s = csrViFromCsr(a);
    for (const workers of [3, 1]) {
      const p = await csrViFromCsrParallel(a, {}, { workers, minEntries: 0 });
      for (const k of ['packPtr', 'packed', 'segPtr', 'segEnd', 'segBase', 'rawPtr', 'rawCols', 'table'] as const) expect([...p[k]], `${workers} workers: ${k}`).toEqual([...s[k]]);
      expect(bits(p.rawValues)).toEqual(bits(s.rawValues));
      expect(p.valueBits).toBe(s.valueBits);
    }
    // a fixed v and windows of 2^16 (several segments a row) cross the chunk seams the same way
    const p16 = await csrViFromCsrParallel(wide, { valueBits: 16 }, { workers: 4, minEntries: 0 });
    expectSame(csrViToCsr(p16), wide);
    expect([...p16.segEnd]).toEqual([...csrViFromCsr(wide, { valueBits: 16 }).segEnd]);
  });
});
