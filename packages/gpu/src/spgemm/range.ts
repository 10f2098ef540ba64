/**
 * The float32 range of a device SpGEMM. The product runs on float32 copies of A and B, so a value
 * above 3.4e38, a product a·b above it (1e20 · 1e20) or below the smallest normal float32
 * (1e-30 · 1e-30, flushed to 0 and the entry of C dropped) gave Infinity or a missing entry with
 * no error. Here A and B are scaled by powers of two (exact) so that their largest |value| is in
 * (1/2, 1] — then |c| ≤ (entries of A's longest row) and no sum overflows — and C is scaled back
 * in float64. What scaling cannot save is refused: operands whose dynamic range puts some product
 * of non-zeros below the smallest normal float32, 2^-126 (max|A|/min|A| · max|B|/min|B| > 2^126:
 * that product would be flushed to 0). Left to --check: a sum that cancels to below 2^-126.
 * @module
 */
import { type CsrMatrix, InvalidMatrixError } from '@gpusparse/formats';

/** The smallest product |a·b| (after scaling) float32 holds as a normal number. */
export const SPGEMM_MIN_PRODUCT = 2 ** -126;

/** The power-of-two scaling of the operands (exponents), or why the device cannot take them. */
export interface SpgemmScaling {
  /** A and B are multiplied by 2^expA and 2^expB; C is multiplied back by 2^−(expA + expB). */
  readonly expA: number;
  readonly expB: number;
  /** Set when the product cannot be done in float32 (the message says why and what to do). */
  readonly refusal?: InvalidMatrixError;
}

/** Largest and smallest non-zero |value| of `m`; throws InvalidMatrixError at a non-finite value. */
function magnitudes(m: CsrMatrix, name: string): { max: number; min: number; longestRow: number } {
  let max = 0;
  let min = Number.POSITIVE_INFINITY;
  let longestRow = 0;
  for (let r = 0; r < m.rows; r++) {
    const end = m.rowPtr[r + 1]!;
    longestRow = Math.max(longestRow, end - m.rowPtr[r]!);
    for (let k = m.rowPtr[r]!; k < end; k++) {
      const v = Math.abs(m.values[k]!);
      if (!Number.isFinite(v)) throw new InvalidMatrixError(`spgemm: ${name}(row ${r + 1}, column ${m.colIdx[k]! + 1})`, `expected a finite value, got ${m.values[k]}`);
      if (v > max) max = v;
      if (v > 0 && v < min) min = v;
    }
  }
  return { max, min, longestRow };
}

/** x·2^e without overflowing 2^e itself (|e| up to ≈ 2100). */
export function timesPow2(x: number, e: number): number {
  const h = Math.trunc(e / 2);
  return x * 2 ** h * 2 ** (e - h);
}

/**
 * Choose the scaling of A and B for a float32 device product. No scaling (exponents 0) when
 * every value, every product and every row sum already sits well inside float32; else exponents
 * bringing each largest |value| into (1/2, 1]. `refusal` is set when, even so, the smallest
 * possible product falls below {@link SPGEMM_MIN_PRODUCT}. O(nnz(A) + nnz(B)).
 * @throws InvalidMatrixError naming the first non-finite value.
 * @example const s = spgemmScaling(a, b); if (s.refusal) throw s.refusal;
 */
export function spgemmScaling(a: CsrMatrix, b: CsrMatrix): SpgemmScaling {
  const ma = magnitudes(a, 'A');
  const mb = magnitudes(b, 'B');
  if (ma.max === 0 || mb.max === 0) return { expA: 0, expB: 0 }; // C = 0
  const fits = (fa: number, fb: number) => ma.max * fa * mb.max * fb * Math.max(1, ma.longestRow) <= 2 ** 126 && ma.max * fa <= 2 ** 126 && mb.max * fb <= 2 ** 126 && ma.min * fa * mb.min * fb >= SPGEMM_MIN_PRODUCT;
  if (fits(1, 1)) return { expA: 0, expB: 0 };
  const expA = -Math.ceil(Math.log2(ma.max));
  const expB = -Math.ceil(Math.log2(mb.max));
  if (fits(timesPow2(1, expA), timesPow2(1, expB))) return { expA, expB };
  const range = (m: { max: number; min: number }) => `${m.min.toExponential(2)} to ${m.max.toExponential(2)}`;
  return {
    expA,
    expB,
    refusal: new InvalidMatrixError(
      'spgemm: A and B',
      `expected |values| whose products float32 holds once each operand is scaled to a largest |value| of 1 (every |a|·|b| ≥ 2^-126 ≈ 1.2e-38 relative to max|A|·max|B|), got A from ${range(ma)} and B from ${range(mb)}: the device product runs in float32; use --backend cpu (the float64 host product)`,
    ),
  };
}

/** Multiply `values` by 2^e in place (C scaled back); throws InvalidMatrixError if a value leaves float64. */
export function unscaleValues(values: Float64Array, e: number): void {
  if (e === 0) return;
  for (let k = 0; k < values.length; k++) {
    const v = timesPow2(values[k]!, e);
    if (!Number.isFinite(v)) throw new InvalidMatrixError('spgemm: C', `expected entries within float64, got one of ${values[k]}·2^${e}: |A·B| exceeds 1.8e308`);
    values[k] = v;
  }
}
