import type { HostScalar, ScalarLike } from '@gpusparse/formats';
import { HostOperator, HostVectorSpace, csrDiagonal, generators } from '@gpusparse/formats';
import { describe, expect, it } from 'vitest';
import { fastCorrector } from '../src/eigen/correction';
import { davidson, davidsonWith } from '../src/eigen/davidson';
import { lanczos } from '../src/eigen/lanczos';
import { lobpcg } from '../src/eigen/lobpcg';
import { eigsMixed } from '../src/eigen/mixed';

/**
 * HostVectorSpace that tracks live scalars and vectors, like the GPU space's bounded scalar
 * slot pool and buffer pool: a solver must release what it no longer needs.
 */
class CountingSpace extends HostVectorSpace {
  readonly scalars = new Set<HostScalar>();
  readonly vectors = new Set<Float64Array>();
  private s(x: HostScalar): HostScalar {
    this.scalars.add(x);
    return x;
  }
  override create(n: number): Float64Array {
    const v = super.create(n);
    this.vectors.add(v);
    return v;
  }
  override fromArray(values: ArrayLike<number>): Float64Array {
    const v = super.fromArray(values);
    this.vectors.add(v);
    return v;
  }
  override dot(x: Float64Array, y: Float64Array): HostScalar {
    return this.s(super.dot(x, y));
  }
  override norm2(x: Float64Array): HostScalar {
    return this.s(super.norm2(x));
  }
  override multiDot(xs: readonly Float64Array[], y: Float64Array): HostScalar[] {
    return xs.map((x) => this.dot(x, y));
  }
  override div(a: ScalarLike<HostScalar>, b: ScalarLike<HostScalar>): HostScalar {
    return this.s(super.div(a, b));
  }
  override release(x: Float64Array | HostScalar): void {
    if (x instanceof Float64Array) this.vectors.delete(x);
    else this.scalars.delete(x);
  }
}

/** CountingSpace with the device's t = r ∘ (d − σ)⁻¹ kernel (clamped like the GPU space). */
class DividingSpace extends CountingSpace {
  shiftedDivide(r: Float64Array, d: Float64Array, sigma: number, clamp: number, t: Float64Array): void {
    for (let i = 0; i < r.length; i++) {
      let den = d[i]! - sigma;
      if (Math.abs(den) < clamp) den = den < 0 ? -clamp : clamp;
      t[i] = r[i]! / den;
    }
  }
}

describe('eigensolvers release device scalars and vectors', () => {
  const a = generators.poisson2d(12);
  const cases = {
    lanczos: (s: CountingSpace) => lanczos(HostOperator.fromCsr(a), s, { k: 3 }),
    davidson: (s: CountingSpace) => davidson(HostOperator.fromCsr(a), s, { k: 3, diagonal: csrDiagonal(a), residualTol: 1e-8 }),
    lobpcg: (s: CountingSpace) => lobpcg(HostOperator.fromCsr(a), s, { k: 3, guard: 1 }),
  };
  for (const [name, solve] of Object.entries(cases)) {
    it(`${name}: no live scalars, only the k result vectors left`, async () => {
      const s = new CountingSpace();
      const r = await solve(s);
      expect(r.reason).toBe('converged');
      expect(s.scalars.size).toBe(0);
      expect(s.vectors.size).toBe(3);
      for (const v of r.vectors) expect(s.vectors.has(v)).toBe(true);
    });
  }
  for (const polish of ['jd', 'davidson'] as const) {
    it(`eigsMixed (${polish} polish): the fast space ends with nothing live`, async () => {
      const s = new CountingSpace();
      const r = await eigsMixed({ method: 'lanczos', k: 2, fastOperator: HostOperator.fromCsr(a), fastSpace: s, hostOperator: HostOperator.fromCsr(a), diagonal: csrDiagonal(a), polish });
      expect(r.reason).toBe('converged');
      expect(s.scalars.size).toBe(0);
      expect(s.vectors.size).toBe(0);
    });
  }
  for (const Space of [CountingSpace, DividingSpace]) it(`fastCorrector with the diagonal preconditioner (${Space.name}): the fast space ends with nothing live after dispose()`, async () => {
    const s = new Space();
    const d = csrDiagonal(a);
    const start = await davidson(HostOperator.fromCsr(a), new HostVectorSpace(), { k: 3, diagonal: d, residualTol: 1e-3 });
    const jd = fastCorrector(HostOperator.fromCsr(a), s, { targetResidual: 1e-8, guardFrom: 2, diagonal: d });
    const r = await davidsonWith(new HostVectorSpace(), HostOperator.fromCsr(a), { k: 3, nConverge: 2, diagonal: d, initialVectors: start.vectors, corrector: jd.corrector, residualTol: 1e-8 });
    jd.dispose();
    expect(r.reason, r.detail).toBe('converged');
    expect(jd.stats.solves).toBeGreaterThan(0);
    expect(s.scalars.size).toBe(0);
    expect(s.vectors.size).toBe(0);
  });
});
