/**
 * The range check of a matrix the device will hold in float32. A value above float32's range
 * becomes ±Infinity on upload, and a matrix whose largest |value| is below the normal range
 * flushes to zeros on GPUs: the operator would then be wrong (every product Inf/NaN, or zero)
 * and a solver would report a breakdown or a non-finite scalar far from the cause. Refused at
 * the operator build instead, with the place and the way out. Single tiny entries beside normal
 * ones are kept: they vanish in float32 as they would in a sum. (The CLI has had the same check
 * since session 7; the library calls did not.)
 * @module
 */
import { type CsrMatrix, InvalidMatrixError } from '@gpusparse/formats';

const FLOAT32_MAX = 3.4028234663852886e38;
const FLOAT32_MIN_NORMAL = 1.1754943508222875e-38;

/**
 * Throw InvalidMatrixError when a value of `a` exceeds float32's range, or when every value
 * underflows it. `where` names the call (e.g. 'gpuOperatorFromCsr'). Cost: one pass over the
 * values (about 1 ns per non-zero), no allocation.
 * @example checkFloat32Range(a, 'gpuOperatorFromCsr');
 */
export function checkFloat32Range(a: CsrMatrix, where: string): void {
  const { values } = a;
  const nnz = a.rowPtr[a.rows] ?? 0;
  let maxAbs = 0;
  for (let k = 0; k < nnz; k++) {
    const v = Math.abs(values[k]!);
    if (v > maxAbs) maxAbs = v;
  }
  if (maxAbs > FLOAT32_MAX && maxAbs !== Number.POSITIVE_INFINITY) {
    const k = findValueAbove(a, FLOAT32_MAX);
    throw tooLarge(`${where}: A(row ${rowOf(a, k) + 1}, column ${a.colIdx[k]! + 1})`, values[k]!);
  }
  if (maxAbs > 0 && maxAbs < FLOAT32_MIN_NORMAL) throw allUnderflow(`${where}: A`, maxAbs);
}

/**
 * {@link checkFloat32Range} over the value arrays of a matrix stored another way (csr-vi: its value
 * table and its raw values); `place(i, k)` names entry k of `arrays[i]` (e.g. its row and column).
 * s14-harden-e: `csrViKernel.upload` and `gpuOperatorFromFormat` rounded 1e39 to Infinity silently.
 * Cost: one pass over the arrays.
 * @example checkFloat32Values('csr-vi upload', [m.table, m.rawValues], (i, k) => (i === 0 ? `table value ${k}` : `raw entry ${k}`));
 */
export function checkFloat32Values(where: string, arrays: readonly ArrayLike<number>[], place: (i: number, k: number) => string): void {
  let maxAbs = 0;
  arrays.forEach((values, i) => {
    for (let k = 0; k < values.length; k++) {
      const v = Math.abs(values[k]!);
      if (v > FLOAT32_MAX && v !== Number.POSITIVE_INFINITY) throw tooLarge(`${where}: ${place(i, k)}`, values[k]!);
      if (v > maxAbs) maxAbs = v;
    }
  });
  if (maxAbs > 0 && maxAbs < FLOAT32_MIN_NORMAL) throw allUnderflow(`${where}: A`, maxAbs);
}

const tooLarge = (at: string, v: number) =>
  new InvalidMatrixError(at, `expected |value| ≤ 3.4e38 (the device operator stores A in float32), got ${v}: scale A and b by a power of two (exact), or solve on the host in float64`);

const allUnderflow = (at: string, maxAbs: number) =>
  new InvalidMatrixError(at, `expected a largest |value| ≥ 1.2e-38 (the device operator stores A in float32), got ${maxAbs}: every value underflows; scale A and b by a power of two (exact), or solve on the host in float64`);

function findValueAbove(a: CsrMatrix, limit: number): number {
  for (let k = 0; k < (a.rowPtr[a.rows] ?? 0); k++) if (Math.abs(a.values[k]!) > limit) return k;
  return 0;
}

/** The row holding non-zero k (binary search in rowPtr). */
function rowOf(a: CsrMatrix, k: number): number {
  let lo = 0;
  let hi = a.rows - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (a.rowPtr[mid]! <= k) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}
