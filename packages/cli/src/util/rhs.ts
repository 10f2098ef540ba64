/**
 * Right-hand sides for `solve` and `export`: A·1, a Matrix Market column vector (coordinate or
 * array), or a PETSc binary vector (a file of vectors, or the vector stored after the matrix in
 * the same file, the layout of `gpusparse export --rhs` and of PETSc's `-f` examples); and the
 * float64 residual check both solve paths print.
 * @module
 */
import { type CsrMatrix, csrSpmv, DimensionMismatchError, isPetscBinaryFile, readMatrixMarket, readPetscVectors } from '@gpusparse/formats';
import { info } from './context';

/** A right-hand side and a words-for-humans account of where it came from. */
export interface Rhs {
  b: Float64Array;
  source: string;
}

/** A·1 (so x = 1 solves it). */
export function onesRhs(a: CsrMatrix): Rhs {
  return { b: csrSpmv(a, new Float64Array(a.cols).fill(1)), source: 'A·1 (so x = 1)' };
}

/**
 * Check that `b` has A's row count; `where` names the file or argument for the message. A wrong
 * length is the file's content, so bad input (exit 3), not a usage error.
 */
function checked(a: CsrMatrix, b: Float64Array, where: string, what: string): Float64Array {
  if (b.length !== a.rows) throw new DimensionMismatchError(where, `${a.rows} (A's rows)`, what);
  return b;
}

/** b from a file: PETSc binary (its first vector) or a Matrix Market n × 1 matrix. */
export async function readRhsFile(a: CsrMatrix, path: string, where = 'b'): Promise<Float64Array> {
  if (/\.petsc$/i.test(path) || (await isPetscBinaryFile(path))) {
    const [v] = await readPetscVectors(path);
    return checked(a, v!, `${where} (${path})`, `a PETSc vector of ${v!.length}`);
  }
  const m = (await readMatrixMarket(path, { onWarning: (w) => info(`warning: ${w.file}:${w.line}: ${w.message}`) })).matrix;
  if (m.cols !== 1) throw new DimensionMismatchError(`${where} (${path})`, `${a.rows}×1 (a vector of A's rows)`, `${m.rows}×${m.cols}`);
  const b = new Float64Array(m.rows);
  for (let i = 0; i < m.rows; i++) for (let k = m.rowPtr[i]!; k < m.rowPtr[i + 1]!; k++) b[i] = m.values[k]!;
  return checked(a, b, `${where} (${path})`, `${m.rows}×1`);
}

/**
 * b for `solve`: the file given, else a vector stored with A (PETSc binary: matrix then vector),
 * else A·1.
 */
export async function solveRhs(a: CsrMatrix, path: string | undefined, stored?: { values: Float64Array; file: string }): Promise<Rhs> {
  if (path) return { b: await readRhsFile(a, path), source: path };
  if (stored) return { b: checked(a, stored.values, `b stored in ${stored.file}`, `a vector of ${stored.values.length}`), source: `the vector stored after A in ${stored.file}` };
  return onesRhs(a);
}

/** ‖b − A x‖₂ / ‖b‖₂ in float64 on the host, with both norms. */
export function relativeResidual(a: CsrMatrix, x: Float64Array, b: Float64Array): { rel: number; r: number; bNorm: number } {
  const ax = csrSpmv(a, x);
  // squares of values near 1e±154 over- or underflow: sum them scaled by the largest |b_i|
  let big = 0;
  for (let i = 0; i < b.length; i++) big = Math.max(big, Math.abs(b[i]!));
  const s = big > 0 && Number.isFinite(big) ? big : 1;
  let rn = 0;
  let bn = 0;
  for (let i = 0; i < b.length; i++) {
    rn += ((b[i]! - ax[i]!) / s) ** 2;
    bn += (b[i]! / s) ** 2;
  }
  const r = Math.sqrt(rn) * s;
  const bNorm = Math.sqrt(bn) * s;
  return { rel: bNorm > 0 ? Math.sqrt(rn) / Math.sqrt(bn) : r, r, bNorm };
}
