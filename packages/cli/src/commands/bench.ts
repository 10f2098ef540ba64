/**
 * `gpusparse bench A.mtx [--kernels id,id] [--variants]`: time SpMV kernels on one matrix —
 * median ms, GFLOP/s = 2·nnz/t, GB/s of the kernel's device bytes plus x and y, bytes stored —
 * each checked against the float64 reference first; optional SVG chart. The sweep is bounded by
 * --budget-s (default 40 s): each kernel's default variant runs first, repetitions shrink to the
 * time left, and variants the budget does not reach are listed as not run, never dropped silently.
 * @module
 */
import { type CsrMatrix, csrSpmv, getFormat, type SparseMatrix } from '@gpusparse/formats';
import type { AnySpmvKernel, GpuBuf, GpuContext } from '@gpusparse/gpu';
import { variantChart } from '../plots/svg';
import { checkKernelIds, openGpuContext } from '../util/backend';
import { type Command, ExitCode, info, integerOption, numberOption, out, printJson, UsageError } from '../util/context';
import { writeOutputFile } from '../util/output';
import { loadMatrix } from '../util/load';
import { progressBar } from '../util/progress';
import { formatTable } from '../util/table';

/** One kernel variant's measurement. */
export interface BenchRow {
  kernel: string;
  params: Record<string, number>;
  ms?: number;
  gflops?: number;
  gbs?: number;
  bytes?: number;
  maxRelError?: number;
  /** Timed repetitions (fewer than --reps when the budget was short). */
  reps?: number;
  /** Host conversion from CSR (0 when reused from the previous variant or CSR itself). */
  convMs?: number;
  skipped?: string;
}

type Gpu = typeof import('@gpusparse/gpu');

/** What every job of one sweep shares. */
interface Sweep {
  gpu: Gpu;
  ctx: GpuContext;
  a: CsrMatrix;
  ref: Float64Array;
  refNorm: number;
  dx: GpuBuf;
  dy: GpuBuf;
  maxReps: number;
  /** The last conversion, reused by the next variant with the same format parameters. */
  last?: { key: string; m: SparseMatrix };
}

/**
 * Jobs in the order they run: every kernel's default first (the budget buys breadth before
 * depth), then the other variants of each kernel together (one conversion per format).
 */
export function benchJobs(gpu: Gpu, ks: readonly AnySpmvKernel[], variants: boolean): [AnySpmvKernel, Record<string, number>][] {
  const all = ks.map((k) => (variants ? gpu.kernelVariants(k) : [{ ...k.defaults }]).map((p) => [k, p] as [AnySpmvKernel, Record<string, number>]));
  return [...all.map((v) => v[0]!), ...all.flatMap((v) => v.slice(1))];
}

/**
 * Convert (or reuse the previous conversion), check once against float64, time as many
 * repetitions as its share of the budget allows (at least one, none when one product is longer
 * than all the budget left, except for the first job: a sweep always times something); fills `row`.
 */
