/**
 * The one-call API (src/api.ts) on the CPU backend: every accepted input kind, the float64
 * residual it reports, eigsh against closed forms, the converters' round trips, bad input.
 */
import { csrEquals, csrSpmv, DimensionMismatchError, generators, InvalidMatrixError, InvalidParameterError } from '@gpusparse/formats';
import { all, create } from 'mathjs';
import { Matrix } from 'ml-matrix';
import { describe, expect, it } from 'vitest';
import { dataFile } from '../../../testdata/index';
import { eigsh, fromMathjs, fromMlMatrix, solve, toCsr, toMathjs, toMlMatrix } from '../src/api';

const math = create(all);

/** The exact eigenvalues 2 − 2 cos(kπ/(n+1)) of the n×n 1-D Laplacian tridiag(−1, 2, −1). */
const laplace1d = (n: number, k: number) => 2 - 2 * Math.cos((k * Math.PI) / (n + 1));

describe('solve', () => {
  it('CG on a CsrMatrix: x is a Float64Array with the float64 residual under rtol', async () => {
    const a = generators.poisson2d(20);
    const xStar = Float64Array.from({ length: a.rows }, (_, i) => Math.cos(i));
    const r = await solve(a, csrSpmv(a, xStar), { rtol: 1e-10, backend: 'cpu' });
    expect(r.x).toBeInstanceOf(Float64Array);
    expect(r.converged).toBe(true);
    expect(r.relativeResidual).toBeLessThan(1e-10);
    expect(r.refined).toBe(false);
    expect(r.backend).toMatch(/CPU/);
    for (let i = 0; i < a.rows; i++) expect(Math.abs(r.x[i]! - xStar[i]!)).toBeLessThan(1e-7);
  });

  it('GMRES on a Matrix Market path (bcsstk05), b as a plain array', async () => {
    const path = dataFile('matrices', 'bcsstk05.mtx');
    const a = await toCsr(path);
    const b = Array.from(csrSpmv(a, new Float64Array(a.cols).fill(1)));
    const r = await solve(path, b, { method: 'gmres', rtol: 1e-9, backend: 'cpu', maxIterations: 2000 });
    expect(r.method).toMatch(/gmres/i);
    expect(r.converged).toBe(true);
    expect(r.relativeResidual).toBeLessThan(1e-8);
  });

  it('accepts a mathjs SparseMatrix and an ml-matrix Matrix, with the same answer as CSR', async () => {
    const a = generators.poisson2d(6);
    const b = csrSpmv(a, new Float64Array(a.cols).fill(1));
    const fromCsr = await solve(a, b, { rtol: 1e-12, backend: 'cpu' });
    const viaMathjs = await solve(toMathjs(a, math), b, { rtol: 1e-12, backend: 'cpu' });
    const viaMl = await solve(toMlMatrix(a, Matrix), b, { rtol: 1e-12, backend: 'cpu' });
    for (const r of [viaMathjs, viaMl]) for (let i = 0; i < a.rows; i++) expect(r.x[i]).toBeCloseTo(fromCsr.x[i]!, 10);
  });

  it('bad input: b of the wrong length, a non-square A, an unknown method, an unknown input type', async () => {
    const a = generators.poisson2d(4);
    await expect(solve(a, [1, 2, 3], { backend: 'cpu' })).rejects.toThrow(DimensionMismatchError);
    await expect(solve(a, [1, 2, 3], { backend: 'cpu' })).rejects.toThrow(/b: expected length 16, got 3/);
    await expect(solve(new Matrix([[1, 2, 3]]), [1], { backend: 'cpu' })).rejects.toThrow(/A must be square/);
    await expect(solve(a, new Float64Array(16), { method: 'sor' as 'cg', backend: 'cpu' })).rejects.toThrow(InvalidParameterError);
    await expect(solve({ data: [1] } as unknown as string, [1])).rejects.toThrow(/expected a CsrMatrix, a Matrix Market path, a mathjs SparseMatrix or an ml-matrix Matrix, got an object with keys data/);
  });
});

