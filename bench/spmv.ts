/**
 * SpMV benchmark of every registered GPU kernel (and its parameter variants) on a matrix set:
 * generated matrices of 10^6–10^7 rows (banded, 2-D and 3-D stencils, uniform random columns,
 * power-law row lengths, CI-like rows of ~1000 non-zeros with a dense Reference band — seed 001;
 * and the 27-point stencil 120³ of the df64 CG bench, `stencil27-120^3`, 26 / −1, 4.6·10^7 nnz)
 * plus Matrix Market files given on the command line (or raw CSR triples written by --dump, named NAME.csr;
 * --no-generated times only the files). Writes JSON to `--out`.
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
 * Each (kernel, params) runs `--rounds` times (default 2; each round a fresh upload, the other
 * kernels in between) and the spread between rounds is reported; each matrix also times the vec4
 * copy of its CSR product's bytes (fractionOfCopySameBytes: that copy's time over the kernel's).
 * Flags: --quick (small sizes), --out FILE, --reps N, --rounds N, --kernels id,id, --only name,name,
 * --no-variants (defaults only; --sweep id,id keeps the variants of those kernels), --dump DIR (write NAME.rowptr/.cols/.vals for .gpukit/cusparse_anchor.py),
 * --max-binding-bytes N (plan bindings of N bytes: exercises splitting on a small device),
 * --grid ID:NAME=V/V/…:NAME=V/… (repeatable, also per kernel: the sub-grids add up; that kernel runs the product of the listed values, its
 * other parameters at their defaults, instead of its variants; e.g. --grid csr-long:lanes=8/16:unroll=2/4),
 * --powerlaw ROWS:MAXLEN[:MINLEN[:ALPHA]] (add a generated power-law matrix; --only powerlaw-ROWS- runs it alone),
 * --fcidump FILE[:IRREP][:casE,O] (repeatable: add the determinant CI Hamiltonian that packages/chem assembles
 * from FILE — FCI space, or with `:casE,O` the CAS of E electrons in O orbitals (FCI in that active space),
 * the file's MS2, IRREP 1-based or the file's ISYM — named ci-<file>[-irrepN][-casEeOo]; with
 * --dump its raw CSR goes beside the others for cusparse_anchor.py),
 * --dump-only (build and --dump the selected matrices, no GPU: run cusparse_anchor.py on them before
 * the timed run), --cusparse FILE.jsonl (cusparse_anchor.py --json output: each summary line then
 * carries cuSPARSE's float32 time and the ratio), --heat-ms N (default 150, --quick 0: before each
 * timing, untimed products back to back for N ms, so that the GPU's SM clock has left its idle state —
 * on the H100 it sits at 345 MHz between bursts and reaches 1 980 MHz only under continuous load,
 * bench/RESULTS.md session 6), --warm-ms N (default 0: the 1 GiB copy of the bandwidth reference runs back
 * to back for N ms before anything is timed — the GPU command uses 1 000), --clock-log FILE (the CSV of
 * `nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem --format=csv -lms 100` running beside the bench:
 * each SUMMARY line then carries the SM clock sampled during that case's heats and timings, and
 * `CLOCK-LOW` below 1 500 MHz — bench/spmv-clock.ts).
 * --check-ci (each --fcidump case, after its dump and before any timing: symmetry, the lowest eigenvalue of the
 * assembled matrix against the CI driver's direct-σ energy and --reference E (Eh) to 1e-8 Eh; bench/fci-check.ts),
 * --budget-s N (no (kernel, round) starts after N s of the process: later ones are reported as not timed),
 * --single-round id,id (those kernels run once, after every round of the others), --keep-conversions (the host
 * conversions of the kernels that run several rounds are kept for the later rounds, which still upload afresh:
 * at 10^9 entries a conversion takes 10–30 s). --kernels runs in the order listed.
 * Byte accounting per kernel (bench/spmv-bytes.ts): DRAM bytes (its device arrays + x + y once), bytes
 * per stored entry, % of copy, the floor at copy speed, x gather bytes per 32-row block, and GB/s over
 * the CSR-equivalent bytes (the anchor's definition). One `SUMMARY` line per kernel and matrix and one
 * `BEST` line per matrix close the output.
 * A kernel that fails is reported with its error (JSON `error`) and the others are still timed.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { type CsrMatrix, type CsrViParams, csrNnz, csrSpmv, csrViFromCsrParallel, GpuSparseError, generators, getFormat, readMatrixMarket } from '@gpusparse/formats';
import { type AnySpmvKernel, Blas1, createGpuContext, type DeviceMatrix, experimentalKernels, type GpuBuf, type GpuContext, kernels, kernelVariants, readF32, supportsCsr, timeGpu, uploadF32 } from '@gpusparse/gpu';
import { assembleHamiltonian, buildCiSpace, type SpaceSpec } from '../packages/chem/src/index';
import { readFcidump } from '../packages/chem/src/node';
import { stencil27 } from './df64-matrices';
import { dumpCsr } from './dump';
import { type CiCheckInput, checkCiMatrix } from './fci-check';
import { benchMatrixSet } from './matrix-set';
import { accountBytes, gatherLinesPerEntry, readCusparse, xGatherBytes } from './spmv-bytes';
import { readRawCsr } from './spmv-raw';
import { type ClockRange, clockIn, clockText, readClockLog } from './spmv-clock';
import { copySameBytes, heat as heatFor, timeCopyVec4 } from './lib/spmv-timing';

const argv = process.argv.slice(2);
const flag = (name: string) => argv.includes(name);
const opt = (name: string): string | undefined => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
};
const quick = flag('--quick');
const out = opt('--out') ?? 'bench/out/spmv.json';
const reps = Number(opt('--reps') ?? (quick ? 5 : 30));
const rounds = Math.max(1, Number(opt('--rounds') ?? 2));
const kernelFilter = opt('--kernels')?.split(',');
const onlyFilter = opt('--only')?.split(',');
const dumpDir = opt('--dump');
const sweep = opt('--sweep')?.split(',');
const fcidumps = argv.flatMap((a, i) => (a === '--fcidump' && argv[i + 1] ? [argv[i + 1]!] : []));
const grids = argv.flatMap((a, i) => (a === '--grid' && argv[i + 1] ? [argv[i + 1]!] : []));
const heatMs = Number(opt('--heat-ms') ?? (quick ? 0 : 150));
const dumpOnly = flag('--dump-only');
const cusparse = readCusparse(opt('--cusparse'));
const warmMs = Number(opt('--warm-ms') ?? 0);
const clockLog = opt('--clock-log');
const checkCi = flag('--check-ci');
const reference = opt('--reference') === undefined ? undefined : Number(opt('--reference'));
const budgetS = opt('--budget-s') === undefined ? undefined : Number(opt('--budget-s'));
const singleRound = new Set(opt('--single-round')?.split(',') ?? []);
const keepConversions = flag('--keep-conversions');
// every value of a flag that takes one (all occurrences: a repeated flag's first value wins, the others are not files)
const valueFlags = new Set(['--fcidump', '--grid', '--out', '--reps', '--rounds', '--kernels', '--only', '--dump', '--sweep', '--max-binding-bytes', '--powerlaw', '--heat-ms', '--cusparse', '--warm-ms', '--clock-log', '--reference', '--budget-s', '--single-round']);
const valueArgs = new Set(argv.flatMap((a, i) => (valueFlags.has(a) && argv[i + 1] !== undefined ? [argv[i + 1]!] : [])));
const files = argv.filter((a) => !a.startsWith('--') && !valueArgs.has(a));

/** The generated matrix set (shared with bench/tune.ts): name and a thunk (built lazily, one at a time). */
const matrixSet = (): [string, () => CsrMatrix][] => benchMatrixSet(quick);

