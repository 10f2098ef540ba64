/**
 * fastCorrector's per-product work and its readbacks (session 11, issue 15): the Jacobi–Davidson
 * operator projects its output only (its inputs are GMRES vectors already ⟂ X), and after a solve
 * that ran all its inner steps without converging, the next floor-tolerance solves check only at
 * their end. Float32-emulated fast space, float64 host polish of the 2-D Laplacian's 4 lowest
 * eigenvalues, whose correction solves never reach 1e-3 in 25 unpreconditioned steps.
 */
import { generators, HostOperator, HostVectorSpace } from '@gpusparse/formats';
import { describe, expect, it } from 'vitest';
import { checksFor, fastCorrector, type FastCorrectorOptions } from '../src/eigen/correction';
import { davidsonWith } from '../src/eigen/davidson';
import { eigsMixed } from '../src/eigen/mixed';
import { lanczos } from '../src/eigen/lanczos';
import { Float32HostSpace, float32CsrOperator } from './eigen-f32-space';
import { poisson2dEigenvalues, residualF64 } from './eigen-matrices';

const a = generators.poisson2d(40);
const k = 4;

/** float32 Lanczos (5 pairs to 1e-5), then the float64 JD polish with the given corrector options; copies counted. */
async function polish(opts: FastCorrectorOptions) {
  const f32 = new Float32HostSpace();
  const fastOp = float32CsrOperator(a);
  const fast = await lanczos(fastOp, f32, { k: k + 1, tol: 1e-5, checkMultiplicity: false });
  let copies = 0;
  const copy = f32.copy.bind(f32);
  f32.copy = (x, y) => {
    copies++;
    copy(x, y);
  };
  const jd = fastCorrector(fastOp, f32, { innerIterations: 25, innerRtol: 1e-3, guardFrom: k, ...opts });
  const r = await davidsonWith(new HostVectorSpace(), HostOperator.fromCsr(a), { k: k + 1, nConverge: k, initialVectors: fast.vectors, corrector: jd.corrector, residualTol: 1e-8, tol: 1e-12, maxSubspace: 28, name: 'jd-davidson' });
  return { r, jd, copies };
}

describe('fastCorrector: readbacks and passes per correction product', () => {
  it('solves after an unconverged full-length one check only at their end: fewer readbacks, same products, values to 1e-10', async () => {
    const ref = poisson2dEigenvalues(40).slice(0, k);
    const every4 = await polish({ checkEvery: 4 }); // the session-10 behaviour
    const adaptive = await polish({});
    for (const { r } of [every4, adaptive]) {
      expect(r.reason, r.detail).toBe('converged');
      for (let i = 0; i < k; i++) {
        expect(Math.abs(r.values[i]! - ref[i]!) / ref[i]!, `λ${i}`).toBeLessThan(1e-10);
        expect(residualF64(a, r.values[i]!, r.vectors[i] as Float64Array), `residual ${i}`).toBeLessThan(1e-8);
      }
    }
    // the same solves and products (none converges early: 25 steps each), fewer checks
    expect(adaptive.jd.stats.solves).toBe(every4.jd.stats.solves);
    expect(adaptive.jd.stats.matvecs).toBe(every4.jd.stats.matvecs);
    expect(adaptive.jd.stats.matvecs).toBe(26 * adaptive.jd.stats.solves); // 25 steps and the residual product of the cycle
    expect(adaptive.jd.stats.readbacks).toBeLessThan(every4.jd.stats.readbacks - 3 * (adaptive.jd.stats.solves - 1));
    // the JD operator no longer copies its input to project it: no copy per product
    expect(adaptive.copies).toBeLessThan(adaptive.jd.stats.solves * 2);
  }, 60_000);

  it('checksFor: every 4 steps unless the last solve failed at full length and this one aims at the floor', () => {
    expect(checksFor(25, false, 1e-3, 1e-3)).toBe(4);
    expect(checksFor(25, true, 1e-3, 1e-3)).toBe(25);
    expect(checksFor(25, true, 0.02, 1e-3)).toBe(4); // loosened near its target: it may stop early
  });
});

describe("eigsMixed: the 'jd' polish's inner GMRES takes one Gram–Schmidt pass by default", () => {
  it("'cgs' (default) against 'cgs2': the same values to 1e-10 and residuals ≤ 1e-8, half the inner multiDot calls or fewer", async () => {
    const lap = generators.poisson2d(24);
    const ref = poisson2dEigenvalues(24).slice(0, k);
    const run = async (innerOrthogonalization: 'cgs' | 'cgs2' | undefined) => {
      const f32 = new Float32HostSpace();
      let multiDots = 0;
      const md = f32.multiDot.bind(f32);
      f32.multiDot = (xs, y) => {
        multiDots++;
        return md(xs, y);
      };
      const r = await eigsMixed({ method: 'lanczos', k, fastOperator: float32CsrOperator(lap), fastSpace: f32, hostOperator: HostOperator.fromCsr(lap), fastCheckMultiplicity: false, ...(innerOrthogonalization ? { innerOrthogonalization } : {}) });
      return { r, multiDots };
    };
    const dflt = await run(undefined);
    const two = await run('cgs2');
    for (const { r } of [dflt, two]) {
      expect(r.converged, r.detail).toBe(true);
      for (let i = 0; i < k; i++) {
        expect(Math.abs(r.values[i]! - ref[i]!) / ref[i]!, `λ${i}`).toBeLessThan(1e-10);
        expect(residualF64(lap, r.values[i]!, r.vectors[i]!), `residual ${i}`).toBeLessThan(1e-8);
      }
    }
    const inner = (x: typeof dflt) => x.r.phases[1]!.innerMatvecs!;
    expect(inner(dflt)).toBeGreaterThan(0);
    // per correction product: cgs2 two multiDot passes over the Krylov basis, cgs one (the projector's two are common to both)
    expect(dflt.multiDots / inner(dflt)).toBeLessThan(two.multiDots / inner(two) - 0.8);
  }, 60_000);
});

describe('eigsMixed polishMaxSubspace', () => {
  it("sizes the 'jd' polish's Davidson subspace (default 4·(k + 1) + 8), rejects a non-positive one", async () => {
    const lap = generators.poisson2d(12);
    const base = { method: 'lanczos' as const, k: 2, fastOperator: float32CsrOperator(lap), fastSpace: new Float32HostSpace(), hostOperator: HostOperator.fromCsr(lap), fastCheckMultiplicity: false };
    const dflt = await eigsMixed(base);
    const wide = await eigsMixed({ ...base, polishMaxSubspace: 40 });
    expect(dflt.phases[1]!.method).toContain('maxSubspace=16');
    expect(wide.phases[1]!.method).toContain('maxSubspace=40');
    expect(Math.abs(wide.values[0]! - dflt.values[0]!)).toBeLessThan(1e-12);
    await expect(eigsMixed({ ...base, polishMaxSubspace: 0 })).rejects.toThrow(/polishMaxSubspace/);
  });
});
