/**
 * Session 9 hostile calls of the one-call API (solve, eigsh) and of lanczos: options of the
 * wrong kind that ran as something else before the fix. eigsh with SciPy's which: 'LA' (largest
 * algebraic) returned the SMALLEST eigenvalues, converged; method: 'arnoldi' ran LOBPCG; solve
 * with precond: 'ilu' ran without one; method: 'toString' and b undefined threw TypeErrors.
 */
import { generators, HostOperator, HostVectorSpace } from '@gpusparse/formats';
import { lanczos } from '@gpusparse/solvers';
import { describe, expect, it } from 'vitest';
import { eigsh, solve } from '../src/api';

const a = generators.laplacian1d(20);
const b = new Float64Array(20).fill(1);
const cpu = { backend: 'cpu' as const };
type Any = never;

describe('eigsh options that ran as something else', () => {
  it("which 'LA', 'LM', 'SA' (SciPy's codes) with lanczos and davidson: InvalidParameterError naming which (LA returned the smallest λ)", async () => {
    for (const which of ['LA', 'LM', 'SA']) {
      for (const method of ['lanczos', 'davidson'] as const) {
        await expect(eigsh(a, 2, { ...cpu, which: which as Any, method })).rejects.toThrow(/parameter which: expected 'smallest' or 'largest' .*got (LA|LM|SA)/);
      }
    }
    // largest still answers the largest: 2 − 2cos(20π/21) ≈ 3.9777
    const r = await eigsh(a, 1, { ...cpu, which: 'largest' });
    expect(r.values[0]).toBeCloseTo(2 - 2 * Math.cos((20 * Math.PI) / 21), 8);
  });
  it("method 'arnoldi' (ran lobpcg), tol −1 / '1e-3', maxIterations −1 / 2.5 (ran 0 iterations): refused naming the option", async () => {
    await expect(eigsh(a, 2, { ...cpu, method: 'arnoldi' as Any })).rejects.toThrow(/parameter method: expected 'lanczos', 'davidson' or 'lobpcg', got arnoldi/);
    for (const tol of [-1, '1e-3', Number.NaN]) await expect(eigsh(a, 2, { ...cpu, tol: tol as Any })).rejects.toThrow(/parameter tol: expected a finite number > 0/);
    for (const maxIterations of [-1, 2.5, '100']) await expect(eigsh(a, 2, { ...cpu, maxIterations: maxIterations as Any })).rejects.toThrow(/parameter maxIterations: expected an integer ≥ 0/);
  });
  it("lanczos itself: which 'LA' is refused (it ran as smallest)", async () => {
    const space = new HostVectorSpace();
    await expect(lanczos(space, HostOperator.fromCsr(a), { k: 2, which: 'LA' as Any })).rejects.toThrow(/parameter lanczos which: expected 'smallest' or 'largest', got LA/);
  });
});

describe('solve options and b that ran as something else', () => {
  it("precond 'ilu' or 'Jacobi' (ran with none), method 'toString' (TypeError): InvalidParameterError", async () => {
    for (const precond of ['ilu', 'Jacobi']) await expect(solve(a, b, { ...cpu, precond: precond as Any })).rejects.toThrow(/parameter precond: expected 'jacobi' or 'none'/);
    for (const method of ['toString', 'constructor']) await expect(solve(a, b, { ...cpu, method: method as Any })).rejects.toThrow(/parameter method: expected cg, gmres, bicgstab or bicg/);
  });
  it("b undefined (TypeError), a string of 20 digits (read as its characters, 'converged'), entries 'x': refused naming b", async () => {
    await expect(solve(a, undefined as Any, cpu)).rejects.toThrow(/parameter b: expected an array or typed array of numbers, got undefined/);
    await expect(solve(a, '1'.repeat(20) as Any, cpu)).rejects.toThrow(/parameter b: expected an array or typed array of numbers, got string/);
    await expect(solve(a, Array(20).fill('x') as Any, cpu)).rejects.toThrow(/parameter b\[0\]: expected a number, got string/);
    await expect(solve(a, [1, 2], cpu)).rejects.toThrow(/solve: b: expected length 20, got 2/);
  });
  it('maxIterations −1 or a string: refused; a plain array b still solves', async () => {
    for (const maxIterations of [-1, '100']) await expect(solve(a, b, { ...cpu, maxIterations: maxIterations as Any })).rejects.toThrow(/parameter maxIterations: expected an integer ≥ 0/);
    const r = await solve(a, Array.from(b), cpu);
    expect(r.converged).toBe(true);
    expect(r.relativeResidual).toBeLessThan(1e-8);
  });
});

describe('an in-memory A with a non-finite entry', () => {
  it('CSR, ml-matrix-like and mathjs-like inputs with NaN / Infinity: InvalidMatrixError naming row and column (was a Jacobi "zero pivot" at the wrong place, or a non-finite solve)', async () => {
    const csr = { format: 'csr', rows: 2, cols: 2, rowPtr: Int32Array.of(0, 1, 2), colIdx: Int32Array.of(0, 1), values: Float64Array.of(1, Number.NaN) };
    const ml = { rows: 2, columns: 2, get: (i: number, j: number) => (i === 0 && j === 1 ? Number.POSITIVE_INFINITY : i === j ? 2 : 0) };
    const mathjs = { storage: () => 'sparse', toJSON: () => ({ values: [2, Number.NaN, 2], index: [0, 1, 1], ptr: [0, 2, 3], size: [2, 2] }) };
    for (const [input, where, got] of [
      [csr, 'row 2, column 2', 'NaN'],
      [ml, 'row 1, column 2', 'Infinity'],
      [mathjs, 'row 2, column 1', 'NaN'],
    ] as const) {
      for (const precond of ['jacobi', 'none'] as const) {
        await expect(solve(input as Any, [1, 1], { ...cpu, precond })).rejects.toThrow(new RegExp(`^A\\(${where}\\): expected a finite value, got ${got}$`));
      }
      await expect(eigsh(input as Any, 1, cpu)).rejects.toThrow(/expected a finite value/);
    }
  });
});
