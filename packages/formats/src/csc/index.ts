/**
 * CSC (compressed sparse column), survey §2.1.5: CSR of the transpose.
 * Storage: nnz·sizeof(value) + nnz·sizeof(index) + (cols + 1)·sizeof(index).
 *
 * Validity is CSR's read by columns: colPtr (Int32Array, length cols + 1) starts at 0 and never
 * decreases, colPtr[cols] = nnz = rowIdx.length = values.length, every row in [0, rows), rows
 * strictly increasing within a column (canonical; the product alone would accept repeats).
 * @module
 */
import { DimensionMismatchError, InvalidMatrixError } from '../core/errors';
import type { CsrMatrix, FormatDescriptor, SparseMatrix } from '../core/types';
import { makeStorageInfo } from '../core/types';
import { CANONICAL, type CheckOptions, checkCompressed, isVouched, requireShape, toIndexArray, toValueArray, vouch } from '../core/validate';
import { csr, csrTranspose, validateCsr } from '../csr/csr';

/** Compressed sparse column. */
export interface CscMatrix extends SparseMatrix {
  readonly format: 'csc';
  /** colPtr[j]..colPtr[j+1] is column j's range; length cols + 1. */
  readonly colPtr: Int32Array;
  /** Row index of each entry, sorted within a column. */
  readonly rowIdx: Int32Array;
  readonly values: Float64Array;
}

const cscFields = (m: CscMatrix): unknown[] => [m.rows, m.cols, m.nnz, m.colPtr, m.rowIdx, m.values];

/**
 * Check a CSC matrix (see the module rules). O(cols + nnz) the first time, O(1) for the same
 * object and arrays afterwards. Throws InvalidMatrixError naming the first bad index, e.g.
 * "CSC rowIdx[3] = 7 in column 1: expected a row in [0, 4)".
 * @example
 * validateCsc(cscFromCsr(a)); // passes
 */
export function validateCsc(m: CscMatrix, where = 'CSC'): void {
  if (m === null || typeof m !== 'object') throw new InvalidMatrixError(where, `expected a CSC matrix object, got ${String(m)}`);
  if (isVouched(m, cscFields(m), CANONICAL)) return;
  requireShape(where, 'CSC', m.rows, m.cols);
  const c = { label: 'CSC', ptrName: 'colPtr', idxName: 'rowIdx', major: 'column', minor: 'row' } as const;
  checkCompressed(where, { ...c, majorCount: m.cols, minorCount: m.rows, ptr: m.colPtr, idx: m.rowIdx, values: m.values }, CANONICAL);
  if (m.nnz !== m.rowIdx.length) throw new InvalidMatrixError(where, `CSC nnz = ${m.nnz} but colPtr[cols] = ${m.rowIdx.length}: expected them equal`);
  vouch(m, cscFields(m), CANONICAL);
}

/**
 * Build a CSC matrix from arrays, validating them (O(cols + nnz)); plain arrays are converted,
 * refusing non-integer indices. `{ unchecked: true }` skips the checks for arrays already validated.
 * @example
 * const m = csc(2, 2, [0, 1, 2], [0, 1], [1, 2]); // diag(1, 2)
 */
export function csc(
  rows: number,
  cols: number,
  colPtr: ArrayLike<number>,
  rowIdx: ArrayLike<number>,
  values: ArrayLike<number>,
  options: CheckOptions = {},
): CscMatrix {
  const where = 'csc()';
  requireShape(where, 'CSC', rows, cols);
  const cp = toIndexArray(where, 'CSC colPtr', colPtr);
  const ri = toIndexArray(where, 'CSC rowIdx', rowIdx);
  const m: CscMatrix = { format: 'csc', rows, cols, nnz: ri.length, colPtr: cp, rowIdx: ri, values: toValueArray(where, 'CSC values', values) };
  if (options.unchecked) return vouch(m, cscFields(m), CANONICAL);
  validateCsc(m, where);
  return m;
}

/** CSC from canonical CSR. Validates `a` (O(rows + nnz) unless done before). */
export function cscFromCsr(a: CsrMatrix): CscMatrix {
  validateCsr(a, 'cscFromCsr');
  const t = csrTranspose(a);
  // the transpose of a canonical CSR is canonical
  return csc(a.rows, a.cols, t.rowPtr, t.colIdx, t.values, { unchecked: true });
}

/** The CSR of the transpose that `m`'s arrays are (shared, not copied). */
function asTransposedCsr(m: CscMatrix): CsrMatrix {
  return csr(m.cols, m.rows, m.colPtr, m.rowIdx, m.values, { unchecked: true });
}

/** CSC → canonical CSR. Validates `m`. */
export function cscToCsr(m: CscMatrix): CsrMatrix {
  validateCsc(m, 'cscToCsr');
  return csrTranspose(asTransposedCsr(m));
}

/** y = A·x by columns (scatter), float64. Validates `m` on the first call (O(cols + nnz)). */
export function cscSpmv(m: CscMatrix, x: Float64Array, y?: Float64Array): Float64Array {
  validateCsc(m, 'cscSpmv');
  if (x.length !== m.cols) throw new DimensionMismatchError('cscSpmv x', m.cols, x.length);
  const out = y ?? new Float64Array(m.rows);
  if (out.length !== m.rows) throw new DimensionMismatchError('cscSpmv y', m.rows, out.length);
  out.fill(0);
  for (let j = 0; j < m.cols; j++) {
    const xj = x[j]!;
    for (let k = m.colPtr[j]!; k < m.colPtr[j + 1]!; k++) out[m.rowIdx[k]!]! += m.values[k]! * xj;
  }
  return out;
}

/** CSC as a {@link FormatDescriptor}. */
export const cscFormat: FormatDescriptor<CscMatrix, Record<string, never>> = {
  name: 'csc',
  title: 'CSC',
  source: 'survey §2.1.5 (sparse-format-survey-zh.md)',
  defaultParams: {},
  fromCsr: cscFromCsr,
  toCsr: cscToCsr,
  spmvReference: cscSpmv,
  storageBytes(m, opts = {}) {
    const vb = opts.valueBytes ?? 8;
    const ib = opts.indexBytes ?? 4;
    return makeStorageInfo(m.nnz, m.nnz, { values: m.nnz * vb, rowIdx: m.nnz * ib, colPtr: (m.cols + 1) * ib });
  },
};
