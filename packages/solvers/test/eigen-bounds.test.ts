import { generators, HostOperator } from '@gpusparse/formats';
import { describe, expect, it } from 'vitest';
import { ritzValueBounds } from '../src/eigen/bounds';
import { eigsMixed } from '../src/eigen/mixed';
import { Float32HostSpace, float32CsrOperator } from './eigen-f32-space';
import { denseToCsr } from './eigen-matrices';

/** Q·diag(λ)·Qᵀ with Q a product of three random Householder reflections (dense, symmetric). */
function withSpectrum(lambda: readonly number[], seed: number): number[][] {
  const n = lambda.length;
  const r = generators.rng(seed);
  const a = Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => (i === j ? lambda[i]! : 0)));
  for (let h = 0; h < 3; h++) {
    const v = Array.from({ length: n }, () => r() * 2 - 1);
    const vv = v.reduce((s, x) => s + x * x, 0);
    // A ← (I − 2vvᵀ/vᵀv)·A·(I − 2vvᵀ/vᵀv)
    const av = a.map((row) => row.reduce((s, x, j) => s + x * v[j]!, 0));
    const vav = v.reduce((s, x, i) => s + x * av[i]!, 0);
    for (let i = 0; i < n; i++) {
      for (let j = 0; j < n; j++) {
        a[i]![j] = a[i]![j]! - (2 / vv) * (v[i]! * av[j]! + av[i]! * v[j]!) + (4 * vav / (vv * vv)) * v[i]! * v[j]!;
      }
    }
  }
  return a;
}

/** Rayleigh–Ritz of diag(λ) over the orthonormalised columns e_j + noise (float64, dense): θ, ρ. */
function ritzOfDiagonal(lambda: readonly number[], m: number, noise: number, seed: number): { theta: number[]; rho: number[] } {
  const n = lambda.length;
  const r = generators.rng(seed);
  const x: number[][] = [];
  for (let j = 0; j < m; j++) {
    const v = Array.from({ length: n }, (_, i) => (i === j ? 1 : 0) + noise * (r() * 2 - 1));
    for (const q of x) {
      const d = q.reduce((s, y, i) => s + y * v[i]!, 0);
      for (let i = 0; i < n; i++) v[i] = v[i]! - d * q[i]!;
    }
    const nv = Math.hypot(...v);
    x.push(v.map((y) => y / nv));
  }
  // H = XᵀΛX (m×m), eigen-decomposed by Jacobi rotations (small)
  const h = x.map((a) => x.map((b) => a.reduce((s, y, i) => s + y * lambda[i]! * b[i]!, 0)));
  const c: number[][] = x.map((_, i) => x.map((_, j) => (i === j ? 1 : 0)));
  for (let sweep = 0; sweep < 60; sweep++) {
    for (let p = 0; p < m; p++) {
      for (let q = p + 1; q < m; q++) {
        if (Math.abs(h[p]![q]!) < 1e-300) continue;
        const t0 = (h[q]![q]! - h[p]![p]!) / (2 * h[p]![q]!);
        const t = Math.sign(t0 || 1) / (Math.abs(t0) + Math.sqrt(t0 * t0 + 1));
        const cs = 1 / Math.sqrt(t * t + 1);
        const sn = t * cs;
        for (let k = 0; k < m; k++) {
          const a1 = h[k]![p]!;
          const a2 = h[k]![q]!;
          h[k]![p] = cs * a1 - sn * a2;
          h[k]![q] = sn * a1 + cs * a2;
        }
        for (let k = 0; k < m; k++) {
          const a1 = h[p]![k]!;
          const a2 = h[q]![k]!;
          h[p]![k] = cs * a1 - sn * a2;
          h[q]![k] = sn * a1 + cs * a2;
        }
        for (let k = 0; k < m; k++) {
          const a1 = c[k]![p]!;
          const a2 = c[k]![q]!;
          c[k]![p] = cs * a1 - sn * a2;
          c[k]![q] = sn * a1 + cs * a2;
        }
      }
    }
  }
  const order = h.map((_, i) => i).sort((a, b) => h[a]![a]! - h[b]![b]!);
  const theta = order.map((i) => h[i]![i]!);
  const rho = order.map((j) => {
    const y = Array.from({ length: n }, (_, i) => x.reduce((s, col, l) => s + col[i]! * c[l]![j]!, 0));
    const th = h[j]![j]!;
    return Math.hypot(...y.map((yi, i) => lambda[i]! * yi - th * yi));
  });
  return { theta, rho };
}

