/**
 * Where a DIA kernel loses its time on banded and stencil matrices (issue 20, session 12): each
 * kernel is timed next to two probes built from its own shader text and two copies, in the same
 * process and at the same (heated) clock:
 *
 * - `full`: the kernel (checked against the float64 product);
 * - `no-x`: the same shader with every interior x load replaced by 1.0 — values, table, loop and
 *   stores as the kernel has them, x free: full − no-x is what the x gathers cost;
 * - `store`: the same shader with every interior product replaced by 0 — launch, workgroups,
 *   table prologue and y stores only: the fixed and y cost;
 * - `copy-own`: the vec4 copy of the kernel's compulsory bytes (its device arrays + x + y), and
 *   `copy-vals`: of its arrays + y (what no-x moves) — the time those bytes take at copy speed at
 *   this size, launch and ramp included.
 * So per kernel: no-x / copy-vals says whether the diagonal streams themselves run at copy speed,
 * (full − no-x) what x adds, store what is fixed; the `1 GiB` copy bandwidth of the run gives the
 * issue's "% of copy". The probes give wrong products by design and are never registered.
 *
 * Run: `pnpm tsx bench/spmv-dia-probe.ts --quick` (lavapipe) or on the GPU machine
 * `node .gpukit/app/spmv-dia-probe.mjs --out $OUT/probe.json --warm-ms 1000 --clock-log clocks.csv`.
 * Flags: --quick, --out FILE, --reps N (30), --rounds N (2), --heat-ms N (150), --warm-ms N (0),
 * --clock-log FILE (nvidia-smi CSV: the heat waits for the clock, each line carries it), --only a,b.
 * Output: one `PROBE` line per matrix and kernel, JSON to --out.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { type CsrMatrix, csrNnz, csrSpmv, type DiaMatrix, diaFromCsr } from '@gpusparse/formats';
import { Blas1, createGpuContext, type GpuContext, getKernel, readF32, timeGpu, uploadF32 } from '@gpusparse/gpu';
import { rowBounds } from '../packages/gpu/src/testing/conformance';
import { stencil27 } from './df64-matrices';
import { copySameBytes, heat } from './lib/spmv-timing';
import { benchMatrixSet } from './matrix-set';
import { clockIn, clockText, readClockLog } from './spmv-clock';

const argv = process.argv.slice(2);
const opt = (name: string): string | undefined => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : undefined);
const quick = argv.includes('--quick');
const out = opt('--out') ?? 'bench/out/spmv-dia-probe.json';
const reps = Number(opt('--reps') ?? (quick ? 5 : 30));
const rounds = Math.max(1, Number(opt('--rounds') ?? 2));
const heatMs = Number(opt('--heat-ms') ?? (quick ? 0 : 150));
const warmMs = Number(opt('--warm-ms') ?? 0);
const clockLog = opt('--clock-log');
const only = opt('--only')?.split(',');
const timing = { heatMs, reps, clockLog };

/** A kernel and how its shader text becomes each probe (regular expressions over its interior products). */
interface Subject {
  readonly label: string;
  readonly id: 'dia-tiled' | 'dia-vec4';
  readonly params: Record<string, number>;
  /** Interior x load → 1.0; interior product → 0. */
  readonly noX: [RegExp, string];
  readonly store: [RegExp, string];
}

