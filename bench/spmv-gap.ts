/**
 * Why does the autotuner time csr-vector lanes=4 on the 27-point stencil 120³ at 0.17 ms while
 * the same kernel costs 0.43–0.47 ms inside and beside the CG solve (issue 15)? One process, one
 * matrix, every way of timing the product that the tuner and the solve use, side by side:
 *
 *   tuner-encode-first  the tuner's first-candidate sample as it was taken for the 0.17 ms (csr-vector
 *                       lanes=4 is the first candidate on this matrix: floorKernel, mean 26.6 → 4
 *                       lanes): upload, drain, warmup 1, 5 passes, no lead; first thing in the process
 *   tuner-report        what tunedOperator (cache off) recorded for the trials it timed
 *   tuner-encode        kernel.encode(ctx, h, dx, dy) on the tuner's vectors (tuneVectors: x
 *                       uniform in [-1, 1), y never written) and the tuner's upload (the shared
 *                       CSR arrays), timed with timeGpu as trials.ts `sample` does (warmup 1, reps 5)
 *   tuner-probe-old     kernel.encode timed as trials.ts `sample` probed a candidate before the timeGpu
 *                       lead repetition (reps 1, warmup 0, one pass on an idle GPU after a drained
 *                       queue; median of 5 such); once the budget is spent that probe is the
 *                       candidate's only sample
 *   tuner-probe-old-warm  the same after one untimed product and a drained queue
 *   tuner-probe         the probe now (one untimed product before the timed pass, same submission)
 *   op-probe-old        op-apply timed as tuner-probe-old
 *   pass-each-nolead    op-apply, 20 passes, the first on an idle GPU (timeGpu before the lead)
 *   tuner-encode-ones   the same as tuner-encode with x = 1
 *   tuner-encode-r20    the same as tuner-encode with warmup 2, reps 20 (cg-profile's reference)
 *   op-apply            GpuOperator.apply from gpuOperatorFromCsr (its own upload), x = 1
 *   op-apply-rand       the same operator, the tuner's x values
 *   tuned-apply         GpuOperator.apply from tunedOperator (cache off), x = 1
 *   one-pass-x20        op-apply recorded 20× inside ONE timestamped pass (total / 20)
 *   pass-each-x20       op-apply 20×, one timestamped pass each (the median)
 *   wall-x20            op-apply 20× per submission, host clock (timeGpu forceWall)
 *
 *   *-idle1s            the same product after 1 s with the GPU idle (host sleep): a clock that drops
 *                       when idle (DVFS) shows here as a slower product
 *   *-hot               the same after 500 untimed products recorded back to back (≈ 0.1–0.3 s of
 *                       load) and no drain: the GPU at its working clock
 *
 * The tuner runs first in the process (`tuner-report-first`, cache off, the CLI's defaults as
 * bench/tune.ts calls it), so that its trials see the GPU state bench/tune.ts saw when it timed
 * 0.172 ms; each line carries the ISO times of its rounds, to match against a clock log
 * (`nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,pstate,power.draw --format=csv -lms 100`).
 *
 * Variants are timed in interleaved rounds (--rounds, default 3) so that a clock or load change
 * cannot decide by itself; each line reports the round medians. After every variant the product
 * it wrote is read back and compared with the float64 host product (maxRelErr over all rows):
 * a timing of a product that did not compute every row would show here.
 *
 * Usage: pnpm tsx bench/spmv-gap.ts [--grid 120] [--rounds 3] [--kernel csr-vector] [--params lanes=4]
 * (the 16 variants of 3 rounds with 1 s sleeps and 46 M-entry host checks: ~1–2 minutes on the H100 host)
 * Output: one JSON line per variant on stdout (and the device first).
 * @module
 */
import { type CsrMatrix, csrSpmv } from '../packages/formats/src/index';
import {
  type AnySpmvKernel,
  createGpuContext,
  type DeviceMatrix,
  type GpuBuf,
  type GpuContext,
  type GpuOperator,
  GpuVector,
  getKernel,
  gpuOperatorFromCsr,
  readF32,
  readRanges,
  type Timing,
  type TuningReport,
  timeGpu,
  tunedOperator,
  tuneVector,
  uploadCsrArrays,
  uploadF32,
} from '../packages/gpu/src/index';
import { stencil27 } from './df64-matrices';

