import type { CsrMatrix } from '@gpusparse/formats';
import { csrDiagonal, generators, HostOperator } from '@gpusparse/formats';
import { describe, expect, it } from 'vitest';
import type { MixedEigenResult } from '../src/eigen/mixed';
import { eigsMixed, fastLanczosBasis } from '../src/eigen/mixed';
import { Float32HostSpace, float32CsrOperator } from './eigen-f32-space';
import { csrToDense, denseEigenvalues, denseToCsr, laplacian1dEigenvalues, orthonormalityError, poisson2dEigenvalues, randomSymmetric, residualF64 } from './eigen-matrices';

/** A sparse symmetric CI-like matrix: spread diagonal, a few small random couplings per row. */
function ciLikeSymmetric(n: number, perRow: number, seed: number): CsrMatrix {
  const r = generators.rng(seed);
  const a = Array.from({ length: n }, () => new Array<number>(n).fill(0));
  for (let i = 0; i < n; i++) {
    a[i]![i] = -5 + (8 * i) / n + 0.5 * r();
    for (let t = 0; t < perRow; t++) {
      const j = Math.floor(r() * n);
      if (j === i) continue;
      const v = (r() * 2 - 1) * 0.1;
      a[i]![j] = v;
      a[j]![i] = v;
    }
  }
  return denseToCsr(a);
}

/** The mixed driver's contract: 1e-10 relative eigenvalue error and 1e-8 residuals in float64. */
function checkMixed(a: CsrMatrix, r: MixedEigenResult, ref: number[]): void {
  expect(r.reason, r.detail).toBe('converged');
  expect(r.phases.map((p) => p.phase)).toEqual(['fast', 'polish']);
  expect(r.phases[0]!.space).toBe('host-f32-emulated');
  expect(r.phases[1]!.space).toBe('host-f64');
  r.values.forEach((v, i) => { expect(Math.abs(v - ref[i]!) / Math.abs(ref[i]!), `value ${i}`).toBeLessThan(1e-10); });
  r.vectors.forEach((v, i) => { expect(residualF64(a, r.values[i]!, v), `residual ${i}`).toBeLessThan(1e-8); });
  r.residualNorms.forEach((x) => { expect(x).toBeLessThan(1e-8); });
  expect(orthonormalityError(r.vectors)).toBeLessThan(1e-10);
  // float32 alone cannot get there: its recomputed residuals sit above 1e-8
  expect(Math.max(...r.phases[0]!.residualNorms)).toBeGreaterThan(1e-8);
  expect(r.phases[0]!.matvecs).toBeGreaterThan(0);
  expect(r.phases[1]!.matvecs).toBeGreaterThan(0);
  expect(r.stats.matvecs).toBe(r.phases[0]!.matvecs + r.phases[1]!.matvecs + (r.phases[1]!.innerMatvecs ?? 0));
  if (r.phases[1]!.method.startsWith('jd')) {
    // the 'jd' polish leaves the bulk of the matvecs to the fast space
    expect(r.phases[1]!.innerMatvecs).toBeGreaterThan(r.phases[1]!.matvecs);
    expect(r.phases[1]!.matvecs).toBeLessThanOrEqual(8 * r.values.length);
  }
}

const f32 = () => new Float32HostSpace();
let ciRef: number[] | undefined; // reference spectrum of ciLikeSymmetric(300, 4, 7), computed once