/** How this run times a copy (heat, repetitions, the clock log). */
const copyTiming = () => ({ heatMs, reps, clockLog });

/** {@link heatFor} with this run's --heat-ms and --clock-log. */
const heat = (ctx: GpuContext, encode: () => void, ms = heatMs) => heatFor(ctx, encode, ms, clockLog);

/** Copy bandwidth (GB/s, bytes read + written): the better of the f32 and vec4 WGSL copy kernels. */
async function copyBandwidth(ctx: GpuContext): Promise<{ gbs: number; bytes: number; ms: number; method: string; kernel: string }> {
  const n = Math.min(quick ? 1 << 22 : 1 << 27, Math.floor(ctx.limits.maxStorageBufferBindingSize / 16) * 4);
  const a = ctx.buffers.acquire(n * 4);
  const b = ctx.buffers.acquire(n * 4);
  const b1 = Blas1.of(ctx);
  await heat(ctx, () => b1.copy(a, b, n), Math.max(heatMs, warmMs));
  const t1 = await timeGpu(ctx, () => b1.copy(a, b, n), { reps });
  const t4 = await timeCopyVec4(ctx, n, a, b, copyTiming());
  a.dispose();
  b.dispose();
  const best = t4.medianMs < t1.medianMs ? { t: t4, kernel: 'vec4<f32>' } : { t: t1, kernel: 'f32' };
  console.log(`copy kernels: f32 ${((8 * n) / (t1.medianMs * 1e6)).toFixed(0)} GB/s, vec4 ${((8 * n) / (t4.medianMs * 1e6)).toFixed(0)} GB/s`);
  return { gbs: (8 * n) / (best.t.medianMs * 1e6), bytes: 8 * n, ms: best.t.medianMs, method: best.t.method, kernel: best.kernel };
}

