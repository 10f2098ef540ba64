/**
 * Memory-bound kernel shapes on the GPU: which WGSL pattern reaches the memory bandwidth for
 * the BLAS-1 work of Krylov solvers (axpby, the first stage of a dot product, a 6-vector
 * combine). Each variant is a stand-alone WGSL kernel timed with timestamp queries (median of
 * `--reps` passes) on vectors of n floats; GB/s counts each vector read or written once.
 * Variants: one element per invocation (the library's current shape), four consecutive elements
 * per invocation as a vec4, four scalar elements strided by the workgroup size, and grid-stride
 * loops over a fixed number of workgroups (scalar and vec4). Results are checked against the
 * host before timing.
 *
 *   node .gpukit/app/blas-variants.mjs --out $OUT/blas.json [--sizes 1000000,4000000,16000000] [--reps 50] [--unsafe]
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { elementwiseWgsl } from '../packages/gpu/src/blas1/shaders';
import { createGpuContext, type GpuContext, GpuVectorSpace, timeGpu } from '../packages/gpu/src/index';

const argv = process.argv.slice(2);
const opt = (n: string) => (argv.includes(n) ? argv[argv.indexOf(n) + 1] : undefined);
const out = opt('--out') ?? 'bench/out/blas-variants.json';
const sizes = (opt('--sizes') ?? '1000000,4000000,16000000').split(',').map(Number);
const reps = Number(opt('--reps') ?? 50);
const GRID = 2048; // workgroups of the grid-stride variants

interface Variant {
  name: string;
  op: 'axpby' | 'dot1' | 'combine6';
  wgsl: (wg: number) => string;
  /** Workgroups for n elements. */
  groups: (n: number, wg: number) => number;
  vec4: boolean;
  wg: number;
}

const U = 'struct U { n: u32, a: f32, b: f32, pad: u32 }\n@group(0) @binding(0) var<uniform> u: U;\n';
const arr = (name: string, b: number, rw: boolean, v4: boolean) => `@group(0) @binding(${b}) var<storage, ${rw ? 'read_write' : 'read'}> ${name}: array<${v4 ? 'vec4<f32>' : 'f32'}>;\n`;
const gid = '@builtin(global_invocation_id) gi: vec3<u32>, @builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>';
const linear = 'let g = wid.x + wid.y * nwg.x;';
const tree = (wg: number) => `var<workgroup> red: array<f32, ${wg}>;
fn reduce(lid: u32, v: f32) -> f32 {
  red[lid] = v;
  workgroupBarrier();
  for (var s = ${wg / 2}u; s > 0u; s = s >> 1u) {
    if (lid < s) { red[lid] = red[lid] + red[lid + s]; }
    workgroupBarrier();
  }
  return red[0];
}
`;

