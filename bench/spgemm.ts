/**
 * SpGEMM benchmark with diagonal storage (seed 002 §7): our GPU kernels against our float64 CPU
 * references, on the shapes of the paper —
 * - `hm` structured × structured (Tables 1 and 2): n = 1000 … 10 000, 5 … 600 whole diagonals at
 *   random offsets in [−n/4, n/4] (which reproduces the papers' nzA and nzC), GPU `hmSpgemmGpu`
 *   (Algorithm 2 grouped by C diagonal) vs CPU `hmSpgemm`;
 * - `cdm` banded × banded (Figures 6, 7): n = 1024 … 9216 and 10 240, bandwidths 5, 10, 15, 20,
 *   GPU `cdmSpgemmGpu` (Algorithm 1, T = 16) vs CPU `cdmSpgemm`.
 * Matrices are deterministic (an LCG shared with bench/spgemm_cupy.py, which times cuSPARSE on
 * the same matrices); values 1 + ((7i + 13j) mod 17)/16, never zero.
 *
 * Per case: GPU median / min ms of the product kernel (timestamps when available, else wall clock;
 * C's structure and the tables are prepared once, outside the timing, as the paper's C is
 * preallocated), host preparation ms, CPU reference ms (skipped past `--cpu-max-work`
 * multiply–adds, default 1.5e9), speedup, nzA, nzB, nzC (structural, from the reference or
 * counted on the GPU result), and a check of the GPU's C against float64 (all slots when the
 * reference ran, else 2000 sampled slots recomputed on the host): max |c − ref| / Σ|a·b|.
 *
 * Run locally (lavapipe): `pnpm tsx bench/spgemm.ts --quick --out bench/out/spgemm-quick.json`.
 * On an H100: `pnpm esbuild bench/spgemm.ts --bundle --platform=node --format=esm --external:webgpu
 * --outfile=.gpukit/app/spgemm.mjs`, carry `.gpukit`, then
 * `bash .gpukit/enter.sh node .gpukit/app/spgemm.mjs --out $OUT/spgemm.json`.
 * Flags: --quick (small sizes), --out FILE, --reps N, --only hm|cdm, --cpu-max-work W,
 * --parallel N (also time the parallel CPU product on N worker threads, where the reference runs:
 * cpuParallelMs, parallelSpeedup = cpuMs / cpuParallelMs, parallelIdentical = bit-identical to it),
 * --max-n N (only cases with n ≤ N).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { type CdmMatrix, cdmAllocate, cdmSpgemm, type HmMatrix, hmAllocate, hmDiagonalLookup, hmDiagonalSize, hmSpgemm } from '@gpusparse/formats';
import { createGpuContext, type GpuContext, timeGpu } from '@gpusparse/gpu';
import { cdmSpgemmParallel, hmSpgemmParallel } from '../packages/formats/src/spgemm/parallel';
import { cdmSpgemmGpu, type DeviceProduct, hmSpgemmGpu } from '../packages/gpu/src/spgemm/index';

const argv = process.argv.slice(2);
const opt = (name: string): string | undefined => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
};
const quick = argv.includes('--quick');
const out = opt('--out') ?? 'bench/out/spgemm.json';
const reps = Number(opt('--reps') ?? (quick ? 3 : 10));
const only = opt('--only');
const cpuMaxWork = Number(opt('--cpu-max-work') ?? 1.5e9);
const parallel = Number(opt('--parallel') ?? 0);
const maxN = Number(opt('--max-n') ?? Number.POSITIVE_INFINITY);

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

/** Entry value of the benchmark matrices (never zero). */
const value = (i: number, j: number): number => 1 + ((7 * i + 13 * j) % 17) / 16;

/** n × n HM matrix with the given diagonals stored whole. O(Σ|diagonal|). */
function hmWith(n: number, offsets: number[]): HmMatrix {
  const m = hmAllocate(n, n, offsets);
  for (let d = 0; d < m.numDiagonals; d++) {
    const k = m.offsets[d]!;
    const len = hmDiagonalSize(m, d);
    for (let p = 0; p < len; p++) {
      const i = k >= 0 ? p : p - k;
      m.values[m.starts[d]! + p] = value(i, i + k);
      m.present[(m.starts[d]! + p) >>> 5]! |= 1 << ((m.starts[d]! + p) & 31);
    }
  }
  return { ...m, nnz: m.values.length };
}

