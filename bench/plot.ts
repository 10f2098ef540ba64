/**
 * GFLOP/s per kernel per matrix as an SVG grouped bar chart (the shape of seed 004 Fig. 6), from
 * one or more JSON files written by bench/spmv.ts; each kernel's best correct variant is drawn.
 *
 *   pnpm tsx bench/plot.ts out.svg spmv.json [spmv2.json ...] [--kernels id,id]
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { groupedBarChart } from '../packages/cli/src/plots/svg';

const argv = process.argv.slice(2);
const ki = argv.indexOf('--kernels');
const only = ki >= 0 ? argv[ki + 1]!.split(',') : undefined;
const files = argv.filter((a, i) => !a.startsWith('--') && (ki < 0 || i !== ki + 1));
const [out, ...inputs] = files;
if (!out || inputs.length === 0) {
  console.error('usage: tsx bench/plot.ts out.svg spmv.json [more.json ...] [--kernels id,id]');
  process.exit(2);
}
type Row = { kernel: string; gflops?: number; correct?: boolean };
const best = new Map<string, Map<string, number>>(); // matrix → kernel → GFLOP/s
let device = '';
for (const f of inputs) {
  const d = JSON.parse(readFileSync(f, 'utf8')) as { device: { adapter: { device: string } }; matrices: { name: string; results: Row[] }[] };
  device ||= d.device.adapter.device;
  for (const m of d.matrices) {
    const row = best.get(m.name) ?? new Map<string, number>();
    for (const r of m.results) {
      if (!r.correct || r.gflops === undefined || (only && !only.includes(r.kernel))) continue;
      row.set(r.kernel, Math.max(row.get(r.kernel) ?? 0, r.gflops));
    }
    best.set(m.name, row);
  }
}
const matrices = [...best.keys()];
const kernels = [...new Set(matrices.flatMap((m) => [...best.get(m)!.keys()]))];
const values = kernels.map((k) => matrices.map((m) => best.get(m)!.get(k)));
writeFileSync(out, groupedBarChart(matrices, kernels, values, { title: `SpMV GFLOP/s per kernel (best variant), ${device}`, yLabel: 'GFLOP/s (2·nnz / t)' }));
console.log(`wrote ${out}: ${matrices.length} matrices × ${kernels.length} kernels`);
