/**
 * SpGEMM with diagonal storage (seed 002) end to end against cuSPARSE (bench/spgemm_cupy.py, the
 * same matrices from the same LCG). Our product is the planned one (packages/gpu/src/spgemm/plan.ts):
 *
 * - end to end ("e2e"): A and B on the device → C on the device and the device idle: the symbolic
 *   phase (C's diagonals, the pair lists, C's layout: O(diagonals) host work), the table upload,
 *   C's allocation (from the buffer pool, as CuPy's memory pool serves cuSPARSE), the numeric
 *   kernel(s), and the wait (submit + onSubmittedWorkDone). Wall clock, median of reps.
 * - kernel: the numeric phase alone (`plan.execute`), GPU timestamps when available.
 * - symbolic: the host part of planning (`planMs`), split in the JSON into symbolicOnlyMs (C's
 *   diagonals and pair lists), tablesMs, uploadAllocMs (table upload, C, pipelines), then recordMs
 *   (`execute`) and submitWaitMs (submit + onSubmittedWorkDone) of the end-to-end time.
 * cuSPARSE's time (the python script) is `A @ B` on device CSR operands, symbolic + numeric + C's
 * allocation, CUDA events. `--cusparse FILE` joins its JSON and prints both ratios.
 *
 * Cases: `table` — today's RESULTS.md table (HM structured n = 1000 … 10 000 with 5 … 600
 * diagonals at random offsets in [−n/4, n/4]; CDM bands n = 1024 … 10 240, bandwidth 5 … 20);
 * `banded` — CDM, n = 10^5, 10^6, 10^7, bandwidth 5, 10, 20; `structured` — HM, n = 10^5 and
 * 10^6 with 10 … 30 random diagonals. Values 1 + ((7i + 13j) mod 17)/16 (exact in float32, never 0).
 *
 * Check of every case against float64 on the host, from the value formula: every row of C when
 * n·dgC·dgA ≤ --check-work (default 1e9), else that budget's worth of sampled rows (seeded),
 * every diagonal of C in each; per entry |c − ref| / Σ|a·b| (= ref here, all products positive),
 * and an entry with no product must be exactly 0. ok: max ≤ 2·dgA·2^−24.
 *
 * Local (lavapipe): `pnpm tsx bench/spgemm.ts --quick --out bench/out/spgemm-quick.json`.
 * GPU machine: `bash ../../shared/gpukit/pack.sh bench/spgemm.ts --data bench/spgemm_cupy.py`, then
 * `bash .gpukit/enter.sh bash -c "python3 .gpukit/data/spgemm_cupy.py --out $OUT/cusparse.json &&
 *  node .gpukit/app/spgemm.mjs --cusparse $OUT/cusparse.json --out $OUT/spgemm.json"`.
 * Reps: 25 (5 for n ≥ 10^6) after two warm-ups, as the python script's cuSPARSE gets.
 * Flags: --quick, --out FILE, --reps N, --only table|banded|structured|hm|cdm, --max-n N,
 * --cusparse FILE, --split-bytes B (force the binding split), --check-work W.
 * @module
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { diagonalLength, hmOrder } from '@gpusparse/formats';
import { createGpuContext, type GpuContext, timeGpu } from '@gpusparse/gpu';
import { allocateDiagonal, type DeviceDiagonalMatrix, diagonalLayout, fillDiagonal, readDiagonal, splitElems } from '../packages/gpu/src/spgemm/device-diagonal';
import { planSpgemm, type SpgemmPlan } from '../packages/gpu/src/spgemm/plan';

const argv = process.argv.slice(2);
const opt = (name: string): string | undefined => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
};
const quick = argv.includes('--quick');
const out = opt('--out') ?? 'bench/out/spgemm.json';
const repsArg = opt('--reps');
const only = opt('--only');
const maxN = Number(opt('--max-n') ?? Number.POSITIVE_INFINITY);
const splitBytes = opt('--split-bytes') ? Number(opt('--split-bytes')) : undefined;
const checkWork = Number(opt('--check-work') ?? 1e9);
const cusparseFile = opt('--cusparse');

/** The LCG shared with spgemm_cupy.py: s ← (1664525·s + 1013904223) mod 2³², uniform s / 2³². */
function lcg(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(1664525, s) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/** `dg` distinct offsets uniform in [−⌊n/4⌋, ⌊n/4⌋] (seeded), ascending. */
function randomOffsets(n: number, dg: number, seed: number): number[] {
  const h = Math.floor(n / 4);
  const r = lcg(seed);
  const set = new Set<number>();
  while (set.size < Math.min(dg, 2 * h + 1)) set.add(Math.floor(r() * (2 * h + 1)) - h);
  return [...set].sort((p, q) => p - q);
}

/** The band of width w: offsets −⌊(w−1)/2⌋ … ⌈(w−1)/2⌉. */
const bandOffsets = (w: number): number[] => Array.from({ length: w }, (_, t) => t - Math.floor((w - 1) / 2));

/** Entry value of the benchmark matrices (exact in float32, never zero). */
const value = (i: number, j: number): number => 1 + ((7 * i + 13 * j) % 17) / 16;

interface Case {
  kind: 'hm' | 'cdm';
  family: 'table' | 'banded' | 'structured';
  n: number;
  dgA: number;
  dgB: number;
  offA: number[];
  offB: number[];
  bandwidth?: number;
}

function cases(): Case[] {
  const list: Case[] = [];
  const hm = (family: Case['family'], n: number, dgA: number, dgB: number) =>
    list.push({ kind: 'hm', family, n, dgA, dgB, offA: randomOffsets(n, dgA, n + dgA), offB: randomOffsets(n, dgB, 7 * n + dgB) });
  const band = (family: Case['family'], n: number, w: number) => list.push({ kind: 'cdm', family, n, dgA: w, dgB: w, offA: bandOffsets(w), offB: bandOffsets(w), bandwidth: w });
  const t1: [number, number, number][] = [
    [1000, 9, 5], [2000, 9, 15], [3000, 29, 15], [4000, 29, 35], [5000, 59, 35],
    [6000, 89, 75], [7000, 99, 75], [8000, 109, 35], [9000, 59, 75], [10000, 109, 35],
  ];
  const t2: [number, number][] = [[200, 200], [300, 300], [400, 200], [500, 500], [600, 600]];
  if (quick) {
    for (const [n, a, b] of t1.slice(0, 3)) hm('table', n / 4, a, b);
    for (const n of [256, 1024]) for (const w of [5, 20]) band('table', n, w);
    band('banded', 20_000, 10);
    hm('structured', 20_000, 10, 10);
  } else {
    for (const [n, a, b] of t1) hm('table', n, a, b);
    for (const [a, b] of t2) hm('table', 10_000, a, b);
    for (let n = 1024; n <= 10_240; n += 1024) for (const w of [5, 10, 15, 20]) band('table', n, w);
    for (const n of [1e5, 1e6, 1e7]) for (const w of [5, 10, 20]) band('banded', n, w);
    for (const [n, a, b] of [[1e5, 10, 10], [1e5, 30, 30], [1e6, 10, 10], [1e6, 20, 20]] as const) hm('structured', n, a, b);
  }
  return list.filter((c) => c.n <= maxN && (!only || c.family === only || c.kind === only));
}

/** A (or B) built on the device from the value formula, one staging array per buffer. */
function operand(ctx: GpuContext, c: Case, offsets: number[], label: string): DeviceDiagonalMatrix {
  const n = c.n;
  const limit = splitElems(ctx, { splitBytes });
  if (c.kind === 'hm') {
    const order = hmOrder(offsets);
    const m = allocateDiagonal(ctx, diagonalLayout('hm', n, n, order, Int32Array.from(order, (k) => diagonalLength(n, n, k)), limit), label);
    fillDiagonal(ctx, m, (d, outv) => {
      const k = order[d]!;
      for (let p = 0; p < outv.length; p++) outv[p] = value(k >= 0 ? p : p - k, k >= 0 ? p + k : p);
    });
    return m;
  }
  // CDM: compact index kc holds true offset kt = kc or kc − n (a narrow band has one of them)
  const set = new Set(offsets);
  const compact = Int32Array.from(offsets, (k) => (k + n) % n).sort();
  const m = allocateDiagonal(ctx, diagonalLayout('cdm', n, n, compact, new Int32Array(compact.length).fill(n), limit), label);
  fillDiagonal(ctx, m, (d, outv) => {
    const kc = compact[d]!;
    const kt = set.has(kc) ? kc : kc - n;
    for (let t = Math.max(0, -kt); t < Math.min(n, n - kt); t++) outv[t] = value(t, t + kt);
  });
  return m;
}

const median = (v: number[]): number => [...v].sort((p, q) => p - q)[Math.floor(v.length / 2)]!;

/** Wall ms from A, B on the device to C on the device (plan + execute + wait), the record and wait parts; the plan is returned. */
async function endToEnd(ctx: GpuContext, a: DeviceDiagonalMatrix, b: DeviceDiagonalMatrix): Promise<[number, SpgemmPlan, number, number]> {
  const t0 = performance.now();
  const plan = planSpgemm(ctx, a, b, { splitBytes });
  const t1 = performance.now();
  plan.execute(a, b);
  const t2 = performance.now();
  ctx.recorder.flush();
  await ctx.device.queue.onSubmittedWorkDone();
  const t3 = performance.now();
  return [t3 - t0, plan, t2 - t1, t3 - t2];
}

/** Max relative error of C against float64 over all rows or sampled rows; nzC counted on those rows. */
async function check(ctx: GpuContext, c: Case, plan: SpgemmPlan): Promise<{ check: string; rows: number; maxRelErr: number; nzC: number }> {
  const n = c.n;
  const cm = plan.c;
  const parts = await readDiagonal(ctx, cm);
  // B's offsets as a dense lookup over [−n, n] (a Set lookup per product made the 10^9-product check slow)
  const bHas = new Uint8Array(2 * n + 1);
  for (const k of c.offB) bHas[k + n] = 1;
  const dgC = cm.offsets.length;
  const full = n * dgC * c.dgA <= checkWork;
  const count = full ? n : Math.min(n, Math.max(256, Math.floor(checkWork / Math.max(1, dgC * c.dgA))));
  const r = lcg(12345 + n);
  let worst = 0;
  let nzC = 0;
  for (let q = 0; q < count; q++) {
    const i = full ? q : Math.floor(r() * n);
    for (let d = 0; d < dgC; d++) {
      const k = cm.offsets[d]!;
      const l = c.kind === 'hm' ? i + k : (i + k) % n;
      if (l < 0 || l >= n) continue;
      const got = parts[cm.chunk[d]!]![cm.start[d]! + (c.kind === 'hm' ? Math.min(i, l) : i)]!;
      let ref = 0;
      for (const kA of c.offA) {
        const j = i + kA;
        // c_il += a_ij·b_jl (all positive: Σ|a·b| = ref)
        if (j >= 0 && j < n && bHas[l - j + n] === 1) ref += value(i, j) * value(j, l);
      }
      if (got !== 0) nzC++;
      const e = ref === 0 ? (got === 0 ? 0 : Number.POSITIVE_INFINITY) : Math.abs(got - ref) / ref;
      worst = Math.max(worst, e);
    }
  }
  return { check: full ? 'full' : `sampled ${count} of ${n} rows`, rows: count, maxRelErr: worst, nzC: full ? nzC : Math.round((nzC * n) / count) };
}

async function runCase(ctx: GpuContext, c: Case, cus: Map<string, Record<string, unknown>>): Promise<Record<string, unknown>> {
  const t0 = performance.now();
  const a = operand(ctx, c, c.offA, 'bench-a');
  const b = operand(ctx, c, c.offB, 'bench-b');
  await ctx.finish();
  const buildMs = performance.now() - t0;
  const big = c.n >= 1e6;
  const reps = Number(repsArg ?? (quick ? 3 : big ? 5 : 25));
  // two warm-ups, as spgemm_cupy.py gives cuSPARSE: the first compiles the pipelines
  for (let w = 0; w < 2; w++) (await endToEnd(ctx, a, b))[1].dispose();
  const e2e: number[] = [];
  const sym: number[] = [];
  // where the end-to-end time goes: symbolic proper, tables, upload + C + pipelines, recording, submit + wait
  const parts: Record<'symbolicOnlyMs' | 'tablesMs' | 'uploadAllocMs' | 'recordMs' | 'submitWaitMs', number[]> = { symbolicOnlyMs: [], tablesMs: [], uploadAllocMs: [], recordMs: [], submitWaitMs: [] };
  let plan: SpgemmPlan | undefined;
  for (let r = 0; r < reps; r++) {
    plan?.dispose();
    const [ms, p, recordMs, waitMs] = await endToEnd(ctx, a, b);
    e2e.push(ms);
    sym.push(p.planMs);
    parts.symbolicOnlyMs.push(p.planParts.symbolicMs);
    parts.tablesMs.push(p.planParts.tablesMs);
    parts.uploadAllocMs.push(p.planParts.uploadMs);
    parts.recordMs.push(recordMs);
    parts.submitWaitMs.push(waitMs);
    plan = p;
  }
  await ctx.finish();
  const kernel = await timeGpu(ctx, () => plan!.execute(a, b), { reps, warmup: 1 });
  const chk = await check(ctx, c, plan!);
  const s = plan!.symbolic;
  const key = `${c.kind}:${c.n}:${c.dgA}:${c.dgB}:${c.family}`;
  const cu = cus.get(key);
  // a cuSPARSE time with an error beside it (e.g. an empty C returned) is no time to compare with
  const cuMs = typeof cu?.cusparse_f32_median_ms === 'number' && !cu.cusparse_f32_error ? cu.cusparse_f32_median_ms : null;
  const row = {
    kind: c.kind,
    family: c.family,
    n: c.n,
    bandwidth: c.bandwidth ?? null,
    dgA: c.dgA,
    dgB: c.dgB,
    dgC: s.offsets.length,
    pairs: s.pairA.length,
    multiplyAdds: s.multiplyAdds,
    buffersC: plan!.c.buffers.length,
    dispatches: plan!.dispatches,
    nzC: chk.nzC,
    symbolicMs: median(sym),
    ...Object.fromEntries(Object.entries(parts).map(([k, v]) => [k, median(v)])),
    kernelMs: kernel.medianMs,
    kernelMinMs: kernel.minMs,
    timing: kernel.method,
    e2eMs: median(e2e),
    e2eMinMs: Math.min(...e2e),
    cusparseF32Ms: cuMs,
    cusparseF32Error: cu?.cusparse_f32_error ?? null,
    cusparseNzC: cu?.nzC ?? null,
    ratioE2e: cuMs === null ? null : cuMs / median(e2e),
    ratioKernel: cuMs === null ? null : cuMs / kernel.medianMs,
    buildMs,
    check: chk.check,
    maxRelErr: chk.maxRelErr,
    ok: chk.maxRelErr <= 2 * Math.max(c.dgA, 1) * 2 ** -24,
  };
  plan!.dispose();
  a.dispose();
  b.dispose();
  console.log(JSON.stringify(row));
  return row;
}

/** cuSPARSE rows by case key, when --cusparse names a file written by spgemm_cupy.py. */
function loadCusparse(): Map<string, Record<string, unknown>> {
  const m = new Map<string, Record<string, unknown>>();
  if (!cusparseFile) return m;
  if (!existsSync(cusparseFile)) throw new Error(`--cusparse ${cusparseFile}: no such file (run bench/spgemm_cupy.py --out FILE first)`);
  const data = JSON.parse(readFileSync(cusparseFile, 'utf8')) as { rows: Record<string, unknown>[] };
  for (const r of data.rows) m.set(`${r.kind}:${r.n}:${r.dgA}:${r.dgB}:${r.family}`, r);
  return m;
}

const cus = loadCusparse();
const ctx = await createGpuContext({ powerPreference: 'high-performance' });
// keep C's buffers between reps, as CuPy's memory pool keeps cuSPARSE's
ctx.buffers.maxPooledBytes = 64 * 2 ** 30;
console.log(ctx.describeText());
const rows: Record<string, unknown>[] = [];
for (const c of cases()) {
  try {
    rows.push(await runCase(ctx, c, cus));
  } catch (e) {
    // a case the device cannot hold is reported, not fatal
    const row = { kind: c.kind, family: c.family, n: c.n, dgA: c.dgA, dgB: c.dgB, bandwidth: c.bandwidth ?? null, error: (e as Error).message, ok: false };
    console.log(JSON.stringify(row));
    rows.push(row);
  }
}
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, JSON.stringify({ device: ctx.describe(), date: new Date().toISOString(), rows }, null, 1));
/** The RESULTS.md table of the rows (ratios only where the cuSPARSE file was joined). */
function markdown(list: Record<string, unknown>[]): string {
  const f = (x: unknown, d = 3): string => (typeof x === 'number' ? (Number.isInteger(x) ? String(x) : Math.abs(x) >= 100 ? x.toFixed(1) : x.toPrecision(d)) : x === null || x === undefined ? '-' : String(x));
  const head = '| family | kind | n | bw | dgA | dgB | dgC | host symbolic / tables ms | kernel ms | ours e2e ms | cuSPARSE f32 ms | e2e ratio | kernel ratio | check | max rel err |';
  const lines = [head, `|${'---|'.repeat(15)}`];
  for (const r of list) {
    if (r.error) {
      lines.push(`| ${r.family} | ${r.kind} | ${r.n} | ${f(r.bandwidth)} | ${r.dgA} | ${r.dgB} | error: ${String(r.error).slice(0, 80)} |||||||||`);
      continue;
    }
    const cu = r.cusparseF32Ms ?? (r.cusparseF32Error ? 'error' : null);
    lines.push(`| ${r.family} | ${r.kind} | ${r.n} | ${f(r.bandwidth)} | ${r.dgA} | ${r.dgB} | ${r.dgC} | ${f(r.symbolicOnlyMs)} / ${f(r.tablesMs)} | ${f(r.kernelMs)} | ${f(r.e2eMs)} | ${f(cu)} | ${f(r.ratioE2e)} | ${f(r.ratioKernel)} | ${r.check} | ${f(r.maxRelErr, 2)} |`);
  }
  return lines.join('\n');
}
console.log(markdown(rows));
const slower = rows.filter((r) => typeof r.ratioE2e === 'number' && (r.ratioE2e as number) < 1).length;
console.log(`wrote ${out}: ${rows.length} cases, ${rows.filter((r) => !r.ok).length} failing checks, ${slower} slower than cuSPARSE end to end`);
