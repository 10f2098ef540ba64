/**
 * PipelineCache.prewarm: pipelines compiled ahead of time without blocking are found by a later
 * get() (no blocking compile), a bad shader in a prewarm neither rejects nor poisons the
 * context (the blocking get reports it), and the df64 space's prewarm covers what a df64 dot,
 * combine and hand-over use; Df64VectorSpace.toArrays.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGpuContext, Df64VectorSpace, type GpuContext, GpuValidationError, GpuVector, uploadF32 } from '../src/index';

let ctx: GpuContext;
beforeAll(async () => {
  ctx = await createGpuContext(); // its own context: the compile log starts empty
});
afterAll(() => ctx?.dispose());

const copySpec = (key: string, body: string) => ({
  key,
  label: key,
  bindings: 'rw',
  wgsl: () => `struct U { n: u32 }
@group(0) @binding(0) var<uniform> u: U;
@group(0) @binding(1) var<storage, read> a: array<f32>;
@group(0) @binding(2) var<storage, read_write> b: array<f32>;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3u) { ${body} }`,
});

describe('pipeline prewarm', () => {
  it('compiles ahead of time; get() then compiles nothing', async () => {
    const spec = copySpec('test:prewarm-copy', 'if (g.x < u.n) { b[g.x] = a[g.x]; }');
    const before = ctx.pipelines.compiled;
    await ctx.pipelines.prewarm([spec, spec]);
    expect(ctx.pipelines.has(spec.key)).toBe(true);
    expect(ctx.pipelines.compiled).toBe(before + 1);
    expect(ctx.pipelines.log.filter((e) => e.key === spec.key).map((e) => e.mode)).toEqual(['async']);
    ctx.pipelines.get(spec);
    expect(ctx.pipelines.compiled).toBe(before + 1);
    await ctx.pipelines.prewarm([spec]); // already there: nothing requested
    expect(ctx.pipelines.log.filter((e) => e.key === spec.key)).toHaveLength(1);
  });

  it('a bad shader: prewarm resolves, the context stays usable, get() reports it', async () => {
    const bad = copySpec('test:prewarm-bad', 'b[g.x] = undefinedName;');
    await expect(ctx.pipelines.prewarm([bad])).resolves.toBeUndefined();
    expect(ctx.pipelines.has(bad.key)).toBe(false);
    await ctx.finish(); // no error was left behind by the prewarm
    ctx.pipelines.get(bad);
    await expect(ctx.finish()).rejects.toBeInstanceOf(GpuValidationError);
    await ctx.finish(); // reported once
  });

  it('df64 space prewarm: a dot, a combine and the f32 hand-over compile nothing blocking', async () => {
    const s = (await Df64VectorSpace.of(ctx))!;
    await s.prewarm({ rows: 100, nnz: 1000, vectors: 4 });
    const mark = ctx.pipelines.log.length;
    const v = new GpuVector(uploadF32(ctx, Float32Array.from({ length: 100 }, (_, i) => i + 1), 'x'), 100);
    const x = s.fromGpu(v);
    const y = s.create(100);
    s.combine([2], [x], 0, y);
    const d = s.dot(x, y);
    const f = s.toNewGpu(y, 0.5);
    expect(await s.read(d)).toBeCloseTo((2 * 100 * 101 * 201) / 6, 6);
    expect(ctx.pipelines.log.slice(mark).filter((e) => e.mode === 'sync')).toEqual([]);
    // toArrays: every vector with one readback, as toArray one by one
    const [xa, ya, empty] = await s.toArrays([x, y, s.create(0)]);
    expect(Array.from(xa!)).toEqual(Array.from(await s.toArray(x)));
    expect(Array.from(ya!)).toEqual(Array.from({ length: 100 }, (_, i) => 2 * (i + 1)));
    expect(empty).toHaveLength(0);
    for (const b of [v.buf, x.buf, y.buf, f.buf]) b.dispose();
  });

  it('df64 space prewarm pools its vectors: the phase allocates no new buffer for them', async () => {
    const s = (await Df64VectorSpace.of(ctx))!;
    await s.prewarm({ rows: 3000, vectors: 3 }); // 24 000 bytes each: a size class nothing else here uses
    const held = ctx.buffers.allocatedBytes;
    const vs = [s.create(3000), s.create(3000), s.create(3000)];
    expect(ctx.buffers.allocatedBytes).toBe(held);
    vs.push(s.create(3000)); // past the pooled ones: a new buffer
    expect(ctx.buffers.allocatedBytes).toBeGreaterThan(held);
    for (const v of vs) s.release(v);
  });
});
