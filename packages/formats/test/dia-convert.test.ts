import { describe, expect, it } from 'vitest';
import { InvalidParameterError } from '../src/core/errors';
import { mulberry32 } from '../src/core/random';
import type { CsrMatrix } from '../src/core/types';
import { csr } from '../src/csr/csr';
import { diaFromCsr, diaSpmv, diaToCsr, validateDia } from '../src/dia/dia';
import { diagonalStats } from '../src/dia/stats';
import { poisson3d } from '../src/generators/index';

/**
 * The DIA conversion as it was before the one-pass rewrite (issue 16): a slot table filled with
 * −1, data in float64, the mask set per entry. The reference the new path must equal bit for bit.
 */
function referenceDia(a: CsrMatrix): { offsets: Int32Array; data: Float64Array; present: Uint32Array } {
  const { rows, cols, rowPtr, colIdx, values } = a;
  const { offsets } = diagonalStats(a);
  const where = new Int32Array(Math.max(0, rows + cols - 1)).fill(-1);
  for (let d = 0; d < offsets.length; d++) where[offsets[d] + rows - 1] = d;
  const data = new Float64Array(rows * offsets.length);
  const present = new Uint32Array(Math.ceil((rows * offsets.length) / 32));
  for (let i = 0; i < rows; i++) {
    for (let k = rowPtr[i]; k < rowPtr[i + 1]; k++) {
      const s = where[colIdx[k] - i + rows - 1] * rows + i;
      data[s] = values[k];
      present[s >>> 5] |= 1 << (s & 31);
    }
  }
  return { offsets, data, present };
}

/** A random banded rows × cols matrix: each band position kept with probability 0.6, some explicit zeros and negative zeros. */
function randomBanded(rows: number, cols: number, lower: number, upper: number, seed: number): CsrMatrix {
  const r = mulberry32(seed);
  const rowPtr = [0];
  const colIdx: number[] = [];
  const values: number[] = [];
  for (let i = 0; i < rows; i++) {
    for (let j = Math.max(0, i - lower); j <= Math.min(cols - 1, i + upper); j++) {
      if (r() > 0.6) continue;
      const u = r();
      colIdx.push(j);
      values.push(u < 0.05 ? 0 : u < 0.1 ? -0 : (u - 0.5) * 1e3 + 1 / 3);
    }
    rowPtr.push(colIdx.length);
  }
  return csr(rows, cols, rowPtr, colIdx, values);
}

const bits64 = (x: Float64Array) => new Uint32Array(x.buffer, x.byteOffset, x.length * 2);
const bits32 = (x: Float32Array) => new Uint32Array(x.buffer, x.byteOffset, x.length);

const matrices: [string, () => CsrMatrix][] = [
  ['random banded 300x300 (-7, +5)', () => randomBanded(300, 300, 7, 5, 11)],
  ['random banded 200x260 rectangular', () => randomBanded(200, 260, 3, 90, 12)],
  ['random banded 260x200 rectangular', () => randomBanded(260, 200, 80, 2, 13)],
  // boundary rows: the first and last planes/lines miss some of the 7 diagonals
  ['7-point stencil 9x7x5', () => poisson3d(9, 7, 5)],
];

describe('diaFromCsr one-pass conversion (issue 16)', () => {
  for (const [name, make] of matrices) {
    it(`equals the previous conversion bit for bit: ${name}`, () => {
      const a = make();
      const ref = referenceDia(a);
      const d = diaFromCsr(a, { maxDiagonals: 2 ** 28 });
      expect(d.data).toBeInstanceOf(Float64Array);
      expect(d.offsets).toEqual(ref.offsets);
      expect(bits64(d.data as Float64Array)).toEqual(bits64(ref.data));
      expect(d.present).toEqual(ref.present);
      expect(d.nnz).toBe(a.rowPtr[a.rows]);
    });

    it(`valueType 'f32' equals the previous conversion rounded to float32 (what the upload sent): ${name}`, () => {
      const a = make();
      const ref = referenceDia(a);
      const d = diaFromCsr(a, { maxDiagonals: 2 ** 28, valueType: 'f32' });
      expect(d.data).toBeInstanceOf(Float32Array);
      validateDia(d);
      expect(bits32(d.data as Float32Array)).toEqual(bits32(new Float32Array(ref.data)));
      expect(d.present).toEqual(ref.present);
      // back to CSR: the same structure, the values rounded to float32
      const back = diaToCsr(d);
      expect(back.colIdx).toEqual(a.colIdx);
      expect(back.rowPtr).toEqual(a.rowPtr);
      expect(bits64(back.values)).toEqual(bits64(Float64Array.from(a.values, Math.fround)));
      const x = Float64Array.from({ length: a.cols }, (_, j) => (j % 5) - 2);
      expect(diaSpmv(d, x).length).toBe(a.rows);
    });
  }

  it('refuses an unknown valueType, naming the parameter', () => {
    expect(() => diaFromCsr(poisson3d(3, 3, 3), { valueType: 'f16' as 'f32' })).toThrow(InvalidParameterError);
    expect(() => diaFromCsr(poisson3d(3, 3, 3), { valueType: 'f16' as 'f32' })).toThrow(/valueType/);
  });
});
