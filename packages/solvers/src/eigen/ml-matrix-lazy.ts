/**
 * ml-matrix behind one accessor (dense eigenproblems above order 32 and factorisations). It is a
 * static import: a lazy load (a dynamic import outside Node) made the browser bundle 37 % larger
 * (esbuild then bundles the whole CommonJS build, 572 → 780 kB) and let a call that came before the
 * import settled fail, which is worse than the ≈ 40–60 ms of CPU the module costs at start-up.
 * Projected eigenproblems up to order 32 (a CI run's Rayleigh–Ritz) use the Jacobi solver of
 * dense.ts and never call it.
 * @module
 */
import * as ml from 'ml-matrix';

/**
 * The ml-matrix module.
 * @example
 * const { Matrix } = mlMatrix();
 */
export function mlMatrix(): typeof ml {
  return ml;
}
