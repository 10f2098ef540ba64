/**
 * Where the CPU time of a host Lanczos (or LOBPCG) solve goes, per product (issue 18): the
 * WasmVectorSpace calls and the operator are wrapped with counters (calls, vectors touched,
 * time), the rest of the solve is the solver's own work (projected-matrix eigensolves, Ritz
 * estimates, JavaScript bookkeeping). Machine-independent counts (products, vector passes) come
 * with CPU time (process.cpuUsage around every call: ≈ 1 µs of its own), so the split holds on a
 * loaded machine. For a function-level split run it under
 * `node --cpu-prof` (bench/cpuprofile-summary.ts reads the profile).
 *
 *   pnpm -s tsx bench/lanczos-host-profile.ts [--only SiH4,trpcage,banded,stencil2d] [--reps 5]
 *     [--method lanczos|lobpcg] [--no-check] [--raw] [--solvers DIR]
 *
 * `--raw` runs without the wrappers (for --cpu-prof, whose own split is then undistorted).
 */
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type CsrMatrix, generators as g, readMatrixMarket, WasmVectorSpace } from '@gpusparse/formats';
import * as current from '@gpusparse/solvers';

const argv = process.argv;
const arg = (f: string) => (argv.includes(f) ? argv[argv.indexOf(f) + 1] : undefined);
const reps = Number(arg('--reps') ?? 5);
const method = arg('--method') ?? 'lanczos';
const raw = argv.includes('--raw');
// `--solvers DIR`: the solvers of another checkout (the counts before a change)
const solversDir = arg('--solvers');
const { lanczos, lobpcg } = solversDir ? ((await import(resolve(solversDir, 'packages/solvers/src/index.ts'))) as typeof current) : current;
const here = fileURLToPath(new URL('.', import.meta.url));
const dataDir = resolve(process.env.GPUSPARSE_DATA ?? resolve(here, '..', '..', 'shared', 'data'), 'matrices');
const real = async (f: string) => (await readMatrixMarket(join(dataDir, f), { strictCount: false })).matrix;
const all: [string, () => CsrMatrix | Promise<CsrMatrix>][] = [
  ['SiH4', () => real('SiH4.mtx.gz')],
  ['ExaSP2_trpcage_8K', () => real('ExaSP2_trpcage_8K.mtx.gz')],
  ['banded-spd-2000-b9', () => g.banded(2000, 4, 4, { seed: 1, spd: true })],
  ['stencil2d-100^2', () => g.poisson2d(100)],
  ['stencil3d-40^3', () => g.poisson3d(40)],
];
const only = (arg('--only') ?? 'SiH4,trpcage,banded,stencil2d').split(',');

interface Tally {
  calls: number;
  /** Vectors of length n touched (a k-vector multiDot: k + 1). */
  passes: number;
  ms: number;
}
const tallies = new Map<string, Tally>();
const cpuNow = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e3;
};

/** Wrap obj[name] with a counter; `passes` from the call's arguments. */
function wrap(obj: Record<string, unknown>, name: string, label: string, passes: (args: unknown[]) => number): void {
  const f = obj[name] as (...a: unknown[]) => unknown;
  obj[name] = function (this: unknown, ...a: unknown[]) {
    const t = tallies.get(label) ?? { calls: 0, passes: 0, ms: 0 };
    tallies.set(label, t);
    const t0 = cpuNow();
    const r = f.apply(this, a);
    t.ms += cpuNow() - t0;
    t.calls++;
    t.passes += passes(a);
    return r;
  };
}