describe('eigsMixed: float32 fast phase + float64 host polish', () => {
  for (const polish of ['jd', 'davidson'] as const) {
    it(`davidson, CI-like sparse symmetric n=300, k=3, ${polish} polish, against ml-matrix`, async () => {
      const a = ciLikeSymmetric(300, 4, 7);
      const ref = (ciRef ??= denseEigenvalues(csrToDense(a)).slice(0, 3));
      const r = await eigsMixed({ method: 'davidson', k: 3, fastOperator: float32CsrOperator(a), fastSpace: f32(), hostOperator: HostOperator.fromCsr(a), diagonal: csrDiagonal(a), polish });
      checkMixed(a, r, ref);
      expect(r.phases[1]!.method).toContain(polish);
    });
  }

  for (const polish of ['jd', 'davidson', 'lobpcg'] as const) {
    it(`lanczos, 2-D Laplacian 16×16, k=4 with the double eigenvalue, ${polish} polish`, async () => {
      const a = generators.poisson2d(16);
      const r = await eigsMixed({ method: 'lanczos', k: 4, fastOperator: float32CsrOperator(a), fastSpace: f32(), hostOperator: HostOperator.fromCsr(a), diagonal: csrDiagonal(a), polish });
      checkMixed(a, r, poisson2dEigenvalues(16).slice(0, 4));
      expect(r.phases[1]!.method).toContain(polish);
    });
  }

  it('lobpcg without a diagonal, random symmetric n=120, k=2, jd polish', async () => {
    const dense = randomSymmetric(120, 9);
    const a = denseToCsr(dense);
    const r = await eigsMixed({ method: 'lobpcg', k: 2, fastOperator: float32CsrOperator(a), fastSpace: f32(), hostOperator: HostOperator.fromCsr(a) });
    expect(r.phases[1]!.method).toContain('jd');
    checkMixed(a, r, denseEigenvalues(dense).slice(0, 2));
  });

  for (const polish of ['jd', 'lobpcg'] as const) {
    it(`lanczos 'largest', 1-D Laplacian n=150, k=2, ${polish} polish of −A`, async () => {
      const a = generators.laplacian1d(150);
      const r = await eigsMixed({ method: 'lanczos', which: 'largest', k: 2, fastOperator: float32CsrOperator(a), fastSpace: f32(), hostOperator: HostOperator.fromCsr(a), maxBasis: 40, polish });
      checkMixed(a, r, laplacian1dEigenvalues(150).slice(-2).reverse());
      expect(r.values[0]!).toBeGreaterThan(r.values[1]!);
    });
  }

  it('a non-finite fast phase is reported, and the polish still solves from its own start', async () => {
    const a = ciLikeSymmetric(120, 3, 2);
    const bad = { ...a, values: a.values.slice() };
    bad.values[5] = Number.NaN;
    const ref = denseEigenvalues(csrToDense(a)).slice(0, 2);
    const r = await eigsMixed({ method: 'davidson', k: 2, fastOperator: float32CsrOperator(bad), fastSpace: f32(), hostOperator: HostOperator.fromCsr(a), diagonal: csrDiagonal(a) });
    expect(r.phases[0]!.reason).toBe('non-finite');
    expect(r.reason).toBe('converged');
    expect(r.phases[1]!.method).toContain('davidson('); // 'jd' needs fast vectors: falls back
    r.values.forEach((v, i) => { expect(Math.abs(v - ref[i]!) / Math.abs(ref[i]!)).toBeLessThan(1e-10); });
  });

  it('an aborted signal stops in the fast phase without polishing', async () => {
    const a = generators.poisson2d(10);
    const ctl = new AbortController();
    const phases: string[] = [];
    const r = await eigsMixed({
      method: 'lanczos',
      k: 2,
      fastOperator: float32CsrOperator(a),
      fastSpace: f32(),
      hostOperator: HostOperator.fromCsr(a),
      signal: ctl.signal,
      onIteration: (info) => {
        phases.push(info.phase);
        if (info.iteration >= 3) ctl.abort(); // float32 Lanczos calls back once per readback (every 8 steps)
      },
    });
    expect(r.reason).toBe('stopped');
    expect(r.phases.length).toBe(1);
    expect(phases.length).toBeGreaterThan(0);
    expect(phases.every((p) => p === 'fast')).toBe(true);
  });

  it('rejects inconsistent input', async () => {
    const a = generators.poisson2d(4);
    const b = generators.poisson2d(5);
    await expect(eigsMixed({ method: 'davidson', k: 1, fastOperator: float32CsrOperator(a), fastSpace: f32(), hostOperator: HostOperator.fromCsr(a) })).rejects.toThrow(/diagonal/);
    await expect(eigsMixed({ method: 'lobpcg', k: 1, fastOperator: float32CsrOperator(a), fastSpace: f32(), hostOperator: HostOperator.fromCsr(b) })).rejects.toThrow(/hostOperator/);
    await expect(eigsMixed({ method: 'lobpcg', k: 1, fastOperator: float32CsrOperator(a), fastSpace: f32(), hostOperator: HostOperator.fromCsr(a), polish: 'davidson' })).rejects.toThrow(/diagonal/);
    await expect(eigsMixed({ method: 'davidson', which: 'largest', k: 1, fastOperator: float32CsrOperator(a), fastSpace: f32(), hostOperator: HostOperator.fromCsr(a), diagonal: csrDiagonal(a) })).rejects.toThrow(/which/);
  });
});

describe('eigsMixed: the Lanczos fast phase basis default (issue 15, H100: basis 40 1 803 ms vs 20 2 032 ms)', () => {
  it('fastLanczosBasis: 40 (≥ 2k + 10, ≤ n) while 40 vectors take ≤ 1 GiB, else the Lanczos default', () => {
    expect(fastLanczosBasis(1_320_000, 5, true)).toBe(40);
    expect(fastLanczosBasis(1_320_000, 20, true)).toBe(50); // 2k + 10
    expect(fastLanczosBasis(30, 5, true)).toBe(30); // at most n
    expect(fastLanczosBasis(6_710_886, 5, true)).toBe(40); // 40·n·4 ≤ 2³⁰
    expect(fastLanczosBasis(6_710_887, 5, true)).toBeUndefined();
    expect(fastLanczosBasis(3_355_444, 5, false)).toBeUndefined(); // float64: 8 bytes per entry
  });

  it('eigsMixed lanczos without maxBasis runs its fast phase with basis 40 (a given maxBasis still wins), same answer', async () => {
    const a = generators.poisson2d(16);
    const run = (maxBasis?: number) => eigsMixed({ method: 'lanczos', k: 4, fastOperator: float32CsrOperator(a), fastSpace: f32(), hostOperator: HostOperator.fromCsr(a), ...(maxBasis === undefined ? {} : { maxBasis }) });
    const [byDefault, twenty] = [await run(), await run(20)];
    expect(byDefault.phases[0]!.method).toContain('maxBasis=40');
    expect(twenty.phases[0]!.method).toContain('maxBasis=20');
    checkMixed(a, byDefault, poisson2dEigenvalues(16).slice(0, 4));
    checkMixed(a, twenty, poisson2dEigenvalues(16).slice(0, 4));
  });
});
