/**
 * The generated bench matrix set shared by `bench/spmv.ts` and `bench/tune.ts`: banded, 2-D and
 * 3-D stencils, uniform random columns, power-law row lengths and CI-like rows of ~1000
 * non-zeros with a dense Reference band (seed 001), of 10^6–10^7 rows (`quick`: about 1 %).
 */
import { type CsrMatrix, generators as g } from '@gpusparse/formats';

/**
 * Name and a thunk per matrix (built lazily, one at a time). Cost: nothing until a thunk runs.
 * @example for (const [name, make] of benchMatrixSet(true)) console.log(name, make().rows);
 */
export function benchMatrixSet(quick: boolean | number): [string, () => CsrMatrix][] {
  // a number is the scale itself (bench/tune.ts --scale): 0.01 is --quick, 1 the full sizes
  const s = typeof quick === 'number' ? quick : quick ? 0.01 : 1;
  const n2 = Math.round(2000 * Math.sqrt(s));
  const n3 = Math.round(160 * Math.cbrt(s));
  const ci = Math.round(s < 0.05 ? 4000 : 60_000 * s);
  return [
    [`banded-${2e6 * s}-b9`, () => g.banded(2e6 * s, 4, 4, { seed: 1 })],
    [`stencil2d-${n2}x${n2}`, () => g.poisson2d(n2)],
    [`stencil3d-${n3}^3`, () => g.poisson3d(n3)],
    [`uniform-${2e6 * s}-16`, () => g.uniformRandom(2e6 * s, 2e6 * s, 16, 2)],
    [`powerlaw-${2e6 * s}`, () => g.powerLaw(2e6 * s, 2e6 * s, { alpha: 2.2, minLen: 2, maxLen: s < 0.05 ? 2000 : 20_000, seed: 3 })],
    [`cilike-${ci}-1000`, () => g.ciLike(ci, { refFraction: 0.1, refDensity: (0.8 * 1000) / (0.1 * ci), expDensity: (0.2 * 1000) / (0.9 * ci), seed: 4 })],
  ];
}
