/**
 * Where the CPU time of a small host CG or GMRES solve goes (issue 18): the solve of
 * bench/host-solvers.ts's case repeated `--reps` times on one WasmVectorSpace, with per-call
 * counters on the space and the operator (calls, CPU µs via process.cpuUsage), the rest being the
 * solver's own JavaScript. `--raw` runs without counters (for `node --cpu-prof`).
 *
 *   pnpm -s tsx bench/host-cg-profile.ts [--case stencil3d-40|banded-spd|banded-gmres] [--reps 20] [--threads 1] [--raw]
 */
import { type CsrMatrix, generators as g, WasmVectorSpace } from '@gpusparse/formats';
import { cg, gmres } from '@gpusparse/solvers';

const argv = process.argv;
const arg = (f: string) => (argv.includes(f) ? argv[argv.indexOf(f) + 1] : undefined);
const reps = Number(arg('--reps') ?? 20);
const threads = Number(arg('--threads') ?? 1);
const raw = argv.includes('--raw');
const which = arg('--case') ?? 'stencil3d-40';

function dominant(a: CsrMatrix): CsrMatrix {
  const values = Float64Array.from(a.values);
  for (let i = 0; i < a.rows; i++) {
    let off = 0;
    let d = -1;
    for (let q = a.rowPtr[i]!; q < a.rowPtr[i + 1]!; q++) {
      if (a.colIdx[q] === i) d = q;
      else off += Math.abs(values[q]!);
    }
    if (d >= 0) values[d] = off + 1;
  }
  return { ...a, values };
}
const cases: Record<string, () => { a: CsrMatrix; method: 'cg' | 'gmres' }> = {
  'stencil3d-40': () => ({ a: g.poisson3d(40), method: 'cg' }),
  'stencil2d-300': () => ({ a: g.poisson2d(300), method: 'cg' }),
  'banded-spd': () => ({ a: g.banded(200_000, 4, 4, { seed: 1, spd: true }), method: 'cg' }),
  'banded-gmres': () => ({ a: dominant(g.banded(200_000, 4, 4, { seed: 1 })), method: 'gmres' }),
};
const { a, method } = cases[which]!();
const space = WasmVectorSpace.create({ threads })!;
const op = space.csrOperator(a);
const ones = space.fromArray(new Array(a.cols).fill(1));
const b = space.create(a.rows);
op.apply(ones, b);

const tally = new Map<string, { calls: number; us: number }>();
if (!raw) {
  const wrap = (obj: Record<string, unknown>, name: string, label: string) => {
    const f = obj[name] as (...a: unknown[]) => unknown;
    obj[name] = function (this: unknown, ...args: unknown[]) {
      const t0 = process.cpuUsage();
      const out = f.apply(this, args);
      const d = process.cpuUsage(t0);
      const e = tally.get(label) ?? { calls: 0, us: 0 };
      e.calls++;
      e.us += d.user + d.system;
      tally.set(label, e);
      return out;
    };
  };
  for (const n of ['dot', 'norm2', 'axpby', 'copy', 'multiDot', 'combine', 'cgUpdate', 'cgIteration', 'combineNorm', 'combineNormalize', 'create', 'createUninitialized', 'release', 'fill', 'cgTrueUpdate'])
    if (typeof (space as unknown as Record<string, unknown>)[n] === 'function') wrap(space as unknown as Record<string, unknown>, n, n);
  wrap(op as unknown as Record<string, unknown>, 'apply', 'product');
  if (space.pool) wrap(space.pool as unknown as Record<string, unknown>, 'run', 'pool.run (threaded jobs)');
  wrap(op as unknown as Record<string, unknown>, 'applyDot', 'product+dot');
  wrap(op as unknown as Record<string, unknown>, 'applyPairDot', '2 products+dot');
}
let iters = 0;
const t0 = process.cpuUsage();
const w0 = performance.now();
for (let r = 0; r < reps; r++) {
  const res = method === 'cg' ? await cg(space, op, b, { rtol: 1e-8, maxIterations: 20_000 }) : await gmres(space, op, b, { rtol: 1e-8, restart: 30, maxIterations: 2000 });
  iters = res.iterations;
  space.release(res.x);
}
const cpu = process.cpuUsage(t0);
const wall = performance.now() - w0;
const cpuMs = (cpu.user + cpu.system) / 1000 / reps;
console.log(`${which} ${method} n ${a.rows} nnz ${a.rowPtr[a.rows]} threads ${threads}: ${iters} iterations; per solve ${(wall / reps).toFixed(1)} ms wall, ${cpuMs.toFixed(1)} ms CPU; per iteration ${((cpuMs * 1000) / iters).toFixed(0)} µs CPU`);
let inCalls = 0;
for (const [k, v] of [...tally].sort((x, y) => y[1].us - x[1].us)) {
  inCalls += v.us;
  console.log(`  ${k.padEnd(18)} ${String(v.calls / reps).padStart(7)} calls/solve  ${(v.us / reps / 1000).toFixed(2).padStart(8)} ms/solve  ${(v.us / v.calls).toFixed(1).padStart(7)} µs/call`);
}
if (!raw) console.log(`  rest (solver JS + counters) ${(cpuMs - inCalls / reps / 1000).toFixed(2)} ms/solve`);
space.dispose();