describe('ritzValueBounds (Lehmann / Kato–Temple)', () => {
  it('a hand case: two exact Ritz pairs and a guard give the closed form ε²/(σ − θ)', () => {
    const b = ritzValueBounds([1, 2, 5], [1e-3, 2e-3, 0.5]);
    // root 1: cut 2, S = {1}, σ = 4.5: 4e-6 / 2.5; root 0: cut 1 (σ = 1.998, S = {0}) beats
    // cut 2 (S = {0, 1}, ε² = 5e-6, σ − θ₀ = 3.5)
    expect(b.bound[1]).toBeCloseTo(4e-6 / 2.5, 15);
    expect(b.bound[0]).toBeCloseTo(1e-6 / 0.998, 15);
    expect(b.bound[2]).toBe(Number.POSITIVE_INFINITY);
    expect(b.cut).toEqual([1, 2, -1]);
    // without the cut at root 1 (its residual reaches root 0), only the guard certifies root 0
    const c = ritzValueBounds([1, 2, 5], [1e-3, 1.5, 0.5]);
    expect(c.cut[0]).toBe(2);
    expect(c.bound[0]).toBeCloseTo((1e-6 + 2.25) / 3.5, 12); // ε² over both roots / (σ − θ₀)
  });

  it('no bound when the guard’s interval reaches the wanted roots, or for unsorted / non-finite input', () => {
    // root 1 is within the guard's residual: no bound; root 0 keeps the cut at root 1
    const b = ritzValueBounds([1, 2, 2.001], [1e-6, 1e-6, 0.01]).bound;
    expect(b[1]).toBe(Number.POSITIVE_INFINITY);
    expect(b[0]).toBeCloseTo(1e-12 / (1 - 1e-6), 20);
    expect(ritzValueBounds([2, 1, 5], [1e-6, 1e-6, 1e-6]).bound.every((x) => x === Number.POSITIVE_INFINITY)).toBe(true);
    expect(ritzValueBounds([1, 2, 5], [Number.NaN, 1e-6, 1e-6]).bound[0]).toBe(Number.POSITIVE_INFINITY);
  });

  it('holds on 300 random Rayleigh–Ritz problems with clustered and degenerate spectra (float64 reference)', () => {
    const r = generators.rng(5);
    let certified = 0;
    for (let t = 0; t < 300; t++) {
      const n = 30;
      const kind = t % 3;
      // spread, a tight cluster among the wanted roots, or an exact double eigenvalue
      const lambda = Array.from({ length: n }, (_, i) => i + r());
      if (kind === 1) lambda[1] = lambda[0]! + 1e-7;
      if (kind === 2) lambda[2] = lambda[1]!;
      lambda.sort((a, b) => a - b);
      const m = 4 + (t % 3);
      const { theta, rho } = ritzOfDiagonal(lambda, m, 10 ** -(2 + (t % 5)), 100 + t);
      const b = ritzValueBounds(theta, rho, 1e-13);
      for (let j = 0; j < m; j++) {
        expect(theta[j]! - lambda[j]!, `case ${t} root ${j}: θ ≥ λ (Poincaré)`).toBeGreaterThan(-1e-12);
        expect(theta[j]! - lambda[j]!, `case ${t} root ${j}`).toBeLessThanOrEqual(b.bound[j]!);
        if (b.bound[j]! < 1e-6) certified++;
      }
    }
    expect(certified).toBeGreaterThan(300); // the bounds are not vacuous
  });
});

/** A sparse-enough symmetric test matrix with the given spectrum (dense Householder transform). */
function spectrumCsr(lambda: readonly number[], seed: number) {
  return denseToCsr(withSpectrum(lambda, seed));
}

