/**
 * A/B CPU time of host eigensolves: this checkout's solvers against another checkout's (`--before
 * DIR`, e.g. `git archive <commit> | tar -x -C DIR` with node_modules linked in), alternating
 * solve by solve on the same WasmVectorSpace (1 thread), so both see the same load. Reports, per
 * matrix, products and the median CPU ms of the main thread (from /proc: the solve itself) and
 * of the process (with V8's helper threads: garbage collection, compilation) per solve.
 *
 *   pnpm -s tsx bench/lanczos-ab.ts --before DIR [--only SiH4,trpcage,banded,stencil2d] [--reps 7] [--method lanczos|lobpcg]
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type CsrMatrix, generators as g, readMatrixMarket, WasmVectorSpace } from '@gpusparse/formats';
import * as after from '@gpusparse/solvers';

const argv = process.argv;
const arg = (f: string) => (argv.includes(f) ? argv[argv.indexOf(f) + 1] : undefined);
const reps = Number(arg('--reps') ?? 7);
const method = (arg('--method') ?? 'lanczos') as 'lanczos' | 'lobpcg';
const beforeDir = arg('--before');
const before = beforeDir ? ((await import(resolve(beforeDir, 'packages/solvers/src/index.ts'))) as typeof after) : undefined;
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

/** CPU ms of the main thread (utime + stime of /proc/self/task/<pid>, 10 ms ticks) and of the process (µs). */
function cpu(): { main: number; proc: number } {
  const s = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
  const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
  const u = process.cpuUsage();
  return { main: 10 * (Number(f[11]) + Number(f[12])), proc: (u.user + u.system) / 1e3 };
}
const median = (xs: number[]) => [...xs].sort((p, q) => p - q)[xs.length >> 1]!;

for (const [name, make] of all) {
  if (!only.some((o) => name.includes(o))) continue;
  const a = await make();
  const space = WasmVectorSpace.create({ threads: 1 })!;
  const op = space.csrOperator(a);
  const sides = before ? ([['before', before], ['after', after]] as const) : ([['after', after]] as const);
  const out = new Map<string, { main: number[]; proc: number[]; products: number; values: number[] }>();
  for (let r = -1; r < reps; r++) {
    for (const [side, impl] of sides) {
      // solves batched so the 10 ms ticks of the main thread's clock average out
      const batch = Math.max(1, Math.round(3e4 / a.rowPtr[a.rows]!));
      const c0 = cpu();
      let res: { stats: { matvecs: number }; values: ArrayLike<number>; vectors: Float64Array[] } | undefined;
      for (let b = 0; b < batch; b++) {
        res = method === 'lanczos' ? await impl.lanczos(space, op, { k: 4, which: 'smallest', tol: 1e-8, maxIterations: 20000 }) : await impl.lobpcg(space, op, { k: 4, tol: 1e-8, maxIterations: 20000 });
        for (const v of res.vectors) space.release(v);
      }
      const c1 = cpu();
      if (r < 0) continue; // warm-up
      const o = out.get(side) ?? { main: [], proc: [], products: 0, values: [] };
      o.main.push((c1.main - c0.main) / batch);
      o.proc.push((c1.proc - c0.proc) / batch);
      o.products = res!.stats.matvecs;
      o.values = Array.from(res!.values);
      out.set(side, o);
    }
  }
  for (const [side, o] of out) console.log(`${name} ${method} ${side.padEnd(6)}: ${o.products} products, CPU main ${median(o.main).toFixed(1)} ms, process ${median(o.proc).toFixed(1)} ms (${((1e3 * median(o.proc)) / o.products).toFixed(0)} µs/product); values ${o.values.map((x) => x.toPrecision(12)).join(' ')}`);
  space.dispose();
}
