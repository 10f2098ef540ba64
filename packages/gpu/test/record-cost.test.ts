/**
 * The host cost of recording (issue 15; bench/record-cost.ts measures it): a repeated pipeline
 * is set once per pass, bind groups come from a trie of buffer ids (a hit creates nothing, a
 * destroyed buffer's groups go), uniform blocks come from a ring made once, and the buffer pool
 * hands out the lowest id first — so a solve repeated on the same context finds every bind
 * group of the first (a Lanczos run after a warm-up created 374 before, on Hubbard-like steps).
 */
import { generators } from '@gpusparse/formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lanczos } from '../../solvers/src/index';
import { type GpuContext, gpuOperatorFromCsr, GpuVectorSpace, Uniforms } from '../src/index';
import { testContext } from './helpers';

let ctx: GpuContext;
let gs: GpuVectorSpace;
beforeAll(async () => {
  ctx = await testContext();
  gs = new GpuVectorSpace(ctx);
});
afterAll(() => ctx.dispose());

/** Count calls of `obj[name]` while `f` runs. */
async function counting<T>(obj: object, name: string, f: () => T | Promise<T>): Promise<{ n: number; res: T }> {
  const o = obj as Record<string, (...a: unknown[]) => unknown>;
  const orig = o[name]!;
  let n = 0;
  o[name] = function (this: unknown, ...a: unknown[]) {
    n++;
    return orig.apply(this, a);
  };
  try {
    const res = await f();
    return { n, res };
  } finally {
    o[name] = orig;
  }
}

/** setPipeline calls on the passes of encoders created while `f` runs. */
async function setPipelineCalls(f: () => void): Promise<number> {
  const d = ctx.device as unknown as Record<string, (...a: unknown[]) => unknown>;
  const orig = d.createCommandEncoder!;
  let n = 0;
  d.createCommandEncoder = function (this: unknown, ...a: unknown[]) {
    const enc = orig.apply(this, a) as Record<string, (...b: unknown[]) => unknown>;
    const begin = enc.beginComputePass!;
    enc.beginComputePass = function (this: unknown, ...b: unknown[]) {
      const pass = begin.apply(this, b) as Record<string, (...c: unknown[]) => unknown>;
      const set = pass.setPipeline!;
      pass.setPipeline = function (this: unknown, ...c: unknown[]) {
        n++;
        return set.apply(this, c);
      };
      return pass;
    };
    return enc;
  };
  try {
    f();
  } finally {
    d.createCommandEncoder = orig;
  }
  return n;
}

