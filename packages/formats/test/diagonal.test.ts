import { describe, expect, it } from 'vitest';
import { InvalidMatrixError, InvalidParameterError } from '../src/core/errors';
import type { CsrMatrix, FormatDescriptor, SparseMatrix } from '../src/core/types';
import { csrFromDense, csrSpmv, csrTranspose } from '../src/csr/csr';
import { cdmCompactDiagonal, cdmFormat, cdmFromCsr, cdmReverseDiagonal, cdmReverseIndex, cdmShiftUp, cdmSpmvTranspose, cdmTransposeView } from '../src/cdm/index';
import { diaFormat, diaFromCsr, diagonalStats } from '../src/dia/index';
import { uniformRandom } from '../src/generators/index';
import { hmFormat, hmFromCsr, hmIndex } from '../src/hm/index';
import { cases, expectRoundTrip, expectSpmvMatches, vectorFor } from './format-cases';

// survey (sparse-format-survey-zh.md) eq. 2.1
const surveyDense = [
  [0, 4, 0, 7, 0],
  [2, 0, 3, 0, 6],
  [0, 5, 0, 0, 0],
  [0, 0, 0, 0, 2],
  [1, 0, 0, 6, 0],
];

/** a_ij = 1 + 10·i + j inside the band −kl ≤ j − i ≤ ku, 0 outside. */
function bandDense(n: number, kl: number, ku: number): number[][] {
  return Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => (j - i <= ku && i - j <= kl ? 1 + 10 * i + j : 0)));
}

function denseProduct(a: number[][], b: number[][]): number[][] {
  const n = a.length;
  return Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => a[i].reduce((s, aik, k) => s + aik * b[k][j], 0)));
}

describe('DIA (survey §2.1.1)', () => {
  it('stores the survey example with the survey offsets and diagonals', () => {
    const d = diaFromCsr(csrFromDense(surveyDense));
    expect(Array.from(d.offsets)).toEqual([-4, -1, 1, 3]);
    // the survey's Data columns (eq. 2.2) are the in-matrix parts of our padded rows
    expect(Array.from(d.data)).toEqual([0, 0, 0, 0, 1, 0, 2, 5, 0, 6, 4, 3, 0, 2, 0, 7, 6, 0, 0, 0]);
    expect(Array.from(d.data.slice(4, 5))).toEqual([1]);
    expect(Array.from(d.data.slice(6, 10))).toEqual([2, 5, 0, 6]);
    expect(Array.from(d.data.slice(10, 14))).toEqual([4, 3, 0, 2]);
    expect(Array.from(d.data.slice(15, 17))).toEqual([7, 6]);
    expect(Array.from(diaFormat.spmvReference(d, Float64Array.from([1, 2, 3, 4, 5])))).toEqual([36, 41, 10, 10, 25]);
  });
  it('counts storage by hand', () => {
    const s = diaFormat.storageBytes(diaFromCsr(csrFromDense(surveyDense)), { valueBytes: 8, indexBytes: 4 });
    expect(s.storedElements).toBe(20);
    expect(s.bytes).toBe(20 * 8 + 4 * 4);
    expect(s.beta).toBe(9 / 20);
    expect(s.padding).toBe(11);
  });
  it('reports diagonal statistics', () => {
    const s = diagonalStats(csrFromDense(surveyDense));
    expect(s.count).toBe(4);
    expect(Array.from(s.offsets)).toEqual([-4, -1, 1, 3]);
    expect(Array.from(s.nnzPerDiagonal)).toEqual([1, 3, 3, 2]);
    expect(s.inMatrixSlots).toBe(1 + 4 + 4 + 2);
    expect(s.fillRatio).toBe(9 / 20);
    expect(s.diagonalFill).toBe(9 / 11);
  });
  it('refuses more diagonals than maxDiagonals, naming the count', () => {
    const a = uniformRandom(64, 64, 20, 1);
    const count = diagonalStats(a).count;
    expect(() => diaFromCsr(a, { maxDiagonals: 10 })).toThrow(InvalidParameterError);
    expect(() => diaFromCsr(a, { maxDiagonals: 10 })).toThrow(new RegExp(`${count} occupied diagonals`));
    expect(() => diaFromCsr(a, { maxDiagonals: 1.5 })).toThrow(/maxDiagonals/);
    expect(diaFromCsr(a, { maxDiagonals: count }).offsets.length).toBe(count);
  });
});

