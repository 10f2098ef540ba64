/**
 * The two loop shapes of the multi-column reductions (packages/gpu/src/blas1/loops.ts): `unrolled`
 * (GPUs) and `bounded` (software adapters). For each shape, in a fresh context: the time of the
 * first dispatch of each kernel (compile included — lavapipe compiles at the first dispatch; run
 * with MESA_SHADER_CACHE_DISABLE=true for a cold Mesa cache, as on a fresh CI machine), the
 * outputs of fixed inputs (Lanczos block steps at m = 1, 5, 12, 13, 20, 30 columns; a 14-vector
 * multiDot; a 12-vector combineDots; a GMRES block step; a Lanczos solve on the GPU space), and
 * the process CPU time of those first dispatches (every thread: a fairer figure on a loaded host), and
 * the median wall time of batches of block steps and multiDots (the same run, both shapes: a
 * ratio, not a speed claim). The outputs must agree bit for bit between the shapes.
 *
 *   node .gpukit/app/column-loops.mjs --out $OUT/column-loops.json [--n 20000] [--time-n 1000000] [--reps 7] [--shapes unrolled,bounded]
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { generators } from '../packages/formats/src/index';
import { type ColumnLoops, columnLoopsTuning } from '../packages/gpu/src/blas1/loops';
import { createGpuContext, type GpuContext, GpuVectorSpace, gpuOperatorFromCsr } from '../packages/gpu/src/index';
import { softwareAdapter } from '../packages/gpu/src/device/probe';
import { lanczos } from '../packages/solvers/src/index';

const argv = process.argv.slice(2);
const opt = (n: string) => (argv.includes(n) ? argv[argv.indexOf(n) + 1] : undefined);
const out = opt('--out') ?? 'bench/out/column-loops.json';
const n = Number(opt('--n') ?? 20000);
const timeN = Number(opt('--time-n') ?? n);
const reps = Number(opt('--reps') ?? 7);
const shapes = (opt('--shapes') ?? 'unrolled,bounded').split(',') as ColumnLoops[];

/** Deterministic values in [−1, 1), exact in float32. */
function values(len: number, seed: number): Float32Array {
  const v = new Float32Array(len);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < len; i++) {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    v[i] = (x >>> 8) / 2 ** 23 - 1;
  }
  return v;
}

const bits = (a: ArrayLike<number>) => Array.from(Float32Array.from(a as ArrayLike<number>), (x) => new Uint32Array(new Float32Array([x]).buffer)[0]!);

