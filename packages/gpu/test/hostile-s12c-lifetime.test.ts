/**
 * Session 12 hardening (s12-harden-c): lifetimes on one GPU context.
 * Fixed: a caller who builds the GPU object themselves (`create()` of npm `webgpu`, passed as
 * `createGpuContext({ gpu })`) and drops their reference: after a collection Dawn's instance was
 * freed under the live device and the next solve crashed the process (segfault, exit 139, on
 * lavapipe at the first cg after `gc()`). The context now holds the GPU object and the adapter.
 * Found sound and kept as a net: the context disposed while a cg or a lanczos on it runs
 * (DeviceLostError, no hang, no result); a pre-aborted signal and an abort during eigsMixed's
 * polish ('stopped', never 'converged'); the operator disposed inside lanczos, davidson or
 * eigsMixed (fast phase and polish) (UseAfterDisposeError); a tuning whose onProgress throws
 * (the caller's error, no buffer left live, the next tuning fine) or disposes the context
 * (DeviceLostError). tunedOperator takes no AbortSignal: its `budgetMs` bounds it.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { csrSpmv, generators as g, HostOperator } from '@gpusparse/formats';
import { describe, expect, it } from 'vitest';
import { cg, davidson, eigsMixed, lanczos } from '../../solvers/src/index';
import { createGpuContext, DeviceLostError, gpuOperatorFromCsr, GpuVectorSpace, tunedOperator, UseAfterDisposeError } from '../src/index';
import { trueRelative } from './helpers';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const a = g.poisson2d(12);
const bh = csrSpmv(a, Float64Array.from({ length: a.rows }, (_, i) => 1 + (i % 5)));
const collect = async (): Promise<void> => {
  for (let i = 0; i < 3; i++) {
    gc();
    await new Promise((r) => setTimeout(r, 5));
  }
};

describe('GPU lifetimes', () => {
  it("the caller's own GPU object, dropped and collected: the context holds it, solves go on", async () => {
    // biome-ignore lint/suspicious/noExplicitAny: the npm module is untyped
    const webgpu: any = await import('webgpu');
    Object.assign(globalThis, webgpu.globals);
    let gpu: GPU | undefined = webgpu.create([]);
    const ctx = await createGpuContext({ gpu });
    gpu = undefined;
    const space = new GpuVectorSpace(ctx);
    for (let i = 0; i < 6; i++) {
      await collect(); // before the fix: the process died in the next cg (segfault)
      const op = gpuOperatorFromCsr(ctx, a);
      const b = space.fromArray(bh);
      const r = await cg(space, op, b, { rtol: 1e-5 });
      expect(r.converged).toBe(true);
      expect(trueRelative(a, await space.toArray(r.x), bh)).toBeLessThan(1e-4);
      op.dispose();
      space.release(b);
      space.release(r.x);
    }
    ctx.dispose();
    await collect();
  }, 120_000);

  it('the context disposed while a cg and a lanczos on it run: DeviceLostError from both, no hang', async () => {
    const ctx = await createGpuContext();
    const space = new GpuVectorSpace(ctx);
    const op = gpuOperatorFromCsr(ctx, a);
    const solve = cg(space, op, space.fromArray(bh), { rtol: 1e-12, maxIterations: 5000, checkEvery: 1, onIteration: (i) => void (i.iteration === 5 && ctx.dispose()) });
    const eig = lanczos(space, op, { k: 3, tol: 1e-12 });
    await expect(solve).rejects.toBeInstanceOf(DeviceLostError);
    await expect(eig).rejects.toBeInstanceOf(DeviceLostError);
    await expect((async () => cg(space, op, space.fromArray(bh)))()).rejects.toBeInstanceOf(DeviceLostError);
  }, 120_000);

  it("a pre-aborted signal and an abort in eigsMixed's polish: 'stopped', never 'converged'", async () => {
    const ctx = await createGpuContext();
    const space = new GpuVectorSpace(ctx);
    const op = gpuOperatorFromCsr(ctx, a);
    const host = HostOperator.fromCsr(a);
    const done = new AbortController();
    done.abort();
    const r1 = await cg(space, op, space.fromArray(bh), { signal: done.signal });
    expect([r1.reason, r1.converged]).toEqual(['stopped', false]);
    const r2 = await lanczos(space, op, { k: 2, signal: done.signal });
    expect(r2.converged).toBe(false);
    const r3 = await eigsMixed({ k: 2, method: 'lanczos', fastOperator: op, fastSpace: space, hostOperator: host, signal: done.signal });
    expect(r3.converged).toBe(false);
    const late = new AbortController();
    const r4 = await eigsMixed({ k: 2, method: 'lanczos', fastOperator: op, fastSpace: space, hostOperator: host, signal: late.signal, onIteration: (i) => void (i.phase === 'polish' && late.abort()) });
    expect(r4.converged).toBe(false);
    ctx.dispose();
  }, 120_000);

  it('the operator disposed inside an eigensolver, a tuning whose progress callback throws or disposes the context', async () => {
    const ctx = await createGpuContext();
    const space = new GpuVectorSpace(ctx);
    const host = HostOperator.fromCsr(a);
    const diagonal = new Float64Array(a.rows).fill(4);
    const runs = [
      (op: ReturnType<typeof gpuOperatorFromCsr>) => lanczos(space, op, { k: 3, tol: 1e-7, onIteration: () => void op.dispose() }),
      (op: ReturnType<typeof gpuOperatorFromCsr>) => davidson(op, space, { k: 3, diagonal, onIteration: (i) => void (i.iteration >= 2 && op.dispose()) }),
      (op: ReturnType<typeof gpuOperatorFromCsr>) => eigsMixed({ k: 2, method: 'lanczos', fastOperator: op, fastSpace: space, hostOperator: host, onIteration: () => void op.dispose() }),
      (op: ReturnType<typeof gpuOperatorFromCsr>) => eigsMixed({ k: 2, method: 'lanczos', fastOperator: op, fastSpace: space, hostOperator: host, onIteration: (i) => void (i.phase === 'polish' && op.dispose()) }),
    ];
    for (const run of runs) await expect(run(gpuOperatorFromCsr(ctx, a))).rejects.toBeInstanceOf(UseAfterDisposeError);
    const small = g.poisson2d(10);
    const live = ctx.buffers.liveBuffers;
    const boom = new Error('user boom');
    await expect(tunedOperator(ctx, small, { budgetMs: 200, onProgress: () => { throw boom; } })).rejects.toBe(boom);
    expect(ctx.buffers.liveBuffers).toBe(live);
    const tuned = await tunedOperator(ctx, small, { budgetMs: 200 });
    tuned.dispose();
    expect(ctx.buffers.liveBuffers).toBe(live);
    await expect(tunedOperator(ctx, small, { budgetMs: 200, onProgress: (p) => void (p.phase !== 'stats' && ctx.dispose()) })).rejects.toBeInstanceOf(DeviceLostError);
  }, 180_000);
});
