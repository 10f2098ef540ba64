/**
 * What the Lanczos multiplicity check costs, in products (machine independent; issues 15 / 18):
 * each case runs `lanczos` with and without the check and reports the products of the main run,
 * of the check, and the check's share.
 *
 *   pnpm tsx bench/eig-check-cost.ts [--case trpcage|sih4|banded-spd-2000|poisson2d-N|poisson3d-AxBxC[:f32path]] [--k 4]
 *
 * `--cpu N` (`--cpu-only`: only this): also N alternating rounds of the three (no check, check with the Chebyshev filter,
 * check by Lanczos runs only) on the WasmVectorSpace, 1 thread, process CPU time (what the load
 * of a shared machine inflates least), medians.
 *
 * `:f32path` runs the GPU fast phase's settings on a float64 host space (CGS2 steps read back
 * every 8, basis 40, half kept at a restart, tol 1e-6, k + 1 pairs as eigsMixed's bound mode):
 * the same counts of products as the device path up to rounding.
 * @module
 */
import { generators, HostOperator, HostVectorSpace, readMatrixMarket, WasmVectorSpace } from '../packages/formats/src/index';
import { lanczos } from '../packages/solvers/src/index';

const argv = process.argv.slice(2);
const opt = (n: string) => (argv.includes(n) ? argv[argv.indexOf(n) + 1] : undefined);
const cases = (opt('--case') ?? 'trpcage,sih4').split(',');
const k = Number(opt('--k') ?? 4);

// the data tier (GPUSPARSE_DATA, as bench/host-solvers.ts; default the shared folder of this machine)
const dataDir = `${process.env.GPUSPARSE_DATA ?? '/work/shared/data'}/matrices`;

async function load(name: string) {
  if (name === 'trpcage') return (await readMatrixMarket(`${dataDir}/ExaSP2_trpcage_8K.mtx.gz`, { strictCount: false })).matrix;
  if (name === 'sih4') return (await readMatrixMarket(`${dataDir}/SiH4.mtx.gz`)).matrix;
  if (name === 'banded-spd-2000') return generators.banded(2000, 4, 4, { seed: 1, spd: true });
  if (name.startsWith('poisson2d-')) return generators.poisson2d(Number(name.replace('poisson2d-', '')));
  const d = name.replace('poisson3d-', '').split('x').map(Number);
  return generators.poisson3d(d[0]!, d[1]!, d[2]!);
}

/** A host space that counts vector passes (each vector read or written once = one pass of n values). */
function counted(): { space: HostVectorSpace; passes: () => number } {
  const space = new HostVectorSpace();
  let passes = 0;
  const add = (k: number) => (passes += k);
  const wrap = <A extends unknown[], R>(f: (...a: A) => R, cost: (...a: A) => number) => (...a: A): R => {
    add(cost(...a));
    return f.apply(space, a);
  };
  space.axpby = wrap(space.axpby, () => 3);
  space.dot = wrap(space.dot, () => 2);
  space.multiDot = wrap(space.multiDot, (xs) => xs.length + 1);
  space.combine = wrap(space.combine, (_c, xs, beta) => xs.length + 1 + (beta === 0 ? 0 : 1));
  space.copy = wrap(space.copy, () => 2);
  return { space, passes: () => passes };
}

for (const spec of argv.includes('--cpu-only') ? [] : cases) {
  const [name, mode] = spec.split(':');
  const a = await load(name!);
  const op = HostOperator.fromCsr(a);
  const gpuLike = mode === 'f32path';
  const opts = gpuLike ? { k: k + 1, tol: 1e-6, maxBasis: 40, checkEvery: 8, orthogonalization: 'cgs2' as const } : { k, tol: 1e-8 };
  const t0 = performance.now();
  const s0 = counted();
  const without = await lanczos(s0.space, op, { ...opts, checkMultiplicity: false, ...(argv.includes('--quick') ? { maxIterations: 1 } : {}) });
  const t1 = performance.now();
  // perStep: one main-run step in vector passes (one product ≈ nnz·12 bytes against n·8 per pass: value + index)
  const perStep = s0.passes() / without.stats.matvecs + (1.5 * a.values.length) / a.rows;
  for (const filter of [true, false]) {
    const t2 = performance.now();
    const s1 = counted();
    const withCheck = await lanczos(s1.space, op, { ...opts, checkFilter: filter });
    const t3 = performance.now();
    const check = withCheck.stats.matvecs - without.stats.matvecs;
    const checkPasses = s1.passes() - s0.passes();
    const equiv = (checkPasses + (check * 1.5 * a.values.length) / a.rows) / perStep;
    console.log(`eig-check-cost ${spec} k=${opts.k} checkFilter=${filter}: main ${without.stats.matvecs} products (${(s0.passes() / without.stats.matvecs).toFixed(1)} vector passes each), with check ${withCheck.stats.matvecs} (check ${check} products, ${checkPasses} passes = ${equiv.toFixed(0)} main-step equivalents by bytes, ${((100 * check) / without.stats.matvecs).toFixed(0)} % in products); ${(t1 - t0).toFixed(0)} / ${(t3 - t2).toFixed(0)} ms; ${withCheck.reason}; values ${withCheck.values.map((x) => x.toPrecision(10)).join(' ')}`);
  }
}

/** Process CPU ms (all threads: the solve's and V8's helpers; µs resolution). */
function processCpu(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e3;
}

const cpuReps = Number(opt('--cpu') ?? 0);
if (cpuReps > 0) {
  const median = (x: number[]) => [...x].sort((p, q) => p - q)[Math.floor(x.length / 2)]!;
  for (const spec of cases) {
    const a = await load(spec.split(':')[0]!);
    const space = WasmVectorSpace.create({ threads: 1 })!;
    const op = space.csrOperator(a);
    const variants = [
      ['no check', { checkMultiplicity: false }],
      ['filter', {}],
      ['Lanczos check', { checkFilter: false }],
    ] as const;
    const cpu = variants.map(() => [] as number[]);
    const products = variants.map(() => 0);
    for (let r = -1; r < cpuReps; r++) {
      for (const [i, [, o]] of variants.entries()) {
        const t0 = processCpu();
        const res = await lanczos(space, op, { k, tol: 1e-8, ...o });
        if (r >= 0) cpu[i]!.push(processCpu() - t0); // round −1: warm-up
        products[i] = res.stats.matvecs;
        for (const v of res.vectors) space.release(v);
      }
    }
    const m = cpu.map(median);
    console.log(`eig-check-cost ${spec} process CPU (medians of ${cpuReps}, wasm 1T): ${variants.map(([name], i) => `${name} ${m[i]!.toFixed(1)} ms / ${products[i]} products`).join(', ')}; check ${(m[1]! - m[0]!).toFixed(1)} ms with the filter against ${(m[2]! - m[0]!).toFixed(1)} ms (${((m[2]! - m[0]!) / Math.max(1, m[1]! - m[0]!)).toFixed(2)}×), solve ${(m[2]! / m[1]!).toFixed(2)}×`);
    space.dispose();
  }
}