interface Row {
  kernel: string;
  params: Record<string, number>;
  /** Median of the per-round medians (rounds: --rounds, each a fresh upload, other kernels in between). */
  medianMs?: number;
  /** Each round's median, in order; spread = max / min − 1. */
  roundMs?: number[];
  spread?: number;
  minMs?: number;
  meanMs?: number;
  method?: string;
  gflops?: number;
  gbs?: number;
  fractionOfCopy?: number;
  /** Byte accounting (bench/spmv-bytes.ts): DRAM bytes, bytes per entry, floor at copy speed, GB/s over CSR bytes and with x gathers. */
  dramBytes?: number;
  matrixBytesPerNnz?: number;
  floorMs?: number;
  csrGbs?: number;
  gatherGbs?: number;
  /** cuSPARSE float32 ms of the same matrix (--cusparse) and cuSPARSE / ours. */
  cusparseMs?: number;
  vsCusparse?: number;
  /** The vec4 copy of the CSR product's bytes (8·nnz + 8·rows + 4·cols) over this kernel's time. */
  fractionOfCopySameBytes?: number;
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
  /** Later rounds not run: --budget-s was reached (the figures are the rounds that ran). */
  budgetCut?: boolean;
  /** Wall-clock window (epoch ms) of each round's heat + timing, and the SM clock sampled in them (--clock-log). */
  windows?: [number, number][];
  clock?: ClockRange;
}

/** What every variant of one matrix is checked and timed against. */
interface Case {
  a32: CsrMatrix;
  nnz: number;
  x: Float64Array;
  ref: Float64Array;
  bound: Float64Array;
  dx: GpuBuf;
  dy: GpuBuf;
  copyGbs: number;
  copySameMs: number;
  /** x bytes gathered by 32-row blocks at 32-byte sectors ({@link xGatherBytes}). */
  xGather: number;
  /** Distinct 128-byte x lines per entry, 32 entries of a row / the k-th entries of 32 rows together ({@link gatherLinesPerEntry}). */
  linesRow: number;
  linesSlice: number;
  /** The last conversion (format + format parameters → matrix): variants of one kernel, and dia / dia-tiled, share it. */
  conv?: { key: string; m: unknown };
  /** --keep-conversions: the conversions of kernels that run more than one round, kept for the later rounds (each round still uploads afresh). */
  kept?: Map<string, unknown>;
}

/**
 * Convert `c.a32` for kernel `k` (or say why it cannot run); the matrix to upload or the reason.
 * csr-vi converts on worker threads (csrViFromCsrParallel: its serial pass took 58 ns per entry on
 * the H100 host, past the call's step at 1.4·10^9 entries; same result).
 */
async function convertFor(ctx: GpuContext, k: AnySpmvKernel, params: Record<string, number>, c: Case): Promise<{ m: unknown } | { skipped: string }> {
  const a32 = c.a32;
  const pre = supportsCsr(k, a32, ctx.limits, params); // before any conversion
  if (pre !== true) return { skipped: pre };
  let m: unknown;
  try {
    const fp = k.formatParams?.(params);
    const key = `${k.format}:${JSON.stringify(fp ?? null)}`;
    if (k.format === 'csr') m = a32;
    else if (c.kept?.has(key)) m = c.kept.get(key);
    else if (c.conv?.key === key) m = c.conv.m;
    else {
      c.conv = undefined; // free the previous conversion before building the next
      m = k.format === 'csr-vi' ? await csrViFromCsrParallel(a32, fp as Partial<CsrViParams>) : getFormat(k.format).fromCsr(a32, fp);
      if (keepConversions && rounds > 1 && !singleRound.has(k.id)) (c.kept ??= new Map()).set(key, m);
      else c.conv = { key, m };
    }
  } catch (e) {
    if (!(e instanceof GpuSparseError)) throw e; // a bug, reported as a failure by the caller
    // the format itself refuses this matrix (e.g. too many diagonals): unsupported, not a kernel failure
    return { skipped: `conversion refused: ${(e as Error).message}` };
  }
  const ok = k.supports(m, ctx.limits, params);
  return ok === true ? { m } : { skipped: ok };
}

