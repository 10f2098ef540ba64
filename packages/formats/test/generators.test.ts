import { describe, expect, it } from 'vitest';
import { convectionDiffusion2d, poisson2d } from '../src/generators/index';
import { csrSpmv } from '../src/index';

describe('convectionDiffusion2d', () => {
  it('is the 5-point Laplacian plus a skew-symmetric central-difference wind term', () => {
    const nx = 7;
    const ny = 5;
    const a = convectionDiffusion2d(nx, ny, 0.6, -0.2);
    const l = poisson2d(nx, ny);
    expect(a.rows).toBe(35);
    expect(Array.from(a.rowPtr)).toEqual(Array.from(l.rowPtr));
    expect(Array.from(a.colIdx)).toEqual(Array.from(l.colIdx));
    // dense copies: A − L must be skew-symmetric with the wind coefficients at the right places
    const n = a.rows;
    const d = new Float64Array(n * n);
    for (let i = 0; i < n; i++) for (let k = a.rowPtr[i]!; k < a.rowPtr[i + 1]!; k++) d[i * n + a.colIdx[k]!] = a.values[k]! - l.values[k]!;
    for (let i = 0; i < n; i++) {
      expect(d[i * n + i]).toBe(0);
      for (let j = 0; j < n; j++) expect(d[i * n + j]! + d[j * n + i]!).toBeCloseTo(0, 15);
    }
    const p = 2 * nx + 3; // interior point
    expect(d[p * n + p - 1]).toBeCloseTo(-0.3, 15);
    expect(d[p * n + p + 1]).toBeCloseTo(0.3, 15);
    expect(d[p * n + p - nx]).toBeCloseTo(0.1, 15);
    expect(d[p * n + p + nx]).toBeCloseTo(-0.1, 15);
  });

  it('has xᵀAx = xᵀLx (the wind adds nothing to the symmetric part) and differs from Aᵀ', () => {
    const a = convectionDiffusion2d(20, 20);
    const l = poisson2d(20);
    const x = Float64Array.from({ length: a.rows }, (_, i) => Math.sin(i * 0.37) + 0.1 * i);
    const ax = csrSpmv(a, x);
    const lx = csrSpmv(l, x);
    let xa = 0;
    let xl = 0;
    for (let i = 0; i < x.length; i++) {
      xa += x[i]! * ax[i]!;
      xl += x[i]! * lx[i]!;
    }
    expect(Math.abs(xa - xl)).toBeLessThan(1e-9 * Math.abs(xl));
    expect(ax.some((v, i) => Math.abs(v - lx[i]!) > 1e-3)).toBe(true);
  });
});