function variants(): Variant[] {
  const v: Variant[] = [];
  for (const wg of [256]) {
    // axpby y = a·x + b·y; n divisible by 4 in the vec4 variants (sizes are)
    v.push({ name: `axpby-1/thread-wg${wg}`, op: 'axpby', vec4: false, wg, groups: (n) => Math.ceil(n / wg), wgsl: () => `${U}${arr('x', 1, false, false)}${arr('y', 2, true, false)}@compute @workgroup_size(${wg}) fn main(${gid}) { ${linear} let i = g * ${wg}u + lid; if (i < u.n) { y[i] = u.a * x[i] + u.b * y[i]; } }` });
    v.push({ name: `axpby-vec4/thread-wg${wg}`, op: 'axpby', vec4: true, wg, groups: (n) => Math.ceil(n / 4 / wg), wgsl: () => `${U}${arr('x', 1, false, true)}${arr('y', 2, true, true)}@compute @workgroup_size(${wg}) fn main(${gid}) { ${linear} let i = g * ${wg}u + lid; if (i < u.n / 4u) { y[i] = u.a * x[i] + u.b * y[i]; } }` });
    v.push({ name: `axpby-4strided/thread-wg${wg}`, op: 'axpby', vec4: false, wg, groups: (n) => Math.ceil(n / 4 / wg), wgsl: () => `${U}${arr('x', 1, false, false)}${arr('y', 2, true, false)}@compute @workgroup_size(${wg}) fn main(${gid}) { ${linear} for (var k = 0u; k < 4u; k++) { let i = g * ${4 * wg}u + k * ${wg}u + lid; if (i < u.n) { y[i] = u.a * x[i] + u.b * y[i]; } } }` });
    v.push({ name: `axpby-gridstride-wg${wg}`, op: 'axpby', vec4: false, wg, groups: () => GRID, wgsl: () => `${U}${arr('x', 1, false, false)}${arr('y', 2, true, false)}@compute @workgroup_size(${wg}) fn main(${gid}) { ${linear} for (var i = g * ${wg}u + lid; i < u.n; i += ${GRID * wg}u) { y[i] = u.a * x[i] + u.b * y[i]; } }` });
    v.push({ name: `axpby-gridstride-vec4-wg${wg}`, op: 'axpby', vec4: true, wg, groups: () => GRID, wgsl: () => `${U}${arr('x', 1, false, true)}${arr('y', 2, true, true)}@compute @workgroup_size(${wg}) fn main(${gid}) { ${linear} for (var i = g * ${wg}u + lid; i < u.n / 4u; i += ${GRID * wg}u) { y[i] = u.a * x[i] + u.b * y[i]; } }` });
    // dot stage 1: partial[g] = Σ x·y over the workgroup's part
    v.push({ name: `dot1-8strided-wg${wg}`, op: 'dot1', vec4: false, wg, groups: (n) => Math.ceil(n / 8 / wg), wgsl: () => `${U}${arr('x', 1, false, false)}${arr('y', 2, false, false)}${arr('p', 3, true, false)}${tree(wg)}@compute @workgroup_size(${wg}) fn main(${gid}) { ${linear} var s = 0.0; for (var k = 0u; k < 8u; k++) { let i = g * ${8 * wg}u + k * ${wg}u + lid; if (i < u.n) { s = s + x[i] * y[i]; } } let t = reduce(lid, s); if (lid == 0u) { p[g] = t; } }` });
    v.push({ name: `dot1-vec4x4strided-wg${wg}`, op: 'dot1', vec4: true, wg, groups: (n) => Math.ceil(n / 16 / wg), wgsl: () => `${U}${arr('x', 1, false, true)}${arr('y', 2, false, true)}${arr('p', 3, true, false)}${tree(wg)}@compute @workgroup_size(${wg}) fn main(${gid}) { ${linear} var s = vec4<f32>(0.0); for (var k = 0u; k < 4u; k++) { let i = g * ${4 * wg}u + k * ${wg}u + lid; if (i < u.n / 4u) { s = s + x[i] * y[i]; } } let t = reduce(lid, (s.x + s.y) + (s.z + s.w)); if (lid == 0u) { p[g] = t; } }` });
    v.push({ name: `dot1-gridstride-vec4-wg${wg}`, op: 'dot1', vec4: true, wg, groups: () => GRID, wgsl: () => `${U}${arr('x', 1, false, true)}${arr('y', 2, false, true)}${arr('p', 3, true, false)}${tree(wg)}@compute @workgroup_size(${wg}) fn main(${gid}) { ${linear} var s = vec4<f32>(0.0); for (var i = g * ${wg}u + lid; i < u.n / 4u; i += ${GRID * wg}u) { s = s + x[i] * y[i]; } let t = reduce(lid, (s.x + s.y) + (s.z + s.w)); if (lid == 0u) { p[g] = t; } }` });
    // combine of 6 vectors: y = b·y + a·Σ x_j (coefficients as uniforms are enough for bandwidth)
    const xs = (v4: boolean) => [0, 1, 2, 3, 4, 5].map((j) => arr(`x${j}`, j + 1, false, v4)).join('');
    const sum6 = 'x0[i] + x1[i] + x2[i] + x3[i] + x4[i] + x5[i]';
    v.push({ name: `combine6-1/thread-wg${wg}`, op: 'combine6', vec4: false, wg, groups: (n) => Math.ceil(n / wg), wgsl: () => `${U}${xs(false)}${arr('y', 7, true, false)}@compute @workgroup_size(${wg}) fn main(${gid}) { ${linear} let i = g * ${wg}u + lid; if (i < u.n) { y[i] = u.b * y[i] + u.a * (${sum6}); } }` });
    v.push({ name: `combine6-vec4/thread-wg${wg}`, op: 'combine6', vec4: true, wg, groups: (n) => Math.ceil(n / 4 / wg), wgsl: () => `${U}${xs(true)}${arr('y', 7, true, true)}@compute @workgroup_size(${wg}) fn main(${gid}) { ${linear} let i = g * ${wg}u + lid; if (i < u.n / 4u) { y[i] = u.b * y[i] + u.a * (${sum6}); } }` });
    v.push({ name: `combine6-gridstride-vec4-wg${wg}`, op: 'combine6', vec4: true, wg, groups: () => GRID, wgsl: () => `${U}${xs(true)}${arr('y', 7, true, true)}@compute @workgroup_size(${wg}) fn main(${gid}) { ${linear} for (var i = g * ${wg}u + lid; i < u.n / 4u; i += ${GRID * wg}u) { y[i] = u.b * y[i] + u.a * (${sum6}); } }` });
  }
  return v;
}

