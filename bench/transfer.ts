/**
 * Host ↔ device transfer throughput through Dawn from Node (issue 15): GB/s per method and size,
 * so that the library's upload (memory/upload.ts) and readback (memory/readback.ts) use the
 * fastest path measured. On the H100 a 14 MB upload of b took 20 ms (0.7 GB/s) and the read of
 * x 15.6 ms; the tuner's uploads of a full-size 3-D stencil 1.66 s.
 *
 * Uploads (Float32Array on the host → a STORAGE | COPY_DST buffer, timed to the GPU's
 * completion, `queue.onSubmittedWorkDone`):
 * - `write`: one `queue.writeBuffer` of the whole array (what writeData does);
 * - `write-chunk-N`: writeBuffer in chunks of N MiB;
 * - `staging-new`: a MAP_WRITE | COPY_SRC buffer created mapped, filled, unmapped, copied with
 *   copyBufferToBuffer, destroyed;
 * - `staging-reuse-N`: one N MiB staging buffer mapped again (mapAsync WRITE) for every chunk;
 * - `mapped-direct`: the destination itself created mappedAtCreation (only for a new buffer).
 * Host conversions of a Float64Array to float32 (`conv-from`: Float32Array.from, `conv-new`:
 * new Float32Array(f64), `conv-set`: set into a preallocated one), and back (`conv64-from`,
 * `conv64-new`).
 * Readbacks (device → a Float32Array on the host, from the copy command to the host copy):
 * - `read-slice`: copy into one MAP_READ staging buffer, mapAsync, getMappedRange + slice (what
 *   readRanges does);
 * - `read-chunk-N`: one N MiB staging buffer mapped per chunk, each chunk copied into the result.
 * The library's own paths end to end: `lib-upload-f64` (uploadF32 of a Float64Array: conversion
 * + writeData with its default method, `auto`; on the ring the float64 values are converted
 * straight into the mapped staging memory), `lib-upload-f64-write|ring|chunks|staging` (the
 * same with each of uploadTuning's methods), `lib-read-f64` (readF32: readback + conversion to
 * a Float64Array, readTuning `auto`) and `lib-read-f64-single|pieces` (readTuning's methods:
 * one staging buffer, or pipelined pieces through two).
 *
 *   node .gpukit/app/transfer.mjs [--sizes 1,16,64,256,1024] [--reps 3] [--methods …]
 *     [--read-piece-mib 16 (readTuning.pieceBytes)] [--out $OUT/transfer.json]
 *
 * Prints one line per (method, size): min and median ms of the reps and GB/s at the min; also
 * appends JSON records to --out.
 */
