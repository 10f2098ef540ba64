/**
 * Session 12 hardening (s12-harden-c): concurrent solves on ONE in-solve-tuned operator whose
 * chosen kernel goes wrong (products × 1.1 from the 5th after the switch). Before: cg, gmres,
 * bicgstab and lanczos under Promise.all — gmres's final check found the tuned kernel wrong and
 * made the operator fall back; bicgstab's own check then saw a verified kernel running and
 * skipped, and it returned **'converged' at true relative residual 0.0909** (it had solved
 * 1.1·A·x = b; on lavapipe cg, gmres or bicgstab so, for 4 of 7 switch points 3–40). Now each
 * solve takes a mark of the operator's kernel state at its start (`kernelMark`): a solve whose
 * products ran unverified at any time is checked on the verified kernel at its end, whatever
 * runs now. Every 'converged' must be right, its reported residual the true one, and a converged
 * lanczos's eigenvalues right.
 */
import { csrSpmv, generators as g } from '@gpusparse/formats';
import { afterAll, describe, expect, it } from 'vitest';
import { bicgstab, cg, gmres, lanczos } from '../../solvers/src/index';
import { GpuVectorSpace } from '../src/index';
import { testContext, trueRelative } from './helpers';
import { switchedThenWrong } from './support/faults';

afterAll(async () => (await testContext()).dispose());
const CANDIDATES = ['csr-scalar', 'csr-vector', 'ell', 'sliced-ell'];
const a = g.poisson2d(16);
const b = csrSpmv(a, new Float64Array(a.rows).fill(1));
// λ_{i,j} = 4 − 2cos(iπ/17) − 2cos(jπ/17): the lowest three
const lowest = [
  [1, 1],
  [1, 2],
  [2, 1],
].map(([i, j]) => 4 - 2 * Math.cos((i! * Math.PI) / 17) - 2 * Math.cos((j! * Math.PI) / 17));

describe('concurrent solves on one in-solve-tuned operator whose kernel goes wrong', () => {
  for (const after of [4, 5, 12, 40]) {
    it(`wrong from product ${after} after the switch: no solve says 'converged' on a wrong answer`, async () => {
      const ctx = await testContext();
      const space = new GpuVectorSpace(ctx);
      const { op, wrong } = await switchedThenWrong(ctx, a, CANDIDATES, 1.1, after);
      const opts = { rtol: 1e-5, maxIterations: 2000 };
      const [rc, rg, rb, eig] = await Promise.all([
        cg(space, op, space.fromArray(b), opts),
        gmres(space, op, space.fromArray(b), opts),
        bicgstab(space, op, space.fromArray(b), opts),
        lanczos(space, op, { k: 3 }),
      ]);
      expect(wrong()).toBeGreaterThan(0);
      for (const [name, r] of [['cg', rc], ['gmres', rg], ['bicgstab', rb]] as const) {
        const rel = trueRelative(a, await space.toArray(r.x), b);
        if (r.converged) expect(rel, `${name} 'converged' at true rel ${rel}`).toBeLessThan(1e-4);
        expect(Math.abs(r.trueResidual / r.bNorm - rel), `${name} reported residual`).toBeLessThan(1e-5);
      }
      if (eig.converged) for (const [i, v] of eig.values.entries()) expect(Math.abs(v - lowest[i]!), `λ${i}`).toBeLessThan(1e-4);
      expect(op.runsUnverified()).toBe(false);
      op.dispose();
    }, 120_000);
  }
});
