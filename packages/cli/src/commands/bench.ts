/**
 * `gpusparse bench A.mtx [--kernels id,id] [--variants]`: time SpMV kernels on one matrix —
 * median ms, GFLOP/s = 2·nnz/t, GB/s of the kernel's device bytes plus x and y, bytes stored —
 * each checked against the float64 reference first; optional SVG bar chart.
 * @module
 */
import { csrSpmv, getFormat } from '@gpusparse/formats';
import { groupedBarChart } from '../plots/svg';
import { checkKernelIds, openGpuContext } from '../util/backend';
import { type Command, ExitCode, info, integerOption, out, printJson, UsageError } from '../util/context';
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
  skipped?: string;
}

export const benchCommand: Command = {
  summary: 'time SpMV kernels on a matrix (GFLOP/s, GB/s)',
  usage: [
    'usage: gpusparse bench <A.mtx | gen:...> [--kernels id,id] [--variants] [--reps 20] [--plot gflops.svg] [--json]',
    '',
    'Without --kernels every registered kernel runs with its default parameters; --variants also',
    'runs every declared parameter value. Each result is checked against the float64 product first.',
  ].join('\n'),
  options: { kernels: { type: 'string' }, variants: { type: 'boolean' }, reps: { type: 'string' }, plot: { type: 'string' } },
  async run(pos, v, common) {
    if (pos.length !== 1) throw new UsageError(`bench: expected one matrix argument, got ${pos.length}`);
    if (common.backend === 'cpu') throw new UsageError('bench: measures WebGPU kernels; drop --backend cpu');
    const gpu = await import('@gpusparse/gpu');
    const reps = integerOption('reps', v.reps as string | undefined, 20, 1);
    if (typeof v.kernels === 'string') await checkKernelIds(v.kernels.split(','), '--kernels');
    const m = await loadMatrix(pos[0]!);
    const a = m.matrix;
    const nnz = a.rowPtr[a.rows]!;
    const ks = typeof v.kernels === 'string' ? v.kernels.split(',').map((id) => gpu.getKernel(id)) : gpu.kernels;
    const ctx = await openGpuContext();
    const bar = progressBar('bench', { enabled: common.progress });
    const rows: BenchRow[] = [];
    try {
      const x = Float64Array.from({ length: a.cols }, (_, i) => Math.fround(Math.sin(i + 1)));
      const ref = csrSpmv(a, x);
      let refNorm = 0;
      for (const r of ref) refNorm = Math.max(refNorm, Math.abs(r));
      const dx = gpu.uploadF32(ctx, x);
      const dy = ctx.buffers.acquire(Math.max(4, a.rows * 4));
      const jobs = ks.flatMap((k) => (v.variants ? gpu.kernelVariants(k) : [{ ...k.defaults }]).map((p) => [k, p] as const));
      let done = 0;
      for (const [k, params] of jobs) {
        bar.update(done++, jobs.length, k.id);
        const row: BenchRow = { kernel: k.id, params };
        rows.push(row);
        try {
          const fmt = getFormat(k.format);
          const fm = k.format === 'csr' ? a : fmt.fromCsr(a, k.formatParams?.(params));
          const ok = k.supports(fm, ctx.limits, params);
          if (ok !== true) {
            row.skipped = ok;
            continue;
          }
          const h = k.upload(ctx, fm, params);
          k.encode(ctx, h, dx, dy);
          const y = await gpu.readF32(ctx, dy, a.rows);
          let err = 0;
          for (let i = 0; i < a.rows; i++) err = Math.max(err, Math.abs(y[i]! - ref[i]!));
          row.maxRelError = refNorm > 0 ? err / refNorm : err;
          const t = await gpu.timeGpu(ctx, () => k.encode(ctx, h, dx, dy), { reps });
          row.ms = t.medianMs;
          row.gflops = (2 * nnz) / (t.medianMs * 1e6);
          row.bytes = h.deviceBytes;
          row.gbs = (h.deviceBytes + 4 * (a.rows + a.cols)) / (t.medianMs * 1e6);
          h.dispose();
        } catch (e) {
          row.skipped = `error: ${(e as Error).message}`;
        }
      }
      bar.finish();
      dx.dispose();
      dy.dispose();
      const timed = rows.filter((r) => r.ms !== undefined).sort((p, q) => p.ms! - q.ms!);
      if (typeof v.plot === 'string') {
        writeOutputFile(v.plot, groupedBarChart([m.name], timed.map((r) => `${r.kernel} ${JSON.stringify(r.params)}`), timed.map((r) => [r.gflops]), { title: `SpMV GFLOP/s on ${m.name}`, yLabel: 'GFLOP/s' }));
        info(`bar chart written to ${v.plot}`);
      }
      if (common.json) printJson({ matrix: m.name, rows: a.rows, nnz, device: ctx.describe().adapter, results: rows });
      else {
        out(`${m.name}: ${a.rows}×${a.cols}, nnz ${nnz} on ${ctx.describe().adapter.device || ctx.describe().adapter.description}`);
        out(
          formatTable(
            ['kernel', 'params', 'ms', 'GFLOP/s', 'GB/s', 'device bytes', 'max rel. error'],
            [...timed, ...rows.filter((r) => r.ms === undefined)].map((r) => [r.kernel, JSON.stringify(r.params), r.ms ?? r.skipped ?? '', r.gflops, r.gbs, r.bytes, r.maxRelError]),
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
