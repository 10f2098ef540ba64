/**
 * The eigensolvers' convergence rules (docs/guides/eigen-convergence.md): the relative rule
 * ‖A·v − λ·v‖ ≤ max(tol·‖A‖est, atol) and its report, Davidson's relative mode and guard roots
 * (nConverge), and shift-invert Lanczos for the smallest eigenvalues of stiff SPD matrices.
 */
import { csrDiagonal, generators, HostOperator, HostVectorSpace, InvalidParameterError } from '@gpusparse/formats';
import { describe, expect, it } from 'vitest';
import { davidson } from '../src/eigen/davidson';
import { lanczos } from '../src/eigen/lanczos';
import { lobpcg } from '../src/eigen/lobpcg';
import { eigsMixed } from '../src/eigen/mixed';
import { lanczosShiftInvert, NotPositiveDefiniteError } from '../src/eigen/shift-invert';
import { Float32HostSpace, float32CsrOperator } from './eigen-f32-space';
import { csrToDense, denseEigenvalues, denseToCsr, randomSymmetric, residualF64 } from './eigen-matrices';

const space = () => new HostVectorSpace();

/** A stiff SPD matrix: D·L·D with L the 1-D Laplacian and D graded over `decades` decades. */
function stiff(n: number, decades: number): number[][] {
  const l = csrToDense(generators.laplacian1d(n));
  const d = Array.from({ length: n }, (_, i) => 10 ** ((decades * i) / (n - 1) / 2));
  return l.map((row, i) => row.map((x, j) => x * d[i]! * d[j]!));
}

describe('relative residual rule (Lanczos, LOBPCG)', () => {
  // ‖A‖ ≈ 4·10^6: an absolute 1e-8 is below what float64 resolves; the relative rule is not
  const dense = stiff(60, 6);
  const a = denseToCsr(dense);
  const all = denseEigenvalues(dense);
  const normA = Math.max(Math.abs(all[0]!), Math.abs(all[all.length - 1]!));

  it('lanczos largest: converged by default, the report states rule, tol and threshold = tol·‖A‖est', async () => {
    const r = await lanczos(HostOperator.fromCsr(a), space(), { k: 2, which: 'largest' });
    expect(r.reason, r.detail).toBe('converged');
    expect(r.tolerance?.rule).toBe('‖A·v − λ·v‖ ≤ max(tol·‖A‖est, atol)');
    expect(r.tolerance?.tol).toBe(1e-8);
    expect(r.tolerance?.normEstimate).toBeGreaterThan(0.99 * normA);
    expect(r.tolerance?.threshold).toBeCloseTo(1e-8 * r.tolerance!.normEstimate!, 12);
    r.values.forEach((v, i) => { expect(Math.abs(v - all[all.length - 1 - i]!) / normA).toBeLessThan(1e-10); });
    r.residualNorms.forEach((x) => { expect(x).toBeLessThanOrEqual(r.tolerance!.threshold); });
  });

  it('atol is a floor: a huge atol stops at the first explicit check; residualTol replaces the rule', async () => {
    const loose = await lobpcg(HostOperator.fromCsr(a), space(), { k: 1, atol: 1e30 });
    expect(loose.reason).toBe('converged');
    expect(loose.iterations).toBe(1);
    expect(loose.tolerance?.threshold).toBe(1e30);
    const abs = await lobpcg(HostOperator.fromCsr(a), space(), { k: 1, residualTol: 1e-30, maxIterations: 5 });
    expect(abs.reason).toBe('max-iterations');
    expect(abs.tolerance?.rule).toMatch(/^absolute/);
    await expect(lanczos(HostOperator.fromCsr(a), space(), { k: 1, atol: -1 })).rejects.toThrow(InvalidParameterError);
  });
});

describe('eigsMixed: the polish under the relative rule', () => {
  it('rtol: a matrix scaled to ‖A‖ ≈ 1e9 converges (the absolute 1e-8 default is out of float64 reach)', async () => {
    const dense = randomSymmetric(80, 3, { offScale: 0.02, diag: (i) => (10 * i) / 80 }).map((row) => row.map((x) => x * 1e8));
    const a = denseToCsr(dense);
    const ref = denseEigenvalues(dense);
    const common = { method: 'lanczos' as const, k: 2, fastOperator: float32CsrOperator(a), fastSpace: new Float32HostSpace(), hostOperator: HostOperator.fromCsr(a), diagonal: csrDiagonal(a) };
    const rel = await eigsMixed({ ...common, rtol: 1e-10 });
    expect(rel.reason, rel.detail).toBe('converged');
    expect(rel.tolerance?.rule).toMatch(/rtol·‖A‖est/);
    rel.values.forEach((v, i) => { expect(Math.abs(v - ref[i]!) / 1e9).toBeLessThan(1e-12); });
    const abs = await eigsMixed({ ...common, polishMaxIterations: 20 });
    expect(abs.converged).toBe(false); // ‖r‖ < 1e-8 absolute: below ε·‖A‖ ≈ 2e-7
    await expect(eigsMixed({ ...common, rtol: 1e-10, residualTol: 1 })).rejects.toThrow(/rtol/);
  });
});