const argv = process.argv.slice(2);
const opt = (n: string): string | undefined => (argv.includes(n) ? argv[argv.indexOf(n) + 1] : undefined);
const grid = Number(opt('--grid') ?? 120);
const rounds = Math.max(1, Number(opt('--rounds') ?? 3));
const kernelId = opt('--kernel') ?? 'csr-vector';
const params = Object.fromEntries((opt('--params') ?? 'lanes=4').split(',').filter(Boolean).map((kv) => [kv.split('=')[0]!, Number(kv.split('=')[1])]));
if (!(Number.isInteger(grid) && grid >= 2)) throw new Error(`spmv-gap: --grid expected an integer ≥ 2, got ${opt('--grid')}`);

/** One way of timing the product: `time` measures, `y` is the buffer the product lands in, `x` the host x it used. */
interface Variant {
  readonly name: string;
  readonly note: string;
  readonly time: () => Promise<Timing>;
  /** What runs untimed right before `time` ('idle1s': a 1 s host sleep; 'hot': 500 products recorded, no drain). */
  readonly before?: 'idle1s' | 'hot';
  /** One product, for the 'hot' lead-in. */
  readonly once?: () => void;
  readonly y: GpuBuf;
  readonly x: Float64Array;
}

/** y = A·x recorded `n` times inside one pass bracketed by timestamps: ms per product. */
async function onePass(ctx: GpuContext, encode: () => void, n: number): Promise<Timing> {
  encode();
  await ctx.finish();
  const qs = ctx.device.createQuerySet({ type: 'timestamp', count: 2 });
  const rec = ctx.recorder;
  rec.computePass({ timestampWrites: { querySet: qs, beginningOfPassWriteIndex: 0, endOfPassWriteIndex: 1 } });
  for (let i = 0; i < n; i++) encode();
  rec.endPass();
  const resolve = ctx.buffers.acquire(16, 0x200 | 0x04, 'timestamps');
  rec.commandEncoder().resolveQuerySet(qs, 0, 2, resolve.buffer, 0);
  const [bytes] = await readRanges(ctx, [{ buf: resolve, offset: 0, bytes: 16 }]);
  resolve.dispose();
  qs.destroy();
  const t = new BigUint64Array(bytes!);
  const ms = Number(t[1]! - t[0]!) / 1e6 / n;
  return { medianMs: ms, minMs: ms, meanMs: ms, samples: 1, method: 'timestamp' };
}

/** Median of 5 single-pass timings, each after the queue drained (what the tuner's probe takes once). */
async function isolated(one: () => Promise<Timing>): Promise<Timing> {
  const ms: number[] = [];
  for (let i = 0; i < 5; i++) ms.push((await one()).medianMs);
  const sorted = [...ms].sort((p, q) => p - q);
  return { medianMs: sorted[2]!, minMs: sorted[0]!, meanMs: ms.reduce((p, q) => p + q, 0) / 5, samples: 5, method: 'timestamp' };
}

/** Largest |y_dev − y_host| / (|y_host| + Σ|a_ij x_j| · 2^-20) over all rows (float32 products of O(27) terms: ≲ 1e-5). */
function maxRelErr(a: CsrMatrix, x: Float64Array, yDev: Float64Array): number {
  const ref = csrSpmv(a, x);
  let worst = 0;
  for (let r = 0; r < a.rows; r++) {
    let mag = 0;
    for (let k = a.rowPtr[r]!; k < a.rowPtr[r + 1]!; k++) mag += Math.abs(a.values[k]! * x[a.colIdx[k]!]!);
    worst = Math.max(worst, Math.abs(yDev[r]! - ref[r]!) / (mag + 1e-30));
  }
  return worst;
}

/** The tuner's state: tuneVectors (x uploaded, y acquired and never written) and one shared CSR upload holding the kernel's handle. */
interface TunerState {
  readonly h: DeviceMatrix;
  readonly dx: GpuBuf;
  readonly dy: GpuBuf;
  readonly rand: Float64Array;
}

function tunerState(ctx: GpuContext, a: CsrMatrix, kernel: AnySpmvKernel): TunerState {
  const rand = tuneVector(a.cols);
  const shared = uploadCsrArrays(ctx, a, 'spmv-gap');
  const h = kernel.upload(ctx, a, { ...kernel.defaults, ...params }, { sharedCsr: shared });
  shared.release(); // h holds the arrays
  return { h, dx: uploadF32(ctx, rand, 'tune-x'), dy: ctx.buffers.acquire(a.rows * 4, undefined, 'tune-y'), rand };
}

