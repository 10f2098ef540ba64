import type { HostScalar, ScalarLike } from '@gpusparse/formats';
import { generators, HostOperator, HostVectorSpace } from '@gpusparse/formats';
import { describe, expect, it } from 'vitest';
import { symmetricEigen } from '../src/eigen/dense';
import { lobpcg } from '../src/index';

/** HostVectorSpace that counts the vectors read or written by multiDot and combine (the bulk of LOBPCG's vector work). */
class PassCounter extends HostVectorSpace {
  passes = 0;
  override multiDot(xs: readonly Float64Array[], y: Float64Array): HostScalar[] {
    this.passes += xs.length + 1;
    return super.multiDot(xs, y);
  }
  override combine(c: readonly ScalarLike<HostScalar>[], xs: readonly Float64Array[], beta: ScalarLike<HostScalar>, y: Float64Array): void {
    this.passes += xs.length + 1;
    super.combine(c, xs, beta, y);
  }
}

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

  it('one Gram–Schmidt pass for W and P, x = X·C_x + p: < 125 multiDot/combine vector passes per product on a 2-D Laplacian (110; was 157), same eigenvalues', async () => {
    const a = generators.poisson2d(30);
    const space = new PassCounter();
    const r = await lobpcg(space, HostOperator.fromCsr(a), { k: 4, tol: 1e-8, maxIterations: 3000 });
    expect(r.converged).toBe(true);
    // closed form of the 5-point Laplacian on a 30×30 grid: 4 − 2cos(iπ/31) − 2cos(jπ/31)
    const grid = Array.from({ length: 30 }, (_, i) => 2 - 2 * Math.cos(((i + 1) * Math.PI) / 31));
    const exact2d = grid.flatMap((x) => grid.map((y) => x + y)).sort((x, y) => x - y);
    for (let j = 0; j < 4; j++) expect(Math.abs(r.values[j]! - exact2d[j]!)).toBeLessThan(1e-9);
    expect(space.passes / r.stats.matvecs).toBeLessThan(125);
  });

  it('an exact-inverse preconditioner (W nearly parallel to X: one pass keeps too little) still gives orthonormal vectors and exact eigenvalues (the CGS2 round after a one-pass projection that kept too little)', async () => {
    const m = 80;
    const a = generators.laplacian1d(m);
    // T = A⁻¹ of the 1-D Laplacian in closed form: (A⁻¹)_ij = min(i, j)·(m + 1 − max(i, j)) / (m + 1), 1-based
    const inv: number[] = [];
    for (let i = 1; i <= m; i++) for (let j = 1; j <= m; j++) inv.push((Math.min(i, j) * (m + 1 - Math.max(i, j))) / (m + 1));
    const dense = { format: 'csr' as const, rows: m, cols: m, rowPtr: Int32Array.from({ length: m + 1 }, (_, i) => i * m), colIdx: Int32Array.from({ length: m * m }, (_, q) => q % m), values: Float64Array.from(inv) };
    const space = new HostVectorSpace();
    const r = await lobpcg(space, HostOperator.fromCsr(a), { k: 3, tol: 1e-10, maxIterations: 500, preconditioner: HostOperator.fromCsr(dense) });
    expect(r.converged).toBe(true);
    for (let j = 0; j < 3; j++) expect(Math.abs(r.values[j]! - (2 - 2 * Math.cos(((j + 1) * Math.PI) / (m + 1))))).toBeLessThan(1e-12);
    const v = await Promise.all(r.vectors.map((x) => space.toArray(x)));
    for (let i = 0; i < 3; i++) {
      for (let j = 0; j < 3; j++) {
        let d = 0;
        for (let t = 0; t < m; t++) d += v[i]![t]! * v[j]![t]!;
        expect(Math.abs(d - (i === j ? 1 : 0))).toBeLessThan(1e-12);
      }
    }
  });
});
