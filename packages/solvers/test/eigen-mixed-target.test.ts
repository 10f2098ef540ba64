import { generators, HostOperator } from '@gpusparse/formats';
import { describe, expect, it } from 'vitest';
import { fastCorrector } from '../src/eigen/correction';
import { eigsMixed } from '../src/eigen/mixed';
import { Float32HostSpace, float32CsrOperator } from './eigen-f32-space';

/** The 4 lowest eigenvalues of the 7-point Laplacian on an a×b×c grid (Σ 2 − 2cos(π i/(n + 1)), exact). */
function poissonLowest(dims: readonly number[], count: number): number[] {
  const per = dims.map((n) => Array.from({ length: 4 }, (_, i) => 2 - 2 * Math.cos((Math.PI * (i + 1)) / (n + 1))));
  const all: number[] = [];
  for (const x of per[0]!) for (const y of per[1]!) for (const z of per[2]!) all.push(x + y + z);
  return all.sort((p, q) => p - q).slice(0, count);
}

describe("eigsMixed accept 'bound': each correction only as tight as the bound needs", () => {
  it('poisson3d 12×13×14, k = 4: the same values to 1e-10, half the float32 correction products', async () => {
    const dims = [12, 13, 14];
    const a = generators.poisson3d(dims[0]!, dims[1]!, dims[2]!);
    const ref = poissonLowest(dims, 4);
    const r = await eigsMixed({ method: 'lanczos', k: 4, fastOperator: float32CsrOperator(a), fastSpace: new Float32HostSpace(), hostOperator: HostOperator.fromCsr(a), accept: 'bound', fastCheckMultiplicity: false });
    expect(r.reason, r.detail).toBe('converged');
    expect(r.bounds!.acceptedBy).toEqual(['bound', 'bound', 'bound', 'bound']);
    r.values.forEach((v, i) => {
      expect(Math.abs(v - ref[i]!) / ref[i]!, `root ${i}`).toBeLessThan(1e-10);
      expect(Math.abs(v - ref[i]!), `root ${i} within its bound`).toBeLessThanOrEqual(r.bounds!.bound[i]! + 1e-15);
    });
    const polish = r.phases[1]!;
    // before (a fixed inner tolerance 1e-3 for every root): 2 iterations, 9 float64 products, 97 float32 correction products
    expect([polish.iterations, polish.matvecs]).toEqual([2, 9]);
    expect(polish.innerMatvecs).toBeLessThanOrEqual(60);
  }, 120_000);

  it('skipBelowTarget false: a root at its target still gets a (loose) correction; the default skips it', async () => {
    const a = generators.poisson3d(6, 7, 8);
    const f32 = new Float32HostSpace();
    const op = HostOperator.fromCsr(a);
    const n = a.rows;
    // a rough Ritz pair: the start vector of the lowest mode plus noise
    const x = new Float64Array(n).map((_, i) => Math.sin((Math.PI * (1 + (i % 6))) / 7) + 1e-3 * Math.sin(i * 1.7));
    const nx = Math.sqrt(x.reduce((s, v) => s + v * v, 0));
    const v = x.map((e) => e / nx);
    const av = new Float64Array(n);
    op.apply(v, av);
    const theta = v.reduce((s, e, i) => s + e * av[i]!, 0);
    const r = av.map((e, i) => e - theta * v[i]!);
    const rn = Math.sqrt(r.reduce((s, e) => s + e * e, 0));
    const call = { residuals: [r], roots: [0], theta: [theta], ritzVectors: () => [Float64Array.from(v)] };
    const skipping = fastCorrector(float32CsrOperator(a), f32, { targetResidualOf: () => 2 * rn });
    expect(await skipping.corrector(call)).toHaveLength(0);
    expect(skipping.stats.solves).toBe(0);
    const loose = fastCorrector(float32CsrOperator(a), f32, { targetResidualOf: () => 2 * rn, skipBelowTarget: false });
    const t = await loose.corrector(call);
    expect(t).toHaveLength(1);
    expect(loose.stats.solves).toBe(1);
    // inner tolerance 0.5 (the loosest): GMRES stops at its first check (4 steps), not after 25
    expect(loose.stats.matvecs).toBeLessThanOrEqual(5);
    expect(t[0]!.every(Number.isFinite)).toBe(true);
  });
});
