/**
 * Host CSR SpMV benchmark: our `csrSpmv` (float64, one thread) against SciPy's
 * `csr_matrix @ x` on the same matrices. Run: `pnpm tsx bench/host-spmv.ts [--quick] [--write]`.
 *
 * Matrices: every real matrix in shared/data/matrices that reads (strictCount: false, so the
 * ExaSP2 trpcage file with one extra entry is included), plus generated ones of 10^6–10^7
 * non-zeros (poisson2d 1000², banded, uniform random, power-law). Each matrix is written with our
 * Matrix Market writer to a temporary folder; bench/host_spmv_scipy.py reads those files with
 * scipy.io.mmread, so both sides multiply bit-identical matrices by the same x. SciPy also
 * returns y, and the two products are compared (a correctness check, not only a race).
 *
 * Timing: median over batches of calls, each batch lasting ≥ 2 ms (so the clock resolution and
 * the call overhead of tiny matrices do not dominate); ≥ 21 batches and ≥ 0.5 s per median.
 * `--write` replaces the "## Host CSR SpMV vs SciPy" section of bench/RESULTS.md (`--extra FILE`
 * appends FILE's markdown to the section). Other flags: `--quick`, `--gen-only` (generated
 * matrices only), `--python PATH` (default /usr/bin/python3), `--data DIR` (matrix folder),
 * `--wasm-variant scalar4|scalar8|simd4|simd8` (the WebAssembly kernel timed in the `wasm`
 * column; default: the library's DEFAULT_WASM_VARIANT).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type CsrMatrix, csrSpmv, DEFAULT_WASM_VARIANT, generators, type KernelVariant, readMatrixMarket, WasmCsr, writeMatrixMarket } from '@gpusparse/formats';

const quick = process.argv.includes('--quick');
const write = process.argv.includes('--write');
const genOnly = process.argv.includes('--gen-only');
const argValue = (flag: string): string | undefined => {
  const k = process.argv.indexOf(flag);
  return k >= 0 ? process.argv[k + 1] : undefined;
};
/** Python with SciPy: Debian's by default (`python3` on PATH may be a pyenv one without SciPy). */
const python = argValue('--python') ?? '/usr/bin/python3';
const variantArg = argValue('--wasm-variant');
const wasmVariant: KernelVariant = variantArg
  ? { simd: variantArg.startsWith('simd'), unroll: variantArg.endsWith('8') ? 8 : 4 }
  : DEFAULT_WASM_VARIANT;
const wasmName = `${wasmVariant.simd ? 'simd' : 'scalar'}${wasmVariant.unroll}`;
const BATCH_MS = 2;
const MIN_BATCHES = quick ? 7 : 21;
const BUDGET_S = quick ? 0.2 : 0.5;
const here = fileURLToPath(new URL('.', import.meta.url));
const dataDir = argValue('--data') ?? fileURLToPath(new URL('../../shared/data/matrices', import.meta.url));

/**
 * The csrSpmv body before this benchmark's optimisation (2-way unrolled, two accumulators),
 * kept here verbatim so every run measures before and after under the same load.
 */
function csrSpmvBefore(a: CsrMatrix, x: Float64Array, out: Float64Array): Float64Array {
  const { rowPtr, colIdx, values } = a;
  const rows = a.rows;
  let k = 0;
  for (let i = 0; i < rows; i++) {
    const e = rowPtr[i + 1]!;
    let s0 = 0;
    let s1 = 0;
    for (; k + 1 < e; k += 2) {
      s0 += values[k]! * x[colIdx[k]!]!;
      s1 += values[k + 1]! * x[colIdx[k + 1]!]!;
    }
    if (k < e) {
      s0 += values[k]! * x[colIdx[k]!]!;
      k++;
    }
    out[i] = s0 + s1;
  }
  return out;
}

/** Median seconds per call of fn over batches of k calls (k chosen so a batch lasts ≥ BATCH_MS). */
function medianTime(fn: () => void): { s: number; batches: number; k: number } {
  for (let t = 0; t < 3; t++) fn();
  let t0 = performance.now();
  fn();
  const one = Math.max(performance.now() - t0, 1e-6);
  const k = Math.max(1, Math.floor(BATCH_MS / one));
  const samples: number[] = [];
  const start = performance.now();
  while (samples.length < MIN_BATCHES || (performance.now() - start < BUDGET_S * 1e3 && samples.length < 200)) {
    t0 = performance.now();
    for (let t = 0; t < k; t++) fn();
    samples.push((performance.now() - t0) / 1e3 / k);
    if (performance.now() - start > 4 * BUDGET_S * 1e3 && samples.length >= 5) break;
  }
  samples.sort((a, b) => a - b);
  return { s: samples[samples.length >> 1]!, batches: samples.length, k };
}