async function runJob(s: Sweep, k: AnySpmvKernel, params: Record<string, number>, row: BenchRow, shareMs: number, budgetLeftMs: number, first: boolean): Promise<void> {
  const { gpu, ctx, a } = s;
  const pre = gpu.supportsCsr(k, a, ctx.limits, params);
  if (pre !== true) {
    row.skipped = pre;
    return;
  }
  const t0 = performance.now();
  const fp = k.formatParams?.(params);
  const key = `${k.format}|${JSON.stringify(fp ?? {})}`;
  if (s.last?.key !== key) s.last = { key, m: k.format === 'csr' ? a : getFormat(k.format).fromCsr(a, fp) };
  row.convMs = performance.now() - t0;
  const ok = k.supports(s.last.m, ctx.limits, params);
  if (ok !== true) {
    row.skipped = ok;
    return;
  }
  const h = k.upload(ctx, s.last.m, params);
  try {
    const t1 = performance.now();
    k.encode(ctx, h, s.dx, s.dy);
    const y = await gpu.readF32(ctx, s.dy, a.rows);
    const oneMs = performance.now() - t1; // one product with its readback: an upper bound per repetition
    let err = 0;
    for (let i = 0; i < a.rows; i++) err = Math.max(err, Math.abs(y[i]! - s.ref[i]!));
    row.maxRelError = s.refNorm > 0 ? err / s.refNorm : err;
    const left = shareMs - (performance.now() - t0);
    // the checked product already compiled the pipeline and touched the data: no further warm-up
    const reps = Math.min(s.maxReps, Math.floor(left / Math.max(oneMs, 1e-3)));
    const totalLeft = budgetLeftMs - (performance.now() - t0);
    if (reps < 1 && !first && oneMs > totalLeft) {
      row.skipped = `checked, not timed: one product took ${oneMs.toFixed(0)} ms (with readback), more than the ${Math.max(0, totalLeft).toFixed(0)} ms of budget left`;
      return;
    }
    const n = Math.max(1, reps);
    const t = await gpu.timeGpu(ctx, () => k.encode(ctx, h, s.dx, s.dy), { reps: n, warmup: 0, batches: Math.min(5, n) });
    row.reps = n;
    row.ms = t.medianMs;
    row.gflops = (2 * a.rowPtr[a.rows]!) / (t.medianMs * 1e6);
    row.bytes = h.deviceBytes;
    row.gbs = (h.deviceBytes + 4 * (a.rows + a.cols)) / (t.medianMs * 1e6);
  } finally {
    h.dispose();
  }
}

/**
 * Run the jobs until `budgetMs` after `t0` (the command's start: reading or generating the matrix
 * and the float64 reference count too); returns the rows (one per job, in job order) and the time spent.
 */
async function sweep(s: Sweep, jobs: readonly [AnySpmvKernel, Record<string, number>][], budgetMs: number, t0: number, bar: ReturnType<typeof progressBar>): Promise<{ rows: BenchRow[]; spentMs: number; notRun: number }> {
  const rows: BenchRow[] = [];
  let notRun = 0;
  for (const [i, [k, params]] of jobs.entries()) {
    const row: BenchRow = { kernel: k.id, params };
    rows.push(row);
    const spent = performance.now() - t0;
    if (spent >= budgetMs) {
      row.skipped = `not run: --budget-s ${budgetMs / 1000} spent`;
      notRun++;
      continue;
    }
    bar.update(i, jobs.length, k.id);
    try {
      await runJob(s, k, params, row, (budgetMs - spent) / (jobs.length - i), budgetMs - spent, i === 0);
    } catch (e) {
      row.skipped = `error: ${(e as Error).message}`;
    }
  }
  s.last = undefined;
  return { rows, spentMs: performance.now() - t0, notRun };
}