describe('HM diagonal storage (seed 002 §3.1)', () => {
  it('stores Figure 2a (n = 4, ku = 2, kl = 1) in the paper order', () => {
    const h = hmFromCsr(csrFromDense(bandDense(4, 1, 2)));
    // (a00, a11, a22, a33 | a01, a12, a23 | a02, a13 | a10, a21, a32)
    expect(Array.from(h.values)).toEqual([1, 12, 23, 34, 2, 13, 24, 3, 14, 11, 22, 33]);
    expect(h.numDiagonals).toBe(4);
    expect(Array.from(h.offsets)).toEqual([0, 1, 2, -1]);
    expect(Array.from(h.starts)).toEqual([0, 4, 7, 9]);
    const n = 4;
    const ku = 2;
    const kl = 1;
    // size n(ku + kl + 1) − ku(ku+1)/2 − kl(kl+1)/2
    expect(h.values.length).toBe(n * (ku + kl + 1) - (ku * (ku + 1)) / 2 - (kl * (kl + 1)) / 2);
    // k-th superdiagonal starts at x + nk − k(k−1)/2 with x = 0
    for (let k = 1; k <= ku; k++) expect(h.starts[k]).toBe(n * k - (k * (k - 1)) / 2);
    // rule A_c[i][j] → A[j−i][min(i, j)]
    expect(h.values[hmIndex(h, 2, 1)]).toBe(22);
    expect(h.values[hmIndex(h, 1, 3)]).toBe(14);
    expect(hmIndex(h, 3, 0)).toBe(-1);
  });
  it('stores a dense matrix in n² slots, diagonals 0, 1, 2, 3, −1, −2, −3', () => {
    const h = hmFromCsr(csrFromDense(bandDense(4, 3, 3)));
    expect(h.values.length).toBe(16);
    expect(Array.from(h.offsets)).toEqual([0, 1, 2, 3, -1, -2, -3]);
    expect(Array.from(h.values)).toEqual([1, 12, 23, 34, 2, 13, 24, 3, 14, 4, 11, 22, 33, 21, 32, 31]);
  });
  it('counts storage by hand', () => {
    const s = hmFormat.storageBytes(hmFromCsr(csrFromDense(bandDense(4, 1, 2))), { valueBytes: 4, indexBytes: 4 });
    expect(s.bytes).toBe(12 * 4 + 4 * 4 + 4 * 4);
    expect(s.beta).toBe(1);
  });
  it('refuses more diagonals than maxDiagonals', () => {
    expect(() => hmFromCsr(uniformRandom(50, 50, 10, 2), { maxDiagonals: 5 })).toThrow(InvalidParameterError);
  });
});

describe('CDM compact diagonal storage (seed 002 §3.2, §4)', () => {
  const dense = bandDense(4, 3, 3); // a_ij = 1 + 10i + j
  const c = cdmFromCsr(csrFromDense(dense));
  it('packs super k with sub n − k: A_3 = (a03, a10, a21, a32)', () => {
    expect(Array.from(c.offsets)).toEqual([0, 1, 2, 3]);
    expect(Array.from(cdmCompactDiagonal(c, 3))).toEqual([4, 11, 22, 33]);
    expect(Array.from(cdmCompactDiagonal(c, 1))).toEqual([2, 13, 24, 31]);
    expect(Array.from(c.values.slice(0, 4))).toEqual([1, 12, 23, 34]);
  });
  it('reverse compact diagonals: B̃_3 = (b30, b01, b12, b23), B̃_1 = (b10, b21, b32, b03)', () => {
    expect(Array.from(cdmReverseDiagonal(c, 3))).toEqual([31, 2, 13, 24]);
    expect(Array.from(cdmReverseDiagonal(c, 1))).toEqual([11, 22, 33, 4]);
    expect(Array.from(cdmReverseDiagonal(c, 2))).toEqual([21, 32, 3, 14]);
    // B̃_3^{r1} = (b01, b12, b23, b30)
    expect(Array.from(cdmShiftUp(cdmReverseDiagonal(c, 3), 1))).toEqual([2, 13, 24, 31]);
    // addressed in place: no copy
    expect(c.values[cdmReverseIndex(c, 3, 0)]).toBe(31);
  });
  it('the §4 product formulas C_0 and C_k reproduce the dense product exactly', () => {
    for (const n of [4, 5]) {
      const r = (i: number, j: number, s: number) => ((i * 7 + j * 3 + s) % 9) - 4;
      const ad = Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => r(i, j, 1)));
      const bd = Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => r(i, j, 5)));
      const ca = cdmFromCsr(csrFromDense(ad));
      const cb = cdmFromCsr(csrFromDense(bd));
      const prod = denseProduct(ad, bd);
      for (let k = 0; k < n; k++) {
        // C_k = A_k ∘ B_0^{r_k} + Σ_{i=1}^{n−1} A_{(k+i) mod n} ∘ B̃_i^{r_k}
        const ck = new Float64Array(n);
        const b0 = cdmShiftUp(cdmCompactDiagonal(cb, 0), k);
        const ak = cdmCompactDiagonal(ca, k);
        for (let t = 0; t < n; t++) ck[t] += ak[t] * b0[t];
        for (let i = 1; i < n; i++) {
          const a = cdmCompactDiagonal(ca, (k + i) % n);
          const bt = cdmShiftUp(cdmReverseDiagonal(cb, i), k);
          for (let t = 0; t < n; t++) ck[t] += a[t] * bt[t];
        }
        expect(Array.from(ck)).toEqual(Array.from({ length: n }, (_, t) => prod[t][(t + k) % n]));
      }
    }
  });
  it('the transpose view reads Aᵀ from A without copying', () => {
    const a = uniformRandom(23, 23, 4, 8);
    const m = cdmFromCsr(a);
    const t = cdmFromCsr(csrTranspose(a));
    const view = cdmTransposeView(m);
    expect(Array.from(view.offsets)).toEqual(Array.from(t.offsets));
    expect(view.base.values).toBe(m.values);
    for (let d = 0; d < t.numDiagonals; d++) {
      for (let s = 0; s < 23; s++) expect(view.get(t.offsets[d], s)).toBe(t.values[d * 23 + s]);
    }
    const x = vectorFor(23);
    expectSpmvMatches(csrTranspose(a), x, cdmSpmvTranspose(m, x));
  });
  it('banded: tridiagonal n = 4 uses compact diagonals 0, 1, 3 with one fill slot each', () => {
    const m = cdmFromCsr(csrFromDense(bandDense(4, 1, 1)));
    expect(Array.from(m.offsets)).toEqual([0, 1, 3]);
    expect(Array.from(m.values)).toEqual([1, 12, 23, 34, 2, 13, 24, 0, 0, 11, 22, 33]);
    const s = cdmFormat.storageBytes(m, { valueBytes: 8, indexBytes: 4 });
    expect(s.bytes).toBe(12 * 8 + 3 * 4);
    expect(s.beta).toBe(10 / 12);
  });
  it('rejects a rectangular matrix and too many diagonals', () => {
    expect(() => cdmFromCsr(uniformRandom(3, 4, 1, 1))).toThrow(InvalidMatrixError);
    expect(() => cdmFromCsr(uniformRandom(40, 40, 10, 1), { maxDiagonals: 3 })).toThrow(InvalidParameterError);
  });
});

