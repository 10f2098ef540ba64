/**
 * COO (coordinate), survey §2.1.3: one (row, column, value) triplet per non-zero, sorted by row
 * then column when converted from CSR. Storage: nnz·(sizeof(value) + 2·sizeof(index)).
 *
 * Validity: rowIdx, colIdx (Int32Array) and values (Float64Array) all of length nnz, every row in
 * [0, rows) and column in [0, cols). Triplets may come in any order and may repeat a position:
 * the product and the conversion to CSR sum repeated positions (the GPU kernel additionally
 * needs them sorted by row, and checks that on upload).
 * @module
 */
import { DimensionMismatchError, InvalidMatrixError } from '../core/errors';
import type { CsrMatrix, FormatDescriptor, SparseMatrix } from '../core/types';
import { makeStorageInfo } from '../core/types';
import { type CheckOptions, checkTriplets, isVouched, STRUCTURE, toIndexArray, toValueArray, vouch } from '../core/validate';
import { csrFromTriplets, csrNnz, validateCsr } from '../csr/csr';

/** Coordinate format: parallel arrays of row index, column index and value. */
export interface CooMatrix extends SparseMatrix {
  readonly format: 'coo';
  readonly rowIdx: Int32Array;
  readonly colIdx: Int32Array;
  readonly values: Float64Array;
}

const cooFields = (m: CooMatrix): unknown[] => [m.rows, m.cols, m.nnz, m.rowIdx, m.colIdx, m.values];

/**
 * Check a COO matrix (see the module rules). O(nnz) the first time, O(1) for the same object and
 * arrays afterwards. Throws InvalidMatrixError naming the first bad triplet, e.g.
 * "COO colIdx[4] = 9 in row 2: expected a column in [0, 5)".
 * @example
 * validateCoo(cooFromCsr(a)); // passes
 */
export function validateCoo(m: CooMatrix, where = 'COO'): void {
  if (m === null || typeof m !== 'object') throw new InvalidMatrixError(where, `expected a COO matrix object, got ${String(m)}`);
  if (isVouched(m, cooFields(m), STRUCTURE)) return;
  checkTriplets(where, m);
  vouch(m, cooFields(m), STRUCTURE);
}

/**
 * Build a COO matrix from triplet arrays, validating them (O(nnz)); plain arrays are converted,
 * refusing non-integer indices. `{ unchecked: true }` skips the checks for arrays already validated.
 * @example
 * const m = coo(2, 2, [0, 1, 0], [0, 1, 0], [1, 2, 3]); // [[4, 0], [0, 2]] (repeats summed)
 */
export function coo(
  rows: number,
  cols: number,
  rowIdx: ArrayLike<number>,
  colIdx: ArrayLike<number>,
  values: ArrayLike<number>,
  options: CheckOptions = {},
): CooMatrix {
  const where = 'coo()';
  const ri = toIndexArray(where, 'COO rowIdx', rowIdx);
  const ci = toIndexArray(where, 'COO colIdx', colIdx);
  const m: CooMatrix = { format: 'coo', rows, cols, nnz: ri.length, rowIdx: ri, colIdx: ci, values: toValueArray(where, 'COO values', values) };
  if (options.unchecked) return vouch(m, cooFields(m), STRUCTURE);
  validateCoo(m, where);
  return m;
}

/** COO from canonical CSR (row-major order). Validates `a` (O(rows + nnz) unless done before). */
export function cooFromCsr(a: CsrMatrix): CooMatrix {
  validateCsr(a, 'cooFromCsr');
  const nnz = csrNnz(a);
  const rowIdx = new Int32Array(nnz);
  for (let i = 0; i < a.rows; i++) rowIdx.fill(i, a.rowPtr[i]!, a.rowPtr[i + 1]!);
  // in range by construction from a validated CSR
  return coo(a.rows, a.cols, rowIdx, a.colIdx.slice(), a.values.slice(), { unchecked: true });
}

/** COO → canonical CSR (repeated positions summed). Validates `m`. */
export function cooToCsr(m: CooMatrix): CsrMatrix {
  validateCoo(m, 'cooToCsr');
  return csrFromTriplets(m.rows, m.cols, m.rowIdx, m.colIdx, m.values);
}

/** y = A·x over triplets, float64. Validates `m` on the first call (O(nnz)). */
export function cooSpmv(m: CooMatrix, x: Float64Array, y?: Float64Array): Float64Array {
  validateCoo(m, 'cooSpmv');
  if (x.length !== m.cols) throw new DimensionMismatchError('cooSpmv x', m.cols, x.length);
  const out = y ?? new Float64Array(m.rows);
  if (out.length !== m.rows) throw new DimensionMismatchError('cooSpmv y', m.rows, out.length);
  out.fill(0);
  for (let k = 0; k < m.nnz; k++) out[m.rowIdx[k]!]! += m.values[k]! * x[m.colIdx[k]!]!;
  return out;
}

/** COO as a {@link FormatDescriptor}. */
export const cooFormat: FormatDescriptor<CooMatrix, Record<string, never>> = {
  name: 'coo',
  title: 'COO',
  source: 'survey §2.1.3 (sparse-format-survey-zh.md)',
  defaultParams: {},
  fromCsr: cooFromCsr,
  toCsr: cooToCsr,
  spmvReference: cooSpmv,
  storageBytes(m, opts = {}) {
    const vb = opts.valueBytes ?? 8;
    const ib = opts.indexBytes ?? 4;
    return makeStorageInfo(m.nnz, m.nnz, { values: m.nnz * vb, rowIdx: m.nnz * ib, colIdx: m.nnz * ib });
  },
};
