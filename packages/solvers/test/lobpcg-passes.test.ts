import { generators, HostOperator, HostVectorSpace } from '@gpusparse/formats';
import { describe, expect, it } from 'vitest';
import { symmetricEigen } from '../src/eigen/dense';
import { lobpcg } from '../src/index';

// 1-D Laplacian of n = 120: eigenvalues 2 − 2cos(jπ/(n+1)) in closed form
const n = 120;
const exact = Array.from({ length: 4 }, (_, j) => 2 - 2 * Math.cos(((j + 1) * Math.PI) / (n + 1)));

describe('lobpcg: one orthogonalisation pass per block in float64', () => {
  it('well-conditioned blocks: ≈ 4 readbacks per iteration (was 6: two CGS2 + SVQB passes for W and for P), same eigenvalues', async () => {
    const r = await lobpcg(new HostVectorSpace(), HostOperator.fromCsr(generators.laplacian1d(n)), { k: 4, tol: 1e-9, maxIterations: 3000 });
    expect(r.converged).toBe(true);
    for (let j = 0; j < 4; j++) expect(Math.abs(r.values[j]! - exact[j]!)).toBeLessThan(1e-12);
    // per iteration: residual norms, SVQB of W, SVQB of P, projected matrix; a second SVQB only when ill-conditioned
    expect(r.stats.readbacks).toBeLessThan(5 * r.iterations);
  });

  it('a random dense symmetric matrix: the 4 smallest eigenvalues of ml-matrix', async () => {
    const m = 60;
    let s = 7;
    const rnd = () => ((s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31) * 2 - 1;
    const dense: number[][] = Array.from({ length: m }, () => new Array<number>(m).fill(0));
    for (let i = 0; i < m; i++) for (let j = 0; j <= i; j++) dense[i]![j] = dense[j]![i] = rnd() + (i === j ? i / 4 : 0);
    const rowPtr = Int32Array.from({ length: m + 1 }, (_, i) => i * m);
    const colIdx = Int32Array.from({ length: m * m }, (_, q) => q % m);
    const values = Float64Array.from({ length: m * m }, (_, q) => dense[Math.floor(q / m)]![q % m]!);
    const op = HostOperator.fromCsr({ format: 'csr', rows: m, cols: m, rowPtr, colIdx, values });
    const r = await lobpcg(new HostVectorSpace(), op, { k: 4, tol: 1e-10, maxIterations: 2000 });
    const ref = symmetricEigen(dense)!.values.slice(0, 4);
    expect(r.converged).toBe(true);
    for (let j = 0; j < 4; j++) expect(Math.abs(r.values[j]! - ref[j]!)).toBeLessThan(1e-9);
  });
});
