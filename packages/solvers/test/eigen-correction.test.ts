import { csrDiagonal, HostOperator, HostVectorSpace } from '@gpusparse/formats';
import { describe, expect, it } from 'vitest';
import { fastCorrector, type FastCorrectorOptions, innerTolerance } from '../src/eigen/correction';
import { davidson, davidsonWith } from '../src/eigen/davidson';
import { Float32HostSpace, float32CsrOperator } from './eigen-f32-space';
import { ciLike, csrToDense, denseEigenvalues, residualF64 } from './eigen-matrices';

const a = ciLike(400, 11);
const nroots = 4;
let ref: number[] | undefined;

/** The CI driver's two phases: float32 Davidson (5 roots, 1 guard) to 1e-4, then the float64 JD polish to 1e-8. */
async function polish(opts: FastCorrectorOptions, recomputeResiduals = true) {
  const d = csrDiagonal(a);
  const f32 = new Float32HostSpace();
  const fastOp = float32CsrOperator(a);
  const fast = await davidson(f32, fastOp, { k: nroots + 1, nConverge: nroots, diagonal: d, residualTol: 1e-4, tol: 1e-6 });
  const jd = fastCorrector(fastOp, f32, opts);
  const r = await davidsonWith(new HostVectorSpace(), HostOperator.fromCsr(a), { k: nroots + 1, nConverge: nroots, diagonal: d, initialVectors: fast.vectors, corrector: jd.corrector, residualTol: 1e-8, maxSubspace: 28, name: 'jd-davidson', recomputeResiduals });
  jd.dispose();
  return { r, jd };
}

describe('fastCorrector: the cost of the Jacobi–Davidson polish', () => {
  it('targeted inner tolerance, no guard-root solves, diagonal-preconditioned GMRES: one correction round, products pinned, accuracy kept', async () => {
    ref ??= denseEigenvalues(csrToDense(a)).slice(0, nroots);
    const before = await polish({ checkEvery: 32 }); // the former behaviour: 25 inner steps for every root, every round
    const targeted = await polish({ targetResidual: 1e-8, guardFrom: nroots });
    const after = await polish({ targetResidual: 1e-8, guardFrom: nroots, diagonal: csrDiagonal(a) }, false); // the CI polish's settings
    for (const { r } of [before, targeted, after]) {
      expect(r.reason, r.detail).toBe('converged');
      for (let i = 0; i < nroots; i++) {
        expect(Math.abs(r.values[i]! - ref[i]!), `E${i}`).toBeLessThan(1e-10);
        expect(residualF64(a, r.values[i]!, r.vectors[i]!), `residual ${i}`).toBeLessThan(1e-8);
      }
    }
    // pinned counts (float64 products, float32 correction products, correction solves)
    expect([before.r.stats.matvecs, before.jd.stats.matvecs, before.jd.stats.solves]).toEqual([20, 260, 10]);
    expect([targeted.r.stats.matvecs, targeted.jd.stats.matvecs, targeted.jd.stats.solves]).toEqual([14, 148, 4]);
    expect([after.r.stats.matvecs, after.jd.stats.matvecs, after.jd.stats.solves]).toEqual([9, 56, 4]);
    // recomputeResiduals: false reports the last iteration's residuals: those of the returned vectors
    after.r.residualNorms.forEach((x, i) => { expect(Math.abs(x - residualF64(a, after.r.values[i]!, after.r.vectors[i]!)), `residual ${i}`).toBeLessThan(1e-12); });
  });

  it('innerTolerance: the floor far from the target, looser near it, at most 0.5', () => {
    expect(innerTolerance(1e-3, 1e-4, undefined)).toBe(1e-3);
    expect(innerTolerance(1e-4, 5e-5, 1e-8)).toBe(1e-4);
    expect(innerTolerance(1e-4, 4e-8, 1e-8)).toBeCloseTo(0.025, 12);
    expect(innerTolerance(1e-4, 1e-9, 1e-8)).toBe(0.5);
  });
});
