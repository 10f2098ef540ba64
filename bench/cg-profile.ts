/**
 * Where the time of a refined solve goes (issue 15): the WebGPU calls per inner iteration
 * (submits, command encoders, compute passes, dispatches, writeBuffer calls and bytes, mapAsync
 * readbacks, bind-group / buffer / pipeline creations), the host time spent in the refinement
 * phases, and, when the adapter offers `timestamp-query`, the GPU time of every kernel (each
 * dispatch in its own timestamped pass, in a second solve) against the wall time.
 * Counts are device-independent: run it on lavapipe at small sizes, on the H100 at full size.
 *
 *   node .gpukit/app/cg-profile.mjs [--grid 120] [--method cg|gmres] [--mtx FILE] [--rows 1000000]
 *     [--kernel csr-vector --params lanes=4] [--rtol 1e-8] [--no-timestamps] [--out $OUT/cg-profile.json]
 *
 * Without --mtx: --method cg profiles the 27-point stencil of --grid, --method gmres the
 * power-law matrix of --rows (bench/df64-matrices.ts). Without --kernel the operator is tuned.
 */
import { appendFileSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { type CsrMatrix, csrSpmv, type ExtendedPrecisionResidual, type ExtendedRefinement, readMatrixMarket } from '../packages/formats/src/index';
import { createGpuContext, Df64Residual, type GpuContext, type GpuOperator, type GpuVector, GpuVectorSpace, gpuOperatorFromCsr, timeGpu, tunedOperator } from '../packages/gpu/src/index';
import { refinedSolve } from '../packages/solvers/src/index';
import { powerLawDominant, stencil27 } from './df64-matrices';

const argv = process.argv.slice(2);
const opt = (n: string) => (argv.includes(n) ? argv[argv.indexOf(n) + 1] : undefined);
const out = opt('--out') ?? 'bench/out/cg-profile.json';
const method = (opt('--method') ?? 'cg') as 'cg' | 'gmres';
const grid = Number(opt('--grid') ?? 120);
const plRows = Number(opt('--rows') ?? 1_000_000);
const mtx = opt('--mtx');
const kernel = opt('--kernel');
const kernelParams = Object.fromEntries((opt('--params') ?? '').split(',').filter(Boolean).map((kv) => [kv.split('=')[0]!, Number(kv.split('=')[1])]));
const rtol = Number(opt('--rtol') ?? 1e-8);
const wantTimestamps = !argv.includes('--no-timestamps');

/** WebGPU calls counted by {@link instrument}. */
const COUNTERS = ['submit', 'encoder', 'computePass', 'dispatch', 'writeBuffer', 'writeBytes', 'mapAsync', 'bindGroup', 'buffer', 'pipeline', 'shaderModule', 'copyB2B'] as const;
type Counts = Record<(typeof COUNTERS)[number], number>;
const counts: Counts = Object.fromEntries(COUNTERS.map((k) => [k, 0])) as Counts;
const snapshot = (): Counts => ({ ...counts });
const diff = (a: Counts, b: Counts): Counts => Object.fromEntries(COUNTERS.map((k) => [k, b[k] - a[k]])) as Counts;

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
function instrument(ctx: GpuContext): void {
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

/** GPU time per pipeline label: every dispatch in its own pass with a timestamp pair. */
class KernelClock {
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

/** Host milliseconds and calls per refinement phase (the ExtendedRefinement methods). */
const phases = new Map<string, { n: number; ms: number }>();
function phase(name: string, ms: number): void {
  const e = phases.get(name) ?? { n: 0, ms: 0 };
  e.n++;
  e.ms += ms;
  phases.set(name, e);
}

/** `ext` with its refinement state's methods timed on the host (async ones until they resolve). */
function timedExtended(ext: ExtendedPrecisionResidual<GpuVector>): ExtendedPrecisionResidual<GpuVector> {
  return {
    precision: ext.precision,
    rows: ext.rows,
    start(b, x0) {
      const t0 = performance.now();
      const st = ext.start(b, x0);
      phase('start (b, x0 to df64)', performance.now() - t0);
      return new Proxy(st, {
        get(target, key, recv) {
          const v = Reflect.get(target, key, recv);
          if (typeof v !== 'function') return v;
          return (...args: unknown[]) => {
            const t = performance.now();
            const res = (v as (...a: unknown[]) => unknown).apply(target, args);
            if (res instanceof Promise) return res.finally(() => phase(String(key), performance.now() - t));
            phase(String(key), performance.now() - t);
            return res;
          };
        },
      }) as ExtendedRefinement<GpuVector>;
    },
  };
}

/** `space` with readMany / read timed (the inner solver's synchronisations). */
function timedSpace(space: GpuVectorSpace): GpuVectorSpace {
  return new Proxy(space, {
    get(target, key, recv) {
      const v = Reflect.get(target, key, recv);
      if (typeof v !== 'function') return v;
      const f = v as (...a: unknown[]) => unknown;
      if (key !== 'readMany' && key !== 'read' && key !== 'toArray') return f.bind(target);
      return async (...args: unknown[]) => {
        const t = performance.now();
        try {
          return await f.apply(target, args);
        } finally {
          phase(`space.${String(key)} (inner readback)`, performance.now() - t);
        }
      };
    },
  });
}

function loadMatrix(): Promise<{ name: string; a: CsrMatrix }> | { name: string; a: CsrMatrix } {
  if (mtx) return readMatrixMarket(mtx).then((r) => ({ name: mtx.split('/').pop()!, a: r.matrix }));
  return method === 'cg' ? { name: `stencil27-${grid}`, a: stencil27(grid) } : { name: `powerlaw-${plRows}`, a: powerLawDominant(plRows) };
}

const ctx = await createGpuContext();
instrument(ctx);
const device = ctx.describeText().split('\n')[0];
const { name, a } = await loadMatrix();
const plainSpace = new GpuVectorSpace(ctx);
const op: GpuOperator = kernel ? gpuOperatorFromCsr(ctx, a, { kernel, params: kernelParams }) : await tunedOperator(ctx, a, { expectedProducts: 1000 });
const ext = await op.extendedPrecision();
if (!ext) throw new Error(`cg-profile: ${name} has no df64 residual on this device (the self-test failed or the matrix is too large)`);
const b = csrSpmv(a, new Float64Array(a.cols).fill(1));
const inner = method === 'cg' ? { method: 'cg' as const } : { method: 'gmres' as const, rtol: 1e-4, restart: 30 };
const solve = (space: GpuVectorSpace, extended: ExtendedPrecisionResidual<GpuVector>) => refinedSolve({ innerOperator: op, innerSpace: space, b, extended, rtol, inner });

await solve(plainSpace, ext); // warm-up: every pipeline and bind group created
await ctx.finish();

// 1. counts and wall time of one solve (no timestamps)
phases.clear();
const c0 = snapshot();
const t0 = performance.now();
const res = await solve(timedSpace(plainSpace), timedExtended(ext));
const wallMs = performance.now() - t0;
const c = diff(c0, snapshot());
const it = Math.max(1, res.innerIterations);
const perIteration = Object.fromEntries(COUNTERS.map((k) => [k, Number((c[k] / it).toFixed(2))]));

// 2. reference costs: one product, one df64 residual, one scalar readback, one empty round trip
const xf = plainSpace.fromArray(new Float64Array(a.cols).fill(1));
const yf = plainSpace.create(a.rows);
const spmv = await timeGpu(ctx, () => op.apply(xf, yf), { reps: 20 });
let residual: number | undefined;
if (ext instanceof Df64Residual) {
  const d = ext.d;
  const [x, bb, r] = [d.fromFloat64(new Float64Array(a.cols).fill(1)), d.create(a.rows), d.create(a.rows)];
  residual = (await timeGpu(ctx, () => ext.matrix.residual(x, bb, r), { reps: 10 })).medianMs;
  for (const v of [x, bb, r]) v.buf.dispose();
}
const sc = plainSpace.dot(xf, xf);
await plainSpace.read(sc);
const tr = performance.now();
for (let i = 0; i < 10; i++) await plainSpace.read(sc);
const readbackMs = (performance.now() - tr) / 10;
const tf = performance.now();
for (let i = 0; i < 10; i++) await ctx.finish();
const roundTripMs = (performance.now() - tf) / 10;
plainSpace.release(sc);
plainSpace.release(xf);
plainSpace.release(yf);

// 3. GPU time per kernel in a second solve (each dispatch its own timestamped pass)
let kernels: { label: string; dispatches: number; gpuMs: number; perIteration: number; meanUs: number }[] | undefined;
let gpuMs: number | undefined;
if (wantTimestamps && ctx.caps.timestampQuery) {
  const clock = new KernelClock(ctx);
  clock.start();
  await solve(plainSpace, ext);
  await clock.stop();
  kernels = [...clock.ms.entries()]
    .map(([label, e]) => ({ label, dispatches: e.n, gpuMs: Number(e.ms.toFixed(3)), perIteration: Number((e.n / it).toFixed(2)), meanUs: Number(((1000 * e.ms) / e.n).toFixed(1)) }))
    .sort((x, y) => y.gpuMs - x.gpuMs);
  gpuMs = Number(kernels.reduce((s, k) => s + k.gpuMs, 0).toFixed(3));
}

const rec = {
  device,
  matrix: name,
  rows: a.rows,
  nnz: a.values.length,
  method,
  operator: op.label,
  reason: res.reason,
  outer: res.outerIterations,
  inner: res.innerIterations,
  readbacks: res.stats.readbacks,
  wallMs: Number(wallMs.toFixed(2)),
  wallMsPerInner: Number((wallMs / it).toFixed(4)),
  counts: c,
  perIteration,
  phases: Object.fromEntries([...phases.entries()].map(([k, e]) => [k, { calls: e.n, ms: Number(e.ms.toFixed(2)) }])),
  // the host's own time: wall minus the timed phases (readbacks wait for the GPU, start / solution
  // convert and transfer); what is left is recording (JS + Dawn calls per dispatch) and the
  // solver's host logic. When it exceeds the GPU time, the GPU waits on the host.
  hostRecordingMs: Number((wallMs - [...phases.values()].reduce((t, e) => t + e.ms, 0)).toFixed(2)),
  hostUsPerDispatch: Number(((1000 * (wallMs - [...phases.values()].reduce((t, e) => t + e.ms, 0))) / Math.max(1, c.dispatch)).toFixed(2)),
  reference: { spmvMs: Number(spmv.medianMs.toFixed(4)), spmvMethod: spmv.method, df64ResidualMs: residual, scalarReadbackMs: Number(readbackMs.toFixed(3)), finishRoundTripMs: Number(roundTripMs.toFixed(3)) },
  gpuMsAllKernels: gpuMs,
  kernels,
};
mkdirSync(dirname(out), { recursive: true });
appendFileSync(out, `${JSON.stringify(rec)}\n`);
console.log(JSON.stringify(rec, null, 1));
op.dispose();
ctx.dispose();
