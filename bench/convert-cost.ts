/**
 * Host-side conversion cost the autotuner pays per candidate: for each matrix of the bench set
 * (bench/matrix-set.ts) and each registered GPU kernel with its parameter variants
 * (`kernelVariants`), the time of `getFormat(format).fromCsr(a, formatParams)` (once per distinct
 * conversion, as the tuner's ConversionCache shares it) and of the kernel's `upload` on a real
 * context (lavapipe here). The upload time is split into the device calls it makes
 * (`queue.writeBuffer`, `createBuffer`: copies the driver must do anyway) and the rest, the
 * host-side layout work (validation, f64 → f32, transposes, packing, splitting). Pipelines are
 * compiled beforehand on a small matrix, so upload times hold no shader compilation.
 *
 * Run: `pnpm -s tsx bench/convert-cost.ts [--quick] [--out FILE] [--only name,name]
 * [--kernels id,id] [--defaults] [--reps N] [--set bench|validation|dia]` (--defaults: default
 * parameters only; --reps: repetitions per conversion, the minimum is reported; --set: the
 * matrices, bench/matrix-set.ts (default), bench/validation-set.ts, or `dia`: the three stencils
 * of issue 16 on which the tuner chose dia-tiled, 27-point 120³, 7-point 160³, 5-point 2000²).
 * DIA conversion cost: `--set dia --kernels dia-tiled --defaults --reps 3`. Host DIA conversion
 * against the build on the device (issue 16; bench/dia-device-cost.ts): `--device [--quick]
 * [--reps N] [--only name]` (quick: 27-point 40³–60³, 7-point 60³, banded 2·10^5 b9; full: 27-point
 * 120³, 7-point 160³, banded 2·10^6 b9), JSON to `--out` (default bench/out/dia-device-cost.json). Profile one slow case with
 * `node --cpu-prof --import tsx bench/convert-cost.ts --only powerlaw --kernels sell`.
 * Prints one table per matrix (ms) and writes JSON to `--out` (default bench/out/convert-cost.json).
 * The full-size set needs about 20 GiB with every kernel: run one matrix per process (`--only`)
 * on smaller machines (lavapipe keeps device memory in host RAM).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { parseArgs } from 'node:util';
import { type CsrMatrix, csrNnz, generators, getFormat } from '@gpusparse/formats';
import { type AnySpmvKernel, createGpuContext, type DeviceMatrix, type GpuContext, kernels, kernelVariants } from '@gpusparse/gpu';
import { diaDeviceCost } from './dia-device-cost';
import { benchMatrixSet } from './matrix-set';
import { stencil27, validationMatrixSet } from './validation-set';

const { values: args } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    out: { type: 'string', default: 'bench/out/convert-cost.json' },
    only: { type: 'string' },
    kernels: { type: 'string' },
    defaults: { type: 'boolean', default: false },
    reps: { type: 'string', default: '1' },
    set: { type: 'string', default: 'bench' },
    device: { type: 'boolean', default: false },
  },
});
if (args.device) {
  // DIA on the host against the DIA build on the device (bench/dia-device-cost.ts)
  await diaDeviceCost({ quick: args.quick ?? false, reps: Number(args.reps), out: args.out === 'bench/out/convert-cost.json' ? 'bench/out/dia-device-cost.json' : args.out!, only: args.only?.split(',') });
  process.exit(0);
}
const quick = args.quick;
const out = args.out;
const onlyFilter = args.only?.split(',');
const kernelFilter = args.kernels?.split(',');
const defaultsOnly = args.defaults;
const reps = Number(args.reps);

/** The matrices of `--set` (quick: the same shapes, smaller). */
function matrixSet(set: string | undefined): [string, () => CsrMatrix][] {
  if (set === 'validation') return validationMatrixSet(quick);
  if (set === 'dia') {
    const [n27, n7, n5] = quick ? [24, 32, 400] : [120, 160, 2000];
    return [
      [`stencil27-${n27}^3`, () => stencil27(n27)],
      [`stencil7-${n7}^3`, () => generators.poisson3d(n7)],
      [`stencil5-${n5}^2`, () => generators.poisson2d(n5)],
    ];
  }
  if (set !== 'bench') throw new Error(`--set: expected bench, validation or dia, got ${set}`);
  return benchMatrixSet(quick);
}

/** One measured row: a conversion (kernel undefined) or an upload. */
interface Row {
  matrix: string;
  format: string;
  formatParams: string;
  kernel?: string;
  params?: Record<string, number>;
  /** fromCsr ms (min of reps), or the upload call's ms. */
  ms?: number;
  /** Upload only: ms inside queue.writeBuffer / createBuffer, and the rest (host prep). */
  deviceCallMs?: number;
  hostPrepMs?: number;
  error?: string;
}

/** Time device calls made during `f` by wrapping queue.writeBuffer and device.createBuffer. */
function instrument(ctx: GpuContext): { reset(): void; ms(): number } {
  let acc = 0;
  const q = ctx.device.queue;
  const wb = q.writeBuffer.bind(q);
  const cb = ctx.device.createBuffer.bind(ctx.device);
  (q as { writeBuffer: unknown }).writeBuffer = (...args: Parameters<GPUQueue['writeBuffer']>) => {
    const t = performance.now();
    wb(...args);
    acc += performance.now() - t;
  };
  (ctx.device as { createBuffer: unknown }).createBuffer = (d: GPUBufferDescriptor) => {
    const t = performance.now();
    const b = cb(d);
    acc += performance.now() - t;
    return b;
  };
  return {
    reset: () => {
      acc = 0;
    },
    ms: () => acc,
  };
}