const TILED_X = /x\[u32\(g\d+ \+ e\d+\.x\)\]/g;
const VEC4_X = /x4\(e\d+, g\d+, t\d+ - b\)/g;
const VEC4_PRODUCT = /vals\[u32\(e\d+\.y\) \+ v\d+\] \* x4\(e\d+, g\d+, t\d+ - b\)/g;
const SUBJECTS: Subject[] = [
  { label: 'dia-tiled rows 4 unroll 4', id: 'dia-tiled', params: {}, noX: [TILED_X, '1.0'], store: [/vals\[u32\(e\d+\.y \+ t\d+\)\] \* x\[u32\(g\d+ \+ e\d+\.x\)\]/g, '0.0'] },
  { label: 'dia-vec4 xvec 1', id: 'dia-vec4', params: { xvec: 1 }, noX: [VEC4_X, 'vec4<f32>(1.0)'], store: [VEC4_PRODUCT, 'vec4<f32>(0.0)'] },
  { label: 'dia-vec4 xvec 0', id: 'dia-vec4', params: { xvec: 0 }, noX: [VEC4_X, 'vec4<f32>(1.0)'], store: [VEC4_PRODUCT, 'vec4<f32>(0.0)'] },
  // staged x: its no-x and store probes keep the staging copies (x's global reads), so full − no-x is the workgroup-memory reads
  { label: 'dia-vec4 xvec 2 wg 64', id: 'dia-vec4', params: { xvec: 2, workgroupSize: 64 }, noX: [VEC4_X, 'vec4<f32>(1.0)'], store: [VEC4_PRODUCT, 'vec4<f32>(0.0)'] },
];

/** `text` with every match of `re` replaced; throws when nothing matched (the probe would be the kernel itself). */
function rewrite(text: string, [re, by]: [RegExp, string], what: string): string {
  const n = text.match(re)?.length ?? 0;
  if (n === 0) throw new Error(`spmv-dia-probe: the ${what} probe found nothing to replace (${re}): the shader text changed`);
  return text.replace(re, by);
}

/** Median of the values. */
const median = (v: number[]) => [...v].sort((a, b) => a - b)[Math.floor((v.length - 1) / 2)]!;

/** Time one subject on one matrix, `rounds` rounds of full / no-x / store; the products of `full` checked. */
async function probe(ctx: GpuContext, s: Subject, m: DiaMatrix, a: CsrMatrix, x: Float64Array) {
  const k = getKernel(s.id);
  const p = { ...k.defaults, ...s.params };
  const ok = k.supports(m, ctx.limits, p);
  if (ok !== true) return { label: s.label, skipped: ok };
  const spec = k.pipelineSpec!(p, ctx.caps);
  const text = spec.wgsl();
  const variant = (what: string, t: string) => ctx.pipelines.get({ ...spec, key: t, label: `${spec.label}-${what}`, wgsl: () => t });
  const pipes = { full: ctx.pipelines.get(spec), noX: variant('no-x', rewrite(text, s.noX, 'no-x')), store: variant('store', rewrite(text, s.store, 'store')) };
  const dx = uploadF32(ctx, x);
  const dy = ctx.buffers.acquire(4 * a.rows);
  const h = k.upload(ctx, m, p) as { pipeline: unknown; deviceBytes: number; dispose(): void };
  try {
    k.encode(ctx, h, dx, dy);
    const y = await readF32(ctx, dy, a.rows);
    const ref = csrSpmv(a, x);
    const bound = rowBounds(a, x, 1, 0, new Float64Array(a.rows));
    const correct = ref.every((r, i) => Math.abs(y[i]! - r) <= bound[i]!);
    const ms: Record<'full' | 'noX' | 'store', number[]> = { full: [], noX: [], store: [] };
    const windows: [number, number][] = [];
    for (let r = 0; r < rounds; r++) {
      for (const which of ['full', 'noX', 'store'] as const) {
        const hh = { ...h, pipeline: pipes[which] };
        const encode = () => k.encode(ctx, hh, dx, dy);
        const w0 = Date.now();
        await heat(ctx, encode, heatMs, clockLog);
        ms[which].push((await timeGpu(ctx, encode, { reps })).medianMs);
        windows.push([w0, Date.now()]);
      }
    }
    return { label: s.label, params: p, correct, deviceBytes: h.deviceBytes, ms, windows };
  } finally {
    h.dispose();
    dx.dispose();
    dy.dispose();
  }
}

/** The matrices: the bench set's banded and stencils, and the 27-point stencil 120³. */
function matrices(): [string, () => CsrMatrix][] {
  const set = benchMatrixSet(quick).filter(([n]) => /^(banded|stencil)/.test(n));
  const n27 = quick ? 26 : 120;
  set.push([`stencil27-${n27}^3`, () => stencil27(n27)]);
  return set.filter(([n]) => !only || only.some((o) => n.startsWith(o)));
}

