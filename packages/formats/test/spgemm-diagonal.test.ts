import { describe, expect, it } from 'vitest';
import { DimensionMismatchError, InvalidParameterError } from '../src/core/errors';
import type { CsrMatrix } from '../src/core/types';
import { cdmFromCsr, cdmToCsr } from '../src/cdm/index';
import { csrFromDense, csrFromTriplets, csrTranspose } from '../src/csr/csr';
import { banded, laplacian1d, uniformRandom } from '../src/generators/index';
import { hmFromCsr, hmToCsr } from '../src/hm/index';
import { cdmSpgemm, cdmSpgemmDiagonals, hmSpgemm, hmSpgemmDiagonals } from '../src/spgemm/index';
import { withExplicitZeros } from './format-cases';
import { diagonalMatrix } from './format-cases';

/** Gustavson CSR×CSR: structural pattern of all products (cancellations kept), sorted columns. */
function csrProduct(a: CsrMatrix, b: CsrMatrix): CsrMatrix {
  const ri: number[] = [];
  const ci: number[] = [];
  const v: number[] = [];
  for (let i = 0; i < a.rows; i++) {
    for (let p = a.rowPtr[i]; p < a.rowPtr[i + 1]; p++) {
      const j = a.colIdx[p];
      for (let q = b.rowPtr[j]; q < b.rowPtr[j + 1]; q++) {
        ri.push(i);
        ci.push(b.colIdx[q]);
        v.push(a.values[p] * b.values[q]);
      }
    }
  }
  return csrFromTriplets(a.rows, b.cols, ri, ci, v);
}

function expectSameProduct(got: CsrMatrix, ref: CsrMatrix, exact: boolean): void {
  expect(got.rows).toBe(ref.rows);
  expect(got.cols).toBe(ref.cols);
  expect(Array.from(got.rowPtr)).toEqual(Array.from(ref.rowPtr));
  expect(Array.from(got.colIdx)).toEqual(Array.from(ref.colIdx));
  // C starts at +0 (as an accumulator does); the triplet reference may start from a −0 product
  const z = (x: number) => (x === 0 ? 0 : x);
  if (exact) expect(Array.from(got.values, z)).toEqual(Array.from(ref.values, z));
  else for (let k = 0; k < ref.values.length; k++) expect(Math.abs(got.values[k] - ref.values[k])).toBeLessThanOrEqual(1e-12 * (1 + Math.abs(ref.values[k])) * 64);
}

const pairs: { name: string; a: CsrMatrix; b: CsrMatrix; exact: boolean }[] = [
  { name: 'tridiagonal²', a: laplacian1d(9), b: laplacian1d(9), exact: true },
  { name: 'banded × banded', a: banded(30, 2, 1, { seed: 3 }), b: banded(30, 1, 3, { seed: 4 }), exact: false },
  { name: 'structured, scattered diagonals', a: diagonalMatrix(40, 40, [-17, -3, 0, 5, 22], 1), b: diagonalMatrix(40, 40, [-30, -1, 2, 9, 39], 2), exact: true },
  { name: 'structured with explicit zeros', a: withExplicitZeros(diagonalMatrix(25, 25, [-4, 0, 6], 5)), b: diagonalMatrix(25, 25, [-6, 1, 3], 6), exact: true },
  { name: 'random pattern', a: uniformRandom(20, 20, 3, 7), b: uniformRandom(20, 20, 3, 8), exact: false },
  { name: 'cancellation to an explicit zero', a: csrFromDense([[1, 1], [0, 0]]), b: csrFromDense([[1, 0], [-1, 0]]), exact: true },
  { name: 'n = 1', a: csrFromDense([[3]]), b: csrFromDense([[-2]]), exact: true },
  { name: 'n = 0', a: uniformRandom(0, 0, 0), b: uniformRandom(0, 0, 0), exact: true },
];