describe("eigsMixed accept 'bound': eigenvalues certified without correction solves", () => {
  const n = 120;
  it('well separated: every root accepted by the bound at the first Rayleigh–Ritz step, no correction', async () => {
    const lambda = Array.from({ length: n }, (_, i) => -3 + 0.4 * i + 0.01 * Math.sin(i));
    const a = spectrumCsr(lambda, 3);
    const r = await eigsMixed({ method: 'lanczos', k: 4, fastOperator: float32CsrOperator(a), fastSpace: new Float32HostSpace(), hostOperator: HostOperator.fromCsr(a), accept: 'bound' });
    expect(r.reason, r.detail).toBe('converged');
    expect(r.bounds!.acceptedBy).toEqual(['bound', 'bound', 'bound', 'bound']);
    expect(r.phases[1]!.innerMatvecs).toBe(0); // no correction solve ran
    expect(r.phases[1]!.iterations).toBe(1);
    r.values.forEach((v, i) => {
      const err = Math.abs(v - lambda[i]!);
      expect(err, `root ${i}`).toBeLessThanOrEqual(r.bounds!.bound[i]! + 1e-14);
      expect(err / Math.abs(lambda[i]!), `root ${i}`).toBeLessThan(1e-10);
    });
    expect(r.bounds!.guardValues).toHaveLength(1);
    // the residual rule would have needed corrections: the returned residuals are float32-level
    expect(Math.max(...r.residualNorms)).toBeGreaterThan(1e-8);
    // values only: the same values, no vectors
    const v = await eigsMixed({ method: 'lanczos', k: 4, fastOperator: float32CsrOperator(a), fastSpace: new Float32HostSpace(), hostOperator: HostOperator.fromCsr(a), accept: 'bound', returnVectors: false });
    expect(v.vectors).toEqual([]);
    expect(v.values).toEqual(r.values);
  });

  it('a near-degenerate wanted/guard pair (gap 2e-6): the bound fails, corrections run, the answer still meets tol', async () => {
    const lambda = Array.from({ length: n }, (_, i) => -3 + 0.4 * i);
    lambda[3] = lambda[2]! + 2e-6; // root 2 (wanted, k = 3) and the guard nearly degenerate
    const a = spectrumCsr(lambda, 4);
    const r = await eigsMixed({ method: 'lanczos', k: 3, fastOperator: float32CsrOperator(a), fastSpace: new Float32HostSpace(), hostOperator: HostOperator.fromCsr(a), accept: 'bound' });
    expect(r.reason, r.detail).toBe('converged');
    expect(r.phases[1]!.innerMatvecs).toBeGreaterThan(0); // corrections had to run
    r.values.forEach((v, i) => {
      const err = Math.abs(v - lambda[i]!);
      expect(err / Math.abs(lambda[i]!), `root ${i}`).toBeLessThan(1e-10);
      const how = r.bounds!.acceptedBy[i];
      expect(how === 'bound' || how === 'residual', `root ${i}: ${how}`).toBe(true);
      if (how === 'bound') expect(err).toBeLessThanOrEqual(r.bounds!.bound[i]!);
      else expect(r.residualNorms[i]).toBeLessThan(1e-8);
    });
  });

  it('a loose fast phase (fastTol 1e-3): the bound is too weak at first, the corrected roots then pass it', async () => {
    const lambda = Array.from({ length: n }, (_, i) => -3 + 0.25 * i);
    const a = spectrumCsr(lambda, 6);
    const r = await eigsMixed({ method: 'lanczos', k: 2, fastOperator: float32CsrOperator(a), fastSpace: new Float32HostSpace(), hostOperator: HostOperator.fromCsr(a), accept: 'bound', fastTol: 1e-3 });
    expect(r.reason, r.detail).toBe('converged');
    expect(r.phases[1]!.innerMatvecs).toBeGreaterThan(0);
    expect(r.phases[1]!.iterations).toBeGreaterThan(1);
    r.values.forEach((v, i) => {
      expect(r.bounds!.acceptedBy[i]).toBe('bound');
      expect(Math.abs(v - lambda[i]!)).toBeLessThanOrEqual(r.bounds!.bound[i]!);
      expect(r.bounds!.bound[i]!).toBeLessThanOrEqual(1e-10 * Math.abs(v));
    });
  });

  it("rejects accept 'bound' with the lobpcg polish and a bad guard count", async () => {
    const a = spectrumCsr(Array.from({ length: 20 }, (_, i) => i + 1), 1);
    const base = { method: 'lanczos' as const, k: 2, fastOperator: float32CsrOperator(a), fastSpace: new Float32HostSpace(), hostOperator: HostOperator.fromCsr(a) };
    await expect(eigsMixed({ ...base, accept: 'bound', polish: 'lobpcg' })).rejects.toThrow(/polish/);
    await expect(eigsMixed({ ...base, accept: 'bound', guard: 0 })).rejects.toThrow(/guard/);
  });
});