function variants(ctx: GpuContext, a: CsrMatrix, kernel: AnySpmvKernel, st: TunerState, op: GpuOperator, tuned: GpuOperator): Variant[] {
  const ones = new Float64Array(a.cols).fill(1);
  const { h, dx, dy, rand } = st;
  const dxOnes = uploadF32(ctx, ones, 'tune-x1');
  const vec = (x: Float64Array) => new GpuVector(uploadF32(ctx, x, 'vector'), x.length);
  const [x1, xr, y1, yr, yt] = [vec(ones), vec(rand), vec(new Float64Array(a.rows)), vec(new Float64Array(a.rows)), vec(new Float64Array(a.rows))];
  const enc = (x: GpuBuf) => () => kernel.encode(ctx, h, x, dy);
  const apply = () => op.apply(x1, y1);
  return [
    { name: 'tuner-encode', note: 'kernel.encode, tuner vectors (x in [-1,1)), shared upload, warmup 1 reps 5 (trials.ts sample)', time: () => timeGpu(ctx, enc(dx), { reps: 5, warmup: 1 }), y: dy, x: rand },
    { name: 'tuner-probe-old', note: 'kernel.encode, tuner vectors, reps 1 warmup 0 without the lead repetition: the probe of trials.ts sample before this fix (a candidate\'s only sample once the budget is spent), its pass starting on an idle GPU', time: () => isolated(() => timeGpu(ctx, enc(dx), { reps: 1, warmup: 0, batches: 1, lead: false })), y: dy, x: rand },
    { name: 'tuner-probe-old-warm', note: 'as tuner-probe-old after one untimed product and a drained queue (warmup 1)', time: () => isolated(() => timeGpu(ctx, enc(dx), { reps: 1, warmup: 1, batches: 1, lead: false })), y: dy, x: rand },
    { name: 'tuner-probe', note: 'the probe now: reps 1 warmup 0 after one untimed product in the same submission (timeGpu lead)', time: () => isolated(() => timeGpu(ctx, enc(dx), { reps: 1, warmup: 0, batches: 1 })), y: dy, x: rand },
    { name: 'op-probe-old', note: 'op-apply timed as tuner-probe-old, x = 1', time: () => isolated(() => timeGpu(ctx, apply, { reps: 1, warmup: 0, batches: 1, lead: false })), y: y1.buf, x: ones },
    { name: 'pass-each-nolead', note: 'op-apply 20×, one timestamped pass each, the first on an idle GPU (timeGpu before this fix)', time: () => timeGpu(ctx, apply, { reps: 20, warmup: 2, lead: false }), y: y1.buf, x: ones },
    { name: 'tuner-encode-ones', note: 'as tuner-encode with x = 1', time: () => timeGpu(ctx, enc(dxOnes), { reps: 5, warmup: 1 }), y: dy, x: ones },
    { name: 'tuner-encode-r20', note: 'as tuner-encode, warmup 2 reps 20', time: () => timeGpu(ctx, enc(dx), { reps: 20, warmup: 2 }), y: dy, x: rand },
    { name: 'op-apply', note: `gpuOperatorFromCsr ${op.label}, x = 1, warmup 2 reps 20`, time: () => timeGpu(ctx, apply, { reps: 20 }), y: y1.buf, x: ones },
    { name: 'op-apply-rand', note: 'op-apply with the tuner x values', time: () => timeGpu(ctx, () => op.apply(xr, yr), { reps: 20 }), y: yr.buf, x: rand },
    { name: 'tuned-apply', note: `tunedOperator ${tuned.label}, x = 1`, time: () => timeGpu(ctx, () => tuned.apply(x1, yt), { reps: 20 }), y: yt.buf, x: ones },
    { name: 'one-pass-x20', note: 'op-apply 20× in one timestamped pass (total / 20)', time: () => onePass(ctx, apply, 20), y: y1.buf, x: ones },
    { name: 'pass-each-x20', note: 'op-apply 20×, one timestamped pass each (median)', time: () => timeGpu(ctx, apply, { reps: 20, warmup: 0 }), y: y1.buf, x: ones },
    { name: 'wall-x20', note: 'op-apply, 20 per submission, host clock', time: () => timeGpu(ctx, apply, { reps: 20, batches: 1, forceWall: true }), y: y1.buf, x: ones },
    ...[enc(dx), () => tuned.apply(x1, yt)].flatMap((once, k) => {
      const base = k === 0 ? 'tuner-encode' : 'tuned-apply';
      const t = () => timeGpu(ctx, once, { reps: 5, warmup: 1 });
      const y = k === 0 ? dy : yt.buf;
      const x = k === 0 ? rand : ones;
      return [
        { name: `${base}-idle1s`, note: `${base} (warmup 1 reps 5) after 1 s of an idle GPU`, time: t, before: 'idle1s' as const, once, y, x },
        { name: `${base}-hot`, note: `${base} (warmup 1 reps 5) right after 500 untimed products, no drain`, time: t, before: 'hot' as const, once, y, x },
      ];
    }),
  ];
}

