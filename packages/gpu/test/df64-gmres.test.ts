/**
 * refinedSolve's GMRES(30) corrections on the GPU with its defaults (one Gram–Schmidt pass, one
 * Hessenberg read per restart cycle) and df64 residuals: the true float64 relative residual is
 * recomputed on the host, on generated and real non-symmetric matrices; the recorded dispatches
 * and readbacks per inner iteration are compared with the earlier defaults (cgs2, a read every
 * 32 steps).
 */
import { type CsrMatrix, csrSpmv, generators } from '@gpusparse/formats';
import { beforeAll, describe, expect, it } from 'vitest';
import { refinedSolve } from '../../solvers/src/index';
import { type GpuContext, gpuOperatorFromCsr, GpuVectorSpace } from '../src/index';
import { testContext, trueRelative } from './helpers';

let ctx: GpuContext;
beforeAll(async () => {
  ctx = await testContext();
});


/** Solve A·x = A·1 to `rtol` with df64 refinement and GMRES(30) corrections; counts dispatches. */
async function solve(a: CsrMatrix, rtol: number, inner: Record<string, unknown> = {}) {
  const op = gpuOperatorFromCsr(ctx, a, { kernel: 'csr-vector' });
  const b = csrSpmv(a, new Float64Array(a.cols).fill(1));
  const d0 = ctx.recorder.dispatches;
  const res = await refinedSolve({ innerOperator: op, innerSpace: new GpuVectorSpace(ctx), b, rtol, inner: { method: 'gmres', rtol: 1e-4, restart: 30, ...inner } });
  const dispatches = ctx.recorder.dispatches - d0;
  op.dispose();
  return { res, rel: trueRelative(a, res.x, b), dispatches };
}

describe('refinedSolve GMRES(30) corrections on the device', () => {
  it('convection–diffusion 30×30: 1e-10, fewer dispatches and readbacks per iteration than cgs2 with a read every 32 steps', async () => {
    const a = generators.convectionDiffusion2d(30, 30, 0.8, 0.4);
    const dflt = await solve(a, 1e-10);
    const old = await solve(a, 1e-10, { orthogonalization: 'cgs2', checkEvery: 32 });
    for (const r of [dflt, old]) {
      expect(r.res.reason, r.res.detail).toBe('converged');
      expect(r.res.hostMatvecs).toBe(0);
      expect(r.rel).toBeLessThanOrEqual(1e-10);
    }
    const per = (r: typeof dflt) => r.dispatches / r.res.innerIterations;
    expect(per(dflt)).toBeLessThan(0.8 * per(old));
    expect(dflt.res.stats.readbacks / dflt.res.innerIterations).toBeLessThan(old.res.stats.readbacks / old.res.innerIterations);
    console.log(
      `cd 30×30: default ${dflt.res.innerIterations} inner, ${per(dflt).toFixed(1)} dispatches and ${dflt.res.stats.readbacks} readbacks; ` +
        `cgs2/32: ${old.res.innerIterations} inner, ${per(old).toFixed(1)} dispatches and ${old.res.stats.readbacks} readbacks`,
    );
  });

  it.each(['cage5.mtx', 'bfwa62.mtx'])('%s (real, non-symmetric): 1e-10 with df64 residuals', async (name) => {
    const { loadShared } = await import('../../solvers/test/krylov-matrices');
    const a = await loadShared(name);
    const { res, rel } = await solve(a, 1e-10);
    expect(res.reason, res.detail).toBe('converged');
    expect(res.hostMatvecs).toBe(0);
    expect(rel).toBeLessThanOrEqual(1e-10);
    expect(Math.abs(res.trueResidual / res.bNorm - rel)).toBeLessThanOrEqual(1e-3 * rel + 1e-14);
  });
});