/** Worst |y − ref| / bound over the rows (∞ where the bound is 0 and the error is not). */
function worstRatio(y: ArrayLike<number>, c: Case, extra?: Float64Array): number {
  let worst = 0;
  for (let i = 0; i < y.length; i++) {
    const e = Math.abs(y[i]! - c.ref[i]!);
    const b = c.bound[i]! + (extra?.[i] ?? 0);
    worst = Math.max(worst, b > 0 ? e / b : e > 0 ? Number.POSITIVE_INFINITY : 0);
  }
  return worst;
}

/** One round of one variant: upload, (first round) check against the reference, time. */
async function runVariant(ctx: GpuContext, k: AnySpmvKernel, row: Row, c: Case, first: boolean): Promise<void> {
  const tc = performance.now();
  const conv = await convertFor(ctx, k, row.params, c);
  const convertS = (performance.now() - tc) / 1000;
  if ('skipped' in conv) {
    row.skipped = conv.skipped;
    console.log(`  ${k.id} ${JSON.stringify(row.params)}: unsupported: ${conv.skipped}`);
    return;
  }
  const fmt = getFormat(k.format);
  row.bytesStored = fmt.storageBytes(k.format === 'csr' ? { ...c.a32, nnz: c.nnz } : conv.m, { valueBytes: 4, indexBytes: 4 }).bytes;
  const t0 = performance.now();
  const h: DeviceMatrix = k.upload(ctx, conv.m, row.params);
  try {
    await ctx.finish();
    if (first) {
      row.uploadMs = performance.now() - t0;
      row.deviceBytes = h.deviceBytes;
      row.bindingBlocks = h.blocks;
      k.encode(ctx, h, c.dx, c.dy);
      row.maxErrOverBound = worstRatio(await readF32(ctx, c.dy, c.a32.rows), c, k.errorBound?.(conv.m, row.params, c.x));
      row.correct = row.maxErrOverBound <= 1;
    }
    const w0 = Date.now();
    await heat(ctx, () => k.encode(ctx, h, c.dx, c.dy));
    const t = await timeGpu(ctx, () => k.encode(ctx, h, c.dx, c.dy), { reps });
    (row.windows ??= []).push([w0, Date.now()]);
    (row.roundMs ??= []).push(t.medianMs);
    // as it happens, so that a call cut short still shows what was timed
    console.log(`  ${k.id} ${JSON.stringify(row.params)}: round ${row.roundMs.length} ${t.medianMs.toFixed(4)} ms (host conversion ${convertS.toFixed(1)} s)${first ? ` (upload ${(row.uploadMs! / 1000).toFixed(1)} s, ${row.correct ? 'correct' : 'WRONG'})` : ''}`);
    row.minMs = Math.min(row.minMs ?? Number.POSITIVE_INFINITY, t.minMs);
    row.meanMs = t.meanMs;
    row.method = t.method;
  } finally {
    h.dispose();
  }
}

/** Fill the derived figures of a timed row from its rounds and the byte accounting; print it. */
function summarize(row: Row, c: Case, rows: number, cols: number, name: string): void {
  const ms = [...row.roundMs!].sort((p, q) => p - q);
  const med = ms.length % 2 ? ms[(ms.length - 1) / 2]! : (ms[ms.length / 2 - 1]! + ms[ms.length / 2]!) / 2;
  const b = accountBytes({ rows, cols, nnz: c.nnz, deviceBytes: row.deviceBytes!, xGather: c.xGather, ms: med, copyGbs: c.copyGbs });
  const vendor = cusparse.get(name);
  Object.assign(row, {
    medianMs: med,
    spread: ms[ms.length - 1]! / ms[0]! - 1,
    gflops: (2 * c.nnz) / (med * 1e6),
    ...b,
    fractionOfCopySameBytes: c.copySameMs / med,
    ...(vendor ? { cusparseMs: vendor, vsCusparse: vendor / med } : {}),
  });
  const rounds = row.roundMs!.map((t) => t.toFixed(3)).join(' / ');
  console.log(
    `  ${row.kernel} ${JSON.stringify(row.params)}: ${med.toFixed(3)} ms (rounds ${rounds}, spread ${(100 * row.spread!).toFixed(0)} %), ${row.gflops!.toFixed(1)} GFLOP/s, ${b.gbs.toFixed(0)} GB/s (${(100 * b.fractionOfCopy).toFixed(0)} % of copy; CSR bytes copied in ${(100 * row.fractionOfCopySameBytes!).toFixed(0)} % of this time)${row.correct ? '' : ` WRONG (max error ${row.maxErrOverBound!.toPrecision(3)}× the bound)`}`,
  );
}

