/**
 * AXC reference product (seed 004 Listings 1–2): gather x into ax[], then one pass per row over
 * its bricks, y[i] = Σ_bricks Σ_lanes ax[p + l]·ax[p + HBRs + l]. No atomics: a row is owned by
 * one worker (a warp in Listing 2).
 * @module
 */
import { DimensionMismatchError } from '../core/errors';
import { axGatherX } from './ax-array';
import type { AxcMatrix } from './layout';

/**
 * Fill the x halves of `m.ax` from x through `m.xIdx` (padding gets 0). This is what a GPU
 * kernel does before the product; cost O(slots). Mutates m.ax (the entries are untouched).
 * @example
 * axcLoadX(m, x); // now m.ax[brp[i] + hbrs + l] = x[col of slot l of row i's first brick]
 */
export function axcLoadX(m: AxcMatrix, x: Float64Array): void {
  axGatherX(m.ax, m.xIdx, m.hbrs, x, m.cols, 'axcLoadX');
}

/**
 * y = A·x in float64 the way Listing 1/2 computes it: load x into ax, then per row the sum of
 * its bricks' products (each brick reduced lane by lane). Cost 2·slots flops + the gather.
 * Mutates m.ax's x halves (see {@link axcLoadX}).
 * @example
 * const y = axcSpmvReference(axcFromCsr(a, { hbrs: 8 }), x);
 */
export function axcSpmvReference(m: AxcMatrix, x: Float64Array, y?: Float64Array): Float64Array {
  const out = y ?? new Float64Array(m.rows);
  if (out.length !== m.rows) throw new DimensionMismatchError('axcSpmvReference y', m.rows, out.length);
  axcLoadX(m, x);
  const { ax, brp, hbrs, rows } = m;
  const stride = 2 * hbrs;
  for (let i = 0; i < rows; i++) {
    let sum = 0;
    for (let p = brp[i]!; p < brp[i + 1]!; p += stride) {
      // red = Σ_l ax[p + l]·ax[p + hbrs + l]  (one brick, Listing 1 line 20)
      let red = 0;
      for (let l = 0; l < hbrs; l++) red += ax[p + l]! * ax[p + hbrs + l]!;
      sum += red;
    }
    out[i] = sum;
  }
  return out;
}