import { createGpuContext, type GpuBuf, readF32, readTuning, uploadF32, uploadTuning } from '../packages/gpu/src/index';
import { appendFileSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';

const argv = process.argv.slice(2);
const opt = (n: string) => (argv.includes(n) ? argv[argv.indexOf(n) + 1] : undefined);
const out = opt('--out') ?? 'bench/out/transfer.json';
const sizesMiB = (opt('--sizes') ?? '1,16,64').split(',').map(Number);
const reps = Number(opt('--reps') ?? 3);
if (opt('--read-piece-mib')) readTuning.pieceBytes = Number(opt('--read-piece-mib')) * 2 ** 20;
const ALL = ['lib-upload-f64', 'lib-upload-f64-write', 'lib-upload-f64-ring', 'lib-upload-f64-chunks', 'lib-upload-f64-staging', 'lib-read-f64', 'lib-read-f64-single', 'lib-read-f64-pieces', 'write', 'write-chunk-4', 'write-chunk-16', 'write-chunk-64', 'staging-new', 'staging-reuse-16', 'staging-reuse-64', 'mapped-direct', 'conv-from', 'conv-new', 'conv-set', 'conv64-from', 'conv64-new', 'read-slice', 'read-chunk-16', 'read-chunk-64'];
const methods = (opt('--methods') ?? ALL.join(',')).split(',');

mkdirSync(dirname(out), { recursive: true });
const ctx = await createGpuContext();
const device = ctx.device;
const adapter = ctx.describeText().split('\n')[0];
const MiB = 2 ** 20;
const STORAGE = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST | GPUBufferUsage.COPY_SRC;

/** Wait for the GPU to finish everything submitted. */
const done = () => device.queue.onSubmittedWorkDone();

/** Upload `data` into `dst` by `method`; resolves when the GPU has the data. */
async function upload(method: string, data: Float32Array, dst: GPUBuffer): Promise<void> {
  const bytes = data.byteLength;
  if (method === 'write') device.queue.writeBuffer(dst, 0, data.buffer, data.byteOffset, bytes);
  else if (method.startsWith('write-chunk-')) {
    const chunk = Number(method.split('-')[2]) * MiB;
    for (let at = 0; at < bytes; at += chunk) device.queue.writeBuffer(dst, at, data.buffer, data.byteOffset + at, Math.min(chunk, bytes - at));
  } else if (method === 'staging-new') {
    const st = device.createBuffer({ size: bytes, usage: GPUBufferUsage.MAP_WRITE | GPUBufferUsage.COPY_SRC, mappedAtCreation: true });
    new Float32Array(st.getMappedRange()).set(data);
    st.unmap();
    const enc = device.createCommandEncoder();
    enc.copyBufferToBuffer(st, 0, dst, 0, bytes);
    device.queue.submit([enc.finish()]);
    await done();
    st.destroy();
    return;
  } else if (method.startsWith('staging-reuse-')) {
    const chunk = Math.min(bytes, Number(method.split('-')[2]) * MiB);
    const st = stagingFor(chunk);
    for (let at = 0; at < bytes; at += chunk) {
      const len = Math.min(chunk, bytes - at);
      await st.mapAsync(GPUMapMode.WRITE, 0, len);
      new Uint8Array(st.getMappedRange(0, len)).set(new Uint8Array(data.buffer, data.byteOffset + at, len));
      st.unmap();
      const enc = device.createCommandEncoder();
      enc.copyBufferToBuffer(st, 0, dst, at, len);
      device.queue.submit([enc.finish()]);
    }
  }
  await done();
}

const stagings = new Map<number, GPUBuffer>();
/** A reusable MAP_WRITE staging buffer of `bytes` (made once per size). */
function stagingFor(bytes: number): GPUBuffer {
  let st = stagings.get(bytes);
  if (!st) stagings.set(bytes, (st = device.createBuffer({ size: bytes, usage: GPUBufferUsage.MAP_WRITE | GPUBufferUsage.COPY_SRC })));
  return st;
}

/** Read `bytes` of `src` into a new Float32Array by `method`. */
async function readback(method: string, src: GPUBuffer, bytes: number): Promise<Float32Array> {
  if (method === 'read-slice') {
    const st = device.createBuffer({ size: bytes, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
    const enc = device.createCommandEncoder();
    enc.copyBufferToBuffer(src, 0, st, 0, bytes);
    device.queue.submit([enc.finish()]);
    await st.mapAsync(GPUMapMode.READ, 0, bytes);
    const r = new Float32Array(st.getMappedRange(0, bytes).slice(0));
    st.unmap();
    st.destroy();
    return r;
  }
  const chunk = Math.min(bytes, Number(method.split('-')[2]) * MiB);
  const st = device.createBuffer({ size: chunk, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  const res = new Float32Array(bytes / 4);
  const view = new Uint8Array(res.buffer);
  for (let at = 0; at < bytes; at += chunk) {
    const len = Math.min(chunk, bytes - at);
    const enc = device.createCommandEncoder();
    enc.copyBufferToBuffer(src, at, st, 0, len);
    device.queue.submit([enc.finish()]);
    await st.mapAsync(GPUMapMode.READ, 0, len);
    view.set(new Uint8Array(st.getMappedRange(0, len)), at);
    st.unmap();
  }
  st.destroy();
  return res;
}

/** Time `f` reps times (after one warm-up): min and median ms. */
async function time(f: () => Promise<unknown> | unknown): Promise<{ min: number; median: number }> {
  await f();
  const ts: number[] = [];
  for (let r = 0; r < reps; r++) {
    const t0 = performance.now();
    await f();
    ts.push(performance.now() - t0);
  }
  ts.sort((a, b) => a - b);
  return { min: ts[0]!, median: ts[Math.floor(ts.length / 2)]! };
}

for (const mib of sizesMiB) {
  const bytes = Math.round(mib * MiB / 4) * 4;
  const n = bytes / 4;
  const host = new Float32Array(n);
  for (let i = 0; i < n; i++) host[i] = i % 1021;
  const f64 = new Float64Array(host);
  const dst = device.createBuffer({ size: bytes, usage: STORAGE });
  for (const method of methods) {
    let t: { min: number; median: number };
    let ok = true;
    if (method.startsWith('lib-upload-f64')) {
      const saved = uploadTuning.method;
      const variant = method.slice('lib-upload-f64-'.length);
      uploadTuning.method = variant === 'chunks' || variant === 'staging' || variant === 'ring' || variant === 'write' ? variant : saved;
      let last: GpuBuf | undefined;
      t = await time(async () => {
        last?.dispose();
        last = uploadF32(ctx, f64, 'transfer-bench');
        await ctx.finish();
      });
      const back = await readF32(ctx, last!, n);
      ok = back[n - 1] === host[n - 1] && back[n >> 1] === host[n >> 1];
      last!.dispose();
      uploadTuning.method = saved;
    } else if (method.startsWith('lib-read-f64')) {
      const savedRead = readTuning.method;
      const variant = method.slice('lib-read-f64-'.length);
      readTuning.method = variant === 'single' || variant === 'pieces' ? variant : savedRead;
      const b = uploadF32(ctx, host, 'transfer-bench');
      let back: Float64Array | undefined;
      t = await time(async () => {
        back = await readF32(ctx, b, n);
      });
      ok = back![n - 1] === host[n - 1] && back![n >> 1] === host[n >> 1];
      b.dispose();
      readTuning.method = savedRead;
    } else if (method.startsWith('conv')) {
      const f = {
        'conv-from': () => Float32Array.from(f64),
        'conv-new': () => new Float32Array(f64),
        'conv-set': () => new Float32Array(n).set(f64),
        'conv64-from': () => Float64Array.from(host),
        'conv64-new': () => new Float64Array(host),
      }[method];
      if (!f) continue;
      t = await time(f);
    } else if (method === 'mapped-direct') {
      t = await time(async () => {
        const b = device.createBuffer({ size: bytes, usage: STORAGE, mappedAtCreation: true });
        new Float32Array(b.getMappedRange()).set(host);
        b.unmap();
        await done();
        b.destroy();
      });
    } else if (method.startsWith('read-')) {
      device.queue.writeBuffer(dst, 0, host);
      await done();
      let last: Float32Array | undefined;
      t = await time(async () => {
        last = await readback(method, dst, bytes);
      });
      ok = last!.length === n && last![n - 1] === host[n - 1] && last![n >> 1] === host[n >> 1];
    } else {
      t = await time(() => upload(method, host, dst));
      const back = await readback('read-chunk-64', dst, bytes);
      ok = back[n - 1] === host[n - 1] && back[n >> 1] === host[n >> 1] && back[1] === host[1];
    }
    const gbs = bytes / (t.min * 1e6);
    console.log(`transfer ${method} ${mib} MiB: min ${t.min.toFixed(2)} ms, median ${t.median.toFixed(2)} ms, ${gbs.toFixed(2)} GB/s${ok ? '' : ' WRONG DATA'}`);
    appendFileSync(out, `${JSON.stringify({ case: 'transfer', device: adapter, method, mib, bytes, minMs: Number(t.min.toFixed(3)), medianMs: Number(t.median.toFixed(3)), gbPerS: Number(gbs.toFixed(3)), ok })}\n`);
  }
  dst.destroy();
}
for (const st of stagings.values()) st.destroy();
ctx.dispose();
