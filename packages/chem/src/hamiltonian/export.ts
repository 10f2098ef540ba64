/**
 * Matrix Market export of an assembled Hamiltonian (node only: writes a file through
 * @gpusparse/formats' writer).
 * @module
 */
import { type CsrMatrix, csrTranspose, InvalidMatrixError, writeMatrixMarket } from '@gpusparse/formats';

/**
 * H with every pair (i, j), (j, i) replaced by its mean, so that it is symmetric bit for bit
 * (assembly computes the two triangles independently; they agree to rounding). Throws when
 * the pattern is not symmetric. Cost O(nnz).
 */
export function symmetrizeCsr(a: CsrMatrix): CsrMatrix {
  const t = csrTranspose(a);
  const nnz = a.rowPtr[a.rows]!;
  const values = new Float64Array(nnz);
  for (let i = 0; i < a.rows; i++) {
    if (a.rowPtr[i] !== t.rowPtr[i] || a.rowPtr[i + 1] !== t.rowPtr[i + 1]) throw new InvalidMatrixError('symmetrizeCsr', `row ${i}: pattern not symmetric`);
    for (let k = a.rowPtr[i]!; k < a.rowPtr[i + 1]!; k++) {
      if (a.colIdx[k] !== t.colIdx[k]) throw new InvalidMatrixError('symmetrizeCsr', `row ${i}: pattern not symmetric at entry ${k}`);
      values[k] = 0.5 * (a.values[k]! + t.values[k]!);
    }
  }
  return { ...a, values };
}

/**
 * Write H to a Matrix Market file (`.gz` compresses). `symmetric: true` (default) writes the
 * lower triangle of the symmetrised matrix. Comments record the space and the constant.
 * @example
 * await writeHamiltonianMatrixMarket('h4.mtx', h.matrix, { comments: ['H4 FCI', `ecore ${h.ecore}`] });
 */
export async function writeHamiltonianMatrixMarket(
  path: string | URL,
  matrix: CsrMatrix,
  options: { symmetric?: boolean; comments?: string[] } = {},
): Promise<void> {
  const symmetric = options.symmetric ?? true;
  await writeMatrixMarket(path, symmetric ? symmetrizeCsr(matrix) : matrix, {
    symmetry: symmetric ? 'symmetric' : 'general',
    comments: ['CI Hamiltonian (electronic part, constant not included) from @gpusparse/chem', ...(options.comments ?? [])],
  });
}
