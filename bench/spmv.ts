/**
 * SpMV benchmark of every registered GPU kernel (and its parameter variants) on a matrix set:
 * generated matrices of 10^6–10^7 rows (banded, 2-D and 3-D stencils, uniform random columns,
 * power-law row lengths, CI-like rows of ~1000 non-zeros with a dense Reference band — seed 001)
 * plus Matrix Market files given on the command line. Writes JSON to `--out`.
 *
 * Per (matrix, kernel, params): median / min / mean ms (GPU timestamps when available, else
 * wall clock over batched repetitions), GFLOP/s = 2·nnz / t, GB/s over the minimum traffic
 * (device matrix bytes + x once + y once), that GB/s as a fraction of a copy bandwidth measured
 * in the same run with WGSL copy kernels (f32 and vec4, the faster one), bytes stored (the format's storage formula,
 * float32 values), and a correctness check against the float64 reference (conformance bound,
 * c = 2).
 *
 * Run locally (lavapipe): `pnpm tsx bench/spmv.ts --quick --out bench/out/spmv-quick.json`.
 * Run on an H100: bundle with esbuild (webgpu external), carry `.gpukit`, then
 * `bash .gpukit/enter.sh node .gpukit/app/spmv.mjs --out $OUT/spmv.json [files.mtx ...]`.
 * Flags: --quick (small sizes), --out FILE, --reps N, --kernels id,id, --only name,name,
 * --no-variants (defaults only; --sweep id,id keeps the variants of those kernels), --dump DIR (write NAME.rowptr/.cols/.vals for .gpukit/cusparse_anchor.py),
 * --max-binding-bytes N (plan bindings of N bytes: exercises splitting on a small device),
 * --powerlaw ROWS:MAXLEN[:MINLEN[:ALPHA]] (add a generated power-law matrix; --only powerlaw-ROWS- runs it alone),
 * --fcidump FILE[:IRREP] (repeatable: add the determinant CI Hamiltonian that packages/chem assembles
 * from FILE — FCI space, the file's MS2, IRREP 1-based or the file's ISYM — named ci-<file>; with
 * --dump its raw CSR goes beside the others for cusparse_anchor.py).
 * A kernel that fails is reported with its error (JSON `error`) and the others are still timed.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { type CsrMatrix, csrNnz, csrSpmv, GpuSparseError, generators, getFormat, readMatrixMarket } from '@gpusparse/formats';
import { Blas1, createGpuContext, type DeviceMatrix, entryArgs, type GpuContext, kernels, kernelVariants, preamble, readF32, signature, supportsCsr, timeGpu, Uniforms, uploadF32 } from '@gpusparse/gpu';
import { assembleHamiltonian, buildCiSpace } from '../packages/chem/src/index';
import { readFcidump } from '../packages/chem/src/node';
import { dumpCsr } from './dump';
import { benchMatrixSet } from './matrix-set';

const argv = process.argv.slice(2);
const flag = (name: string) => argv.includes(name);
const opt = (name: string): string | undefined => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
};
const quick = flag('--quick');
const out = opt('--out') ?? 'bench/out/spmv.json';
const reps = Number(opt('--reps') ?? (quick ? 5 : 30));
const kernelFilter = opt('--kernels')?.split(',');
const onlyFilter = opt('--only')?.split(',');
const dumpDir = opt('--dump');
const sweep = opt('--sweep')?.split(',');
const fcidumps = argv.flatMap((a, i) => (a === '--fcidump' && argv[i + 1] ? [argv[i + 1]!] : []));
const valueArgs = new Set([...fcidumps, ...['--out', '--reps', '--kernels', '--only', '--dump', '--sweep', '--max-binding-bytes', '--powerlaw'].flatMap((f) => (opt(f) ? [opt(f)!] : []))]);
const files = argv.filter((a) => !a.startsWith('--') && !valueArgs.has(a));

/** The generated matrix set (shared with bench/tune.ts): name and a thunk (built lazily, one at a time). */
const matrixSet = (): [string, () => CsrMatrix][] => benchMatrixSet(quick);

