/**
 * Session 12 hardening (s12-harden-c): concurrent and repeated work on ONE GPU context, found
 * sound on lavapipe and kept as a net. cg + lanczos on one operator, gmres + lanczos('largest')
 * on another and a tuning of a third matrix under Promise.all give bit for bit the sequential
 * results (iterations, x, eigenvalues) — no buffer of a running solve is handed to another — and
 * leave the pool's live buffers where they were; so do eigsMixed (lanczos and davidson),
 * refinedSolve, cg, lobpcg and davidson at once on one operator; a solve started from inside another's
 * onIteration (re-entrant) is right and so is its host; 500 small solves keep the live buffers,
 * the device bytes and the JS heap flat (counted through `ctx.buffers.liveBuffers`).
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { csrSpmv, generators as g, HostOperator } from '@gpusparse/formats';
import { afterAll, describe, expect, it } from 'vitest';
import { cg, davidson, eigsMixed, gmres, lanczos, lobpcg, refinedSolve, type SolveResult } from '../../solvers/src/index';
import { type GpuVector, gpuOperatorFromCsr, GpuVectorSpace, tunedOperator } from '../src/index';
import { testContext } from './helpers';

afterAll(async () => (await testContext()).dispose());
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const a = g.poisson2d(14);
const l1 = g.laplacian1d(300);
const bh = csrSpmv(a, Float64Array.from({ length: a.rows }, (_, i) => 1 + (i % 5)));

/** The test context, a space on it and a default-kernel operator of `a`. */
async function onA() {
  const ctx = await testContext();
  return { ctx, space: new GpuVectorSpace(ctx), op: gpuOperatorFromCsr(ctx, a) };
}

describe('one GPU context under concurrent and repeated use', () => {
  it('cg + lanczos + gmres + lanczos + a tuning at once: the sequential results bit for bit, no buffer left live', async () => {
    const ctx = await testContext();
    const space = new GpuVectorSpace(ctx);
    const op = gpuOperatorFromCsr(ctx, a, { kernel: 'csr-vector' });
    const op2 = gpuOperatorFromCsr(ctx, l1, { kernel: 'csr-scalar' });
    const solved = async (p: Promise<SolveResult<GpuVector>>, b: GpuVector) => {
      const r = await p;
      const x = Array.from(await space.toArray(r.x));
      space.release(r.x);
      space.release(b);
      return { reason: r.reason, it: r.iterations, x };
    };
    const solve = (o: typeof op, rhs: Float64Array, method: typeof cg) => {
      const b = space.fromArray(rhs);
      return solved(method(space, o, b, { rtol: 1e-5, checkEvery: 1 }), b);
    };
    const eig = async (o: typeof op, which: 'smallest' | 'largest') => {
      const r = await lanczos(space, o, { k: 3, which });
      for (const v of r.vectors ?? []) space.release(v as GpuVector);
      return { it: r.iterations, values: Array.from(r.values) };
    };
    const jobs = () => [() => solve(op, bh, cg), () => eig(op, 'smallest'), () => solve(op2, new Float64Array(300).fill(1), gmres), () => eig(op2, 'largest')];
    const before = ctx.buffers.liveBuffers;
    const seq: unknown[] = [];
    for (const f of jobs()) seq.push(await f());
    expect(ctx.buffers.liveBuffers).toBe(before);
    const tune = tunedOperator(ctx, g.poisson2d(10), { budgetMs: 200 }).then((t) => t.dispose());
    const par = await Promise.all([...jobs().map((f) => f()), tune]);
    expect(par.slice(0, 4)).toEqual(seq);
    expect(ctx.buffers.liveBuffers).toBe(before);
    op.dispose();
    op2.dispose();
  }, 180_000);

  it('a solve started inside another one\'s onIteration: both right, both the sequential x', async () => {
    const { space, op } = await onA();
    const alone = await cg(space, op, space.fromArray(bh), { rtol: 1e-5, checkEvery: 1 });
    const want = Array.from(await space.toArray(alone.x));
    let inner: Promise<SolveResult<GpuVector>> | undefined;
    const outer = await cg(space, op, space.fromArray(bh), { rtol: 1e-5, checkEvery: 1, onIteration: (i) => void (i.iteration === 3 && (inner = cg(space, op, space.fromArray(bh), { rtol: 1e-5, checkEvery: 1 }))) });
    const nested = await inner!;
    expect([outer.reason, nested.reason]).toEqual(['converged', 'converged']);
    expect(Array.from(await space.toArray(outer.x))).toEqual(want);
    expect(Array.from(await space.toArray(nested.x))).toEqual(want);
    op.dispose();
  }, 120_000);

  it('500 small solves: live buffers, device bytes and the JS heap stay flat', async () => {
    const ctx = await testContext();
    const space = new GpuVectorSpace(ctx);
    const small = g.laplacian1d(20);
    const op = gpuOperatorFromCsr(ctx, small);
    const rhs = new Float64Array(20).fill(1);
    const marks: { live: number; bytes: number; heap: number }[] = [];
    for (let i = 0; i < 500; i++) {
      const b = space.fromArray(rhs);
      const r = await (i % 2 ? cg : gmres)(space, op, b, { rtol: 1e-5 });
      expect(r.converged).toBe(true);
      space.release(r.x);
      space.release(b);
      if (i % 100 === 99) {
        await ctx.finish();
        gc();
        marks.push({ live: ctx.buffers.liveBuffers, bytes: ctx.buffers.allocatedBytes, heap: process.memoryUsage().heapUsed });
      }
    }
    for (const m of marks.slice(1)) {
      expect(m.live).toBe(marks[0]!.live);
      expect(m.bytes).toBe(marks[0]!.bytes);
    }
    expect(marks[4]!.heap - marks[0]!.heap).toBeLessThan(16 * 2 ** 20);
    op.dispose();
  }, 300_000);

  it('eigsMixed (lanczos, davidson), refinedSolve, cg, lobpcg, davidson at once on one operator: the sequential results', async () => {
    const { space, op } = await onA();
    const host = HostOperator.fromCsr(a);
    const diagonal = new Float64Array(a.rows).fill(4);
    const jobs = () => [
      async () => Array.from((await eigsMixed({ k: 3, method: 'lanczos', fastOperator: op, fastSpace: space, hostOperator: host })).values),
      async () => Array.from((await eigsMixed({ k: 2, method: 'davidson', fastOperator: op, fastSpace: space, hostOperator: host, diagonal })).values),
      async () => {
        const r = await refinedSolve({ innerOperator: op, innerSpace: space, hostOperator: host, b: bh, rtol: 1e-10 });
        return [r.reason, Array.from(r.x)];
      },
      async () => {
        const b = space.fromArray(bh);
        const r = await cg(space, op, b, { rtol: 1e-5, checkEvery: 1 });
        const x = Array.from(await space.toArray(r.x));
        space.release(r.x);
        space.release(b);
        return x;
      },
      async () => Array.from((await lobpcg(op, space, { k: 2 })).values),
      async () => Array.from((await davidson(op, space, { k: 2, diagonal })).values),
    ];
    const seq: unknown[] = [];
    for (const f of jobs()) seq.push(await f());
    expect((seq[2] as unknown[])[0]).toBe('converged');
    expect(await Promise.all(jobs().map((f) => f()))).toEqual(seq);
    op.dispose();
  }, 180_000);
});
