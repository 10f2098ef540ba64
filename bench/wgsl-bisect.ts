/**
 * Which part of the library's element-kernel text costs bandwidth: the library's axpby WGSL and
 * step-by-step simplifications of it (no scalar-operand binding, no β = 0 branch, no early
 * return), and the library's dot stage 1 next to a copy without the workgroup-count check, all
 * in one plain harness (static uniform, whole-buffer bindings, timestamps per pass).
 *
 *   node .gpukit/app/wgsl-bisect.mjs [--sizes 4000000,16000000] [--reps 50]
 */
import { dotStage1Wgsl, elementwiseWgsl } from '../packages/gpu/src/blas1/shaders';
import { createGpuContext } from '../packages/gpu/src/index';

const argv = process.argv.slice(2);
const opt = (n: string) => (argv.includes(n) ? argv[argv.indexOf(n) + 1] : undefined);
const sizes = (opt('--sizes') ?? '4000000,16000000').split(',').map(Number);
const reps = Number(opt('--reps') ?? 50);
const ctx = await createGpuContext();
console.log(ctx.describeText().split('\n')[0]);

const head = (sc: boolean) => `struct U {
  n: u32,
  a_num: i32,
  a_den: i32,
  a_k: f32,
  b_num: i32,
  b_den: i32,
  b_k: f32,
}
@group(0) @binding(0) var<uniform> u: U;
${sc ? '@group(0) @binding(1) var<storage, read> sc: array<f32>;\n' : ''}@group(0) @binding(${sc ? 2 : 1}) var<storage, read> x: array<f32>;
@group(0) @binding(${sc ? 3 : 2}) var<storage, read_write> y: array<f32>;
`;
const sig = '@compute @workgroup_size(256)\nfn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {\n  let i = (wid.x + wid.y * nwg.x) * 256u + lid;\n';
const texts: [string, string, boolean][] = [
  ['T0 library axpby', elementwiseWgsl('axpby'), true],
  ['T1 operand from sc, no branch', `${head(true)}fn operand(num: i32, den: i32, k: f32) -> f32 {\n  var v = k;\n  if (num >= 0) { v = v * sc[num]; }\n  if (den >= 0) { v = v / sc[den]; }\n  return v;\n}\n${sig}  if (i >= u.n) { return; }\n  let a = operand(u.a_num, u.a_den, u.a_k);\n  let b = operand(u.b_num, u.b_den, u.b_k);\n  y[i] = a * x[i] + b * y[i];\n}`, true],
  ['T2 uniform k only, branch', `${head(false)}${sig}  if (i >= u.n) { return; }\n  let a = u.a_k;\n  let b = u.b_k;\n  if (b == 0.0) { y[i] = a * x[i]; } else { y[i] = a * x[i] + b * y[i]; }\n}`, false],
  ['T3 uniform k only, no branch', `${head(false)}${sig}  if (i >= u.n) { return; }\n  y[i] = u.a_k * x[i] + u.b_k * y[i];\n}`, false],
  ['T4 T3 with if-block', `${head(false)}${sig}  if (i < u.n) { y[i] = u.a_k * x[i] + u.b_k * y[i]; }\n}`, false],
  ['T5 operand, loads hoisted before bound', `${head(true)}fn operand(num: i32, den: i32, k: f32) -> f32 {\n  var v = k;\n  if (num >= 0) { v = v * sc[num]; }\n  if (den >= 0) { v = v / sc[den]; }\n  return v;\n}\n${sig}  let a = operand(u.a_num, u.a_den, u.a_k);\n  let b = operand(u.b_num, u.b_den, u.b_k);\n  if (i < u.n) { y[i] = a * x[i] + b * y[i]; }\n}`, true],
];