/** Wall and process CPU milliseconds (all threads: lavapipe compiles and runs on its own) of fn and the wait for it. */
async function timedCpu(ctx: GpuContext, fn: () => void): Promise<{ ms: number; cpuMs: number }> {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  fn();
  await ctx.finish();
  const c = process.cpuUsage(c0);
  return { ms: performance.now() - t0, cpuMs: (c.user + c.system) / 1000 };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** First dispatches (compile included) and outputs of one shape. */
async function outputs(ctx: GpuContext, s: GpuVectorSpace): Promise<{ firstMs: Record<string, { ms: number; cpuMs: number }>; out: Record<string, number[]> }> {
  const firstMs: Record<string, { ms: number; cpuMs: number }> = {};
  const res: Record<string, number[]> = {};
  const basis = Array.from({ length: 31 }, (_, j) => s.fromArray(values(n, 100 + j)));
  const w0 = values(n, 7);
  for (const m of [1, 5, 12, 13, 20, 30]) {
    const block = s.lanczosBlock(n, m + 1, 1)!;
    const w = s.fromArray(w0);
    const next = s.createUninitialized(n);
    const ms = await timedCpu(ctx, () => block.step(basis.slice(0, m), w, next, 0));
    if (m === 1) firstMs['lanczos block step (dots, reduce, combine ×2, normalize)'] = ms;
    const [row] = await block.read([m]);
    res[`lanczos-step-m${m}`] = bits([...row!, ...(await s.toArray(next))]);
    block.dispose();
    s.release(w);
    s.release(next);
  }
  const y = s.fromArray(w0);
  let dots: ReturnType<GpuVectorSpace['multiDot']> = [];
  firstMs['multiDot 14 vectors'] = await timedCpu(ctx, () => {
    dots = s.multiDot(basis.slice(0, 14), y);
  });
  res['multiDot-14'] = bits(await s.readMany(dots));
  const w = s.fromArray(w0);
  let cd: ReturnType<GpuVectorSpace['combineDots']> = [];
  const coeffs = Array.from(values(12, 3));
  firstMs['combineDots 12 vectors'] = await timedCpu(ctx, () => {
    cd = s.combineDots(coeffs, basis.slice(0, 12), -1, w);
  });
  res['combineDots-12'] = bits([...(await s.readMany(cd)), ...(await s.toArray(w))]);
  const gb = s.gmresBlock(n, 14)!;
  const r = s.fromArray(w0);
  const v0 = s.createUninitialized(n);
  const gw = s.fromArray(values(n, 9));
  const v1 = s.createUninitialized(n);
  firstMs['gmres block start + step'] = await timedCpu(ctx, () => {
    gb.start(r, v0);
    gb.step(1, gw, v1, 0);
  });
  const rows = await gb.read([0], true);
  res['gmres-step'] = bits([...rows.steps.flat(), rows.start ?? Number.NaN, ...(await s.toArray(v1))]);
  gb.dispose();
  const a = generators.poisson2d(40);
  const eig = await lanczos(s, gpuOperatorFromCsr(ctx, a), { k: 4, maxBasis: 30, checkMultiplicity: false });
  res['lanczos-solve'] = [...bits(eig.values), eig.iterations];
  return { firstMs, out: res };
}

/** Median wall and CPU ms per operation over `reps` batches: 20 block steps at m = 20, 20 multiDots of 14 vectors, length timeN. */
async function speed(ctx: GpuContext, s: GpuVectorSpace): Promise<Record<string, number>> {
  const basis = Array.from({ length: 21 }, (_, j) => s.fromArray(values(timeN, 200 + j)));
  const block = s.lanczosBlock(timeN, 21, 1)!;
  const w = s.fromArray(values(timeN, 5));
  const next = s.createUninitialized(timeN);
  const runs: Record<string, number[]> = { 'block-step-m20-ms': [], 'block-step-m20-cpu-ms': [], 'multiDot14-ms': [], 'multiDot14-cpu-ms': [] };
  for (let r = 0; r < reps + 1; r++) {
    const a = await timedCpu(ctx, () => {
      for (let t = 0; t < 20; t++) block.step(basis.slice(0, 20), w, next, 0);
    });
    const b = await timedCpu(ctx, () => {
      for (let t = 0; t < 20; t++) for (const x of s.multiDot(basis.slice(0, 14), w)) s.release(x);
    });
    if (r === 0) continue; // the first batch warms up
    runs['block-step-m20-ms']!.push(a.ms / 20);
    runs['block-step-m20-cpu-ms']!.push(a.cpuMs / 20);
    runs['multiDot14-ms']!.push(b.ms / 20);
    runs['multiDot14-cpu-ms']!.push(b.cpuMs / 20);
  }
  block.dispose();
  return Object.fromEntries(Object.entries(runs).map(([k, v]) => [k, median(v)]));
}

const report: Record<string, unknown> = { n, timeN, reps, mesaCacheDisabled: process.env.MESA_SHADER_CACHE_DISABLE ?? null, load: undefined as unknown, shapes: {} };
try {
  report.load = (await import('node:fs')).readFileSync('/proc/loadavg', 'utf8').trim();
} catch {
  report.load = null;
}
const got: Record<string, Record<string, number[]>> = {};
for (const shape of shapes) {
  columnLoopsTuning.force = shape;
  const ctx = await createGpuContext();
  const s = new GpuVectorSpace(ctx);
  const { firstMs, out: o } = await outputs(ctx, s);
  got[shape] = o;
  (report.shapes as Record<string, unknown>)[shape] = { adapter: ctx.adapterInfo, software: softwareAdapter(ctx), firstMs, ...(await speed(ctx, s)), keys: ctx.pipelines.log.map((e) => e.key.split('\n')[0]).filter((k) => /lanczos-(dots|combine)|multidot1|combine-dots/.test(k)) };
  ctx.dispose();
  console.log(shape, JSON.stringify((report.shapes as Record<string, unknown>)[shape]));
}
if (shapes.length === 2) {
  const [a, b] = shapes.map((x) => got[x]!);
  const differ = Object.keys(a!).filter((k) => JSON.stringify(a![k]) !== JSON.stringify(b![k]));
  report.identical = differ.length === 0;
  report.differ = differ;
  console.log(differ.length === 0 ? `bit-identical: ${Object.keys(a!).join(', ')}` : `DIFFER: ${differ.join(', ')}`);
}
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, JSON.stringify(report, null, 1));