describe('diagonal formats: round trips and products on the generators', () => {
  // biome-ignore lint/suspicious/noExplicitAny: heterogeneous descriptors
  type AnyDescriptor = FormatDescriptor<SparseMatrix & any, any>;
  const fmts: { f: AnyDescriptor; params: object[] }[] = [
    { f: diaFormat, params: [{}, { maxDiagonals: 4096 }] },
    { f: hmFormat, params: [{}, { maxDiagonals: 4096 }] },
    { f: cdmFormat, params: [{}] },
  ];
  for (const { f, params } of fmts) {
    for (const { name, a } of cases()) {
      if (f.name === 'cdm' && a.rows !== a.cols) continue;
      for (const p of params) {
        it(`${f.name} ${JSON.stringify(p)}: ${name}`, () => {
          const m = f.fromCsr(a, p);
          expect(m.nnz).toBe(a.rowPtr[a.rows]);
          expectRoundTrip(a, f.toCsr(m));
          const x = vectorFor(a.cols);
          expectSpmvMatches(a, x, f.spmvReference(m, x));
          const y = new Float64Array(a.rows).fill(7);
          expect(f.spmvReference(m, x, y)).toBe(y);
          expectSpmvMatches(a, x, y);
          const st = f.storageBytes(m);
          expect(st.nnz).toBe(m.nnz);
          expect(st.beta).toBeLessThanOrEqual(1);
        });
      }
    }
  }
  it('rejects non-canonical CSR and a diagonal layout too large to allocate', () => {
    const dup = { format: 'csr' as const, rows: 2, cols: 2, rowPtr: Int32Array.from([0, 2, 2]), colIdx: Int32Array.from([1, 1]), values: Float64Array.from([1, 2]) };
    for (const { f } of fmts) expect(() => f.fromCsr(dup), f.name).toThrow(InvalidMatrixError);
    expect(() => diaFromCsr(uniformRandom(300000, 300000, 1, 1), { maxDiagonals: 1e6 })).toThrow(/slots/);
  });
  it('product and conversions agree with csrSpmv on a 1×1 matrix exactly', () => {
    const a: CsrMatrix = csrFromDense([[3]]);
    for (const f of [diaFormat, hmFormat, cdmFormat] as AnyDescriptor[]) {
      expect(Array.from(f.spmvReference(f.fromCsr(a), Float64Array.from([2])))).toEqual(Array.from(csrSpmv(a, Float64Array.from([2]))));
    }
  });
});