describe('recording cost', () => {
  it('sets a repeated pipeline once per pass, again after a submit, and the results stay those of every dispatch', async () => {
    const n = 1000;
    const x = gs.fromArray(Float32Array.from({ length: n }, (_, i) => (i % 5) - 2));
    const y = gs.create(n);
    const z = gs.create(n);
    await ctx.finish();
    const rec = ctx.recorder;
    const auto = rec.autoFlush;
    rec.autoFlush = 0;
    try {
      const calls = await setPipelineCalls(() => {
        for (let r = 0; r < 10; r++) gs.axpby(1, x, 1, y); // one pipeline, 10 dispatches
        gs.copy(y, z); // another pipeline
        gs.axpby(1, x, 1, y); // back to the first
        rec.flush(); // a new pass after it must set the pipeline again
        gs.axpby(1, x, 1, y);
        gs.axpby(1, x, 1, y);
      });
      expect(calls).toBe(4); // axpby, copy, axpby | axpby
    } finally {
      rec.autoFlush = auto;
    }
    const [gy, gz] = [await gs.toArray(y), await gs.toArray(z)];
    for (let i = 0; i < n; i++) {
      expect(gz[i]).toBe(10 * ((i % 5) - 2));
      expect(gy[i]).toBe(13 * ((i % 5) - 2));
    }
    for (const v of [x, y, z]) gs.release(v);
  });

  it('bind groups: a hit creates nothing, ranges and order are part of the key, a destroyed buffer takes its groups along', async () => {
    const n = 256;
    const a = gs.fromArray(new Float32Array(n).fill(1));
    const b = gs.fromArray(new Float32Array(n).fill(2));
    const pipe = ctx.pipelines.get({ key: 'test:record-cost', label: 'test-record-cost', bindings: 'rw', wgsl: () => 'struct U { n: u32 }\n@group(0) @binding(0) var<uniform> u: U;\n@group(0) @binding(1) var<storage, read> x: array<f32>;\n@group(0) @binding(2) var<storage, read_write> y: array<f32>;\n@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3<u32>) { if (g.x < u.n) { y[g.x] = x[g.x]; } }' });
    const arena = ctx.device.createBuffer({ size: 256, usage: GPUBufferUsage.UNIFORM });
    const first = await counting(ctx.device, 'createBindGroup', () => ctx.pipelines.bindGroup(pipe, arena, 999_001, [a.buf, b.buf]));
    expect(first.n).toBe(1);
    const hit = await counting(ctx.device, 'createBindGroup', () => ctx.pipelines.bindGroup(pipe, arena, 999_001, [a.buf, b.buf]));
    expect(hit.n).toBe(0);
    expect(hit.res).toBe(first.res);
    // the same buffers in the other order, a range of one, another arena: each its own group
    const others = await counting(ctx.device, 'createBindGroup', () => [
      ctx.pipelines.bindGroup(pipe, arena, 999_001, [b.buf, a.buf]),
      ctx.pipelines.bindGroup(pipe, arena, 999_001, [a.buf, { buf: b.buf, offset: 0, size: 512 }]),
      ctx.pipelines.bindGroup(pipe, arena, 999_002, [a.buf, b.buf]),
      ctx.pipelines.bindGroup(pipe, arena, 999_001, [{ buf: a.buf }, b.buf]), // a whole-buffer ref is the buffer
    ]);
    expect(others.n).toBe(3);
    expect(new Set([first.res, ...others.res]).size).toBe(4);
    expect(others.res[3]).toBe(first.res);
    const before = ctx.pipelines.cachedGroups;
    ctx.pipelines.forgetBuffer(b.buf.id); // what the pool does when it destroys b's buffer
    expect(before - ctx.pipelines.cachedGroups).toBe(4);
    const again = await counting(ctx.device, 'createBindGroup', () => ctx.pipelines.bindGroup(pipe, arena, 999_001, [a.buf, b.buf]));
    expect(again.n).toBe(1);
    arena.destroy();
    gs.release(a);
    gs.release(b);
  });

  it('firstBatch sets the first automatic submit after a wait (the ramp doubles from it)', async () => {
    const n = 512;
    const x = gs.fromArray(new Float32Array(n).fill(1));
    const y = gs.create(n);
    await ctx.finish();
    const rec = ctx.recorder;
    rec.firstBatch = 4;
    try {
      await ctx.finish(); // the explicit submit takes the new ramp
      const s0 = rec.submits;
      const marks: number[] = [];
      for (let r = 0; r < 30; r++) {
        gs.axpby(1, x, 1, y);
        if (rec.submits - s0 > marks.length) marks.push(r + 1);
      }
      expect(marks).toEqual([4, 12, 28]);
    } finally {
      rec.firstBatch = 16;
    }
    expect((await gs.toArray(y))[7]).toBe(30);
    gs.release(x);
    gs.release(y);
  });

  it('Uniforms.take hands out the ring blocks zeroed, without new views', () => {
    const u = Uniforms.take();
    u.u[0] = 7;
    u.f[5] = 1.5;
    const seen = new Set<Uniforms>([u]);
    for (let i = 1; i < 1024; i++) seen.add(Uniforms.take());
    expect(seen.size).toBe(1024);
    const back = Uniforms.take(); // the ring came round: the same object, zeroed
    expect(back).toBe(u);
    expect(Array.from(back.u.subarray(0, 8))).toEqual([0, 0, 0, 0, 0, 0, 0, 0]);
  });

  it('the buffer pool hands out the lowest id of a size class first, whatever the release order', () => {
    const bufs = [0, 1, 2].map(() => ctx.buffers.acquire(4096, undefined, 'order'));
    const ids = bufs.map((b) => b.id);
    for (const i of [1, 0, 2]) bufs[i]!.dispose();
    const again = [0, 1, 2].map(() => ctx.buffers.acquire(4096, undefined, 'order'));
    expect(again.map((b) => b.id)).toEqual([...ids].sort((x, y) => x - y));
    for (const b of again) b.dispose();
  });

  it('a Lanczos run repeated on the same context creates no bind group (the pool gives the basis the same buffers)', async () => {
    const a = generators.poisson2d(24);
    const op = gpuOperatorFromCsr(ctx, a, { kernel: 'csr-vector', params: { lanes: 2 } });
    const run = async () => {
      const r = await lanczos(op, gs, { k: 4, tol: 1e-4, checkMultiplicity: false });
      for (const v of r.vectors) gs.release(v);
      await ctx.finish();
      return r;
    };
    const warm = await counting(ctx.device, 'createBindGroup', run);
    expect(warm.n).toBeGreaterThan(20);
    const second = await counting(ctx.device, 'createBindGroup', run);
    expect(second.res.values).toEqual(warm.res.values);
    expect(second.res.stats.matvecs).toBeGreaterThan(20);
    expect(second.n).toBe(0);
    op.dispose();
  });
});