/** `a=1,b=2` from a parameter record, without the parameters that never vary (maxDiagonals). */
const paramText = (p: Record<string, number>): string =>
  Object.entries(p)
    .filter(([n]) => n !== 'maxDiagonals')
    .map(([n, v]) => `${n}=${v}`)
    .join(',');

/** One line per timed kernel of a matrix, then the matrix's best (the lines the GPU command's reader greps). */
function summaryLines(name: string, rows: Row[]): string[] {
  const timed = rows.filter((r) => r.medianMs !== undefined);
  const line = (r: Row) =>
    `${name} ${r.kernel} ${paramText(r.params)} | ${r.medianMs!.toFixed(4)} ms (${r.roundMs!.map((t) => t.toFixed(4)).join('/')}) | ${r.gbs!.toFixed(0)} GB/s = ${(100 * r.fractionOfCopy!).toFixed(0)} % copy | ${r.matrixBytesPerNnz!.toFixed(2)} B/nnz, floor ${r.floorMs!.toFixed(4)} ms | CSR-eq ${r.csrGbs!.toFixed(0)} GB/s, x-gather ${r.gatherGbs!.toFixed(0)} GB/s` +
    (r.cusparseMs ? ` | cuSPARSE ${r.cusparseMs.toFixed(4)} ms → ${r.vsCusparse!.toFixed(2)}×` : '') +
    (clockLog ? clockText(r.clock) : '') +
    (r.correct ? '' : ' | WRONG');
  const ok = timed.filter((r) => r.correct);
  const best = ok.reduce<Row | undefined>((b, r) => (!b || r.medianMs! < b.medianMs! ? r : b), undefined);
  return [...timed.map((r) => `SUMMARY ${line(r)}`), ...(best ? [`BEST ${line(best)}`] : [`BEST ${name}: no kernel ran correctly`])];
}

/** Entries above which the gather-line counts sample blocks of rows ({@link gatherLinesPerEntry}'s maxEntries). */
const GATHER_SAMPLE = 6e7;

