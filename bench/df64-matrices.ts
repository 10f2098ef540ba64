/**
 * The generated matrices of the df64 refinement benches (bench/df64.ts, bench/cg-profile.ts):
 * the 27-point stencil (SPD, CG) and a diagonally dominant power-law matrix (GMRES).
 * @module
 */
import { type CsrMatrix, generators } from '../packages/formats/src/index';

/** 27-point stencil on an n³ grid: 26 on the diagonal, −1 to every neighbour (SPD). */
export function stencil27(n: number): CsrMatrix {
  const rows = n * n * n;
  const rowPtr = new Int32Array(rows + 1);
  const cols: number[] = [];
  for (let p = 0; p < rows; p++) {
    const [i, j, k] = [p % n, Math.floor(p / n) % n, Math.floor(p / (n * n))];
    for (let dk = -1; dk <= 1; dk++)
      for (let dj = -1; dj <= 1; dj++)
        for (let di = -1; di <= 1; di++) {
          const [a, b, c] = [i + di, j + dj, k + dk];
          if (a >= 0 && a < n && b >= 0 && b < n && c >= 0 && c < n) cols.push(a + n * (b + n * c));
        }
    rowPtr[p + 1] = cols.length;
  }
  const colIdx = Int32Array.from(cols);
  const values = new Float64Array(colIdx.length);
  for (let p = 0; p < rows; p++) for (let q = rowPtr[p]!; q < rowPtr[p + 1]!; q++) values[q] = colIdx[q] === p ? 26 : -1;
  return { format: 'csr', rows, cols: rows, rowPtr, colIdx, values };
}

/** Power-law rows, values rounded to float32, the diagonal set to 1 + Σ|off-diagonal| (non-symmetric, dominant). */
export function powerLawDominant(rows: number): CsrMatrix {
  const a = generators.powerLaw(rows, rows, { alpha: 2.2, minLen: 3, maxLen: 20_000, seed: 3 });
  return withDiagonal({ ...a, values: a.values.map(Math.fround) });
}

/** `a` with a diagonal entry in every row (added where missing) equal to fl32(1 + Σ_j≠i |a_ij|). */
export function withDiagonal(a: CsrMatrix): CsrMatrix {
  const rowPtr = new Int32Array(a.rows + 1);
  const colIdx: number[] = [];
  const vals: number[] = [];
  for (let i = 0; i < a.rows; i++) {
    let s = 1;
    let has = false;
    const start = colIdx.length;
    for (let q = a.rowPtr[i]!; q < a.rowPtr[i + 1]!; q++) {
      colIdx.push(a.colIdx[q]!);
      vals.push(a.values[q]!);
      if (a.colIdx[q] === i) has = true;
      else s += Math.abs(a.values[q]!);
    }
    if (!has) {
      colIdx.push(i);
      vals.push(Math.fround(s));
    } else for (let q = start; q < colIdx.length; q++) if (colIdx[q] === i) vals[q] = Math.fround(s);
    rowPtr[i + 1] = colIdx.length;
  }
  return { format: 'csr', rows: a.rows, cols: a.cols, rowPtr, colIdx: Int32Array.from(colIdx), values: Float64Array.from(vals) };
}