describe('davidson: relative mode and guard roots', () => {
  const dense = randomSymmetric(150, 7, { offScale: 0.02, diag: (i) => (10 * i) / 150 });
  const a = denseToCsr(dense);
  const ref = denseEigenvalues(dense);

  it('nConverge: the verdict is judged on the wanted roots; an unconverged guard root does not hold it', async () => {
    const all = await davidson(HostOperator.fromCsr(a), space(), { k: 3, diagonal: csrDiagonal(a), residualTol: 1e-9 });
    // the iteration where root 0 passed while root 2 had not
    const first = all.history.findIndex((h) => h.residualNorms[0]! <= 1e-9 && h.residualNorms[2]! > 1e-9);
    expect(first, 'root 0 converges before root 2 on this matrix').toBeGreaterThanOrEqual(0);
    const cap = all.history[first]!.iteration + 1;
    expect(cap).toBeLessThan(all.iterations);
    const capped = await davidson(HostOperator.fromCsr(a), space(), { k: 3, diagonal: csrDiagonal(a), residualTol: 1e-9, maxIterations: cap });
    expect(capped.reason).toBe('max-iterations'); // all three roots are wanted by default
    const guarded = await davidson(HostOperator.fromCsr(a), space(), { k: 3, nConverge: 1, diagonal: csrDiagonal(a), residualTol: 1e-9, maxIterations: cap });
    expect(guarded.reason, guarded.detail).toBe('converged');
    expect(guarded.detail).toMatch(/guard root/);
    expect(Math.abs(guarded.values[0]! - ref[0]!)).toBeLessThan(1e-10);
    expect(guarded.residualNorms[0]!).toBeLessThan(1e-9);
    await expect(davidson(HostOperator.fromCsr(a), space(), { k: 3, nConverge: 4, diagonal: csrDiagonal(a) })).rejects.toThrow(/nConverge/);
  });

  it('rtol: the residual threshold scales with ‖A‖est; rtol with residualTol is refused', async () => {
    const scaled = dense.map((row) => row.map((x) => x * 1e9));
    const s = denseToCsr(scaled);
    const r = await davidson(HostOperator.fromCsr(s), space(), { k: 2, diagonal: csrDiagonal(s), rtol: 1e-10 });
    expect(r.reason, r.detail).toBe('converged');
    expect(r.tolerance?.rule).toMatch(/rtol·‖A‖est/);
    expect(r.tolerance?.threshold).toBeGreaterThan(1e-10 * 9e9);
    r.values.forEach((v, i) => { expect(Math.abs(v - 1e9 * ref[i]!) / (1e9 * 10)).toBeLessThan(1e-12); });
    await expect(davidson(HostOperator.fromCsr(s), space(), { k: 1, diagonal: csrDiagonal(s), rtol: 1e-8, residualTol: 1 })).rejects.toThrow(/rtol/);
  });
});

describe('lanczosShiftInvert', () => {
  it('the smallest eigenvalues of a stiff SPD matrix (condition ~1e10) to 1e-9 relative, where plain Lanczos does not converge', async () => {
    const dense = stiff(120, 8);
    const a = denseToCsr(dense);
    const ref = denseEigenvalues(dense).slice(0, 4);
    const plain = await lanczos(HostOperator.fromCsr(a), space(), { k: 4, maxIterations: 400 });
    expect(plain.converged).toBe(false);
    const r = await lanczosShiftInvert(a, { k: 4 });
    expect(r.reason, r.detail).toBe('converged');
    expect(r.iterations).toBeLessThan(100);
    r.values.forEach((v, i) => { expect(Math.abs(v - ref[i]!) / ref[i]!, `λ${i}`).toBeLessThan(1e-9); });
    const hostVectors = r.vectors;
    hostVectors.forEach((v, i) => { expect(Math.abs(residualF64(a, r.values[i]!, v) - r.residualNorms[i]!)).toBeLessThan(1e-6 * (r.residualNorms[i]! + 1e-300) + 1e-12); });
    expect(r.inner.solves).toBeGreaterThan(0);
    expect(r.inner.unconverged).toBe(0);
    expect(r.tolerance?.rule).toMatch(/shift-invert/);
    expect(r.method).toMatch(/shift-invert/);
  });

  it('a shift above the smallest eigenvalue finds the pairs above σ, and an indefinite A − σI is a typed error', async () => {
    const a = generators.laplacian1d(50);
    const ev = Array.from({ length: 50 }, (_, j) => 2 - 2 * Math.cos(((j + 1) * Math.PI) / 51));
    const r = await lanczosShiftInvert(a, { k: 2, sigma: -0.5 });
    r.values.forEach((v, i) => { expect(Math.abs(v - ev[i]!)).toBeLessThan(1e-11); });
    await expect(lanczosShiftInvert(a, { k: 2, sigma: 0.5 })).rejects.toThrow(NotPositiveDefiniteError);
    const indefinite = denseToCsr([[1, 2], [2, 1]]);
    await expect(lanczosShiftInvert(indefinite, { k: 1 })).rejects.toThrow(/not positive definite/);
  });
});
