/**
 * Session 13: shift-invert with σ within ~1e-9 (relative) of an eigenvalue but not on it. The
 * products of B = (A − σI)⁻¹ are then accurate only to u·‖A − σI‖·‖B‖ relative, above the outer
 * tolerance: poisson2d 8², σ = λ₁·(1 − 10⁻⁹), k = 2 ran 5 000 Lanczos steps and 5 668 inner solves
 * and ended 'max-iterations' (values right, unproven). Now a guarded inner solve notices the
 * floor, the pair next to σ is found by inverse iteration (its direction is exact: the error lies
 * along it) and accepted by its residual with A, deflated, and Lanczos finds the others on the
 * deflated B: converged in ≈ 70 solves, the detail naming the near-singular shift.
 */
import { type CsrMatrix, generators, HostOperator } from '@gpusparse/formats';
import { describe, expect, it } from 'vitest';
import { lanczosShiftInvert, NotPositiveDefiniteError } from '../src/index';

const a = generators.poisson2d(8); // n = 64, λ₁ = 8·sin²(π/18), λ₂ = λ₃ (a double eigenvalue)
const l1 = 8 * Math.sin(Math.PI / 18) ** 2;
const l2 = 4 * Math.sin(Math.PI / 18) ** 2 + 4 * Math.sin((2 * Math.PI) / 18) ** 2;

/** ‖A·v − λ·v‖ recomputed here, independently of the solver. */
function residual(m: CsrMatrix, v: Float64Array, lambda: number): number {
  const y = new Float64Array(m.rows);
  HostOperator.fromCsr(m).apply(v, y);
  return Math.sqrt(y.reduce((s, yi, i) => s + (yi - lambda * v[i]!) ** 2, 0));
}

/** diag(m, m): every eigenvalue of m twice. */
function twice(m: CsrMatrix): CsrMatrix {
  const n = m.rows;
  const nnz = m.rowPtr[n]!;
  const rowPtr = new Int32Array(2 * n + 1);
  for (let i = 0; i <= n; i++) rowPtr[i] = m.rowPtr[i]!;
  for (let i = 1; i <= n; i++) rowPtr[n + i] = nnz + m.rowPtr[i]!;
  const colIdx = new Int32Array(2 * nnz);
  colIdx.set(m.colIdx);
  for (let k = 0; k < nnz; k++) colIdx[nnz + k] = m.colIdx[k]! + n;
  const values = new Float64Array(2 * nnz);
  values.set(m.values);
  values.set(m.values, nnz);
  return { ...m, rows: 2 * n, cols: 2 * n, rowPtr, colIdx, values };
}

describe('shift-invert with σ next to an eigenvalue (not on it)', () => {
  it('poisson2d 8², σ = λ₁·(1 − 10⁻⁹ … 10⁻¹⁰), k = 1, 2, 3: converged (was max-iterations after 5 000 steps), λ₁ to 1e-14, λ₂ to 1e-9, residuals ≤ tol·‖A‖', async () => {
    for (const rel of [1e-9, 1e-10]) {
      for (const k of [1, 2, 3]) {
        const r = await lanczosShiftInvert(a, { k, sigma: l1 * (1 - rel) });
        expect(r.reason, `${rel} ${k}`).toBe('converged');
        expect(r.values.length).toBe(k);
        expect(Math.abs(r.values[0]! - l1)).toBeLessThan(1e-14);
        for (const v of r.values.slice(1)) expect(Math.abs(v - l2)).toBeLessThan(1e-9);
        for (const [i, v] of r.vectors.entries()) {
          const own = residual(a, v, r.values[i]!);
          expect(own).toBeLessThanOrEqual(1e-8 * 8.3);
          expect(Math.abs(own - r.residualNorms[i]!)).toBeLessThan(1e-12);
        }
        expect(r.detail).toMatch(/near-singular shift: products of \(A − σI\)⁻¹ accurate only to .* relative/);
        expect(r.inner.solves).toBeLessThan(200); // was 5 668
      }
    }
  });
  it('a double eigenvalue next to σ (diag(A, A)): both copies locked, then λ₂ — three values, each copy once per eigenvector', async () => {
    const b = twice(a);
    const r = await lanczosShiftInvert(b, { k: 3, sigma: l1 * (1 - 1e-9) });
    expect(r.reason).toBe('converged');
    expect(Math.abs(r.values[0]! - l1)).toBeLessThan(1e-14);
    expect(Math.abs(r.values[1]! - l1)).toBeLessThan(1e-14);
    expect(Math.abs(r.values[2]! - l2)).toBeLessThan(1e-9);
    let overlap = 0;
    for (let i = 0; i < b.rows; i++) overlap += r.vectors[0]![i]! * r.vectors[1]![i]!;
    expect(Math.abs(overlap)).toBeLessThan(1e-8); // two eigenvectors, not one found twice
    expect(r.detail).toMatch(/2 pair\(s\) next to σ/);
  });
  it('σ far enough (λ₁·(1 − 10⁻⁶)) keeps the plain run, no detail; σ on λ₁ is still NotPositiveDefiniteError (singular)', async () => {
    const r = await lanczosShiftInvert(a, { k: 2, sigma: l1 * (1 - 1e-6) });
    expect(r.reason).toBe('converged');
    expect(r.detail).toBeUndefined();
    await expect(lanczosShiftInvert(a, { k: 2, sigma: l1 })).rejects.toThrow(NotPositiveDefiniteError);
  });
});