for (const [name, make] of all) {
  if (!only.some((o) => name.includes(o))) continue;
  const a = await make();
  const space = WasmVectorSpace.create({ threads: 1 })!;
  const op = space.csrOperator(a);
  const n = a.rows;
  if (!raw) {
    const s = space as unknown as Record<string, unknown>;
    const len = (v: unknown) => (v as { length: number }).length / n;
    wrap(s, 'multiDot', 'multiDot', (x) => (x[0] as unknown[]).length + 1);
    wrap(s, 'combine', 'combine', (x) => (x[1] as unknown[]).length + 1);
    // combine with ‖y‖ taken block by block while in cache: the passes of combine, the norm's read of y saved
    if (typeof (s as { combineNorm?: unknown }).combineNorm === 'function') wrap(s, 'combineNorm', 'combineNorm', (x) => (x[1] as unknown[]).length + 1);
    wrap(s, 'combineMany', 'combineMany', (x) => (x[1] as unknown[]).length + (x[2] as unknown[]).length);
    wrap(s, 'axpby', 'axpby', () => 2);
    wrap(s, 'norm2', 'norm2', (x) => len(x[0]));
    wrap(s, 'dot', 'dot', () => 2);
    wrap(s, 'copy', 'copy', () => 2);
    wrap(s, 'create', 'create', () => 0);
    wrap(s, 'createUninitialized', 'createUninitialized', () => 0);
    wrap(s, 'release', 'release', () => 0);
    wrap(s, 'readMany', 'readMany', () => 0);
    wrap(op as unknown as Record<string, unknown>, 'apply', 'product', () => 0);
  }
  const solve = () => (method === 'lanczos' ? lanczos(space, op, { k: 4, which: 'smallest', tol: 1e-8, checkMultiplicity: !argv.includes('--no-check'), maxIterations: 20000 }) : lobpcg(space, op, { k: 4, tol: 1e-8, maxIterations: 20000 }));
  const r0 = await solve(); // warm-up (V8 compilation)
  for (const v of r0.vectors) space.release(v);
  tallies.clear();
  const cpus: number[] = [];
  let products = 0;
  let values: number[] = [];
  for (let r = 0; r < reps; r++) {
    const c0 = cpuNow();
    const res = await solve();
    cpus.push(cpuNow() - c0);
    products = res.stats.matvecs;
    values = Array.from(res.values);
    for (const v of res.vectors) space.release(v);
  }
  cpus.sort((p, q) => p - q);
  const med = cpus[cpus.length >> 1]!;
  const total = cpus.reduce((s, x) => s + x, 0);
  const inCalls = [...tallies.values()].reduce((s, t) => s + t.ms, 0);
  const passes = [...tallies.entries()].filter(([l]) => ['multiDot', 'combine', 'combineNorm', 'combineMany', 'axpby', 'norm2', 'dot', 'copy'].includes(l)).reduce((s, [, t]) => s + t.passes, 0);
  console.log(`${name} ${method}: n ${n}, nnz ${a.rowPtr[n]}, ${products} products, CPU median ${med.toFixed(1)} ms (${((1e3 * med) / products).toFixed(1)} µs/product), values ${values.map((x) => x.toPrecision(8)).join(' ')}${raw ? '' : `; ${(passes / reps).toFixed(0)} vector passes (${(passes / reps / products).toFixed(1)} per product)`}`);
  if (!raw) {
    for (const [label, t] of [...tallies.entries()].sort((p, q) => q[1].ms - p[1].ms)) {
      console.log(`  ${label.padEnd(20)} ${(t.calls / reps).toFixed(0).padStart(7)} calls/solve ${(t.passes / reps).toFixed(0).padStart(8)} vector passes/solve ${((100 * t.ms) / total).toFixed(1).padStart(5)} % of CPU ${((1e3 * t.ms) / reps / products).toFixed(1).padStart(7)} µs/product`);
    }
    console.log(`  ${'solver (rest)'.padEnd(20)} ${''.padStart(7)}            ${''.padStart(8)}                      ${((100 * (total - inCalls)) / total).toFixed(1).padStart(5)} % of CPU ${((1e3 * (total - inCalls)) / reps / products).toFixed(1).padStart(7)} µs/product`);
  }
  space.dispose();
}
