/**
 * Matrix loading for the CLI: a Matrix Market path (.mtx or .mtx.gz), or a generator spec
 * `gen:<name>:<args>` so commands can run without a file:
 * `gen:poisson2d:1000` (1000×1000 grid), `gen:poisson3d:64`, `gen:banded:1000000:8`,
 * `gen:uniform:1000000:16`, `gen:powerlaw:1000000`, `gen:cilike:100000`, `gen:laplacian1d:1000`.
 * @module
 */
import { type CsrMatrix, generators, readMatrixMarket } from '@gpusparse/formats';
import { UsageError } from './context';

/** A loaded matrix and where it came from. */
export interface LoadedMatrix {
  matrix: CsrMatrix;
  name: string;
  symmetry: string;
  warnings: string[];
}

const gens: Record<string, (a: number[]) => CsrMatrix> = {
  poisson2d: ([n = 100]) => generators.poisson2d(n),
  poisson3d: ([n = 20]) => generators.poisson3d(n),
  laplacian1d: ([n = 1000]) => generators.laplacian1d(n),
  banded: ([n = 10000, w = 4]) => generators.banded(n, w, w, { spd: true }),
  uniform: ([n = 10000, k = 16]) => generators.uniformRandom(n, n, k, 1),
  powerlaw: ([n = 10000]) => generators.powerLaw(n, n, { seed: 1 }),
  cilike: ([n = 10000]) => generators.ciLike(n, { maxPerRow: 2000 }),
};

/** Load a matrix from a path or a `gen:` spec. */
export async function loadMatrix(spec: string, opts: { strictCount?: boolean } = {}): Promise<LoadedMatrix> {
  if (spec.startsWith('gen:')) {
    const [, name, ...rest] = spec.split(':');
    const g = gens[name ?? ''];
    if (!g) throw new UsageError(`unknown generator '${name}' in '${spec}': expected one of ${Object.keys(gens).join(', ')}`);
    const args = rest.map((s) => {
      const n = Number(s);
      if (!Number.isInteger(n) || n < 0) throw new UsageError(`generator argument '${s}' in '${spec}': expected a non-negative integer`);
      return n;
    });
    return { matrix: g(args), name: spec, symmetry: name === 'uniform' || name === 'powerlaw' || name === 'cilike' ? 'general' : 'symmetric', warnings: [] };
  }
  const warnings: string[] = [];
  const r = await readMatrixMarket(spec, { strictCount: opts.strictCount ?? true, onWarning: (w) => warnings.push(`${w.file}:${w.line}: ${w.message}`) });
  return { matrix: r.matrix, name: spec, symmetry: r.header.symmetry, warnings };
}
