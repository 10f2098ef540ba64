/**
 * The Reference + Expansion structure of seed 001 §4 measured on a matrix: density of the
 * Reference region (columns, and by symmetry rows, below the boundary) and of the rest.
 * @module
 */
import { type CsrMatrix, InvalidParameterError } from '@gpusparse/formats';

/** Densities (1 − sparsity) of the two regions, off-diagonal entries only. */
export interface RegionStats {
  boundary: number;
  /** Stored off-diagonal entries with min(i, j) < boundary / number of such cells. */
  referenceDensity: number;
  /** Stored off-diagonal entries with min(i, j) ≥ boundary / number of such cells. */
  expansionDensity: number;
  /** Fraction of all non-zeros that lie in the Reference region (diagonal excluded). */
  referenceShare: number;
}

/**
 * Measure the Reference/Expansion densities of a square matrix for a given boundary. O(nnz).
 * @example
 * regionStats(h.matrix, space.referenceSize).referenceDensity; // e.g. 0.2 = 80 % sparse
 */
export function regionStats(a: CsrMatrix, boundary: number): RegionStats {
  if (a.rows !== a.cols) throw new InvalidParameterError('matrix', 'a square matrix', `${a.rows}×${a.cols}`);
  const n = a.rows;
  if (!Number.isInteger(boundary) || boundary < 0 || boundary > n) throw new InvalidParameterError('boundary', `an integer in 0..${n}`, boundary);
  let ref = 0;
  let exp = 0;
  for (let i = 0; i < n; i++) {
    for (let k = a.rowPtr[i]!; k < a.rowPtr[i + 1]!; k++) {
      const j = a.colIdx[k]!;
      if (j === i) continue;
      if (Math.min(i, j) < boundary) ref++;
      else exp++;
    }
  }
  const refCells = 2 * boundary * n - boundary * boundary - boundary;
  const expCells = (n - boundary) * (n - boundary) - (n - boundary);
  return {
    boundary,
    referenceDensity: refCells > 0 ? ref / refCells : 0,
    expansionDensity: expCells > 0 ? exp / expCells : 0,
    referenceShare: ref + exp > 0 ? ref / (ref + exp) : 0,
  };
}
