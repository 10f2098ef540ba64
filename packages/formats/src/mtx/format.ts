/**
 * Matrix Market writer: coordinate (general or symmetric) and array files, values in the
 * shortest decimal that parses back to the same double (ECMAScript Number→String is exactly
 * that; -0 is written "-0"), so write → read is bit-exact. Output is produced in ~64 KiB string
 * pieces by {@link matrixMarketChunks}, shared by the in-memory and the streaming file writer.
 * @module
 */
import { InvalidMatrixError, InvalidParameterError } from '../core/errors';
import type { CsrMatrix } from '../core/types';
import { csrEntry, csrTranspose, validateCsr } from '../csr/csr';
import type { MatrixMarketWriteOptions } from './types';

const PIECE = 1 << 16;

/** Shortest round-trip decimal of a finite double, keeping the sign of zero. */
export function formatReal(v: number): string {
  return v === 0 && Object.is(v, -0) ? '-0' : String(v);
}

/** Check everything the chosen output needs before a single byte is produced. O(nnz log). */
function check(a: CsrMatrix, field: string, symmetric: boolean, where: string): void {
  validateCsr(a, where, true);
  for (let i = 0; i < a.rows; i++) {
    for (let k = a.rowPtr[i]!; k < a.rowPtr[i + 1]!; k++) {
      const v = a.values[k]!;
      // rows and columns 1-based, as the file would number them
      if (field !== 'pattern' && !Number.isFinite(v)) throw new InvalidMatrixError(where, `row ${i + 1}, column ${a.colIdx[k]! + 1}: expected a finite value, got ${v}`);
      if (field === 'integer' && !Number.isSafeInteger(v)) {
        throw new InvalidMatrixError(where, `row ${i + 1}, column ${a.colIdx[k]! + 1}: field 'integer' expects safe integers, got ${v}`);
      }
    }
  }
  if (!symmetric) return;
  if (a.rows !== a.cols) throw new InvalidMatrixError(where, `symmetry 'symmetric' expects a square matrix, got ${a.rows}x${a.cols}`);
  for (let i = 0; i < a.rows; i++) {
    for (let k = a.rowPtr[i]!; k < a.rowPtr[i + 1]!; k++) {
      const j = a.colIdx[k]!;
      const t = csrEntry(a, j, i);
      if (t === undefined || (field !== 'pattern' && !Object.is(t, a.values[k]!))) {
        throw new InvalidMatrixError(
          where,
          `symmetry 'symmetric' expects A[i][j] === A[j][i]; row ${i + 1}, column ${j + 1}: ${a.values[k]} but row ${j + 1}, column ${i + 1} is ${t === undefined ? 'not stored' : t}`,
        );
      }
    }
  }
}

/**
 * The Matrix Market text of `a` as a sequence of string pieces of about 64 KiB (the last one may
 * be shorter). Validates first (InvalidMatrixError for non-finite values, non-integers with
 * field 'integer', an asymmetric matrix with symmetry 'symmetric'). Cost: O(nnz log) checks,
 * O(nnz) output for coordinate, O(rows·cols) for array.
 * @example
 * for (const piece of matrixMarketChunks(a, { symmetry: 'symmetric' })) out.write(piece);
 */
export function* matrixMarketChunks(a: CsrMatrix, opts: MatrixMarketWriteOptions = {}): Generator<string> {
  const format = opts.format ?? 'coordinate';
  const field = opts.field ?? 'real';
  const symmetry = opts.symmetry ?? 'general';
  if (format !== 'coordinate' && format !== 'array') throw new InvalidParameterError('format', "'coordinate' or 'array'", format);
  if (field !== 'real' && field !== 'integer' && field !== 'pattern') throw new InvalidParameterError('field', "'real', 'integer' or 'pattern'", field);
  if (symmetry !== 'general' && symmetry !== 'symmetric') throw new InvalidParameterError('symmetry', "'general' or 'symmetric'", symmetry);
  if (format === 'array' && field === 'pattern') throw new InvalidParameterError('field', "'real' or 'integer' for format 'array'", field);
  const sym = symmetry === 'symmetric';
  check(a, field, sym, 'writeMatrixMarket');
  const fmt = field === 'real' ? formatReal : String;
  let out = `%%MatrixMarket matrix ${format} ${field} ${symmetry}\n`;
  for (const c of opts.comments ?? []) for (const l of c.split(/\r?\n/)) out += `%${l}\n`;
  const { rows, cols, rowPtr, colIdx, values } = a;
  if (format === 'coordinate') {
    let count = 0;
    if (sym) for (let i = 0; i < rows; i++) for (let k = rowPtr[i]!; k < rowPtr[i + 1]!; k++) count += colIdx[k]! <= i ? 1 : 0;
    else count = rowPtr[rows]!;
    out += `${rows} ${cols} ${count}\n`;
    for (let i = 0; i < rows; i++) {
      const r = `${i + 1} `;
      for (let k = rowPtr[i]!; k < rowPtr[i + 1]!; k++) {
        const j = colIdx[k]!;
        if (sym && j > i) break; // columns are sorted: the rest of the row is upper triangle
        out += field === 'pattern' ? `${r}${j + 1}\n` : `${r}${j + 1} ${fmt(values[k]!)}\n`;
        if (out.length >= PIECE) {
          yield out;
          out = '';
        }
      }
    }
  } else {
    out += `${rows} ${cols}\n`;
    // column-major: row j of the transpose is column j
    const t = csrTranspose(a);
    for (let j = 0; j < cols; j++) {
      let k = t.rowPtr[j]!;
      const e = t.rowPtr[j + 1]!;
      for (let i = sym ? j : 0; i < rows; i++) {
        while (k < e && t.colIdx[k]! < i) k++;
        out += k < e && t.colIdx[k] === i ? `${fmt(t.values[k]!)}\n` : '0\n';
        if (out.length >= PIECE) {
          yield out;
          out = '';
        }
      }
    }
  }
  if (out.length > 0) yield out;
}

/**
 * The Matrix Market text of `a` as one string (see {@link matrixMarketChunks} for options,
 * checks and cost). Read back with `parseMatrixMarket`, values are bit-identical.
 * @example
 * formatMatrixMarket(csrFromDense([[1, 0], [0.1, 2]]));
 * // '%%MatrixMarket matrix coordinate real general\n2 2 3\n1 1 1\n2 1 0.1\n2 2 2\n'
 */
export function formatMatrixMarket(a: CsrMatrix, opts: MatrixMarketWriteOptions = {}): string {
  let s = '';
  for (const piece of matrixMarketChunks(a, opts)) s += piece;
  return s;
}