describe('HM SpGEMM (seed 002 Algorithm 2)', () => {
  it('fixes the diagonal set of C before arithmetic: tridiagonal² is pentadiagonal', () => {
    const t = hmFromCsr(laplacian1d(6));
    expect(Array.from(hmSpgemmDiagonals(t, t))).toEqual([-2, -1, 0, 1, 2]);
    const c = hmSpgemm(t, t);
    expect(Array.from(c.offsets)).toEqual([0, 1, 2, -1, -2]);
    expect(c.values.length).toBe(6 + 5 + 4 + 5 + 4);
    // main diagonal of tridiag(−1, 2, −1)²: 5, 6, 6, 6, 6, 5
    expect(Array.from(c.values.slice(0, 6))).toEqual([5, 6, 6, 6, 6, 5]);
  });
  for (const { name, a, b, exact } of pairs) {
    it(`matches CSR×CSR: ${name}`, () => {
      const c = hmSpgemm(hmFromCsr(a), hmFromCsr(b));
      const ref = csrProduct(a, b);
      expect(c.nnz).toBe(ref.rowPtr[ref.rows]);
      expectSameProduct(hmToCsr(c), ref, exact);
    });
  }
  it('rectangular operands (m×k)(k×n)', () => {
    const a = diagonalMatrix(12, 20, [-5, 0, 3, 14], 9);
    const b = diagonalMatrix(20, 7, [-13, -2, 0, 4], 10);
    expectSameProduct(hmToCsr(hmSpgemm(hmFromCsr(a), hmFromCsr(b))), csrProduct(a, b), true);
  });
  it('rejects mismatched shapes and too many product diagonals', () => {
    expect(() => hmSpgemm(hmFromCsr(uniformRandom(4, 5, 1)), hmFromCsr(uniformRandom(4, 5, 1)))).toThrow(DimensionMismatchError);
    const a = hmFromCsr(uniformRandom(30, 30, 5, 1));
    expect(() => hmSpgemm(a, a, { maxDiagonals: 10 })).toThrow(InvalidParameterError);
  });
});

describe('CDM SpGEMM (seed 002 §4, Algorithm 1)', () => {
  it('fixes the compact diagonals of C before arithmetic', () => {
    const t = cdmFromCsr(laplacian1d(6));
    expect(Array.from(cdmSpgemmDiagonals(t, t))).toEqual([0, 1, 2, 4, 5]);
    expect(cdmSpgemm(t, t).values.length).toBe(5 * 6);
  });
  it('reproduces a dense 4×4 product exactly (the §4 example size)', () => {
    const ad = [0, 1, 2, 3].map((i) => [0, 1, 2, 3].map((j) => 1 + 10 * i + j));
    const bd = [0, 1, 2, 3].map((i) => [0, 1, 2, 3].map((j) => ((i * 3 + j * 5) % 7) - 3));
    const a = csrFromDense(ad);
    const b = csrFromDense(bd);
    expectSameProduct(cdmToCsr(cdmSpgemm(cdmFromCsr(a), cdmFromCsr(b))), csrProduct(a, b), true);
  });
  for (const { name, a, b, exact } of pairs) {
    it(`matches CSR×CSR: ${name}`, () => {
      const c = cdmSpgemm(cdmFromCsr(a), cdmFromCsr(b));
      const ref = csrProduct(a, b);
      expect(c.nnz).toBe(ref.rowPtr[ref.rows]);
      expectSameProduct(cdmToCsr(c), ref, exact);
    });
  }
  it('transposed operands through reverse compact diagonals: AᵀB, ABᵀ, AᵀBᵀ', () => {
    const a = diagonalMatrix(17, 17, [-9, -1, 0, 4], 11);
    const b = diagonalMatrix(17, 17, [-2, 3, 12], 12);
    const ca = cdmFromCsr(a);
    const cb = cdmFromCsr(b);
    const at = csrTranspose(a);
    const bt = csrTranspose(b);
    expectSameProduct(cdmToCsr(cdmSpgemm(ca, cb, { transposeA: true })), csrProduct(at, b), true);
    expectSameProduct(cdmToCsr(cdmSpgemm(ca, cb, { transposeB: true })), csrProduct(a, bt), true);
    expectSameProduct(cdmToCsr(cdmSpgemm(ca, cb, { transposeA: true, transposeB: true })), csrProduct(at, bt), true);
    // AAᵀ (SYRK-like) without a transposed copy
    expectSameProduct(cdmToCsr(cdmSpgemm(ca, ca, { transposeB: true })), csrProduct(a, at), true);
  });
  it('rejects different orders', () => {
    expect(() => cdmSpgemm(cdmFromCsr(laplacian1d(4)), cdmFromCsr(laplacian1d(5)))).toThrow(DimensionMismatchError);
  });
});