export const benchCommand: Command = {
  summary: 'time SpMV kernels on a matrix (GFLOP/s, GB/s)',
  usage: [
    'usage: gpusparse bench <A.mtx | gen:...> [--kernels id,id] [--variants] [--reps 20] [--budget-s 40] [--plot gflops.svg] [--json]',
    '',
    'Without --kernels every registered kernel runs with its default parameters; --variants also',
    'runs every declared parameter value. Each result is checked against the float64 product first.',
    'The sweep stops starting variants --budget-s seconds after the start (default 40; loading the matrix counts):',
    'defaults run first, each variant gets up to --reps repetitions as the time left allows (at least 1),',
    'the rest are listed as not run.',
  ].join('\n'),
  options: { kernels: { type: 'string' }, variants: { type: 'boolean' }, reps: { type: 'string' }, 'budget-s': { type: 'string' }, plot: { type: 'string' } },
  async run(pos, v, common) {
    const t0 = performance.now();
    if (pos.length !== 1) throw new UsageError(`bench: expected one matrix argument, got ${pos.length}`);
    if (common.backend === 'cpu') throw new UsageError('bench: measures WebGPU kernels; drop --backend cpu');
    const gpu = await import('@gpusparse/gpu');
    const reps = integerOption('reps', v.reps as string | undefined, 20, 1);
    const budgetMs = 1000 * numberOption('budget-s', v['budget-s'] as string | undefined, 40, { min: 0 });
    if (typeof v.kernels === 'string') await checkKernelIds(v.kernels.split(','), '--kernels');
    const m = await loadMatrix(pos[0]!);
    const a = m.matrix;
    const nnz = a.rowPtr[a.rows]!;
    const ks = typeof v.kernels === 'string' ? v.kernels.split(',').map((id) => gpu.getKernel(id)) : gpu.kernels;
    const ctx = await openGpuContext();
    const bar = progressBar('bench', { enabled: common.progress });
    try {
      const x = Float64Array.from({ length: a.cols }, (_, i) => Math.fround(Math.sin(i + 1)));
      const ref = csrSpmv(a, x);
      let refNorm = 0;
      for (const r of ref) refNorm = Math.max(refNorm, Math.abs(r));
      const s: Sweep = { gpu, ctx, a, ref, refNorm, dx: gpu.uploadF32(ctx, x), dy: ctx.buffers.acquire(Math.max(4, a.rows * 4)), maxReps: reps };
      const jobs = benchJobs(gpu, ks, Boolean(v.variants));
      const { rows, spentMs, notRun } = await sweep(s, jobs, budgetMs, t0, bar);
      bar.finish();
      s.dx.dispose();
      s.dy.dispose();
      const timed = rows.filter((r) => r.ms !== undefined).sort((p, q) => p.ms! - q.ms!);
      if (notRun > 0) info(`bench: ${notRun} of ${jobs.length} variants not run within --budget-s ${budgetMs / 1000} (raise it to run them)`);
      if (typeof v.plot === 'string') {
        writeOutputFile(v.plot, benchChart(gpu, m.name, timed, ctx.describe().adapter.device || ctx.describe().adapter.description));
        info(`chart written to ${v.plot}`);
      }
      const device = ctx.describe().adapter;
      if (common.json) printJson({ matrix: m.name, rows: a.rows, nnz, device, budgetS: budgetMs / 1000, spentMs, notRun, results: rows });
      else {
        out(`${m.name}: ${a.rows}×${a.cols}, nnz ${nnz} on ${device.device || device.description}; ${timed.length} of ${jobs.length} variants timed in ${(spentMs / 1000).toFixed(1)} s`);
        out(
          formatTable(
            ['kernel', 'params', 'ms', 'GFLOP/s', 'GB/s', 'device bytes', 'max rel. error', 'reps'],
            [...timed, ...rows.filter((r) => r.ms === undefined)].map((r) => [r.kernel, JSON.stringify(r.params), r.ms ?? r.skipped ?? '', r.gflops, r.gbs, r.bytes, r.maxRelError, r.reps]),
          ),
        );
      }
      return ExitCode.ok;
    } finally {
      bar.finish();
      ctx.dispose();
    }
  },
};

/** A variant's label: the parameters that differ from its kernel's defaults, or "defaults (…)". */
export function variantLabel(params: Record<string, number>, defaults: Readonly<Record<string, number>>): string {
  const diff = Object.entries(params).filter(([k, v]) => defaults[k] !== v);
  const show = (e: [string, number][]) => e.map(([k, v]) => `${k}=${v}`).join(' ');
  return diff.length ? show(diff) : `defaults (${show(Object.entries(params))})`;
}

/** The chart of the timed rows: one labelled bar per variant, grouped by kernel. */
function benchChart(gpu: Gpu, name: string, timed: readonly BenchRow[], device: string): string {
  return variantChart(
    timed.map((r) => ({ group: r.kernel, label: variantLabel(r.params, gpu.getKernel(r.kernel).defaults), value: r.gflops! })),
    { title: `SpMV on ${name} (${device}): GFLOP/s = 2·nnz / median time`, xLabel: 'GFLOP/s' },
  );
}
