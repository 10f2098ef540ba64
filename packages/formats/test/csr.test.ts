import { describe, expect, it } from 'vitest';
import { csrDiagonal, csrFromDense, csrFromTriplets, csrSpmv, csrToDense, csrTranspose, validateCsr } from '../src/csr/csr';
import { InvalidMatrixError } from '../src/core/errors';

describe('CSR reference tier', () => {
  const dense = [
    [4, 0, 1],
    [0, 0, 0],
    [2, 3, 0],
  ];
  it('builds from dense and back', () => {
    const a = csrFromDense(dense);
    expect(Array.from(a.rowPtr)).toEqual([0, 2, 2, 4]);
    expect(Array.from(a.colIdx)).toEqual([0, 2, 0, 1]);
    expect(csrToDense(a)).toEqual(dense);
  });
  it('sums duplicates and sorts columns', () => {
    const a = csrFromTriplets(2, 3, [1, 0, 1, 1], [2, 1, 0, 2], [1, 2, 3, 4]);
    expect(Array.from(a.colIdx)).toEqual([1, 0, 2]);
    expect(Array.from(a.values)).toEqual([2, 3, 5]);
  });
  it('multiplies exactly', () => {
    const a = csrFromDense(dense);
    expect(Array.from(csrSpmv(a, Float64Array.from([1, 2, 3])))).toEqual([7, 0, 8]);
  });
  it('transposes and reads the diagonal', () => {
    const a = csrFromDense(dense);
    expect(csrToDense(csrTranspose(a))).toEqual([
      [4, 0, 2],
      [0, 0, 3],
      [1, 0, 0],
    ]);
    expect(Array.from(csrDiagonal(a))).toEqual([4, 0, 0]);
  });
  it('rejects a column out of range naming the row', () => {
    const bad = { format: 'csr' as const, rows: 2, cols: 2, rowPtr: Int32Array.from([0, 1, 2]), colIdx: Int32Array.from([0, 5]), values: new Float64Array(2) };
    expect(() => validateCsr(bad)).toThrow(InvalidMatrixError);
    expect(() => validateCsr(bad)).toThrow(/row 1/);
  });
});
