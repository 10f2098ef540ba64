/**
 * What eigsMixed's df64 polish on the device spends (issue 15, item 3 of session 11): outer
 * iterations, df64 products, float32 correction products, the correction solves' readbacks and
 * the dispatches and vector passes recorded per correction product — machine-independent counts
 * (lavapipe gives the same as the H100 up to rounding), for poisson3d grids.
 *
 *   pnpm tsx bench/eig-polish-cost.ts [--grid 16x18x20,24x26x28] [--k 4] [--check on|off]
 *
 * A vector pass = one float32 vector of n values read or written by a BLAS-1 call of the fast
 * space (dot 2, axpby 3, copy 2, multiDot m + 1, combine m + 1 or m + 2); products counted apart.
 * @module
 */
import { generators } from '../packages/formats/src/index';
import { createGpuContext, Df64CsrOperator, Df64VectorSpace, GpuVectorSpace, gpuOperatorFromCsr } from '../packages/gpu/src/index';
import { eigsMixed } from '../packages/solvers/src/index';
import { diff, instrument, snapshot } from './gpu-calls';

const argv = process.argv.slice(2);
const opt = (n: string) => (argv.includes(n) ? argv[argv.indexOf(n) + 1] : undefined);
const grids = (opt('--grid') ?? '16x18x20').split(',').map((g) => g.split('x').map(Number) as [number, number, number]);
const k = Number(opt('--k') ?? 4);
const check = (opt('--check') ?? 'off') === 'on';
const innerOrthogonalization = (opt('--inner-ortho') ?? 'cgs2') as 'cgs2' | 'cgs';

const ctx = await createGpuContext();
instrument(ctx);
const space = new GpuVectorSpace(ctx);
/** Count the fast space's vector passes from now on (each call's reads and writes of n values). */
let passes = 0;
const s = space as unknown as Record<string, (...a: unknown[]) => unknown>;
const wrap = (name: string, cost: (...a: unknown[]) => number) => {
  const f = s[name]!.bind(space);
  s[name] = (...a: unknown[]) => {
    passes += cost(...a);
    return f(...a);
  };
};
wrap('axpby', () => 3);
wrap('dot', () => 2);
wrap('norm2', () => 1);
wrap('copy', () => 2);
wrap('multiDot', (xs) => (xs as unknown[]).length + 1);
wrap('combine', (_c, xs, beta) => (xs as unknown[]).length + 1 + (beta === 0 ? 0 : 1));
const df = (await Df64VectorSpace.of(ctx))!;
for (const [nx, ny, nz] of grids) {
  const a = generators.poisson3d(nx, ny, nz);
  const op = gpuOperatorFromCsr(ctx, a, { kernel: 'csr-scalar' });
  const dop = Df64CsrOperator.fromGpuOperator(df.d, op, a)!;
  for (let round = 0; round < 2; round++) {
    await ctx.finish();
    const d0 = ctx.recorder.dispatches;
    const c0 = snapshot();
    const p0 = passes;
    const t0 = performance.now();
    const m = await eigsMixed({ method: 'lanczos', k, fastOperator: op, fastSpace: space, devicePolish: df.polish(dop), accept: 'bound', fastCheckMultiplicity: check, returnVectors: false, innerOrthogonalization });
    const ms = performance.now() - t0;
    const [fast, polish] = m.phases;
    const dispatches = ctx.recorder.dispatches - d0;
    const c = diff(c0, snapshot());
    console.log(`eig-polish-cost poisson3d-${nx}x${ny}x${nz} k=${k} check=${check ? 'on' : 'off'} inner ${innerOrthogonalization}: ${m.reason}, ${ms.toFixed(0)} ms; fast ${fast!.matvecs} products; polish ${polish!.iterations} iterations, ${polish!.matvecs} df64 + ${polish!.innerMatvecs} f32 correction products, ${polish!.readbacks} readbacks; all ${dispatches} dispatches, ${c.mapAsync} mapAsync readbacks, ${c.submit} submits, ${passes - p0} f32 vector passes; values ${m.values.map((x) => x.toPrecision(13)).join(' ')}; residuals ${m.residualNorms.map((x) => x.toExponential(1)).join(' ')}`);
  }
  dop.dispose();
  op.dispose();
}
ctx.dispose();
