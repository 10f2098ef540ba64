/**
 * Session 11 hardening, on WebGPU (float32 norms; see packages/solvers/test/hostile-s11a-scale
 * for the host emulation and the reasons). A·1e-30 with b = A·1: ‖b‖ read 0 on the device and
 * cg / gmres / bicgstab returned x = 0 'converged'; lanczos / lobpcg called wrong pairs
 * converged (every residual read 0). Now the Krylov solvers refuse with InvalidParameterError
 * naming ‖b‖ and the remedy, the eigensolvers end 'breakdown', and the paths that scale or
 * polish in float64 (refinedSolve, eigsMixed) give the right answer.
 */
import { csrSpmv, type CsrMatrix, generators as g, HostOperator, InvalidParameterError } from '@gpusparse/formats';
import { afterAll, describe, expect, it } from 'vitest';
import { bicgstab, cg, eigsMixed, gmres, lanczos, lobpcg, refinedSolve } from '../../solvers/src/index';
import { gpuOperatorFromCsr, GpuVectorSpace } from '../src/index';
import { testContext, trueRelative } from './helpers';

afterAll(async () => (await testContext()).dispose());

const a0 = g.poisson2d(12); // n = 144
const scaled = (s: number): CsrMatrix => ({ ...a0, values: a0.values.map((v) => v * s) });
const ones = new Float64Array(a0.rows).fill(1);

describe('badly scaled systems on the device', () => {
  it("cg / gmres / bicgstab: A·1e-30 (b = A·1) and b = 1e30·A·1 are InvalidParameterError (A·1e-30 was x = 0 'converged')", async () => {
    const ctx = await testContext();
    const space = new GpuVectorSpace(ctx);
    for (const [sa, sb, msg] of [[1e-30, 1, /which reads 0 in float32/], [1, 1e30, /whose square overflows float32/]] as const) {
      const a = scaled(sa);
      const op = gpuOperatorFromCsr(ctx, a);
      const b = csrSpmv(a, ones).map((v) => v * sb);
      for (const [name, f] of Object.entries({ cg, gmres, bicgstab })) {
        await expect(f(space, op, space.fromArray(b), { rtol: 1e-5 }), name).rejects.toThrow(InvalidParameterError);
        await expect(f(space, op, space.fromArray(b), { rtol: 1e-5 }), name).rejects.toThrow(msg);
      }
      op.dispose();
    }
  });
  it("lanczos / lobpcg on A·1e-30 end 'breakdown' naming the threshold; eigsMixed gets λ₁, λ₂ to 1e-8", async () => {
    const ctx = await testContext();
    const space = new GpuVectorSpace(ctx);
    const a = scaled(1e-30);
    const op = gpuOperatorFromCsr(ctx, a);
    for (const r of [await lanczos(space, op, { k: 2 }), await lobpcg(space, op, { k: 2 })]) {
      expect(r.reason, r.method).toBe('breakdown');
      expect(r.detail, r.method).toMatch(/residual threshold .* is below what a float32 norm/);
    }
    const m = await eigsMixed({ method: 'lanczos', k: 2, fastOperator: op, fastSpace: space, hostOperator: HostOperator.fromCsr(a), rtol: 1e-10 });
    expect(m.converged).toBe(true);
    const exact = [1, 2].map((j) => 1e-30 * (4 - 2 * Math.cos((Math.PI * 1) / 13) - 2 * Math.cos((Math.PI * j) / 13))); // λ(1,1), λ(1,2) of the 12×12 grid
    m.values.forEach((v, i) => {
      expect(Math.abs(v - exact[i]!) / exact[i]!).toBeLessThan(1e-8);
    });
    op.dispose();
  });
  it('refinedSolve (b scaled by a power of two, float64 outer residual) solves A·1e-30 and b·1e30 to 1e-10', async () => {
    const ctx = await testContext();
    const space = new GpuVectorSpace(ctx);
    for (const [sa, sb] of [[1e-30, 1], [1, 1e30]] as const) {
      const a = scaled(sa);
      const op = gpuOperatorFromCsr(ctx, a);
      const b = csrSpmv(a, ones).map((v) => v * sb);
      const r = await refinedSolve({ hostOperator: HostOperator.fromCsr(a), innerOperator: op, innerSpace: space, b, rtol: 1e-10, inner: { method: 'cg', rtol: 1e-4 } });
      expect(r.reason, `${sa} ${sb}`).toBe('converged');
      expect(trueRelative(a, r.x, b), `${sa} ${sb}`).toBeLessThan(1e-9);
      op.dispose();
    }
  });
});