/** The 1 GiB-class copy bandwidth of the run (f32 BLAS copy heated for max(heat, warm) first, then the vec4 copy). */
async function copyBandwidth(ctx: GpuContext): Promise<number> {
  const n = Math.min(quick ? 1 << 22 : 1 << 27, Math.floor(ctx.limits.maxStorageBufferBindingSize / 16) * 4);
  const [a, b] = [ctx.buffers.acquire(n * 4), ctx.buffers.acquire(n * 4)];
  const b1 = Blas1.of(ctx);
  await heat(ctx, () => b1.copy(a, b, n), Math.max(heatMs, warmMs), clockLog);
  const same = await copySameBytes(ctx, 8 * n, timing);
  a.dispose();
  b.dispose();
  return same.gbs;
}

async function main(): Promise<void> {
  const ctx = await createGpuContext();
  console.log(ctx.describeText());
  const copyGbs = await copyBandwidth(ctx);
  console.log(`copy bandwidth (vec4, ${quick ? 32 : 1024} MiB): ${copyGbs.toFixed(0)} GB/s`);
  const results: Record<string, unknown>[] = [];
  const lines: string[] = [];
  for (const [name, make] of matrices()) {
    const a0 = make();
    const a = { ...a0, values: Float64Array.from(Float32Array.from(a0.values)) };
    const m = diaFromCsr(a, { valueType: 'f32', maxDiagonals: 2 ** 28 });
    const x = Float64Array.from({ length: a.cols }, (_, i) => Math.fround(Math.sin(i + 1)));
    const nnz = csrNnz(a);
    console.log(`${name}: ${a.rows}×${a.cols}, ${nnz} nnz, ${m.offsets.length} diagonals`);
    for (const s of SUBJECTS) {
      const r = await probe(ctx, s, m, a, x);
      if ('skipped' in r) {
        lines.push(`PROBE ${name} ${s.label} | skipped: ${r.skipped}`);
        results.push({ name, ...r });
        continue;
      }
      const own = r.deviceBytes + 4 * a.cols + 4 * a.rows;
      const copyOwn = await copySameBytes(ctx, own, timing);
      const copyVals = await copySameBytes(ctx, r.deviceBytes + 4 * a.rows, timing);
      const [full, noX, store] = [median(r.ms.full), median(r.ms.noX), median(r.ms.store)];
      const gbs = own / (full * 1e6);
      const clock = clockLog ? clockText(clockIn(readClockLog(clockLog), r.windows)) : '';
      const line =
        `PROBE ${name} ${s.label} | full ${full.toFixed(4)} (${r.ms.full.map((t) => t.toFixed(4)).join('/')}) no-x ${noX.toFixed(4)} store ${store.toFixed(4)} ms | ` +
        `copy-own ${copyOwn.ms.toFixed(4)} copy-vals ${copyVals.ms.toFixed(4)} ms | ${(own / nnz).toFixed(2)} B/nnz, ${gbs.toFixed(0)} GB/s = ${((100 * gbs) / copyGbs).toFixed(0)} % of copy, ` +
        `${((100 * copyOwn.ms) / full).toFixed(0)} % of the same-bytes copy | x ${(full - noX).toFixed(4)} ms, streams/copy-vals ${(noX / copyVals.ms).toFixed(2)}${clock}${r.correct ? '' : ' | WRONG'}`;
      console.log(`  ${line}`);
      lines.push(line);
      results.push({ name, rows: a.rows, nnz, diagonals: m.offsets.length, ...r, ownBytes: own, copyOwnMs: copyOwn.ms, copyValsMs: copyVals.ms, medians: { full, noX, store } });
      mkdirSync(dirname(out), { recursive: true });
      writeFileSync(out, JSON.stringify({ date: new Date().toISOString(), device: ctx.describe(), copyGbs, reps, rounds, heatMs, warmMs, results }, null, 1));
    }
  }
  console.log(lines.join('\n'));
  const wrong = results.filter((r) => r.correct === false).length;
  console.log(wrong ? `${wrong} probe subjects were WRONG` : 'every probed kernel passed the float64 check');
  ctx.dispose();
}

await main();