/** n × n CDM matrix of the band `offsets` (compact diagonals k mod n, wrapped slots empty). */
function cdmWith(n: number, offsets: number[]): CdmMatrix {
  const m = cdmAllocate(n, offsets.map((k) => (k + n) % n));
  let nnz = 0;
  for (const k of offsets) {
    const d = m.offsets.indexOf((k + n) % n);
    for (let i = Math.max(0, -k); i < Math.min(n, n - k); i++) {
      const s = d * n + i;
      m.values[s] = value(i, i + k);
      m.present[s >>> 5]! |= 1 << (s & 31);
      nnz++;
    }
  }
  return { ...m, nnz };
}

/** One benchmark case. */
interface Case {
  kind: 'hm' | 'cdm';
  n: number;
  dgA: number;
  dgB: number;
  offA: number[];
  offB: number[];
  bandwidth?: number;
}

function cases(): Case[] {
  const out: Case[] = [];
  const t1: [number, number, number][] = [
    [1000, 9, 5], [2000, 9, 15], [3000, 29, 15], [4000, 29, 35], [5000, 59, 35],
    [6000, 89, 75], [7000, 99, 75], [8000, 109, 35], [9000, 59, 75], [10000, 109, 35],
  ];
  const t2: [number, number][] = [[200, 200], [300, 300], [400, 200], [500, 500], [600, 600]];
  const hm = quick ? t1.slice(0, 3).map(([n, a, b]) => [n / 4, a, b] as [number, number, number]) : [...t1, ...t2.map(([a, b]) => [10000, a, b] as [number, number, number])];
  for (const [n, dgA, dgB] of hm) out.push({ kind: 'hm', n, dgA, dgB, offA: randomOffsets(n, dgA, n + dgA), offB: randomOffsets(n, dgB, 7 * n + dgB) });
  const ns = quick ? [256, 1024] : [1024, 2048, 3072, 4096, 5120, 6144, 7168, 8192, 9216, 10240];
  for (const n of ns) for (const w of [5, 10, 15, 20]) out.push({ kind: 'cdm', n, dgA: w, dgB: w, offA: bandOffsets(w), offB: bandOffsets(w), bandwidth: w });
  return (only ? out.filter((c) => c.kind === only) : out).filter((c) => c.n <= maxN);
}

const median = (v: number[]): number => [...v].sort((p, q) => p - q)[Math.floor(v.length / 2)]!;

/** Host value of entry (i, l) of C = A·B for HM operands (float64), and Σ|a·b|. O(dgA). */
function hmEntry(a: HmMatrix, b: HmMatrix, lookB: Int32Array, i: number, l: number): [number, number] {
  let s = 0;
  let sa = 0;
  for (let u = 0; u < a.numDiagonals; u++) {
    const j = i + a.offsets[u]!;
    if (j < 0 || j >= a.cols) continue;
    const v = lookB[l - j + b.rows - 1]!;
    if (v < 0) continue;
    const p = a.values[a.starts[u]! + Math.min(i, j)]! * b.values[b.starts[v]! + Math.min(j, l)]!;
    s += p;
    sa += Math.abs(p);
  }
  return [s, sa];
}

