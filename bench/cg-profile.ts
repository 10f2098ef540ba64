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
import { type CsrMatrix, csrSpmv, type ExtendedPrecisionResidual, type ExtendedRefinement, readMatrixMarket } from '../packages/formats/src/index';
import { createGpuContext, Df64Residual, type GpuOperator, type GpuVector, GpuVectorSpace, gpuOperatorFromCsr, joinF64, splitF64, timeGpu, tunedOperator } from '../packages/gpu/src/index';
import { refinedSolve } from '../packages/solvers/src/index';
import { powerLawDominant, stencil27 } from './df64-matrices';
import { COUNTERS, diff, instrument, KernelClock, kernelRows, snapshot, writeRecord } from './gpu-calls';

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

/**
 * Where the refinement's start (b to df64 on the device) and solution (x back as float64) go,
 * medians of 5 after one warm-up: the host split of b into (hi, lo) pairs alone (the path
 * before session 9, for comparison); writeBuffer of the raw float64 words + the device split
 * (no wait; what `fromFloat64` does since session 9); that until the queue is done; the df64
 * read of x (since session 9 joined on the device, then copy and map) and the host join alone
 * (the path before, for comparison).
 */
async function transferCosts(ext: Df64Residual, b: Float64Array): Promise<Record<string, number>> {
  const d = ext.d;
  const med = (v: number[]) => Number(v.sort((p, q) => p - q)[v.length >> 1]!.toFixed(3));
  const t = { splitMs: [] as number[], uploadRecordMs: [] as number[], uploadDoneMs: [] as number[], readMs: [] as number[], joinMs: [] as number[] };
  for (let i = 0; i < 6; i++) {
    await d.ctx.finish();
    let t0 = performance.now();
    const pairs = splitF64(b);
    const split = performance.now() - t0;
    t0 = performance.now();
    const v = d.fromFloat64(b);
    const rec = performance.now() - t0;
    await d.ctx.finish();
    const done = performance.now() - t0;
    t0 = performance.now();
    await d.toFloat64(v);
    const read = performance.now() - t0;
    t0 = performance.now();
    joinF64(pairs, b.length);
    const join = performance.now() - t0;
    v.buf.dispose();
    if (i === 0) continue; // warm-up: the pool's buffer and the JIT
    t.splitMs.push(split);
    t.uploadRecordMs.push(rec);
    t.uploadDoneMs.push(done);
    t.readMs.push(read);
    t.joinMs.push(join);
  }
  return Object.fromEntries(Object.entries(t).map(([k, v]) => [k, med(v)]));
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
let transfer: Record<string, number> | undefined;
if (ext instanceof Df64Residual) {
  const d = ext.d;
  const [x, bb, r] = [d.fromFloat64(new Float64Array(a.cols).fill(1)), d.create(a.rows), d.create(a.rows)];
  residual = (await timeGpu(ctx, () => ext.matrix.residual(x, bb, r), { reps: 10 })).medianMs;
  for (const v of [x, bb, r]) v.buf.dispose();
  transfer = await transferCosts(ext, b);
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
  kernels = kernelRows(clock, it);
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
  // the 'start' and 'solution' phases taken apart (first H100 call: 39 + 18.5 of 228 ms)
  transfer,
  reference: { spmvMs: Number(spmv.medianMs.toFixed(4)), spmvMethod: spmv.method, df64ResidualMs: residual, scalarReadbackMs: Number(readbackMs.toFixed(3)), finishRoundTripMs: Number(roundTripMs.toFixed(3)) },
  gpuMsAllKernels: gpuMs,
  kernels,
};
writeRecord(out, rec);
op.dispose();
ctx.dispose();