function buffer(ctx: GpuContext, data: Float32Array | number): GPUBuffer {
  const bytes = typeof data === 'number' ? data * 4 : data.byteLength;
  const b = ctx.device.createBuffer({ size: Math.max(16, bytes), usage: 0x80 | 0x08 | 0x04 }); // STORAGE | COPY_DST | COPY_SRC
  if (typeof data !== "number") ctx.device.queue.writeBuffer(b, 0, data as Float32Array<ArrayBuffer>);
  return b;
}

async function read(ctx: GpuContext, b: GPUBuffer, count: number): Promise<Float32Array> {
  const st = ctx.device.createBuffer({ size: count * 4, usage: 0x01 | 0x08 }); // MAP_READ | COPY_DST
  const enc = ctx.device.createCommandEncoder();
  enc.copyBufferToBuffer(b, 0, st, 0, count * 4);
  ctx.device.queue.submit([enc.finish()]);
  await st.mapAsync(1);
  const out = new Float32Array(st.getMappedRange().slice(0));
  st.unmap();
  st.destroy();
  return out;
}

/** Median GPU ms of `reps` passes of one dispatch each (timestamps around each pass, 3 warm-up passes). */
async function timePasses(ctx: GpuContext, pipeline: GPUComputePipeline, bg: GPUBindGroup, gx: number, gy: number, reps: number): Promise<number> {
  const qs = ctx.device.createQuerySet({ type: 'timestamp', count: 2 * reps });
  const resolve = ctx.device.createBuffer({ size: 16 * reps, usage: 0x200 | 0x04 });
  const enc = ctx.device.createCommandEncoder();
  for (let r = 0; r < reps + 3; r++) {
    const timed = r >= 3;
    const pass = enc.beginComputePass(timed ? { timestampWrites: { querySet: qs, beginningOfPassWriteIndex: 2 * (r - 3), endOfPassWriteIndex: 2 * (r - 3) + 1 } } : {});
    pass.setPipeline(pipeline);
    pass.setBindGroup(0, bg);
    pass.dispatchWorkgroups(gx, gy);
    pass.end();
  }
  enc.resolveQuerySet(qs, 0, 2 * reps, resolve, 0);
  ctx.device.queue.submit([enc.finish()]);
  const st = ctx.device.createBuffer({ size: 16 * reps, usage: 0x01 | 0x08 });
  const e2 = ctx.device.createCommandEncoder();
  e2.copyBufferToBuffer(resolve, 0, st, 0, 16 * reps);
  ctx.device.queue.submit([e2.finish()]);
  await st.mapAsync(1);
  const t = new BigUint64Array(st.getMappedRange().slice(0));
  st.unmap();
  const ms = Array.from({ length: reps }, (_, r) => Number(t[2 * r + 1]! - t[2 * r]!) / 1e6).sort((a, b) => a - b);
  qs.destroy();
  resolve.destroy();
  st.destroy();
  return ms[ms.length >> 1]!;
}

