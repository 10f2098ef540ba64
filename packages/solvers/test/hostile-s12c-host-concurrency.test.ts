/**
 * Session 12 hardening (s12-harden-c): concurrent solves on ONE host space, found sound and kept
 * as a net. cg, gmres, lanczos, lobpcg and davidson under Promise.all on one HostVectorSpace (one
 * operator and two) and cg + lanczos on one Float32HostSpace give exactly the sequential results;
 * a solve started from another one's onIteration is right; an onIteration that throws rejects
 * with the caller's error and leaves the space usable; a pre-aborted signal ends every method
 * 'stopped' or unconverged, never 'converged'.
 */
import { csrSpmv, generators as g, HostOperator, HostVectorSpace } from '@gpusparse/formats';
import { describe, expect, it } from 'vitest';
import { cg, davidson, gmres, lanczos, lobpcg, type SolveResult } from '../src/index';
import { Float32HostSpace, float32CsrOperator } from './eigen-f32-space';

const a = g.poisson2d(10);
const l1 = g.laplacian1d(120);
const bh = csrSpmv(a, Float64Array.from({ length: a.rows }, (_, i) => 1 + (i % 5)));
const diag = new Float64Array(a.rows).fill(4);
type Job = () => Promise<unknown>;

function jobs(space: HostVectorSpace): Job[] {
  const op = HostOperator.fromCsr(a);
  const op2 = HostOperator.fromCsr(l1);
  const x = (r: SolveResult<Float64Array>) => ({ reason: r.reason, it: r.iterations, x: Array.from(r.x) });
  const vals = (r: { iterations: number; values: ArrayLike<number> }) => ({ it: r.iterations, values: Array.from(r.values) });
  return [
    async () => x(await cg(space, op, bh, { rtol: 1e-10 })),
    async () => x(await gmres(space, op2, new Float64Array(120).fill(1), { rtol: 1e-10 })),
    async () => vals(await lanczos(space, op, { k: 3 })),
    async () => vals(await lobpcg(op2, space, { k: 2 })),
    async () => vals(await davidson(op, space, { k: 2, diagonal: diag })),
  ];
}

describe('one host space under concurrent use', () => {
  it('five methods at once on one HostVectorSpace: the sequential results exactly', async () => {
    const space = new HostVectorSpace();
    const seq: unknown[] = [];
    for (const f of jobs(space)) seq.push(await f());
    expect(await Promise.all(jobs(space).map((f) => f()))).toEqual(seq);
  }, 60_000);

  it('cg + lanczos at once on one Float32HostSpace: the sequential results exactly', async () => {
    const space = new Float32HostSpace();
    const op = float32CsrOperator(a);
    const run = (): Job[] => [async () => Array.from((await cg(space, op, bh, { rtol: 1e-5 })).x), async () => Array.from((await lanczos(space, op, { k: 2 })).values)];
    const seq: unknown[] = [];
    for (const f of run()) seq.push(await f());
    expect(await Promise.all(run().map((f) => f()))).toEqual(seq);
  }, 60_000);

  it('re-entrant and throwing callbacks, and a pre-aborted signal', async () => {
    const space = new HostVectorSpace();
    const op = HostOperator.fromCsr(a);
    const want = Array.from((await cg(space, op, bh, { rtol: 1e-10 })).x);
    let inner: Promise<SolveResult<Float64Array>> | undefined;
    const outer = await cg(space, op, bh, { rtol: 1e-10, onIteration: (i) => void (i.iteration === 2 && (inner = cg(space, op, bh, { rtol: 1e-10 }))) });
    expect(Array.from(outer.x)).toEqual(want);
    expect(Array.from((await inner!).x)).toEqual(want);
    const boom = new Error('user boom');
    await expect(cg(space, op, bh, { onIteration: () => { throw boom; } })).rejects.toBe(boom);
    await expect(lanczos(space, op, { k: 2, onIteration: () => { throw boom; } })).rejects.toBe(boom);
    const done = new AbortController();
    done.abort();
    for (const r of [await cg(space, op, bh, { signal: done.signal }), await gmres(space, op, bh, { signal: done.signal })]) expect([r.reason, r.converged]).toEqual(['stopped', false]);
    for (const r of [await lanczos(space, op, { k: 2, signal: done.signal }), await lobpcg(op, space, { k: 2, signal: done.signal }), await davidson(op, space, { k: 2, diagonal: diag, signal: done.signal })]) expect(r.converged).toBe(false);
    expect(Array.from((await cg(space, op, bh, { rtol: 1e-10 })).x)).toEqual(want);
  }, 60_000);
});
