/**
 * Test matrices and checks shared by the ELL-family tests (ell-family, sell, hybrid,
 * row-stats): the conformance-tier generator families at small sizes plus edge shapes.
 */
import { expect } from 'vitest';
import type { CsrMatrix } from '../src/core/types';
import { csr, csrEquals, csrSpmv } from '../src/csr/csr';
import { banded, blockStructured, ciLike, oneDenseRow, powerLaw, rng, uniformRandom, withEmptyRows } from '../src/generators/index';
import { withExplicitZeros } from './format-cases';

export { withExplicitZeros };

/** Generator families and edge shapes, small enough for a unit test. */
export function familyCases(): { name: string; a: CsrMatrix }[] {
  return [
    { name: 'uniform 40x40', a: uniformRandom(40, 40, 4, 3) },
    { name: 'power-law 70x60', a: powerLaw(70, 60, { seed: 5, maxLen: 30 }) },
    { name: 'empty rows 41x35', a: withEmptyRows(41, 35, 3, 0.4, 7) },
    { name: 'mostly empty 30x30', a: withEmptyRows(30, 30, 1, 0.8, 8) },
    { name: 'one dense row 37x37', a: oneDenseRow(37, 37, 2, 37, 4, 9) },
    { name: 'banded 41', a: banded(41, 2, 3, { seed: 2 }) },
    { name: 'rectangular 30x45', a: uniformRandom(30, 45, 3, 11) },
    { name: 'rectangular 45x30', a: uniformRandom(45, 30, 3, 12) },
    { name: 'block-structured 18x21', a: blockStructured(6, 7, 3, 3, 2, 13) },
    { name: 'CI-like 64', a: ciLike(64, { seed: 4 }) },
    { name: 'explicit zeros 33x33', a: withExplicitZeros(uniformRandom(33, 33, 5, 17)) },
    { name: 'n = 0', a: csr(0, 0, [0], [], []) },
    { name: 'n = 1', a: csr(1, 1, [0, 1], [0], [2.5]) },
    { name: '1x1 empty', a: csr(1, 1, [0, 0], [], []) },
    { name: 'one explicit zero 1x1', a: csr(1, 1, [0, 1], [0], [-0]) },
    { name: '3x0 (no columns)', a: csr(3, 0, [0, 0, 0, 0], [], []) },
    { name: '0x4 (no rows)', a: csr(0, 4, [0], [], []) },
  ];
}

/** A deterministic x in [-1, 1). */
export function vectorFor(n: number, seed = 99): Float64Array {
  const r = rng(seed);
  return Float64Array.from({ length: n }, () => r() * 2 - 1);
}

/** Assert `back` is bit-identical to `a` (shape, structure, values with −0). */
export function expectSameCsr(back: CsrMatrix, a: CsrMatrix): void {
  expect(back.format).toBe('csr');
  expect(back.rows).toBe(a.rows);
  expect(back.cols).toBe(a.cols);
  expect(Array.from(back.rowPtr)).toEqual(Array.from(a.rowPtr));
  expect(Array.from(back.colIdx)).toEqual(Array.from(a.colIdx));
  expect(back.rowPtr).toBeInstanceOf(Int32Array);
  expect(back.colIdx).toBeInstanceOf(Int32Array);
  expect(back.values).toBeInstanceOf(Float64Array);
  expect(csrEquals(back, a)).toBe(true);
}

/** Assert y matches csrSpmv per row: |y − y_ref| ≤ 4·(nnz_row + 1)·ε₆₄·Σ|a_ij x_j|. */
export function expectSpmvMatches(a: CsrMatrix, x: Float64Array, y: Float64Array): void {
  const ref = csrSpmv(a, x);
  expect(y.length).toBe(a.rows);
  for (let i = 0; i < a.rows; i++) {
    let s = 0;
    for (let k = a.rowPtr[i]!; k < a.rowPtr[i + 1]!; k++) s += Math.abs(a.values[k]! * x[a.colIdx[k]!]!);
    const tol = 4 * (a.rowPtr[i + 1]! - a.rowPtr[i]! + 1) * Number.EPSILON * s;
    if (!(Math.abs(y[i]! - ref[i]!) <= tol)) expect.fail(`row ${i}: got ${y[i]}, expected ${ref[i]} (tol ${tol})`);
  }
}

/** Row lengths of a CSR matrix as a plain array (for hand-computed storage formulas). */
export function lengthsOf(a: CsrMatrix): number[] {
  return Array.from({ length: a.rows }, (_, i) => a.rowPtr[i + 1]! - a.rowPtr[i]!);
}

/** The seed 001 §3.2–3.5 example (6 × 5). */
export const seedEllDense = [
  [1, 0, 0, 0, 0],
  [0, 0, 2, 0, 3],
  [0, 4, 0, 0, 5],
  [0, 0, 6, 0, 0],
  [0, 0, 0, 7, 0],
  [0, 0, 0, 0, 8],
];

/** The survey's ELLPACK example, eq. (2.3) (5 × 5). */
export const surveyEllDense = [
  [0, 4, 0, 7, 0],
  [2, 0, 3, 0, 6],
  [0, 5, 0, 0, 0],
  [0, 0, 0, 0, 2],
  [1, 0, 0, 6, 0],
];

/** The survey's SELL-C-σ example, eq. (2.56) (6 × 5). */
export const surveySellDense = [...surveyEllDense, [2, 4, 0, 0, 5]];
