/**
 * Test matrices and checks shared by diagonal.test.ts and survey-formats.test.ts: the generator
 * families of the conformance tier at small sizes, plus explicit (±0) stored zeros.
 */
import { expect } from 'vitest';
import type { CsrMatrix } from '../src/core/types';
import { csrEquals, csrFromTriplets, csrSpmv } from '../src/csr/csr';
import { banded, blockStructured, oneDenseRow, powerLaw, rng, uniformRandom, withEmptyRows } from '../src/generators/index';

/** Replace every 5th stored value by +0 and every 7th by −0 (explicit zeros must survive). */
export function withExplicitZeros(a: CsrMatrix): CsrMatrix {
  const values = a.values.slice();
  for (let k = 0; k < values.length; k++) {
    if (k % 5 === 2) values[k] = 0;
    else if (k % 7 === 3) values[k] = -0;
  }
  return { ...a, values };
}

/** The generator families, small. */
export function cases(): { name: string; a: CsrMatrix }[] {
  return [
    { name: 'uniform 40x40', a: uniformRandom(40, 40, 4, 3) },
    { name: 'power-law 50x50', a: powerLaw(50, 50, { seed: 5, maxLen: 20 }) },
    { name: 'empty rows 40x40', a: withEmptyRows(40, 40, 3, 0.4, 7) },
    { name: 'one dense row 37x37', a: oneDenseRow(37, 37, 2, 37, 4, 9) },
    { name: 'banded 41', a: banded(41, 2, 3, { seed: 2 }) },
    { name: 'rectangular 30x45', a: uniformRandom(30, 45, 3, 11) },
    { name: 'rectangular 45x30', a: uniformRandom(45, 30, 3, 12) },
    { name: 'block-structured 18x21', a: blockStructured(6, 7, 3, 3, 2, 13) },
    { name: 'explicit zeros 33x33', a: withExplicitZeros(uniformRandom(33, 33, 5, 17)) },
    { name: 'n = 0', a: uniformRandom(0, 0, 0, 1) },
    { name: 'n = 1', a: uniformRandom(1, 1, 1, 1) },
    { name: '1x1 empty', a: uniformRandom(1, 1, 0, 1) },
  ];
}

/** A deterministic x in [-1, 1). */
export function vectorFor(n: number, seed = 99): Float64Array {
  const r = rng(seed);
  return Float64Array.from({ length: n }, () => r() * 2 - 1);
}

/** Assert toCsr(fromCsr(a)) is bit-identical to a. */
export function expectRoundTrip(a: CsrMatrix, back: CsrMatrix): void {
  expect(back.rows).toBe(a.rows);
  expect(back.cols).toBe(a.cols);
  expect(Array.from(back.rowPtr)).toEqual(Array.from(a.rowPtr));
  expect(Array.from(back.colIdx)).toEqual(Array.from(a.colIdx));
  expect(csrEquals(back, a)).toBe(true); // values bit-exact, −0 included
}

/** Assert y matches the CSR product per row: |y − y_ref| ≤ 16·(nnz_row + 1)·ε₆₄·Σ|a_ij x_j|. */
export function expectSpmvMatches(a: CsrMatrix, x: Float64Array, y: Float64Array): void {
  const ref = csrSpmv(a, x);
  expect(y.length).toBe(a.rows);
  for (let i = 0; i < a.rows; i++) {
    let s = 0;
    for (let k = a.rowPtr[i]; k < a.rowPtr[i + 1]; k++) s += Math.abs(a.values[k] * x[a.colIdx[k]]);
    const tol = 16 * (a.rowPtr[i + 1] - a.rowPtr[i] + 1) * Number.EPSILON * s;
    if (!(Math.abs(y[i] - ref[i]) <= tol)) expect.fail(`row ${i}: got ${y[i]}, expected ${ref[i]} (tol ${tol})`);
  }
}

/** A structured sparse matrix (seed 002 shapes): the given diagonals, full; integers in [-4, 4] when `ints`, else uniform in [-1, 1). */
export function diagonalMatrix(m: number, n: number, offsets: number[], seed: number, ints = true): CsrMatrix {
  const r = rng(seed);
  const ri: number[] = [];
  const ci: number[] = [];
  const v: number[] = [];
  for (const d of offsets) {
    for (let i = Math.max(0, -d); i < Math.min(m, n - d); i++) {
      ri.push(i);
      ci.push(i + d);
      v.push(ints ? Math.floor(r() * 9) - 4 : r() * 2 - 1);
    }
  }
  return csrFromTriplets(m, n, ri, ci, v);
}
