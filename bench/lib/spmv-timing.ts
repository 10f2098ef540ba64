/**
 * What bench/spmv.ts and bench/spmv-dia-probe.ts share to time a memory-bound kernel on a GPU
 * whose SM clock idles between bursts: the heat (untimed work until the clock is up) and the
 * vec4 WGSL copy that gives the bandwidth reference.
 */
import { entryArgs, type GpuBuf, type GpuContext, preamble, signature, timeGpu, Uniforms } from '@gpusparse/gpu';
import { clockIsLow } from '../spmv-clock';

/** The vec4<f32> WGSL copy kernel (one vec4 per invocation, 256 per workgroup). */
export function copyVec4(ctx: GpuContext) {
  const bindings = [
    { name: 'src', type: 'array<vec4<f32>>', access: 'r' as const },
    { name: 'dst', type: 'array<vec4<f32>>', access: 'w' as const },
  ];
  return ctx.pipelines.get({
    key: 'bench:copy-vec4',
    label: 'bench-copy-vec4',
    bindings: signature(bindings),
    wgsl: () => `${preamble([['n4', 'u32']], bindings)}
@compute @workgroup_size(256)
fn main(${entryArgs()}) {
  let i = wg_linear(wid, nwg) * 256u + lid;
  if (i < u.n4) { dst[i] = src[i]; }
}`,
  });
}

/**
 * Keep the GPU busy with untimed `encode` calls for about `ms` ms of wall time (batches doubling
 * from 4 until one takes ≥ 20 ms, so the host waits rarely), so that the timing after it runs at
 * the SM clock of continuous work, not the idle clock the host's conversion and upload left. With
 * a clock log it goes on (up to 3 s more) while the newest SM clock sample is below 1 500 MHz: on
 * the H100 a 150 ms heat after seconds of host work left some cases at 345–900 MHz (session 11).
 * @example await heat(ctx, () => k.encode(ctx, h, x, y), 150, '/tmp/clocks.csv');
 */
export async function heat(ctx: GpuContext, encode: () => void, ms: number, clockLog?: string): Promise<void> {
  const t0 = performance.now();
  let n = 4;
  const more = () => performance.now() - t0 < ms + 3000 && clockIsLow(clockLog);
  while (performance.now() - t0 < ms || more()) {
    const t1 = performance.now();
    for (let i = 0; i < n; i++) encode();
    await ctx.finish();
    if (performance.now() - t1 < 20 && n < 4096) n *= 2;
  }
}

/** How a copy is timed: heat before it, repetitions, the clock log the heat watches. */
export interface CopyTiming {
  readonly heatMs: number;
  readonly reps: number;
  readonly clockLog?: string;
}

/** Median ms (and the timing) of the vec4 WGSL copy of `n` floats (n a multiple of 4) from a to b: 8·n bytes moved. */
export async function timeCopyVec4(ctx: GpuContext, n: number, a: GpuBuf, b: GpuBuf, t: CopyTiming) {
  const pipe = copyVec4(ctx);
  const u = new Uniforms();
  u.u[0] = n / 4;
  const encode = () => ctx.recorder.dispatch(pipe, [a, b], u, Math.ceil(n / 4 / 256));
  await heat(ctx, encode, t.heatMs, t.clockLog);
  return timeGpu(ctx, encode, { reps: t.reps });
}

/**
 * The vec4 copy of `traffic` bytes (read + written; capped at one binding): the bandwidth a kernel
 * that moves that many bytes can reach at this size, launch and ramp included (at 10^8 bytes these
 * are not negligible next to a 1 GiB copy).
 * @example (await copySameBytes(ctx, 1e8, { heatMs: 150, reps: 30 })).gbs
 */
export async function copySameBytes(ctx: GpuContext, traffic: number, t: CopyTiming): Promise<{ ms: number; gbs: number; moved: number }> {
  const n = Math.max(4, Math.min(Math.floor(ctx.limits.maxStorageBufferBindingSize / 16) * 4, Math.ceil(traffic / 32) * 4));
  const a = ctx.buffers.acquire(n * 4);
  const b = ctx.buffers.acquire(n * 4);
  const r = await timeCopyVec4(ctx, n, a, b, t);
  a.dispose();
  b.dispose();
  // above one binding (10^9 entries) the largest copy that fits, its time scaled to `traffic` at its rate
  return { ms: r.medianMs * Math.max(1, traffic / (8 * n)), gbs: (8 * n) / (r.medianMs * 1e6), moved: 8 * n };
}