const ctx = await createGpuContext({ unsafe: argv.includes('--unsafe') });
console.log(ctx.describeText().split('\n')[0], argv.includes('--unsafe') ? '(robustness off)' : '');
const rows: Record<string, unknown>[] = [];
for (const n of sizes) {
  const host = Array.from({ length: 8 }, (_, j) => Float32Array.from({ length: n }, (_, i) => ((i * 7 + j * 13) % 17) / 16 - 0.5));
  const bufs = host.map((h) => buffer(ctx, h));
  const partial = buffer(ctx, Math.ceil(n / 4));
  const ubuf = ctx.device.createBuffer({ size: 16, usage: 0x40 | 0x08 });
  const uni = new ArrayBuffer(16);
  new Uint32Array(uni)[0] = n;
  new Float32Array(uni)[1] = 0.5;
  new Float32Array(uni)[2] = 0.25;
  ctx.device.queue.writeBuffer(ubuf, 0, uni);
  for (const v of variants()) {
    const module = ctx.device.createShaderModule({ code: v.wgsl(v.wg) });
    const pipeline = ctx.device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'main' } });
    const nb = v.op === 'axpby' ? 2 : v.op === 'dot1' ? 3 : 7;
    const bind = (y: GPUBuffer) => {
      const entries: GPUBindGroupEntry[] = [{ binding: 0, resource: { buffer: ubuf } }];
      if (v.op === 'axpby') entries.push({ binding: 1, resource: { buffer: bufs[0]! } }, { binding: 2, resource: { buffer: y } });
      else if (v.op === 'dot1') entries.push({ binding: 1, resource: { buffer: bufs[0]! } }, { binding: 2, resource: { buffer: bufs[1]! } }, { binding: 3, resource: { buffer: partial } });
      else for (let j = 0; j < 7; j++) entries.push({ binding: j + 1, resource: { buffer: j < 6 ? bufs[j]! : y } });
      return ctx.device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries });
    };
    const groups = v.groups(n, v.wg);
    const gx = Math.min(groups, 65535);
    const gy = Math.ceil(groups / gx);
    // correctness on a fresh output
    const y0 = buffer(ctx, host[7]!);
    {
      const enc = ctx.device.createCommandEncoder();
      const pass = enc.beginComputePass();
      pass.setPipeline(pipeline);
      pass.setBindGroup(0, bind(y0));
      pass.dispatchWorkgroups(gx, gy);
      pass.end();
      ctx.device.queue.submit([enc.finish()]);
    }
    let maxErr = 0;
    if (v.op === 'dot1') {
      const p = await read(ctx, partial, groups);
      let s = 0;
      for (let g = 0; g < groups; g++) s += p[g]!;
      let want = 0;
      for (let i = 0; i < n; i++) want += host[0]![i]! * host[1]![i]!;
      maxErr = Math.abs(s - want) / n;
    } else {
      const got = await read(ctx, y0, n);
      for (let i = 0; i < n; i += 97) {
        const want = v.op === 'axpby' ? 0.5 * host[0]![i]! + 0.25 * host[7]![i]! : 0.25 * host[7]![i]! + 0.5 * (host[0]![i]! + host[1]![i]! + host[2]![i]! + host[3]![i]! + host[4]![i]! + host[5]![i]!);
        maxErr = Math.max(maxErr, Math.abs(got[i]! - want));
      }
    }
    y0.destroy();
    // timing: reps passes, one dispatch each, timestamps around each pass
    const yb = buffer(ctx, host[7]!);
    const med = await timePasses(ctx, pipeline, bind(yb), gx, gy, reps);
    const vectors = v.op === 'axpby' ? 3 : v.op === 'dot1' ? 2 : 8;
    const gbs = (vectors * 4 * n) / med / 1e6;
    rows.push({ n, variant: v.name, op: v.op, groups, ms: med, gbs, maxErr, bindings: nb });
    console.log(`n=${n} ${v.name.padEnd(34)} ${med.toFixed(4)} ms ${gbs.toFixed(0).padStart(6)} GB/s (groups ${groups}, err ${maxErr.toExponential(1)})`);
    yb.destroy();
  }
  // the library's own path on the same sizes: GpuVectorSpace ops timed by timeGpu (recorder,
  // uniform arena with dynamic offsets, scalar operands), and the library's axpby WGSL run through
  // this file's plain harness (static uniform), to separate kernel text from dispatch path
  {
    const space = new GpuVectorSpace(ctx);
    const lx = space.fromArray(host[0]!);
    const ly = space.fromArray(host[7]!);
    const six = host.slice(1, 7).map((h) => space.fromArray(h));
    const lib: [string, () => void, number][] = [
      ['lib-axpby', () => space.axpby(0.5, lx, 0.25, ly), 3],
      ['lib-dot', () => space.release(space.dot(lx, ly)), 2],
      ['lib-combine6', () => space.combine([0.5, 0.5, 0.5, 0.5, 0.5, 0.5], six, 0.25, ly), 8],
      ['lib-multiDot6', () => { for (const d of space.multiDot(six, ly)) space.release(d); }, 7],
    ];
    for (const [name, encode, vectors] of lib) {
      const t = await timeGpu(ctx, encode, { reps });
      const gbs = (vectors * 4 * n) / t.medianMs / 1e6;
      rows.push({ n, variant: name, ms: t.medianMs, gbs, method: t.method });
      console.log(`n=${n} ${name.padEnd(34)} ${t.medianMs.toFixed(4)} ms ${gbs.toFixed(0).padStart(6)} GB/s (${t.method})`);
    }
    for (const v of [lx, ly, ...six]) space.release(v);
    // library axpby text, plain harness: uniform = n, a = (num −1, den −1, k 0.5), b likewise 0.25
    const code = elementwiseWgsl('axpby');
    const module = ctx.device.createShaderModule({ code });
    const pipeline = ctx.device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'main' } });
    const u = new ArrayBuffer(32);
    const ui = new Int32Array(u);
    const uf = new Float32Array(u);
    ui[0] = n;
    ui[1] = -1;
    ui[2] = -1;
    uf[3] = 0.5;
    ui[4] = -1;
    ui[5] = -1;
    uf[6] = 0.25;
    const ub = ctx.device.createBuffer({ size: 32, usage: 0x40 | 0x08 });
    ctx.device.queue.writeBuffer(ub, 0, u);
    const sc = buffer(ctx, 16);
    const yb = buffer(ctx, host[7]!);
    const bg = ctx.device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries: [{ binding: 0, resource: { buffer: ub } }, { binding: 1, resource: { buffer: sc } }, { binding: 2, resource: { buffer: bufs[0]! } }, { binding: 3, resource: { buffer: yb } }] });
    const groups = Math.ceil(n / 256);
    const med = await timePasses(ctx, pipeline, bg, Math.min(groups, 65535), Math.ceil(groups / 65535), reps);
    const gbs = (3 * 4 * n) / med / 1e6;
    rows.push({ n, variant: 'libwgsl-axpby-plain-harness', ms: med, gbs });
    console.log(`n=${n} ${'libwgsl-axpby-plain-harness'.padEnd(34)} ${med.toFixed(4)} ms ${gbs.toFixed(0).padStart(6)} GB/s`);
    ub.destroy();
    sc.destroy();
    yb.destroy();
  }
  for (const b of bufs) b.destroy();
  partial.destroy();
  ubuf.destroy();
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, JSON.stringify({ date: new Date().toISOString(), device: ctx.describe(), unsafe: argv.includes('--unsafe'), rows }, null, 1));
}
ctx.dispose();
