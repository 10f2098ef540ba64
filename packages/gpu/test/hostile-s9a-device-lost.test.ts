/**
 * Session 9: the device lost in the middle of a solve (driver reset, out of memory, here
 * `device.destroy()`): every solver stops with DeviceLostError — no segfault, no hang, no result
 * — and every later call on the context raises it too.
 */
import { csrSpmv, generators as g } from '@gpusparse/formats';
import { describe, expect, it } from 'vitest';
import { cg, gmres, lanczos, refinedSolve } from '../../solvers/src/index';
import { createGpuContext, DeviceLostError, gpuOperatorFromCsr, GpuVectorSpace } from '../src/index';

const a = g.poisson2d(24);
const b = csrSpmv(a, new Float64Array(a.rows).fill(1));

async function lostAt<T>(k: number, run: (space: GpuVectorSpace, op: ReturnType<typeof gpuOperatorFromCsr>, onIteration: (i: { iteration: number }) => void) => Promise<T>) {
  const ctx = await createGpuContext();
  const space = new GpuVectorSpace(ctx);
  const op = gpuOperatorFromCsr(ctx, a);
  const kill = (i: { iteration: number }) => {
    if (i.iteration >= k && !ctx.isLost) ctx.device.destroy();
  };
  const t0 = performance.now();
  const err = await run(space, op, kill).then(
    (r) => r,
    (e: unknown) => e,
  );
  return { ctx, space, op, err, ms: performance.now() - t0 };
}

describe('device lost mid-solve', () => {
  for (const [name, solve] of [
    ['cg', (s: GpuVectorSpace, op: Parameters<typeof cg>[1], on: (i: { iteration: number }) => void) => cg(s, op, s.fromArray(b), { rtol: 1e-9, maxIterations: 400, onIteration: on, checkEvery: 1 })],
    ['gmres', (s: GpuVectorSpace, op: Parameters<typeof cg>[1], on: (i: { iteration: number }) => void) => gmres(s, op, s.fromArray(b), { rtol: 1e-9, maxIterations: 400, onIteration: on })],
    ['lanczos', (s: GpuVectorSpace, op: Parameters<typeof cg>[1], on: (i: { iteration: number }) => void) => lanczos(s, op, { k: 2, onIteration: on, tol: 1e-7 })],
  ] as const) {
    it(`${name}: DeviceLostError, then every later call raises it`, async () => {
      const { ctx, space, op, err } = await lostAt(3, solve as never);
      expect(err).toBeInstanceOf(DeviceLostError);
      expect((err as Error).message).toMatch(/device lost: expected a live device/);
      expect(() => space.fromArray(b)).toThrow(DeviceLostError);
      expect(() => op.apply(space.create(a.rows), space.create(a.rows))).toThrow(DeviceLostError);
      await expect(ctx.finish()).rejects.toBeInstanceOf(DeviceLostError);
      expect(() => gpuOperatorFromCsr(ctx, a)).toThrow(DeviceLostError);
      ctx.dispose();
    });
  }

  it('destroyed from a timer while a readback is in flight (refinedSolve on df64 residuals): DeviceLostError, no hang', async () => {
    const ctx = await createGpuContext();
    const space = new GpuVectorSpace(ctx);
    const op = gpuOperatorFromCsr(ctx, g.poisson2d(64));
    const bb = csrSpmv(g.poisson2d(64), new Float64Array(64 * 64).fill(1));
    let timer: ReturnType<typeof setTimeout> | undefined;
    const err = await Promise.race([
      new Promise((resolve) => {
        timer = setTimeout(() => ctx.device.destroy(), 150);
        refinedSolve({ innerOperator: op, innerSpace: space, b: bb, rtol: 1e-12, maxOuterIterations: 200 }).then(resolve, resolve);
      }),
      new Promise((resolve) => setTimeout(() => resolve('hang'), 60_000)),
    ]);
    clearTimeout(timer);
    // finished before the timer fired (a fast GPU: the whole solve takes ~10 s on lavapipe under load,
    // but the timer is 150 ms): the answer must be a converged one, and the cleared timer destroyed
    // nothing — the device is destroyed here so that the lost state is checked either way (session 13:
    // before, this path failed: finish() resolved on the live device; checked with a 100 s timer)
    if (!(err instanceof DeviceLostError)) {
      expect((err as { converged?: boolean }).converged).toBe(true);
      if (!ctx.isLost) ctx.device.destroy();
    }
    await expect(ctx.finish()).rejects.toBeInstanceOf(DeviceLostError);
    ctx.dispose();
  });
});