async function runCase(ctx: GpuContext, c: Case): Promise<Record<string, unknown>> {
  const t0 = performance.now();
  const a = c.kind === 'hm' ? hmWith(c.n, c.offA) : cdmWith(c.n, c.offA);
  const b = c.kind === 'hm' ? hmWith(c.n, c.offB) : cdmWith(c.n, c.offB);
  const build = performance.now() - t0;
  const t1 = performance.now();
  const prod: DeviceProduct<HmMatrix | CdmMatrix> =
    c.kind === 'hm' ? hmSpgemmGpu(ctx, a as HmMatrix, b as HmMatrix, { maxDiagonals: 1 << 20 }) : cdmSpgemmGpu(ctx, a as CdmMatrix, b as CdmMatrix, { maxDiagonals: 1 << 20 });
  await ctx.finish();
  const prep = performance.now() - t1;
  const t = await timeGpu(ctx, () => prod.encode(), { reps, warmup: 1 });
  prod.encode();
  const got = await prod.read();
  prod.dispose();
  const work = prod.multiplyAdds;
  let cpuMs: number | null = null;
  let cpuParallelMs: number | null = null;
  let parallelIdentical: boolean | null = null;
  let nzC: number;
  let maxRel = 0;
  let check = 'full';
  if (work <= cpuMaxWork) {
    const times: number[] = [];
    let ref: HmMatrix | CdmMatrix | undefined;
    for (let r = 0; r < (work < 1e8 ? 3 : 1); r++) {
      const s = performance.now();
      ref = c.kind === 'hm' ? hmSpgemm(a as HmMatrix, b as HmMatrix, { maxDiagonals: 1 << 20 }) : cdmSpgemm(a as CdmMatrix, b as CdmMatrix, { maxDiagonals: 1 << 20 });
      times.push(performance.now() - s);
    }
    cpuMs = median(times);
    nzC = ref!.nnz;
    if (parallel > 0) {
      // the parallel CPU product (warm worker pool: one untimed run first), bit-compared with the reference
      const par = () => (c.kind === 'hm' ? hmSpgemmParallel(a as HmMatrix, b as HmMatrix, { workers: parallel, maxDiagonals: 1 << 20 }) : cdmSpgemmParallel(a as CdmMatrix, b as CdmMatrix, { workers: parallel, maxDiagonals: 1 << 20 }));
      const p = await par();
      parallelIdentical = p.nnz === ref!.nnz && p.values.every((v, s) => Object.is(v, ref!.values[s]));
      const ptimes: number[] = [];
      for (let r = 0; r < times.length; r++) {
        const s = performance.now();
        await par();
        ptimes.push(performance.now() - s);
      }
      cpuParallelMs = median(ptimes);
    }
    // all values positive: Σ|a·b| = ref value, so |c − ref| / ref is the relative error
    for (let s = 0; s < got.length; s++) if (ref!.values[s]! > 0) maxRel = Math.max(maxRel, Math.abs(got[s]! - ref!.values[s]!) / ref!.values[s]!);
  } else {
    check = 'sampled';
    nzC = 0;
    for (const v of got) if (v !== 0) nzC++;
    const hA = a as HmMatrix;
    const hB = b as HmMatrix;
    const tmpl = prod.template as HmMatrix;
    const lookB = hmDiagonalLookup(hB);
    const r = lcg(99);
    for (let q = 0; q < 2000; q++) {
      const d = Math.floor(r() * tmpl.numDiagonals);
      const p = Math.floor(r() * hmDiagonalSize(tmpl, d));
      const k = tmpl.offsets[d]!;
      const i = k >= 0 ? p : p - k;
      const [s, sa] = hmEntry(hA, hB, lookB, i, i + k);
      const g = got[tmpl.starts[d]! + p]!;
      if (sa > 0) maxRel = Math.max(maxRel, Math.abs(g - s) / sa);
      else if (g !== 0) maxRel = Number.POSITIVE_INFINITY;
    }
  }
  const row = {
    kind: c.kind,
    n: c.n,
    bandwidth: c.bandwidth ?? null,
    dgA: c.dgA,
    nzA: a.nnz,
    dgB: c.dgB,
    nzB: b.nnz,
    nzC,
    multiplyAdds: work,
    gpuMedianMs: t.medianMs,
    gpuMinMs: t.minMs,
    timing: t.method,
    prepMs: prep,
    buildMs: build,
    cpuMs,
    speedup: cpuMs === null ? null : cpuMs / t.medianMs,
    ...(parallel > 0 ? { workers: parallel, cpuParallelMs, parallelSpeedup: cpuMs === null || cpuParallelMs === null ? null : cpuMs / cpuParallelMs, parallelIdentical } : {}),
    check,
    maxRelErr: maxRel,
    ok: maxRel <= 2 * Math.max(c.dgA, 1) * 2 ** -24 && parallelIdentical !== false, // the test's bound: 2·dgA·ε·Σ|a·b|
  };
  console.log(JSON.stringify(row));
  return row;
}

const ctx = await createGpuContext({ powerPreference: 'high-performance' });
console.log(ctx.describeText());
const rows: Record<string, unknown>[] = [];
for (const c of cases()) {
  try {
    rows.push(await runCase(ctx, c));
  } catch (e) {
    // a case the device cannot hold (e.g. C past one binding) is reported, not fatal
    const row = { kind: c.kind, n: c.n, dgA: c.dgA, dgB: c.dgB, bandwidth: c.bandwidth ?? null, error: (e as Error).message, ok: false };
    console.log(JSON.stringify(row));
    rows.push(row);
  }
}
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, JSON.stringify({ device: ctx.describe(), reps, cpuMaxWork, rows }, null, 1));
console.log(`wrote ${out}: ${rows.length} cases, ${rows.filter((r) => !r.ok).length} failing checks`);
