/**
 * SPD matrices of the bench set by name, for the eigen target of issue 15 (bench/solvers.ts
 * `--spd`, compared with CuPy eigsh in bench/solvers_cupy.py):
 *
 * - `poisson3d-AxBxC`: the 7-point Laplacian (`generators.poisson3d`) on an A×B×C grid. With
 *   three different sides the lowest eigenvalues are simple: λ_ijk = Σ 2 − 2cos(iπ/(A+1)) …,
 *   and on a cube (1,1,2), (1,2,1), (2,1,1) coincide — a triple that single-vector Lanczos
 *   (ours and ARPACK's) resolves only by deflation, which would time the multiplicity check
 *   rather than the solver.
 * - `poisson2d-AxB`: the 5-point Laplacian (different sides for the same reason).
 * - `stencil27-N`: the 27-point stencil of the refined-CG bench on an N³ cube (degenerate low end).
 * - `banded-N-bB`: a random SPD banded matrix (B diagonals each side, `generators.banded`).
 * @module
 */
import { type CsrMatrix, generators, InvalidParameterError } from '../packages/formats/src/index';
import { stencil27 } from './df64-matrices';

/**
 * The SPD matrix named `spec` (see the module note).
 * @example spdMatrix('poisson3d-100x110x120') // 1 320 000 rows, 7-point stencil
 * @throws InvalidParameterError for an unknown name or bad sizes
 */
export function spdMatrix(spec: string): CsrMatrix {
  const [kind, ...rest] = spec.split('-');
  const dims = (rest[0] ?? '').split('x').map(Number);
  const ok = dims.length > 0 && dims.every((d) => Number.isInteger(d) && d >= 2);
  if (kind === 'poisson3d' && ok && dims.length === 3) return generators.poisson3d(dims[0]!, dims[1]!, dims[2]!);
  if (kind === 'poisson2d' && ok && dims.length === 2) return generators.poisson2d(dims[0]!, dims[1]!);
  if (kind === 'stencil27' && ok && dims.length === 1) return stencil27(dims[0]!);
  const band = /^b(\d+)$/.exec(rest[1] ?? '');
  if (kind === 'banded' && ok && dims.length === 1 && band) return generators.banded(dims[0]!, Number(band[1]), Number(band[1]), { seed: 1, spd: true });
  throw new InvalidParameterError('--spd', 'poisson3d-AxBxC, poisson2d-AxB, stencil27-N or banded-N-bB (sizes ≥ 2)', spec);
}
