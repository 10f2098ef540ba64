/**
 * The autotuner's validation set (issue 16): generated matrices whose parameters differ from the
 * bench set (`matrix-set.ts`) the tuner was developed on — a 27-point and a 9-point stencil,
 * anisotropic 7-point grids, other band widths, other power-law exponents, other CI-like
 * densities, FEM-like blocks, empty rows, one dense row — with seeds 101–120 (the bench set
 * uses 1–6, the tests single digits). Full sizes are 10^5–2·10^6 rows for the GPU machine;
 * `quick` is about 1 % for lavapipe.
 * @module
 */
import { type CsrMatrix, generators as g } from '@gpusparse/formats';

/**
 * 27-point stencil on an nx × ny × nz grid (26 on the diagonal, −1 to each neighbour): rows of
 * 8–27 entries. Cost: O(27 · nx·ny·nz).
 * @example stencil27(120).rows // 1 728 000 (issue 16's matrix)
 */
export function stencil27(nx: number, ny = nx, nz = nx): CsrMatrix {
  const n = nx * ny * nz;
  const rowPtr = new Int32Array(n + 1);
  const colIdx = new Int32Array(27 * n);
  const values = new Float64Array(27 * n);
  let k = 0;
  for (let z = 0; z < nz; z++)
    for (let y = 0; y < ny; y++)
      for (let x = 0; x < nx; x++) {
        const p = x + nx * (y + ny * z);
        for (let dz = -1; dz <= 1; dz++)
          for (let dy = -1; dy <= 1; dy++)
            for (let dx = -1; dx <= 1; dx++) {
              const [X, Y, Z] = [x + dx, y + dy, z + dz];
              if (X < 0 || Y < 0 || Z < 0 || X >= nx || Y >= ny || Z >= nz) continue;
              const q = X + nx * (Y + ny * Z);
              colIdx[k] = q;
              values[k++] = q === p ? 26 : -1;
            }
        rowPtr[p + 1] = k;
      }
  return { format: 'csr', rows: n, cols: n, rowPtr, colIdx: colIdx.slice(0, k), values: values.slice(0, k) };
}

/** 2-D 9-point stencil on an nx × ny grid (8 on the diagonal, −1 to each neighbour). O(9·nx·ny). */
export function stencil9(nx: number, ny = nx): CsrMatrix {
  const m = stencil27(nx, ny, 1);
  return { ...m, values: m.values.map((v) => (v === 26 ? 8 : v)) };
}

/**
 * Name and a thunk per validation matrix (built lazily, one at a time). Cost: nothing until a
 * thunk runs.
 * @example for (const [name, make] of validationMatrixSet(true)) console.log(name, make().rows);
 */
export function validationMatrixSet(quick: boolean | number): [string, () => CsrMatrix][] {
  // a number is the scale itself (bench/tune.ts --scale): 0.01 is --quick, 1 the full sizes
  const s = typeof quick === 'number' ? quick : quick ? 0.01 : 1;
  const r = (n: number) => Math.max(64, Math.round(n * s));
  const c3 = (n: number) => Math.max(4, Math.round(n * Math.cbrt(s)));
  const c2 = (n: number) => Math.max(8, Math.round(n * Math.sqrt(s)));
  const ci = s < 0.05 ? 3000 : Math.round(40_000 * s);
  return [
    [`stencil27-${c3(120)}^3`, () => stencil27(c3(120))],
    [`stencil9-${c2(1200)}^2`, () => stencil9(c2(1200))],
    [`stencil7-aniso-${c3(300)}x${c3(200)}x${c3(40)}`, () => g.poisson3d(c3(300), c3(200), c3(40))],
    [`banded-${r(1.5e6)}-b5`, () => g.banded(r(1.5e6), 2, 2, { seed: 101 })],
    [`banded-${r(5e5)}-b33`, () => g.banded(r(5e5), 16, 16, { seed: 102 })],
    [`banded-${r(1e6)}-lower1-upper7`, () => g.banded(r(1e6), 1, 7, { seed: 103 })],
    [`powerlaw-a1.8-${r(1e6)}`, () => g.powerLaw(r(1e6), r(1e6), { alpha: 1.8, minLen: 1, maxLen: s < 0.05 ? 1000 : 5000, seed: 104 })],
    [`powerlaw-a2.6-${r(1.5e6)}`, () => g.powerLaw(r(1.5e6), r(1.5e6), { alpha: 2.6, minLen: 3, maxLen: 500, seed: 105 })],
    [`uniform-${r(2e6)}-5`, () => g.uniformRandom(r(2e6), r(2e6), 5, 106)],
    [`uniform-${r(5e5)}-48`, () => g.uniformRandom(r(5e5), r(5e5), 48, 107)],
    [`cilike-${ci}-300`, () => g.ciLike(ci, { refFraction: 0.05, refDensity: (0.7 * 300) / (0.05 * ci), expDensity: (0.3 * 300) / (0.95 * ci), seed: 108 })],
    [`cilike-${ci / 4}-2500`, () => g.ciLike(ci / 4, { refFraction: 0.15, refDensity: Math.min(1, (0.8 * 2500) / ((0.15 * ci) / 4)), expDensity: (0.2 * 2500) / ((0.85 * ci) / 4), seed: 109 })],
    [`fem-blocks3x3-${r(4e5)}`, () => g.blockStructured(r(4e5), r(4e5), 3, 3, 9, 110)],
    [`empty30pct-${r(1e6)}-12`, () => g.withEmptyRows(r(1e6), r(1e6), 12, 0.3, 111)],
    [`densrow-${r(1e6)}-8`, () => g.oneDenseRow(r(1e6), r(1e6), 8, Math.min(r(1e6), 50_000), 17, 112)],
  ];
}