for (const n of sizes) {
  const mk = (fill: number) => {
    const b = ctx.device.createBuffer({ size: n * 4, usage: 0x80 | 0x08 | 0x04 });
    ctx.device.queue.writeBuffer(b, 0, new Float32Array(n).fill(fill));
    return b;
  };
  const x = mk(1);
  const y = mk(2);
  const sc = ctx.device.createBuffer({ size: 64, usage: 0x80 | 0x08 });
  const ub = ctx.device.createBuffer({ size: 32, usage: 0x40 | 0x08 });
  const u = new ArrayBuffer(32);
  new Int32Array(u).set([n, -1, -1, 0, -1, -1, 0]);
  new Float32Array(u)[3] = 0.5;
  new Float32Array(u)[6] = 0.25;
  ctx.device.queue.writeBuffer(ub, 0, u);
  const all: [string, string, (p: GPUComputePipeline) => GPUBindGroupEntry[], number, number][] = texts.map(([name, code, hasSc]) => [name, code, () => [{ binding: 0, resource: { buffer: ub } }, ...(hasSc ? [{ binding: 1, resource: { buffer: sc } }] : []), { binding: hasSc ? 2 : 1, resource: { buffer: x } }, { binding: hasSc ? 3 : 2, resource: { buffer: y } }], Math.ceil(n / 256), 3]);
  // dot stage 1: library text and a copy without the workgroup-count check
  const part = ctx.device.createBuffer({ size: Math.ceil(n / 2048) * 4 + 16, usage: 0x80 | 0x04 });
  const du = ctx.device.createBuffer({ size: 16, usage: 0x40 | 0x08 });
  ctx.device.queue.writeBuffer(du, 0, new Uint32Array([n, Math.ceil(n / 2048), 0, 0]));
  const dotEntries = () => [{ binding: 0, resource: { buffer: du } }, { binding: 1, resource: { buffer: x } }, { binding: 2, resource: { buffer: y } }, { binding: 3, resource: { buffer: part } }];
  all.push(['D0 library dot stage 1', dotStage1Wgsl(), dotEntries, Math.ceil(n / 2048), 2]);
  all.push(['D1 without the groups check', dotStage1Wgsl().replace('if (g >= u.groups) { return; } // whole workgroup exits together: uniform', ''), dotEntries, Math.ceil(n / 2048), 2]);
  for (const [name, code, entries, groups, vectors] of all) {
    const pipeline = ctx.device.createComputePipeline({ layout: 'auto', compute: { module: ctx.device.createShaderModule({ code }), entryPoint: 'main' } });
    const bg = ctx.device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries: entries(pipeline) });
    const qs = ctx.device.createQuerySet({ type: 'timestamp', count: 2 * reps });
    const resolve = ctx.device.createBuffer({ size: 16 * reps, usage: 0x200 | 0x04 });
    const st = ctx.device.createBuffer({ size: 16 * reps, usage: 0x01 | 0x08 });
    const enc = ctx.device.createCommandEncoder();
    for (let r = 0; r < reps + 3; r++) {
      const pass = enc.beginComputePass(r >= 3 ? { timestampWrites: { querySet: qs, beginningOfPassWriteIndex: 2 * (r - 3), endOfPassWriteIndex: 2 * (r - 3) + 1 } } : {});
      pass.setPipeline(pipeline);
      pass.setBindGroup(0, bg);
      pass.dispatchWorkgroups(Math.min(groups, 65535), Math.ceil(groups / 65535));
      pass.end();
    }
    enc.resolveQuerySet(qs, 0, 2 * reps, resolve, 0);
    enc.copyBufferToBuffer(resolve, 0, st, 0, 16 * reps);
    ctx.device.queue.submit([enc.finish()]);
    await st.mapAsync(1);
    const t = new BigUint64Array(st.getMappedRange().slice(0));
    const ms = Array.from({ length: reps }, (_, r) => Number(t[2 * r + 1]! - t[2 * r]!) / 1e6).sort((a, b) => a - b);
    st.unmap();
    const med = ms[ms.length >> 1]!;
    console.log(`n=${n} ${name.padEnd(40)} ${med.toFixed(4)} ms ${((vectors * 4 * n) / med / 1e6).toFixed(0).padStart(6)} GB/s`);
    qs.destroy();
    resolve.destroy();
    st.destroy();
  }
  for (const b of [x, y, sc, ub, part, du]) b.destroy();
}
ctx.dispose();
