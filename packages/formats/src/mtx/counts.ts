/**
 * What a Matrix Market size line implies before any entry is read: the cells a coordinate file
 * can address, and a lower bound of the bytes reading it needs. No node imports.
 * @module
 */
import { ResourceLimitError } from '../core/errors';
import { MatrixMarketError } from './errors';
import type { MatrixMarketFormat, MatrixMarketSymmetry } from './types';

/** Cells a coordinate file can address: rows·cols, or the stored triangle of a symmetric kind. */
export function structuralCells(rows: number, cols: number, symmetry: MatrixMarketSymmetry): number {
  if (symmetry === 'general') return rows * cols;
  if (symmetry === 'skew-symmetric') return (rows * Math.max(rows - 1, 0)) / 2;
  return (rows * (rows + 1)) / 2;
}

/**
 * A lower bound of the bytes reading needs: 16 per triplet held while reading, a 16-byte copy
 * per entry when symmetric storage is expanded, and 20 per entry inside the CSR assembly (two
 * 4-byte permutations, the 4-byte column and 8-byte value arrays), plus the row pointers.
 * Refusing on a lower bound never refuses a file that would have fitted.
 */
export function estimateReadBytes(rows: number, entries: number, symmetry: MatrixMarketSymmetry): number {
  const perEntry = symmetry === 'general' ? 16 + 20 : 16 + 16 + 20;
  return perEntry * entries + 4 * (rows + 1);
}

/** What the size line declared, with the reader's caps: the input of {@link checkDeclaredSize}. */
export interface DeclaredSize {
  readonly name: string;
  readonly rows: number;
  readonly cols: number;
  readonly declared: number;
  readonly sizeLine: number;
  readonly format: MatrixMarketFormat;
  readonly symmetry: MatrixMarketSymmetry;
  readonly maxDim: number | undefined;
  readonly maxBytes: number;
}

/**
 * Checks of the size line before anything is allocated: a coordinate file cannot declare more
 * entries than the matrix (or its stored triangle) has cells, the dimensions must be within
 * maxDimension, and the arrays the header implies must fit in `maxBytes`. O(1).
 * @throws MatrixMarketError naming the size line; ResourceLimitError past `maxBytes`
 */
export function checkDeclaredSize(d: DeclaredSize): void {
  const { name, rows, cols, declared, sizeLine, symmetry } = d;
  if (d.format === 'coordinate') {
    const cells = structuralCells(rows, cols, symmetry);
    if (declared > cells) {
      const where = symmetry === 'general' ? `a ${rows}x${cols} matrix` : `the stored triangle of a ${symmetry} ${rows}x${cols} matrix`;
      throw new MatrixMarketError(name, sizeLine, `an entry count of at most ${cells} (the cells of ${where})`, `${declared} (duplicate entries, or a damaged size line)`);
    }
  }
  const limit = d.maxDim ?? Math.max(1 << 22, 16 * declared);
  if (rows > limit || cols > limit) {
    throw new MatrixMarketError(name, sizeLine, `rows and columns of at most ${limit} for a file declaring ${declared} entries (pass maxDimension to allow more)`, `${rows}x${cols}`);
  }
  const need = estimateReadBytes(rows, d.format === 'coordinate' ? declared : 0, symmetry);
  if (need > d.maxBytes) {
    throw new ResourceLimitError(`${name}:${sizeLine}: reading a ${rows}x${cols} matrix with ${declared} declared entries`, need, d.maxBytes, 'free memory or use a machine with more');
  }
}
