/**
 * WebGPU call counting and per-kernel GPU time for the profiling benches (bench/cg-profile.ts,
 * bench/eig-profile.ts): {@link instrument} wraps the device's calls, {@link KernelClock} puts
 * every dispatch in its own timestamped pass.
 */
import { appendFileSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { GpuContext } from '../packages/gpu/src/index';

/** WebGPU calls counted by {@link instrument}. */
export const COUNTERS = ['submit', 'encoder', 'computePass', 'dispatch', 'writeBuffer', 'writeBytes', 'mapAsync', 'bindGroup', 'buffer', 'pipeline', 'shaderModule', 'copyB2B'] as const;
export type Counts = Record<(typeof COUNTERS)[number], number>;
export const counts: Counts = Object.fromEntries(COUNTERS.map((k) => [k, 0])) as Counts;
export const snapshot = (): Counts => ({ ...counts });
export const diff = (a: Counts, b: Counts): Counts => Object.fromEntries(COUNTERS.map((k) => [k, b[k] - a[k]])) as Counts;

/** Wrap `obj[name]` so that each call bumps `counts[key]` first (and `after` sees the result). */
function wrap<T extends object>(obj: T, name: string, key: keyof Counts, after?: (res: unknown, args: unknown[]) => void): void {
  const o = obj as Record<string, unknown>;
  const f = o[name] as (...a: unknown[]) => unknown;
  o[name] = function (this: unknown, ...args: unknown[]) {
    counts[key]++;
    const res = f.apply(this, args);
    after?.(res, args);
    return res;
  };
}

/** Count the device's calls: every encoder, pass, buffer and queue call made after this. */
export function instrument(ctx: GpuContext): void {
  const d = ctx.device;
  wrap(d, 'createBindGroup', 'bindGroup');
  wrap(d, 'createComputePipeline', 'pipeline');
  wrap(d, 'createShaderModule', 'shaderModule');
  wrap(d, 'createBuffer', 'buffer', (buf) => wrap(buf as object, 'mapAsync', 'mapAsync'));
  wrap(d.queue, 'submit', 'submit');
  wrap(d.queue, 'writeBuffer', 'writeBuffer', (_, args) => {
    const data = args[2] as ArrayBufferView | ArrayBuffer;
    counts.writeBytes += (args[4] as number | undefined) ?? data.byteLength;
  });
  wrap(d, 'createCommandEncoder', 'encoder', (enc) => {
    wrap(enc as object, 'copyBufferToBuffer', 'copyB2B');
    wrap(enc as object, 'beginComputePass', 'computePass', (pass) => wrap(pass as object, 'dispatchWorkgroups', 'dispatch'));
  });
}

/** Host time split of one measured region ({@link timeMethods}). */
export interface Split {
  recordMs: number;
  waitMs: number;
  calls: number;
}

/** Nesting depth of the timed calls (only the outermost is timed). */
const timedDepth = { d: 0 };

/**
 * Time `obj`'s methods (own and prototype, except the constructor and `skip`) at nesting depth
 * 0 across every object timed so: sync calls add to `split.recordMs` (the recording: argument
 * set-up, the recorder, Dawn's encoding and submits), calls returning a promise to
 * `split.waitMs` until they settle (readbacks, finish).
 */
export function timeMethods(obj: object, split: Split, skip: readonly string[] = []): void {
  const names = new Set<string>();
  for (let p = obj; p && p !== Object.prototype; p = Object.getPrototypeOf(p)) for (const k of Object.getOwnPropertyNames(p)) names.add(k);
  const o = obj as Record<string, unknown>;
  for (const k of names) {
    if (k === 'constructor' || skip.includes(k)) continue;
    let desc: PropertyDescriptor | undefined;
    for (let p = obj; p && !desc; p = Object.getPrototypeOf(p)) desc = Object.getOwnPropertyDescriptor(p, k);
    if (!desc || typeof desc.value !== 'function') continue;
    const f = desc.value as (...a: unknown[]) => unknown;
    o[k] = function (this: unknown, ...args: unknown[]) {
      if (timedDepth.d > 0) return f.apply(this, args);
      timedDepth.d++;
      const t0 = performance.now();
      let res: unknown;
      try {
        res = f.apply(this, args);
      } finally {
        timedDepth.d--;
      }
      if (res instanceof Promise) return res.finally(() => { split.waitMs += performance.now() - t0; });
      split.recordMs += performance.now() - t0;
      split.calls++;
      return res;
    };
  }
}

/** GPU time per pipeline label: every dispatch in its own pass with a timestamp pair. */
export class KernelClock {
  private readonly qs: GPUQuerySet;
  private labels: string[] = [];
  private readonly pending: Promise<void>[] = [];
  readonly ms = new Map<string, { n: number; ms: number }>();
  private on = false;

  constructor(private readonly ctx: GpuContext) {
    this.qs = ctx.device.createQuerySet({ type: 'timestamp', count: 2 * KernelClock.PER_BATCH });
    const rec = ctx.recorder;
    const dispatch = rec.dispatch.bind(rec);
    const flush = rec.flush.bind(rec);
    rec.dispatch = (pipe, refs, uni, groups) => {
      if (!this.on || groups <= 0) return dispatch(pipe, refs, uni, groups);
      if (this.labels.length >= KernelClock.PER_BATCH) rec.flush();
      const i = this.labels.length;
      this.labels.push(pipe.label);
      rec.computePass({ timestampWrites: { querySet: this.qs, beginningOfPassWriteIndex: 2 * i, endOfPassWriteIndex: 2 * i + 1 } });
      dispatch(pipe, refs, uni, groups);
      rec.endPass();
    };
    rec.flush = () => {
      if (this.labels.length > 0 && rec.pending) this.resolve();
      flush();
    };
  }

  /** Dispatches per batch (the query set holds two timestamps each; the arena holds 1024 blocks). */
  static readonly PER_BATCH = 512;

  start(): void {
    this.on = true;
  }

  async stop(): Promise<void> {
    this.ctx.recorder.flush();
    this.on = false;
    await Promise.all(this.pending);
  }

  private resolve(): void {
    const labels = this.labels;
    this.labels = [];
    const bytes = 16 * labels.length;
    const d = this.ctx.device;
    const resolveBuf = d.createBuffer({ size: bytes, usage: GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC });
    const readBuf = d.createBuffer({ size: bytes, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
    const enc = this.ctx.recorder.commandEncoder();
    enc.resolveQuerySet(this.qs, 0, 2 * labels.length, resolveBuf, 0);
    enc.copyBufferToBuffer(resolveBuf, 0, readBuf, 0, bytes);
    // mapAsync only after the submit (the flush that follows): queue it behind a microtask
    this.pending.push(
      Promise.resolve().then(async () => {
        await readBuf.mapAsync(GPUMapMode.READ);
        const t = new BigUint64Array(readBuf.getMappedRange().slice(0));
        readBuf.unmap();
        readBuf.destroy();
        resolveBuf.destroy();
        labels.forEach((l, i) => {
          const e = this.ms.get(l) ?? { n: 0, ms: 0 };
          e.n++;
          e.ms += Number(t[2 * i + 1]! - t[2 * i]!) / 1e6;
          this.ms.set(l, e);
        });
      }),
    );
  }
}


/** The clock's totals as rows, slowest kernel first (per-iteration counts over `iterations`). */
export function kernelRows(clock: KernelClock, iterations: number): { label: string; dispatches: number; gpuMs: number; perIteration: number; meanUs: number }[] {
  return [...clock.ms.entries()]
    .map(([label, e]) => ({ label, dispatches: e.n, gpuMs: Number(e.ms.toFixed(3)), perIteration: Number((e.n / iterations).toFixed(2)), meanUs: Number(((1000 * e.ms) / e.n).toFixed(1)) }))
    .sort((x, y) => y.gpuMs - x.gpuMs);
}

/** Append `rec` as one JSON line to `out` (directories made) and print it. */
export function writeRecord(out: string, rec: object): void {
  mkdirSync(dirname(out), { recursive: true });
  appendFileSync(out, `${JSON.stringify(rec)}\n`);
  console.log(JSON.stringify(rec, null, 1));
}
