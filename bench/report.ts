/**
 * Turns the JSON written on the GPU machine into the markdown tables of bench/RESULTS.md:
 * the SpMV table (best kernel per matrix, its parameters, GFLOP/s, GB/s, fraction of copy
 * bandwidth, bytes stored, and the ratio to cuSPARSE CSR f32 measured in the same run by
 * ../shared/gpukit/cusparse_anchor.py) and the per-kernel table (default parameters).
 *
 *   pnpm tsx bench/report.ts spmv.json anchor.jsonl > table.md
 */
import { readFileSync } from 'node:fs';

interface Row {
  kernel: string;
  params: Record<string, number>;
  medianMs?: number;
  gflops?: number;
  gbs?: number;
  fractionOfCopy?: number;
  bytesStored?: number;
  correct?: boolean;
  skipped?: string;
}
interface MatrixResult {
  name: string;
  rows: number;
  nnz: number;
  results: Row[];
}

const [spmvPath, anchorPath] = process.argv.slice(2);
if (!spmvPath) {
  console.error('usage: tsx bench/report.ts spmv.json [anchor.jsonl]');
  process.exit(2);
}
const spmv = JSON.parse(readFileSync(spmvPath, 'utf8')) as { date: string; device: { adapter: { device: string } }; copyBandwidth: { gbs: number; kernel?: string }; matrices: MatrixResult[] };
const anchor = new Map<string, { spmv_ms: number; gflops: number; copy_gbs: number; cg_ms_per_iter?: number }>();
if (anchorPath) {
  for (const line of readFileSync(anchorPath, 'utf8').split('\n')) {
    if (!line.trim()) continue;
    const r = JSON.parse(line);
    if (r.dtype !== 'float32') continue;
    anchor.set(String(r.matrix).replace(/\.csr$/, '').replace(/\.mtx(\.gz)?$/, ''), r);
  }
}
const fmt = (v: number | undefined, d = 2) => (v === undefined || !Number.isFinite(v) ? '-' : v.toFixed(d));
const par = (p: Record<string, number>) =>
  Object.entries(p)
    .filter(([k]) => k !== 'workgroupSize')
    .map(([k, v]) => `${k}=${v}`)
    .join(' ');
const copyCupy = [...anchor.values()][0]?.copy_gbs;
console.log(`Device: ${spmv.device.adapter.device}; run ${spmv.date}. Copy bandwidth: WGSL ${spmv.copyBandwidth.gbs.toFixed(0)} GB/s${copyCupy ? `, CuPy ${copyCupy.toFixed(0)} GB/s` : ''}.`);
console.log('');
console.log('| matrix | rows | nnz | best kernel | params | ms | GFLOP/s | GB/s | % of WGSL copy | cuSPARSE f32 ms | ratio vs cuSPARSE | csr-vector default ms |');
console.log('|---|---:|---:|---|---|---:|---:|---:|---:|---:|---:|---:|');
for (const m of spmv.matrices) {
  const ok = m.results.filter((r) => r.correct && r.medianMs !== undefined);
  ok.sort((a, b) => a.medianMs! - b.medianMs!);
  const best = ok[0];
  const base = m.results.find((r) => r.kernel === 'csr-vector' && r.correct);
  const an = anchor.get(m.name);
  const ratio = best && an ? an.spmv_ms / best.medianMs! : undefined;
  console.log(
    `| ${m.name} | ${m.rows} | ${m.nnz} | ${best?.kernel ?? '-'} | ${best ? par(best.params) : ''} | ${fmt(best?.medianMs, 4)} | ${fmt(best?.gflops, 1)} | ${fmt(best?.gbs, 0)} | ${fmt(best ? 100 * best.fractionOfCopy! : undefined, 0)} | ${fmt(an?.spmv_ms, 4)} | ${fmt(ratio, 2)} | ${fmt(base?.medianMs, 4)} |`,
  );
}
console.log('');
console.log('Per kernel (best parameter variant of each kernel), ms; "x" = not supported / refused, "!" = wrong result:');
console.log('');
const ids = [...new Set(spmv.matrices.flatMap((m) => m.results.map((r) => r.kernel)))];
console.log(`| matrix | ${ids.join(' | ')} |`);
console.log(`|---|${ids.map(() => '---:').join('|')}|`);
for (const m of spmv.matrices) {
  const cells = ids.map((id) => {
    const rs = m.results.filter((r) => r.kernel === id);
    const ok = rs.filter((r) => r.correct && r.medianMs !== undefined).sort((a, b) => a.medianMs! - b.medianMs!);
    if (ok.length) return ok[0]!.medianMs!.toFixed(3);
    if (rs.some((r) => r.correct === false)) return '!';
    return 'x';
  });
  console.log(`| ${m.name} | ${cells.join(' | ')} |`);
}
const cg = [...anchor.entries()].filter(([, r]) => r.cg_ms_per_iter !== undefined);
if (cg.length) {
  console.log('');
  console.log('CuPy CG (float32), ms per iteration, same run:');
  console.log('');
  for (const [n, r] of cg) console.log(`- ${n}: ${r.cg_ms_per_iter!.toFixed(3)}`);
}