interface Case {
  name: string;
  a: CsrMatrix;
  source: string;
}

async function loadCases(): Promise<Case[]> {
  const cases: Case[] = [];
  if (!genOnly && !existsSync(dataDir)) throw new Error(`matrix folder missing: ${dataDir}`);
  for (const f of genOnly ? [] : readdirSync(dataDir).sort()) {
    if (!/\.mtx(\.gz)?$/.test(f)) continue;
    try {
      const r = await readMatrixMarket(join(dataDir, f), { strictCount: false });
      cases.push({ name: f.replace(/\.mtx(\.gz)?$/, ''), a: r.matrix, source: 'real' });
    } catch (e) {
      console.error(`skip ${f}: ${(e as Error).message}`);
    }
  }
  const g = generators;
  const gen: Array<[string, () => CsrMatrix]> = [
    ['poisson2d-1000^2', () => g.poisson2d(1000)],
    ['banded-1e6-b9', () => g.banded(1_000_000, 4, 4, { seed: 3 })],
    ['uniform-1e5x10', () => g.uniformRandom(100_000, 100_000, 10, 5)],
    ['uniform-1e6x8', () => g.uniformRandom(1_000_000, 1_000_000, 8, 7)],
    ['powerlaw-1e6', () => g.powerLaw(1_000_000, 1_000_000, { alpha: 2.2, minLen: 2, maxLen: 20_000, seed: 11 })],
  ];
  for (const [name, make] of quick ? gen.slice(0, 1) : gen) {
    const t0 = performance.now();
    cases.push({ name, a: make(), source: 'generated' });
    console.error(`generated ${name} in ${((performance.now() - t0) / 1e3).toFixed(1)} s`);
  }
  return cases;
}

function xFor(n: number): Float64Array {
  const r = generators.rng(12345);
  return Float64Array.from({ length: n }, () => r() * 2 - 1);
}

