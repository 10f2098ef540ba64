/**
 * refinedSolve on the GPU with x and r in df64 on the device (the GpuOperator's
 * extended-precision capability): CG and GMRES to 1e-10 relative true residual, recomputed in
 * float64 on the host, with no float64 product on the host.
 */
import { type CsrMatrix, csrSpmv, generators, HostOperator } from '@gpusparse/formats';
import { beforeAll, describe, expect, it } from 'vitest';
import { refinedSolve } from '../../solvers/src/index';
import { Df64Residual, type GpuContext, gpuOperatorFromCsr, GpuVectorSpace } from '../src/index';
import { testContext, trueRelative } from './helpers';

let ctx: GpuContext;
beforeAll(async () => {
  ctx = await testContext();
});

/** ‖b − A·x‖ / ‖b‖ in float64 on the host. */

/** b = A·1 + a float64 perturbation (values not exact in f32). */
function rhsOf(a: CsrMatrix): Float64Array {
  const b = csrSpmv(a, new Float64Array(a.cols).fill(1));
  for (let i = 0; i < b.length; i++) b[i] = b[i]! + Math.sin(i) / 3;
  return b;
}

describe('refinedSolve with df64 on the device', () => {
  const cases: [string, 'cg' | 'gmres', CsrMatrix][] = [
    ['CG, 2-D Poisson 32×32', 'cg', generators.poisson2d(32)],
    ['GMRES(30), convection–diffusion 24×24 (non-symmetric)', 'gmres', generators.convectionDiffusion2d(24, 24, 0.8, 0.4)],
  ];
  it.each(cases)('%s reaches 1e-10 with zero host products', async (_name, method, a) => {
    const space = new GpuVectorSpace(ctx);
    const op = gpuOperatorFromCsr(ctx, a, { kernel: 'csr-vector' });
    const b = rhsOf(a);
    const res = await refinedSolve({ innerOperator: op, innerSpace: space, b, rtol: 1e-10, inner: { method, rtol: 1e-4, restart: 30 } });
    expect(res.reason, res.detail).toBe('converged');
    expect(res.outerPrecision).toMatch(/^df64/);
    expect(res.hostMatvecs).toBe(0);
    const rel = trueRelative(a, res.x, b);
    expect(rel).toBeLessThanOrEqual(1e-10);
    // the device's df64 residual agrees with the host's float64 one
    expect(Math.abs(res.trueResidual / res.bNorm - rel)).toBeLessThanOrEqual(1e-3 * rel + 1e-14);
    expect(res.outerIterations).toBeGreaterThanOrEqual(2);
    console.log(
      `${_name}: outer ${res.outerIterations}, inner ${res.innerIterations}, readbacks ${res.stats.readbacks}, ` +
        `true relative residual ${rel.toExponential(2)} (${res.outerPrecision})`,
    );
    op.dispose();
  });

  it('goes further than the host path can: 1e-12 on Poisson with df64', async () => {
    const a = generators.poisson2d(16);
    const space = new GpuVectorSpace(ctx);
    const op = gpuOperatorFromCsr(ctx, a, { kernel: 'csr-vector' });
    const b = rhsOf(a);
    const res = await refinedSolve({ innerOperator: op, innerSpace: space, b, rtol: 1e-12, inner: { method: 'cg', rtol: 1e-4 } });
    expect(res.reason, res.detail).toBe('converged');
    expect(trueRelative(a, res.x, b)).toBeLessThanOrEqual(1.01e-12);
    // the same solve with extended: false keeps x and r on the host (one host product per step)
    const host = await refinedSolve({ hostOperator: HostOperator.fromCsr(a), innerOperator: op, innerSpace: space, b, rtol: 1e-12, extended: false, inner: { method: 'cg', rtol: 1e-4 } });
    expect(host.hostMatvecs).toBe(host.outerIterations);
    expect(Math.abs(host.outerIterations - res.outerIterations)).toBeLessThanOrEqual(1);
    op.dispose();
  });

  it('a single-block CSR operator shares its arrays (0 or 4 extra bytes per non-zero); other formats get a copy', async () => {
    const a = generators.poisson2d(16);
    const nnz = a.values.length;
    for (const kernel of ['csr-vector', 'csr-scalar', 'csr-adaptive']) {
      const op = gpuOperatorFromCsr(ctx, a, { kernel });
      const ext = (await op.extendedPrecision()) as Df64Residual;
      expect(ext.matrix.shared, kernel).toBe(true);
      expect(ext.matrix.bytes, kernel).toBe(0); // Poisson's values are exact in f32: nothing added
      op.dispose();
    }
    const ell = gpuOperatorFromCsr(ctx, a, { kernel: 'ell' });
    const own = (await ell.extendedPrecision()) as Df64Residual;
    expect(own.matrix.shared).toBe(false);
    expect(own.matrix.bytes).toBe(4 * (a.rows + 1) + 8 * nnz);
    // the copy and the shared arrays give the same residual, and the ell operator refines too
    const b = rhsOf(a);
    const res = await refinedSolve({ innerOperator: ell, innerSpace: new GpuVectorSpace(ctx), b, rtol: 1e-10, inner: { method: 'cg', rtol: 1e-4 } });
    expect(res.reason, res.detail).toBe('converged');
    expect(trueRelative(a, res.x, b)).toBeLessThanOrEqual(1e-10);
    ell.dispose();
  });

  it('an operator without a CSR source offers no df64 residual', async () => {
    const op = gpuOperatorFromCsr(ctx, generators.laplacian1d(8));
    expect(await op.extendedPrecision()).toBeDefined();
    const rect = gpuOperatorFromCsr(ctx, generators.uniformRandom(4, 6, 2));
    expect(await rect.extendedPrecision()).toBeUndefined();
  });
});

describe('df64 refinement on a real matrix with float64 values (lo array in use)', () => {
  it('bcsstk05 (κ ≈ 1e4): CG refined to 1e-10 on the device', async () => {
    const { loadShared } = await import('../../solvers/test/krylov-matrices');
    const a = await loadShared('bcsstk05.mtx');
    const op = gpuOperatorFromCsr(ctx, a, { kernel: 'csr-vector' });
    const ext = await op.extendedPrecision();
    expect(ext).toBeInstanceOf(Df64Residual);
    expect((ext as Df64Residual).matrix.hasLo).toBe(true); // bcsstk05's values are not exact in f32
    expect((ext as Df64Residual).matrix.bytes).toBe(4 * a.values.length); // only the lo array is added
    const b = rhsOf(a);
    const res = await refinedSolve({ innerOperator: op, innerSpace: new GpuVectorSpace(ctx), b, rtol: 1e-10, inner: { method: 'cg', rtol: 1e-3 } });
    expect(res.reason, res.detail).toBe('converged');
    expect(res.hostMatvecs).toBe(0);
    expect(trueRelative(a, res.x, b)).toBeLessThanOrEqual(1e-10);
    op.dispose();
  });
});