const kernelList: AnySpmvKernel[] = kernels.filter((k) => !kernelFilter || kernelFilter.includes(k.id));
const variantsOf = (k: AnySpmvKernel) => (defaultsOnly ? [{ ...k.defaults }] : kernelVariants(k));
const keyOf = (k: AnySpmvKernel, p: Record<string, number>) => JSON.stringify(k.formatParams?.(p) ?? {});

function convert(a: CsrMatrix, k: AnySpmvKernel, p: Record<string, number>): object {
  return k.format === 'csr' ? a : getFormat(k.format).fromCsr(a, k.formatParams?.(p));
}

/** Compile every pipeline on a small matrix so that timed uploads hold no compilation. */
function warmPipelines(ctx: GpuContext): void {
  const small = generators.powerLaw(3000, 3000, { alpha: 2.2, minLen: 1, maxLen: 200, seed: 9 });
  for (const k of kernelList) {
    for (const p of variantsOf(k)) {
      try {
        const m = convert(small, k, p);
        if (k.supports(m, ctx.limits, p) === true) k.upload(ctx, m, p).dispose();
      } catch {
        // reported in the timed pass
      }
    }
  }
}

const ctx = await createGpuContext();
ctx.buffers.maxPooledBytes = 0; // destroy released buffers at once: uploads of 10^7 non-zeros are GBs
const rows: Row[] = [];
try {
  const probe = instrument(ctx);
  warmPipelines(ctx);
  await ctx.finish();
  for (const [name, make] of matrixSet(args.set)) {
    if (onlyFilter && !onlyFilter.some((f) => name.includes(f))) continue;
    const a = make();
    console.log(`\n${name}: ${a.rows} rows, ${csrNnz(a)} nnz`);
    for (const k of kernelList) {
      // conversions are shared by the variants of one kernel only (each format has one kernel
      // here): dropped after it, so at most one kernel's conversions are held (GBs at 10^7 nnz)
      const converted = new Map<string, object | Error>();
      for (const p of variantsOf(k)) {
        const fp = keyOf(k, p);
        const ckey = `${k.format}${fp}`;
        if (!converted.has(ckey)) {
          let best = Number.POSITIVE_INFINITY;
          let m: object | Error = a;
          for (let r = 0; r < reps && k.format !== 'csr'; r++) {
            m = undefined as unknown as object;
            const t0 = performance.now();
            try {
              m = convert(a, k, p);
            } catch (e) {
              m = e as Error;
              break;
            }
            best = Math.min(best, performance.now() - t0);
          }
          converted.set(ckey, m);
          if (k.format !== 'csr') {
            const row: Row = m instanceof Error ? { matrix: name, format: k.format, formatParams: fp, error: m.message.slice(0, 160) } : { matrix: name, format: k.format, formatParams: fp, ms: best };
            rows.push(row);
            console.log(`  fromCsr ${k.format.padEnd(12)} ${fp.padEnd(34)} ${row.error ? `error: ${row.error}` : `${best.toFixed(1).padStart(9)} ms`}`);
          }
        }
        const m = converted.get(ckey)!;
        if (m instanceof Error) continue;
        const row: Row = { matrix: name, format: k.format, formatParams: fp, kernel: k.id, params: p };
        const ok = k.supports(m, ctx.limits, p);
        if (ok !== true) row.error = `unsupported: ${ok}`.slice(0, 160);
        else {
          probe.reset();
          let h: DeviceMatrix | undefined;
          const t0 = performance.now();
          try {
            h = k.upload(ctx, m, p);
            row.ms = performance.now() - t0;
            row.deviceCallMs = probe.ms();
            row.hostPrepMs = row.ms - row.deviceCallMs;
          } catch (e) {
            row.error = (e as Error).message.slice(0, 160);
          }
          await ctx.finish();
          h?.dispose();
          await ctx.finish();
        }
        rows.push(row);
        const shown = Object.entries(p)
          .map(([n, v]) => `${n}=${v}`)
          .join(',');
        console.log(
          `  upload  ${k.id.padEnd(12)} ${shown.padEnd(34)} ${row.error ? `error: ${row.error}` : `${row.ms!.toFixed(1).padStart(9)} ms (host prep ${row.hostPrepMs!.toFixed(1)}, device calls ${row.deviceCallMs!.toFixed(1)})`}`,
        );
      }
    }
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, JSON.stringify({ quick, reps, rows }, null, 1));
  }
} finally {
  ctx.dispose();
}

// summary: per matrix, fromCsr ms by format (the worst over its parameter sets) and the worst host prep per kernel
const matrices = [...new Set(rows.map((r) => r.matrix))];
const fmts = [...new Set(rows.filter((r) => !r.kernel).map((r) => r.format))];
const worst = (xs: (number | undefined)[]) => {
  const v = xs.filter((x): x is number => x !== undefined);
  return v.length ? Math.max(...v).toFixed(0) : '-';
};
console.log(`\nfromCsr ms (max over parameter sets)\n${['format', ...matrices].map((s, i) => (i ? s.slice(0, 16).padStart(17) : s.padEnd(12))).join('')}`);
for (const f of fmts) {
  console.log(f.padEnd(12) + matrices.map((mx) => worst(rows.filter((r) => !r.kernel && r.format === f && r.matrix === mx).map((r) => r.ms)).padStart(17)).join(''));
}
console.log(`\nupload host prep ms (max over parameter sets)\n${['kernel', ...matrices].map((s, i) => (i ? s.slice(0, 16).padStart(17) : s.padEnd(12))).join('')}`);
for (const k of kernelList) {
  console.log(k.id.padEnd(12) + matrices.map((mx) => worst(rows.filter((r) => r.kernel === k.id && r.matrix === mx).map((r) => r.hostPrepMs)).padStart(17)).join(''));
}
console.log(`\nwrote ${out}`);
