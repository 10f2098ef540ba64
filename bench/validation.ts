/**
 * Cost of validating a CSR given as arrays (issue 13): `validateCsr` at both levels on a fresh
 * matrix object, against one JavaScript `csrSpmv` and one wasm `csrSpmvFast` of the same matrix,
 * and the remembered re-check that every later product pays. Medians of 7 interleaved runs.
 * Run: `pnpm tsx bench/validation.ts [rows=1000000] [perRow=10]` (10^7 non-zeros by default;
 * ≈ 0.5 GB of memory).
 */
import { loadavg } from 'node:os';
import { type CsrMatrix, csrSpmv, csrSpmvFast, generators as g, validateCsr } from '@gpusparse/formats';

const rows = Number(process.argv[2] ?? 1_000_000);
const perRow = Number(process.argv[3] ?? 10);
const a0 = g.uniformRandom(rows, rows, perRow, 7);
const fresh = (): CsrMatrix => ({ ...a0 }); // a new object: nothing remembered
const x = new Float64Array(a0.cols).fill(1);
const y = new Float64Array(a0.rows);
const median = (v: number[]): number => [...v].sort((p, q) => p - q)[v.length >> 1]!;
const time = (f: () => void): number => {
  const t = performance.now();
  f();
  return performance.now() - t;
};

const warm = fresh();
validateCsr(warm);
csrSpmv(warm, x, y);
csrSpmvFast(warm, x, y);
const t = { structure: [] as number[], canonical: [] as number[], js: [] as number[], wasm: [] as number[] };
for (let r = 0; r < 7; r++) {
  t.structure.push(time(() => validateCsr(fresh(), 'bench', false)));
  t.canonical.push(time(() => validateCsr(fresh())));
  t.js.push(time(() => csrSpmv(warm, x, y)));
  t.wasm.push(time(() => csrSpmvFast(warm, x, y)));
}
const reps = 200_000;
const recheck = (time(() => {
  for (let r = 0; r < reps; r++) validateCsr(warm);
}) / reps) * 1e6;
const [s, c, js, w] = [median(t.structure), median(t.canonical), median(t.js), median(t.wasm)];
console.log(`${a0.rows}x${a0.cols}, nnz ${a0.colIdx.length}, load average ${loadavg()[0]!.toFixed(1)}`);
console.log(`validate (structure) ${s.toFixed(1)} ms = ${(s / js).toFixed(2)}× csrSpmv (${js.toFixed(1)} ms), ${(s / w).toFixed(2)}× csrSpmvFast (${w.toFixed(1)} ms)`);
console.log(`validate (canonical) ${c.toFixed(1)} ms; remembered re-check ${recheck.toFixed(0)} ns`);