async function main(): Promise<void> {
  const load0 = loadavg();
  const cases = await loadCases();
  const tmp = mkdtempSync(join(tmpdir(), 'gpusparse-host-spmv-'));
  try {
    const ours: Array<{ ms: number; beforeMs: number; wasmMs: number; viewsMs: number; batches: number; y: Float64Array }> = [];
    let wasmMismatches = 0;
    const manifest = { batch_ms: BATCH_MS, min_batches: MIN_BATCHES, budget_s: BUDGET_S, matrices: [] as object[] };
    for (const c of cases) {
      const x = xFor(c.a.cols);
      const y = new Float64Array(c.a.rows);
      // before / after alternate twice so a burst of load elsewhere hits both alike
      const y0 = new Float64Array(c.a.rows);
      const b1 = medianTime(() => csrSpmvBefore(c.a, x, y0));
      const t1 = medianTime(() => csrSpmv(c.a, x, y));
      const b2 = medianTime(() => csrSpmvBefore(c.a, x, y0));
      const t2 = medianTime(() => csrSpmv(c.a, x, y));
      // the WebAssembly kernel as HostOperator uses it: matrix copied in once (not timed), x copied
      // in and y copied out on every call (timed)
      const w = WasmCsr.create(c.a, { variant: wasmVariant });
      const yw = new Float64Array(c.a.rows);
      const w1 = medianTime(() => w.multiply(x, yw));
      const w2 = medianTime(() => w.multiply(x, yw));
      // the same kernel for callers that keep x and y in wasm memory (no per-call copies)
      w.x.set(x);
      const v1 = medianTime(() => w.multiplyInPlace());
      const v2 = medianTime(() => w.multiplyInPlace());
      for (let i = 0; i < c.a.rows; i++) if (!Object.is(w.y[i], y[i])) wasmMismatches++;
      for (let i = 0; i < c.a.rows; i++) if (!Object.is(yw[i], y[i])) wasmMismatches++;
      const t = { s: Math.min(t1.s, t2.s), batches: t1.batches + t2.batches, k: t1.k };
      const before = Math.min(b1.s, b2.s);
      const wasmS = Math.min(w1.s, w2.s);
      const viewsS = Math.min(v1.s, v2.s);
      ours.push({ ms: t.s * 1e3, beforeMs: before * 1e3, wasmMs: wasmS * 1e3, viewsMs: viewsS * 1e3, batches: t.batches, y: y.slice() });
      console.error(`  ours  ${c.name}: ${(t.s * 1e3).toFixed(4)} ms (before: ${(before * 1e3).toFixed(4)} ms; wasm ${wasmName}: ${(wasmS * 1e3).toFixed(4)} ms, views ${(viewsS * 1e3).toFixed(4)} ms; ${t.batches} batches of ${t.k})`);
      const file = join(tmp, `${c.name}.mtx`);
      await writeMatrixMarket(file, c.a);
      writeFileSync(join(tmp, `${c.name}.x`), new Uint8Array(x.buffer));
      manifest.matrices.push({ name: c.name, file, x: join(tmp, `${c.name}.x`), y: join(tmp, `${c.name}.y`), rows: c.a.rows, cols: c.a.cols, nnz: c.a.rowPtr[c.a.rows] });
    }
    writeFileSync(join(tmp, 'manifest.json'), JSON.stringify(manifest));
    const env = { ...process.env, OMP_NUM_THREADS: '1', OPENBLAS_NUM_THREADS: '1', MKL_NUM_THREADS: '1', NUMEXPR_NUM_THREADS: '1' };
    execFileSync(python, [join(here, 'host_spmv_scipy.py'), join(tmp, 'manifest.json'), join(tmp, 'scipy.json')], { env, stdio: ['ignore', 'inherit', 'inherit'] });
    const sci = JSON.parse(readFileSync(join(tmp, 'scipy.json'), 'utf8')) as { scipy: string; numpy: string; results: Array<{ name: string; ms: number; raw_ms: number }> };
    const rows: string[] = [];
    let worstRel = 0;
    const ratios: number[] = [];
    const wasmRatios: number[] = [];
    const viewsRatios: number[] = [];
    cases.forEach((c, k) => {
      const s = sci.results[k]!;
      if (s.name !== c.name) throw new Error(`result order: ${s.name} vs ${c.name}`);
      // agreement of the two products: |y − y_scipy| ≤ rel · Σ|a_ij x_j| per row
      const raw = readFileSync(join(tmp, `${c.name}.y`));
      const ys = new Float64Array(Uint8Array.from(raw).buffer);
      const yo = ours[k]!.y;
      const x = xFor(c.a.cols);
      for (let i = 0; i < c.a.rows; i++) {
        let absSum = 0;
        for (let p = c.a.rowPtr[i]!; p < c.a.rowPtr[i + 1]!; p++) absSum += Math.abs(c.a.values[p]! * x[c.a.colIdx[p]!]!);
        const d = Math.abs(yo[i]! - ys[i]!);
        if (d > 0) worstRel = Math.max(worstRel, d / absSum);
      }
      const ratio = s.ms / ours[k]!.ms;
      ratios.push(ratio);
      wasmRatios.push(s.ms / ours[k]!.wasmMs);
      viewsRatios.push(s.ms / ours[k]!.viewsMs);
      rows.push(
        `| ${c.name} | ${c.source} | ${c.a.rows} | ${c.a.rowPtr[c.a.rows]} | ${fmt(ours[k]!.beforeMs)} | ${fmt(ours[k]!.ms)} | ${fmt(s.ms)} | ${fmt(s.raw_ms)} | ${ratio.toFixed(2)} | ${(s.raw_ms / ours[k]!.ms).toFixed(2)} | ${fmt(ours[k]!.wasmMs)} | ${(s.ms / ours[k]!.wasmMs).toFixed(2)} | ${(s.raw_ms / ours[k]!.wasmMs).toFixed(2)} | ${fmt(ours[k]!.viewsMs)} | ${(s.ms / ours[k]!.viewsMs).toFixed(2)} |`,
      );
    });
    const load1 = loadavg();
    const geo = Math.exp(ratios.reduce((a, r) => a + Math.log(r), 0) / ratios.length);
    const big = cases.map((c, k) => [c.a.rowPtr[c.a.rows]!, ratios[k]!] as const).filter(([n]) => n >= 1e6);
    const geoBig = big.length ? Math.exp(big.reduce((a, [, r]) => a + Math.log(r), 0) / big.length) : Number.NaN;
    const geoOf = (rs: number[], keep: (k: number) => boolean): string => {
      const sel = rs.filter((_, k) => keep(k));
      return sel.length ? `${Math.exp(sel.reduce((a, r) => a + Math.log(r), 0) / sel.length).toFixed(2)} over ${sel.length}` : 'n/a (none)';
    };
    const isReal = (k: number) => cases[k]!.source === 'real';
    const isBig = (k: number) => cases[k]!.a.rowPtr[cases[k]!.a.rows]! >= 1e6;
    const date = new Date().toISOString().slice(0, 16).replace('T', ' ');
    const section = [
      `## Host CSR SpMV vs SciPy (${date} UTC, ${cpus()[0]?.model.trim()} ×${cpus().length}, node ${process.version}, SciPy ${sci.scipy} / NumPy ${sci.numpy})`,
      '',
      `Command: \`pnpm tsx bench/host-spmv.ts ${process.argv.slice(2).join(' ')}\`. One thread each side (SciPy with OMP/OPENBLAS/MKL_NUM_THREADS=1; its sparse kernels are single-threaded anyway).`,
      `Time per product = median over ≥ ${MIN_BATCHES} batches of back-to-back calls, each batch ≥ ${BATCH_MS} ms; each side measured twice and the lower median kept; float64; same matrices (written by our writer, read by scipy.io.mmread) and same x.`,
      "`ours` = `csrSpmv(a, x, y)` (y preallocated; 4-way unrolled since this benchmark); `ours before` = the previous 2-way body, kept in the bench file and timed alternately with `ours` in the same run; `SciPy @` = `csr_matrix @ x` (allocates y; includes SciPy's Python dispatch, a few µs); `csr_matvec` = SciPy's C++ kernel `_sparsetools.csr_matvec` called directly with a preallocated y.",
      '**ratio = SciPy time / our time** (> 1: ours faster).',
      `Machine: ${cpus().length} cores; load average ${load0.map((l) => l.toFixed(2)).join(' ')} at the start, ${load1.map((l) => l.toFixed(2)).join(' ')} at the end${Math.max(...load0, ...load1) > 1.2 ? ` — other engineers' builds and tests were running on the same ${cpus().length} cores, so timings are noisy: a burst of load during one matrix's measurement can inflate a row several-fold (repeat runs disagree row by row); read the table for orders of magnitude and trust an idle-machine run for ratios` : ''}.`,
      `Correctness: the two products agree to max |y − y_scipy| / Σ|a_ij x_j| = ${worstRel.toExponential(2)} over every row of every matrix (summation order differs).`,
      '',
      `\`wasm\` = \`WasmCsr.multiply(x, y)\` (packages/formats/src/csr/wasm, kernel variant ${wasmName}): the matrix copied into WebAssembly memory once (not timed), x copied in and y copied out on every call (timed), as \`HostOperator.fromCsr\` uses it from 10^4 non-zeros; timed twice, alternating with the JS kernels; \`wasm views\` = \`WasmCsr.multiplyInPlace()\`, the same kernel with x and y kept in wasm memory (no per-call copies). Both y equal \`ours\` bit for bit on ${wasmMismatches === 0 ? 'every row of every matrix' : `all but ${wasmMismatches} rows (A BUG)`}.`,
      '',
      '| matrix | kind | rows | nnz | ours before ms | ours ms | SciPy @ ms | csr_matvec ms | ratio (SciPy @ / ours) | ratio (csr_matvec / ours) | wasm ms | ratio (SciPy @ / wasm) | ratio (csr_matvec / wasm) | wasm views ms | ratio (SciPy @ / wasm views) |',
      '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
      ...rows,
      '',
      `Geometric mean of ratio (SciPy @ / ours): ${geo.toFixed(2)} over ${ratios.length} matrices; ${geoBig.toFixed(2)} over the ${big.length} with ≥ 10^6 non-zeros.`,
      `Geometric means, ours (JS) → wasm, ratio SciPy @ / ours: real matrices ${geoOf(ratios, isReal)} → ${geoOf(wasmRatios, isReal)}; ≥ 10^6 non-zeros ${geoOf(ratios, isBig)} → ${geoOf(wasmRatios, isBig)}; all ${geoOf(ratios, () => true)} → ${geoOf(wasmRatios, () => true)}. wasm views: real ${geoOf(viewsRatios, isReal)}; ≥ 10^6 non-zeros ${geoOf(viewsRatios, isBig)}.`,
      '',
    ].join('\n');
    const extra = argValue('--extra');
    const full = extra && existsSync(extra) ? `${section}\n${readFileSync(extra, 'utf8').trim()}\n` : section;
    console.log(full);
    if (write) updateResults(full);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

function fmt(ms: number): string {
  return ms >= 1 ? ms.toFixed(2) : ms >= 0.01 ? ms.toFixed(4) : ms.toPrecision(3);
}

/** Replace (or append) only this benchmark's section of bench/RESULTS.md. */
function updateResults(section: string): void {
  const path = join(here, 'RESULTS.md');
  const old = existsSync(path) ? readFileSync(path, 'utf8') : '# Benchmark results\n\nBenchmarks never gate CI; each section is owned by the script named in it.\n\n';
  const start = old.indexOf('## Host CSR SpMV vs SciPy');
  let next: string;
  if (start < 0) next = `${old.replace(/\n*$/, '\n\n')}${section}`;
  else {
    const after = old.indexOf('\n## ', start + 1);
    next = old.slice(0, start) + section + (after < 0 ? '' : `\n${old.slice(after + 1)}`);
  }
  writeFileSync(path, next);
  console.error(`updated ${path}`);
}

await main();