/** Build the reference, bounds and device vectors of one matrix. */
async function makeCase(ctx: GpuContext, a: CsrMatrix, copyGbs: number): Promise<Case> {
  const nnz = csrNnz(a);
  const x = Float64Array.from({ length: a.cols }, (_, i) => Math.fround(Math.sin(i + 1)));
  const t0 = performance.now();
  const a32 = { ...a, values: Float64Array.from(Float32Array.from(a.values)) };
  const ref = csrSpmv(a32, x);
  const bound = new Float64Array(a.rows);
  for (let i = 0; i < a.rows; i++) {
    let s = 0;
    for (let k = a.rowPtr[i]!; k < a.rowPtr[i + 1]!; k++) s += Math.abs(a32.values[k]! * x[a.colIdx[k]!]!);
    bound[i] = 2 * (a.rowPtr[i + 1]! - a.rowPtr[i]!) * 2 ** -24 * s;
  }
  const xGather = xGatherBytes(a);
  // above 6·10^7 entries (H10 and the generated set stay exact) every s-th block of 32 rows: ~6·10^7 set insertions per mode
  const [linesRow, linesSlice] = [gatherLinesPerEntry(a, 'row', 128, 32, GATHER_SAMPLE), gatherLinesPerEntry(a, 'slice', 128, 32, GATHER_SAMPLE)];
  if (nnz > GATHER_SAMPLE) console.log(`  gather lines sampled: every ${Math.ceil(nnz / GATHER_SAMPLE)}th block of 32 rows`);
  console.log(`  x: ${(xGather / (4 * a.cols)).toFixed(1)}× its bytes gathered per 32-row block; 128-byte lines per entry: ${linesRow.toFixed(3)} (32 entries of a row), ${linesSlice.toFixed(3)} (slot k of 32 rows)`);
  console.log(`  float32 copy, reference product, bounds and gather counts: ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  const traffic = 8 * nnz + 8 * a.rows + 4 * a.cols;
  const same = await copySameBytes(ctx, traffic, copyTiming());
  const scaled = same.moved < traffic ? ` — ${(same.moved / 1e6).toPrecision(3)} MB (one binding) copied, the time scaled` : '';
  console.log(`  vec4 copy of the CSR product's ${(traffic / 1e6).toFixed(0)} MB: ${same.ms.toFixed(3)} ms (${same.gbs.toFixed(0)} GB/s${scaled})`);
  return { a32, nnz, x, ref, bound, dx: uploadF32(ctx, x), dy: ctx.buffers.acquire(a.rows * 4), copyGbs, copySameMs: same.ms, xGather, linesRow, linesSlice };
}

/**
 * The product of the values a `--grid ID:NAME=V/V:…` flag lists for kernel `k` (other parameters
 * at their defaults), concatenated over every such flag naming `k` (so one kernel can sweep
 * several sub-grids, e.g. one per layout), or undefined when no flag names `k`.
 * @throws RangeError naming the flag when a parameter is not one of the kernel's or a value is not a number
 */
function gridVariants(k: AnySpmvKernel): Record<string, number>[] | undefined {
  const specs = grids.filter((g) => g.split(':')[0] === k.id);
  if (specs.length === 0) return undefined;
  return specs.flatMap((spec) => {
    let out: Record<string, number>[] = [{ ...k.defaults }];
    for (const part of spec.split(':').slice(1)) {
      const [name, list] = part.split('=');
      const values = (list ?? '').split('/').map(Number);
      if (!name || !(name in k.params) || values.some((v) => !Number.isFinite(v))) {
        throw new RangeError(`--grid ${spec}: expected NAME=V/V/… with NAME one of ${Object.keys(k.params).join(', ')} and numbers, got '${part}'`);
      }
      out = out.flatMap((p) => values.map((v) => ({ ...p, [name]: v })));
    }
    return out;
  });
}

/** The kernels to time: --kernels in the order listed (an unknown id is an error), else every registered then experimental one. */
function selectedKernels(): AnySpmvKernel[] {
  const all = [...kernels, ...experimentalKernels];
  if (!kernelFilter) return all;
  return kernelFilter.map((id) => {
    const k = all.find((x) => x.id === id);
    if (!k) throw new RangeError(`--kernels: expected kernel ids (${all.map((x) => x.id).join(', ')}), got '${id}'`);
    return k;
  });
}

/**
 * Every selected (kernel, params) on `a`, `rounds` times: round 1 checks and times each in turn,
 * later rounds upload and time them again in the same order (so each case runs twice, other
 * kernels in between, and the spread between its rounds is reported).
 */
async function benchMatrix(ctx: GpuContext, name: string, a: CsrMatrix, copyGbs: number): Promise<Record<string, unknown>> {
  const c = await makeCase(ctx, a, copyGbs);
  const rows: Row[] = [];
  const work: [AnySpmvKernel, Row][] = [];
  // the registry's kernels, then the experimental ones (tested and timed, not yet tuner candidates)
  for (const k of selectedKernels()) {
    const grid = gridVariants(k);
    const variants = grid ?? (flag('--no-variants') && !sweep?.includes(k.id) ? [{ ...k.defaults }] : kernelVariants(k));
    for (const params of variants) work.push([k, { kernel: k.id, params }]);
  }
  // --single-round kernels: one round each, after every round of the others
  const passes = [...Array.from({ length: rounds }, (_, round) => ({ round, single: false })), { round: 0, single: true }];
  for (const { round, single } of passes) {
    if (round > 0) console.log(`  round ${round + 1} of ${rounds}`);
    if (single) c.kept = undefined; // every multi-round kernel is done: free its kept conversions
    if (single && singleRound.size > 0) console.log(`  single-round kernels (${[...singleRound].join(', ')})`);
    for (const [k, row] of work) {
      if (singleRound.has(k.id) !== single) continue;
      if (round === 0) rows.push(row);
      else if (row.skipped || row.error || !row.roundMs) continue;
      if (budgetS !== undefined && performance.now() / 1000 > budgetS) {
        if (round === 0) row.skipped = `not timed: --budget-s ${budgetS} reached`;
        else row.budgetCut = true;
        console.log(`  ${k.id} ${JSON.stringify(row.params)}: round ${round + 1} not run (--budget-s ${budgetS} reached)`);
        continue;
      }
      try {
        await runVariant(ctx, k, row, c, round === 0);
      } catch (e) {
        // report the failing kernel and go on: the context drops everything the failure touched
        row.error = `${(e as Error).name}: ${(e as Error).message}`;
        console.log(`  ${k.id} ${JSON.stringify(row.params)}: FAILED ${row.error}`);
        const rest = await ctx.finish().then(
          () => '',
          (e2: unknown) => `${(e2 as Error).name}: ${(e2 as Error).message}`,
        );
        if (rest) row.error += ` (then: ${rest})`;
      }
    }
  }
  const samples = readClockLog(clockLog);
  for (const row of rows) {
    if (row.windows) row.clock = clockIn(samples, row.windows);
    if (row.roundMs && !row.error) summarize(row, c, a.rows, a.cols, name);
  }
  c.conv = undefined;
  c.kept = undefined;
  c.dx.dispose();
  c.dy.dispose();
  let maxRow = 0;
  for (let i = 0; i < a.rows; i++) maxRow = Math.max(maxRow, a.rowPtr[i + 1]! - a.rowPtr[i]!);
  return { name, rows: a.rows, cols: a.cols, nnz: c.nnz, maxRowLength: maxRow, copySameBytesMs: c.copySameMs, xGatherBytes: c.xGather, gatherLinesRow: c.linesRow, gatherLinesSlice: c.linesSlice, cusparseMs: cusparse.get(name), results: rows, summary: summaryLines(name, rows) };
}

/** What --check-ci needs of each CI case (filled by its builder, used once after the dump), and the checks' results, by name. */
const ciInputs = new Map<string, Omit<CiCheckInput, 'a'>>();
const ciChecks = new Map<string, Record<string, unknown>>();
/** The device, once main() has made it (the CI check runs there). */
let checkCtx: GpuContext | undefined;

/** A CI Hamiltonian case: `FILE[:IRREP][:casE,O]` → [name, builder] (float64 CSR from the chem assembly, all cores). */
function ciCase(spec: string): [string, () => Promise<CsrMatrix>] {
  const m = /^(.*?)(?::(\d+))?(?::cas(\d+),(\d+))?$/.exec(spec)!;
  const file = m[1]!;
  const irrep = m[2] ? Number(m[2]) : 'isym';
  const space0: SpaceSpec = m[3] ? { kind: 'cas', electrons: Number(m[3]), orbitals: Number(m[4]) } : 'fci';
  const name = `ci-${basename(file).replace(/\.FCIDUMP(\.gz)?$/i, '')}${m[2] ? `-irrep${m[2]}` : ''}${m[3] ? `-cas${m[3]}e${m[4]}o` : ''}`;
  return [
    name,
    async () => {
      const fd = await readFcidump(file);
      const { fcidump, space } = buildCiSpace(fd, space0, { irrep });
      if (checkCi) ciInputs.set(name, { fd, fcidump, space, spec: space0, irrep: irrep === 'isym' ? fd.isym : irrep, ...(reference === undefined ? {} : { reference }) });
      const h = await assembleHamiltonian(fcidump, space, { workers: 'auto' });
      return h.matrix;
    },
  ];
}

function dump(name: string, a: CsrMatrix): void {
  if (dumpDir) dumpCsr(dumpDir, name, a);
}

/** The selected matrices: the generated set, the 27-point stencil, files, --powerlaw and --fcidump cases. */
function selectedMatrices(): [string, () => Promise<CsrMatrix> | CsrMatrix][] {
  // --no-generated: only the files (e.g. the .csr triples a first pass dumped), not the generated set
  const set: [string, () => Promise<CsrMatrix> | CsrMatrix][] = flag('--no-generated') ? [] : matrixSet();
  // the matrix of the refined-CG target (issue 15): 27 diagonals, a DIA kernel's natural case
  const n27 = quick ? 26 : 120;
  if (!flag('--no-generated')) set.push([`stencil27-${n27}^3`, () => stencil27(n27)]);
  for (const f of files) {
    if (f.endsWith('.csr')) set.push([basename(f, '.csr'), () => readRawCsr(f)]); // a --dump triple (bench/spmv-raw.ts)
    else set.push([basename(f).replace(/\.mtx(\.gz)?$/, ''), async () => (await readMatrixMarket(f, { strictCount: false })).matrix]);
  }
  const pl = opt('--powerlaw');
  if (pl) {
    // near issue 14's matrix: --powerlaw 1000000:2000:2:2 (rows : longest : shortest row : alpha; 15.6 M entries)
    const [rows = 1e6, maxLen = 2000, minLen = 2, alpha = 2.2] = pl.split(':').map(Number);
    set.push([`powerlaw-${rows}-${minLen}..${maxLen}-a${alpha}`, () => generators.powerLaw(rows, rows, { alpha, minLen, maxLen, seed: 3 })]);
  }
  for (const spec of fcidumps) set.push(ciCase(spec));
  return set.filter(([name]) => !onlyFilter || onlyFilter.some((o) => name.startsWith(o)));
}

/** Build one matrix, say so, and dump it when --dump asks. */
async function build(name: string, make: () => Promise<CsrMatrix> | CsrMatrix): Promise<CsrMatrix> {
  const t0 = performance.now();
  const a = await make();
  console.log(`${name}: ${a.rows}×${a.cols}, ${csrNnz(a)} nnz (built in ${((performance.now() - t0) / 1e3).toFixed(1)} s)`);
  const td = performance.now();
  dump(name, a);
  if (dumpDir) console.log(`${name}: raw CSR written to ${dumpDir} in ${((performance.now() - td) / 1e3).toFixed(1)} s`);
  // --check-ci: after the dump (the anchor's files exist whatever the check does), before any timing
  const info = ciInputs.get(name);
  ciInputs.delete(name);
  if (info && checkCtx) ciChecks.set(name, await checkCiMatrix(checkCtx, { a, ...info }));
  return a;
}

async function main(): Promise<void> {
  if (dumpOnly) {
    if (!dumpDir) throw new RangeError('--dump-only: expected --dump DIR as well (where the raw CSR files go)');
    for (const [name, make] of selectedMatrices()) await build(name, make);
    console.log(`dumped to ${dumpDir}`);
    return;
  }
  const cap = opt('--max-binding-bytes');
  const ctx = await createGpuContext({ unsafe: flag('--unsafe'), maxBindingBytes: cap ? Number(cap) : undefined });
  checkCtx = ctx;
  console.log(ctx.describeText());
  const copy = await copyBandwidth(ctx);
  console.log(`copy bandwidth: ${copy.gbs.toFixed(0)} GB/s (${copy.method}, ${(copy.bytes / 1e6).toFixed(0)} MB moved in ${copy.ms.toFixed(3)} ms); heat ${heatMs} ms before each timing`);
  const results: Record<string, unknown>[] = [];
  for (const [name, make] of selectedMatrices()) {
    const a = await build(name, make);
    const check = ciChecks.get(name);
    results.push({ ...(await benchMatrix(ctx, name, a, copy.gbs)), ...(check ? { check } : {}) });
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, JSON.stringify({ date: new Date().toISOString(), quick, reps, heatMs, warmMs, unsafe: ctx.caps.unsafe, device: ctx.describe(), copyBandwidth: copy, matrices: results }, null, 1));
  }
  console.log(results.flatMap((r) => r.summary as string[]).join('\n'));
  const failed = results.flatMap((r) => (r.results as Row[]).filter((x) => x.error || x.correct === false).map((x) => `${r.name} ${x.kernel} ${JSON.stringify(x.params)}: ${x.error ?? `WRONG (${x.maxErrOverBound?.toPrecision(3)}× the bound)`}`));
  for (const r of results) if (r.check) console.log(`CHECK ${r.name}: ${(r.check as { ok: boolean }).ok ? 'PASS' : 'FAIL'} (symmetry, lowest eigenvalue vs the CI driver${reference === undefined ? '' : ' and the reference'})`);
  failed.push(...results.filter((r) => r.check && !(r.check as { ok: boolean }).ok).map((r) => `${r.name}: the --check-ci check failed`));
  console.log(failed.length ? `${failed.length} kernel runs failed or were wrong:\n  ${failed.join('\n  ')}` : 'every supported kernel ran and passed the check');
  console.log(`wrote ${out}`);
  ctx.dispose();
}

await main();
