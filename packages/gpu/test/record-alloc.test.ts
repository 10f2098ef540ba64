/**
 * Allocation-free recording (issue 15, session 9; bench/record-cost.ts `heapBytesPerDispatch`):
 * BLAS-1 hands the recorder reused binding arrays (one per length), `new Uniforms()` is the
 * ring's block, and the space registers one finalization token per group of SCALAR_GROUP
 * scalars (not one per scalar: ~2 µs each on the H100 host) — the results stay those of
 * before, and forgotten scalars still come back once their group is unreachable.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Blas1, type GpuContext, GpuVectorSpace, SCALAR_GROUP, Uniforms } from '../src/index';
import { testContext } from './helpers';

let ctx: GpuContext;
let gs: GpuVectorSpace;
beforeAll(async () => {
  ctx = await testContext();
  gs = new GpuVectorSpace(ctx);
});
afterAll(() => ctx.dispose());

/** The binding arrays the recorder is given while `f` runs, and the number of dispatches. */
function bindingArrays(f: () => void): { arrays: Set<unknown>; dispatches: number } {
  const rec = ctx.recorder;
  const orig = rec.dispatch;
  const arrays = new Set<unknown>();
  let dispatches = 0;
  rec.dispatch = function (this: typeof rec, pipe, refs, uni, groups) {
    arrays.add(refs);
    dispatches++;
    return orig.call(this, pipe, refs, uni, groups);
  };
  try {
    f();
  } finally {
    rec.dispatch = orig;
  }
  return { arrays, dispatches };
}

describe('allocation-free recording', () => {
  it('CG iterations and CGS2 steps reuse one binding array per length; the values are those of the unfused steps', async () => {
    const n = 777;
    const vals = (s: number) => Float32Array.from({ length: n }, (_, i) => ((i * s) % 13) / 8 - 0.75);
    const [p, q, x, r, w] = [1, 2, 3, 4, 5].map((s) => gs.fromArray(vals(s)));
    const basis = [6, 7, 8, 9, 10, 11].map((s) => gs.fromArray(vals(s)));
    const rho = gs.dot(r!, r!);
    const out: number[] = [];
    const { arrays, dispatches } = bindingArrays(() => {
      for (let it = 0; it < 5; it++) {
        const { pq, rr } = gs.cgIteration(rho, p!, q!, x!, r!);
        const h1 = gs.multiDot(basis, w!);
        const h2 = gs.combineDots(h1, basis, -1, w!);
        gs.axpby(0.5, x!, 1, w!);
        for (const s of [pq, rr, ...h1, ...h2]) gs.release(s);
      }
    });
    expect(dispatches).toBeGreaterThanOrEqual(5 * 7);
    // one array per binding count (a fresh array per dispatch before: dispatches of them)
    expect(arrays.size).toBeLessThanOrEqual(6);
    // the same work unfused, on a second set of vectors: bit for bit
    const [p2, q2, x2, r2, w2] = [1, 2, 3, 4, 5].map((s) => gs.fromArray(vals(s)));
    const rho2 = gs.dot(r2!, r2!);
    for (let it = 0; it < 5; it++) {
      const { pq, rr } = gs.cgIteration(rho2, p2!, q2!, x2!, r2!);
      const h1 = basis.map((b) => gs.dot(b, w2!));
      gs.combine(h1, basis, -1, w2!);
      const h2 = basis.map((b) => gs.dot(b, w2!));
      gs.axpby(0.5, x2!, 1, w2!);
      for (const s of [pq, rr, ...h1, ...h2]) gs.release(s);
    }
    for (const [a, b] of [[p, p2], [x, x2], [r, r2], [w, w2]] as const) {
      const [ga, gb] = [await gs.toArray(a!), await gs.toArray(b!)];
      out.push(ga[5]!);
      expect(Array.from(ga)).toEqual(Array.from(gb));
    }
    expect(out.some((v) => v !== 0)).toBe(true);
    for (const v of [p, q, x, r, w, p2, q2, x2, r2, w2, ...basis]) gs.release(v!);
    gs.release(rho);
    gs.release(rho2);
  });

  it('new Uniforms() is the next ring block (zeroed, views made once), like Uniforms.take()', () => {
    const a = new Uniforms();
    a.u[3] = 9;
    const b = Uniforms.take();
    expect(b).not.toBe(a);
    for (let i = 2; i < 1024; i++) new Uniforms();
    const again = new Uniforms(); // 1024 blocks later: the same object, zeroed
    expect(again).toBe(a);
    expect(again.u[3]).toBe(0);
    expect(again.u.buffer).toBe(b.u.buffer);
  });

  it('forgotten scalars give back both slots of their ratios once their group is collected; released ones at once', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const pool = Blas1.of(ctx).scalars;
    const live0 = pool.live;
    const keep: unknown[] = [];
    // held strongly until the first count: a collection V8 starts on its own during ctx.finish()
    // (seen once under CI load) must not free them before it
    const held: unknown[] = [];
    (() => {
      for (let i = 0; i < 200; i++) {
        const a = gs.scalar(i + 1);
        const b = gs.scalar(2);
        const ratio = gs.div(a, b); // num and den both slots: a reference on each
        gs.release(a);
        gs.release(b);
        held.push(ratio);
        if (i === 0) keep.push(ratio);
      }
    })();
    await ctx.finish();
    expect(pool.live).toBe(live0 + 400); // the ratios still hold their two slots each
    held.length = 0; // now forgotten: only `keep` holds the first
    // the group of the kept ratio and the space's current group stay: at most two groups' ratios
    const bound = live0 + 2 * 2 * SCALAR_GROUP;
    for (let round = 0; round < 5 && pool.live > bound; round++) {
      gc();
      await new Promise((res) => setTimeout(res, 20));
    }
    expect(pool.live).toBeLessThanOrEqual(bound);
    expect(pool.live).toBeGreaterThanOrEqual(live0 + 2); // the kept ratio's two
    expect(await gs.read(keep[0] as ReturnType<GpuVectorSpace['scalar']>)).toBe(0.5);
  });

  it('registers one finalization token per group of SCALAR_GROUP scalars, not one per scalar', () => {
    const proto = FinalizationRegistry.prototype as unknown as Record<string, (...a: unknown[]) => unknown>;
    const register = proto.register!;
    let n = 0;
    proto.register = function (this: unknown, ...a: unknown[]) {
      n++;
      return register.apply(this, a);
    };
    const fresh = new GpuVectorSpace(ctx);
    const made: ReturnType<GpuVectorSpace['scalar']>[] = [];
    try {
      for (let i = 0; i < 4 * SCALAR_GROUP; i++) made.push(fresh.scalar(i));
    } finally {
      proto.register = register;
    }
    expect(n).toBe(4); // 4·SCALAR_GROUP registrations before
    for (const s of made) fresh.release(s);
  });
});