/** One JSON line with what a tunedOperator call timed (every timed trial: kernel, params, ms, samples). */
function report(variant: string, tuned: GpuOperator & { readonly tuning: TuningReport }, at: string): void {
  const win = tuned.tuning.trials.find((t) => t.verified);
  const timed = tuned.tuning.trials.filter((t) => t.status === 'timed').map((t) => ({ kernel: t.kernel, params: t.params, ms: t.ms, samples: t.samples }));
  console.log(JSON.stringify({ variant, at, kernel: tuned.label, ms: win?.ms, samples: win?.samples, method: tuned.tuning.method, spentMs: Math.round(tuned.tuning.spentMs), timed }));
}

/** Run what a variant asks before its timing: a 1 s idle GPU, or 500 products recorded back to back. */
async function lead(ctx: GpuContext, v: Variant): Promise<void> {
  await ctx.finish();
  if (v.before === 'idle1s') await new Promise((r) => setTimeout(r, 1000));
  if (v.before === 'hot') for (let i = 0; i < 500; i++) v.once!();
}

async function main(): Promise<void> {
  const ctx = await createGpuContext();
  const a = stencil27(grid);
  const nnz = a.rowPtr[a.rows]!;
  console.log(JSON.stringify({ device: ctx.describeText().split('\n')[0], timestampQuery: ctx.caps.timestampQuery, subgroupSize: ctx.caps.subgroupSize, matrix: `stencil27-${grid}^3`, rows: a.rows, nnz, kernel: kernelId, params }));
  const kernel = getKernel(kernelId);
  // the tuner first, as bench/tune.ts runs it (cache off, the CLI's defaults): its trials see the GPU as tune.ts's did
  const t0 = new Date().toISOString();
  const tuned = await tunedOperator(ctx, a, { cache: false });
  report('tuner-report-first', tuned, t0);
  // then the tuner's first-candidate sample as before the timeGpu lead (upload, drain, warmup 1, 5 passes)
  const st = tunerState(ctx, a, kernel);
  await ctx.finish();
  const first = await timeGpu(ctx, () => kernel.encode(ctx, st.h, st.dx, st.dy), { reps: 5, warmup: 1, lead: false });
  const firstErr = maxRelErr(a, st.rand, await readF32(ctx, st.dy, a.rows));
  console.log(JSON.stringify({ variant: 'tuner-encode-first', ms: Number(first.medianMs.toFixed(4)), reps: [first.minMs, first.medianMs, first.meanMs].map((m) => Number(m.toFixed(4))), maxRelErr: Number(firstErr.toExponential(2)), note: 'the tuner\'s first-candidate sample as before the timeGpu lead (upload, drain, warmup 1, 5 passes), after the tuner (min, median, mean of 5)' }));
  const op = gpuOperatorFromCsr(ctx, a, { kernel, params });
  const t1 = new Date().toISOString();
  const again = await tunedOperator(ctx, a, { cache: false, expectedProducts: 1000 });
  report('tuner-report', again, t1);
  again.dispose();
  const vs = variants(ctx, a, kernel, st, op, tuned);
  const seen = new Map<string, number[]>();
  const errs = new Map<string, number>();
  const stamps = new Map<string, string[]>();
  for (let r = 0; r < rounds; r++) {
    for (let k = 0; k < vs.length; k++) {
      const v = vs[(k + r) % vs.length]!;
      await lead(ctx, v);
      stamps.set(v.name, [...(stamps.get(v.name) ?? []), new Date().toISOString()]);
      const t = await v.time();
      seen.set(v.name, [...(seen.get(v.name) ?? []), t.medianMs]);
      if (r === 0) errs.set(v.name, maxRelErr(a, v.x, await readF32(ctx, v.y, a.rows)));
    }
  }
  const bytes = 8 * nnz + 4 * (a.rows + 1) + 8 * a.rows;
  for (const v of vs) {
    const ms = seen.get(v.name)!;
    const med = [...ms].sort((p, q) => p - q)[ms.length >> 1]!;
    console.log(JSON.stringify({ variant: v.name, ms: Number(med.toFixed(4)), rounds: ms.map((m) => Number(m.toFixed(4))), gbs: Number((bytes / med / 1e6).toFixed(0)), maxRelErr: Number(errs.get(v.name)!.toExponential(2)), at: stamps.get(v.name), note: v.note }));
  }
}

await main();