/** WGSL copy kernels for the bandwidth reference: f32 (the BLAS-1 copy) and vec4<f32>. */
function copyVec4(ctx: GpuContext) {
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

/** Copy bandwidth (GB/s, bytes read + written): the better of the f32 and vec4 WGSL copy kernels. */
async function copyBandwidth(ctx: GpuContext): Promise<{ gbs: number; bytes: number; ms: number; method: string; kernel: string }> {
  const n = Math.min(quick ? 1 << 22 : 1 << 27, Math.floor(ctx.limits.maxStorageBufferBindingSize / 16) * 4);
  const a = ctx.buffers.acquire(n * 4);
  const b = ctx.buffers.acquire(n * 4);
  const b1 = Blas1.of(ctx);
  const t1 = await timeGpu(ctx, () => b1.copy(a, b, n), { reps });
  const pipe = copyVec4(ctx);
  const u = new Uniforms();
  u.u[0] = n / 4;
  const t4 = await timeGpu(ctx, () => ctx.recorder.dispatch(pipe, [a, b], u, Math.ceil(n / 4 / 256)), { reps });
  a.dispose();
  b.dispose();
  const best = t4.medianMs < t1.medianMs ? { t: t4, kernel: 'vec4<f32>' } : { t: t1, kernel: 'f32' };
  console.log(`copy kernels: f32 ${((8 * n) / (t1.medianMs * 1e6)).toFixed(0)} GB/s, vec4 ${((8 * n) / (t4.medianMs * 1e6)).toFixed(0)} GB/s`);
  return { gbs: (8 * n) / (best.t.medianMs * 1e6), bytes: 8 * n, ms: best.t.medianMs, method: best.t.method, kernel: best.kernel };
}

interface Row {
  kernel: string;
  params: Record<string, number>;
  medianMs?: number;
  minMs?: number;
  meanMs?: number;
  method?: string;
  gflops?: number;
  gbs?: number;
  fractionOfCopy?: number;
  bytesStored?: number;
  deviceBytes?: number;
  bindingBlocks?: number;
  uploadMs?: number;
  maxErrOverBound?: number;
  correct?: boolean;
  /** supports()'s reason for not running this matrix. */
  skipped?: string;
  /** The error a supported kernel failed with (the others are still timed). */
  error?: string;
}

async function benchMatrix(ctx: GpuContext, name: string, a: CsrMatrix, copyGbs: number): Promise<Record<string, unknown>> {
  const nnz = csrNnz(a);
  const x = Float64Array.from({ length: a.cols }, (_, i) => Math.fround(Math.sin(i + 1)));
  const a32 = { ...a, values: Float64Array.from(Float32Array.from(a.values)) };
  const ref = csrSpmv(a32, x);
  const bound = new Float64Array(a.rows);
  for (let i = 0; i < a.rows; i++) {
    let s = 0;
    for (let k = a.rowPtr[i]!; k < a.rowPtr[i + 1]!; k++) s += Math.abs(a32.values[k]! * x[a.colIdx[k]!]!);
    bound[i] = 2 * (a.rowPtr[i + 1]! - a.rowPtr[i]!) * 2 ** -24 * s;
  }
  const dx = uploadF32(ctx, x);
  const dy = ctx.buffers.acquire(a.rows * 4);
  const rows: Row[] = [];
  for (const k of kernels) {
    if (kernelFilter && !kernelFilter.includes(k.id)) continue;
    const variants = flag('--no-variants') && !sweep?.includes(k.id) ? [{ ...k.defaults }] : kernelVariants(k);
    for (const params of variants) {
      const row: Row = { kernel: k.id, params };
      rows.push(row);
      let h: DeviceMatrix | undefined;
      try {
        const pre = supportsCsr(k, a32, ctx.limits, params); // before any conversion
        if (pre !== true) {
          row.skipped = pre;
          console.log(`  ${k.id} ${JSON.stringify(params)}: unsupported: ${pre}`);
          continue;
        }
        const fmt = getFormat(k.format);
        let m: unknown;
        try {
          m = k.format === 'csr' ? a32 : fmt.fromCsr(a32, k.formatParams?.(params));
        } catch (e) {
          if (!(e instanceof GpuSparseError)) throw e; // a bug, reported as a failure below
          // the format itself refuses this matrix (e.g. too many diagonals): unsupported, not a kernel failure
          row.skipped = `conversion refused: ${(e as Error).message}`;
          console.log(`  ${k.id} ${JSON.stringify(params)}: unsupported: ${row.skipped}`);
          continue;
        }
        const ok = k.supports(m, ctx.limits, params);
        if (ok !== true) {
          row.skipped = ok;
          console.log(`  ${k.id} ${JSON.stringify(params)}: unsupported: ${ok}`);
          continue;
        }
        row.bytesStored = fmt.storageBytes(k.format === 'csr' ? { ...a32, nnz } : m, { valueBytes: 4, indexBytes: 4 }).bytes;
        const t0 = performance.now();
        const hm: DeviceMatrix = k.upload(ctx, m, params);
        h = hm;
        await ctx.finish();
        row.uploadMs = performance.now() - t0;
        row.deviceBytes = hm.deviceBytes;
        row.bindingBlocks = hm.blocks;
        k.encode(ctx, hm, dx, dy);
        const y = await readF32(ctx, dy, a.rows);
        const extra = k.errorBound?.(m, params, x); // a kernel's own allowance, as in the conformance tier
        let worst = 0;
        for (let i = 0; i < a.rows; i++) {
          const e = Math.abs(y[i]! - ref[i]!);
          const b = bound[i]! + (extra?.[i] ?? 0);
          worst = Math.max(worst, b > 0 ? e / b : e > 0 ? Number.POSITIVE_INFINITY : 0);
        }
        row.maxErrOverBound = worst;
        row.correct = worst <= 1;
        const t = await timeGpu(ctx, () => k.encode(ctx, hm, dx, dy), { reps });
        const traffic = hm.deviceBytes + 4 * a.cols + 4 * a.rows;
        Object.assign(row, {
          medianMs: t.medianMs,
          minMs: t.minMs,
          meanMs: t.meanMs,
          method: t.method,
          gflops: (2 * nnz) / (t.medianMs * 1e6),
          gbs: traffic / (t.medianMs * 1e6),
          fractionOfCopy: traffic / (t.medianMs * 1e6) / copyGbs,
        });
        console.log(`  ${k.id} ${JSON.stringify(params)}: ${t.medianMs.toFixed(3)} ms, ${row.gflops!.toFixed(1)} GFLOP/s, ${row.gbs!.toFixed(0)} GB/s (${(100 * row.fractionOfCopy!).toFixed(0)} % of copy)${row.correct ? '' : ` WRONG (max error ${worst.toPrecision(3)}× the bound)`}`);
      } catch (e) {
        // report the failing kernel and go on: the context drops everything the failure touched
        row.error = `${(e as Error).name}: ${(e as Error).message}`;
        console.log(`  ${k.id} ${JSON.stringify(params)}: FAILED ${row.error}`);
        const rest = await ctx.finish().then(
          () => '',
          (e2: unknown) => `${(e2 as Error).name}: ${(e2 as Error).message}`,
        );
        if (rest) row.error += ` (then: ${rest})`;
      } finally {
        h?.dispose();
      }
    }
  }
  dx.dispose();
  dy.dispose();
  let maxRow = 0;
  for (let i = 0; i < a.rows; i++) maxRow = Math.max(maxRow, a.rowPtr[i + 1]! - a.rowPtr[i]!);
  return { name, rows: a.rows, cols: a.cols, nnz, maxRowLength: maxRow, results: rows };
}

/** A CI Hamiltonian case: `FILE[:IRREP]` → [name, builder] (float64 CSR from the chem assembly, all cores). */
function ciCase(spec: string): [string, () => Promise<CsrMatrix>] {
  const m = /^(.*?)(?::(\d+))?$/.exec(spec)!;
  const file = m[1]!;
  const irrep = m[2] ? Number(m[2]) : 'isym';
  const name = `ci-${basename(file).replace(/\.FCIDUMP(\.gz)?$/i, '')}${m[2] ? `-irrep${m[2]}` : ''}`;
  return [
    name,
    async () => {
      const fd = await readFcidump(file);
      const { fcidump, space } = buildCiSpace(fd, 'fci', { irrep });
      const h = await assembleHamiltonian(fcidump, space, { workers: 'auto' });
      return h.matrix;
    },
  ];
}

function dump(name: string, a: CsrMatrix): void {
  if (dumpDir) dumpCsr(dumpDir, name, a);
}

async function main(): Promise<void> {
  const cap = opt('--max-binding-bytes');
  const ctx = await createGpuContext({ unsafe: flag('--unsafe'), maxBindingBytes: cap ? Number(cap) : undefined });
  console.log(ctx.describeText());
  const copy = await copyBandwidth(ctx);
  console.log(`copy bandwidth: ${copy.gbs.toFixed(0)} GB/s (${copy.method}, ${(copy.bytes / 1e6).toFixed(0)} MB moved in ${copy.ms.toFixed(3)} ms)`);
  const results: Record<string, unknown>[] = [];
  const set: [string, () => Promise<CsrMatrix> | CsrMatrix][] = matrixSet();
  for (const f of files) set.push([basename(f).replace(/\.mtx(\.gz)?$/, ''), async () => (await readMatrixMarket(f, { strictCount: false })).matrix]);
  const pl = opt('--powerlaw');
  if (pl) {
    // near issue 14's matrix: --powerlaw 1000000:2000:2:2 (rows : longest : shortest row : alpha; 15.6 M entries)
    const [rows = 1e6, maxLen = 2000, minLen = 2, alpha = 2.2] = pl.split(':').map(Number);
    set.push([`powerlaw-${rows}-${minLen}..${maxLen}-a${alpha}`, () => generators.powerLaw(rows, rows, { alpha, minLen, maxLen, seed: 3 })]);
  }
  for (const spec of fcidumps) set.push(ciCase(spec));
  for (const [name, make] of set) {
    if (onlyFilter && !onlyFilter.some((o) => name.startsWith(o))) continue;
    const t0 = performance.now();
    const a = await make();
    console.log(`${name}: ${a.rows}×${a.cols}, ${csrNnz(a)} nnz (built in ${((performance.now() - t0) / 1e3).toFixed(1)} s)`);
    dump(name, a);
    results.push(await benchMatrix(ctx, name, a, copy.gbs));
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, JSON.stringify({ date: new Date().toISOString(), quick, reps, device: ctx.describe(), copyBandwidth: copy, matrices: results }, null, 1));
  }
  const failed = results.flatMap((r) => (r.results as Row[]).filter((x) => x.error || x.correct === false).map((x) => `${r.name} ${x.kernel} ${JSON.stringify(x.params)}: ${x.error ?? `WRONG (${x.maxErrOverBound?.toPrecision(3)}× the bound)`}`));
  console.log(failed.length ? `${failed.length} kernel runs failed or were wrong:\n  ${failed.join('\n  ')}` : 'every supported kernel ran and passed the check');
  console.log(`wrote ${out}`);
  ctx.dispose();
}

await main();