describe('eigsh', () => {
  it('the 4 smallest and the 2 largest eigenvalues of the 1-D Laplacian (closed form), vectors in float64', async () => {
    const n = 100;
    const a = generators.laplacian1d(n);
    const lo = await eigsh(a, 4, { which: 'smallest', backend: 'cpu' });
    expect(lo.converged).toBe(true);
    for (const [j, v] of lo.values.entries()) expect(Math.abs(v - laplace1d(n, j + 1))).toBeLessThan(1e-9);
    expect(lo.vectors[0]).toBeInstanceOf(Float64Array);
    const av = csrSpmv(a, lo.vectors[0]!);
    expect(Math.max(...Array.from(av, (y, i) => Math.abs(y - lo.values[0]! * lo.vectors[0]![i]!)))).toBeLessThan(1e-7);
    const hi = await eigsh(toMlMatrix(a, Matrix), 2, { which: 'largest', backend: 'cpu' });
    expect(hi.values.map((v) => Math.abs(v - laplace1d(n, n))).some((d) => d < 1e-9)).toBe(true);
  });

  it('the tolerance is relative to ‖A‖ (bcsstk05: ‖A‖∞ ≈ 1e7): converges and reports residuals below tol·‖A‖∞', async () => {
    const a = await toCsr(dataFile('matrices', 'bcsstk05.mtx'));
    const r = await eigsh(a, 2, { which: 'largest', tol: 1e-9, backend: 'cpu' });
    expect(r.converged).toBe(true);
    let normInf = 0;
    for (let i = 0; i < a.rows; i++) normInf = Math.max(normInf, Array.from(a.values.subarray(a.rowPtr[i]!, a.rowPtr[i + 1]!), Math.abs).reduce((x, y) => x + y, 0));
    expect(normInf).toBeGreaterThan(1e5);
    for (const [j, v] of r.values.entries()) {
      const av = csrSpmv(a, r.vectors[j]!);
      const res = Math.hypot(...Array.from(av, (y, i) => y - v * r.vectors[j]![i]!));
      expect(res).toBeLessThan(1e-8 * normInf);
    }
  });

  it('rejects a nonsymmetric matrix (naming the pair) and k out of range', async () => {
    const ns = await toCsr(dataFile('matrices', 'west0067.mtx'));
    await expect(eigsh(ns, 2, { backend: 'cpu' })).rejects.toThrow(InvalidMatrixError);
    await expect(eigsh(ns, 2, { backend: 'cpu' })).rejects.toThrow(/expected a symmetric matrix, got A\[\d+\]\[\d+\]/);
    await expect(eigsh(generators.laplacian1d(5), 6, { backend: 'cpu' })).rejects.toThrow(/k: expected an integer in \[1, 5\], got 6/);
  });
});

describe('converters', () => {
  it('mathjs: CSR → SparseMatrix → CSR is the identity, and mathjs computes the same A·x', () => {
    const a = generators.poisson2d(5);
    const s = toMathjs(a, math);
    expect(csrEquals(fromMathjs(s), a)).toBe(true);
    const x = Array.from({ length: a.cols }, (_, i) => i + 1);
    const theirs = (math.multiply(s, math.matrix(x)) as unknown as { toArray(): number[] }).toArray();
    const ours = csrSpmv(a, Float64Array.from(x));
    for (const [i, y] of theirs.entries()) expect(y).toBeCloseTo(ours[i]!, 12);
  });

  it('ml-matrix: CSR → Matrix → CSR is the identity; a pattern mathjs matrix is refused', () => {
    const a = generators.poisson2d(4);
    const m = toMlMatrix(a, Matrix);
    expect(m.get(0, 0)).toBe(a.values[0]);
    expect(csrEquals(fromMlMatrix(m), a)).toBe(true);
    const pattern = { storage: () => 'sparse', toJSON: () => ({ index: [0], ptr: [0, 1], size: [1, 1] }) };
    expect(() => fromMathjs(pattern)).toThrow(/expected a SparseMatrix with values, got a pattern matrix/);
    expect(() => fromMathjs(math.matrix([[1]]))).toThrow(/expected a SparseMatrix \(math.sparse\), got dense storage/);
  });
});
