/**
 * CG on the 2-D Poisson matrix on WebGPU (float32, scalars on the device): ms per iteration for
 * several `checkEvery` values, a fixed number of iterations (rtol far below reach, so every run
 * does the same work), and time to a float64-accurate answer with refinement. Compare with
 * CuPy's CG from ../shared/gpukit/cusparse_anchor.py --cg on the same matrices (dumped with --dump).
 *
 *   node .gpukit/app/cg.mjs --out $OUT/cg.json [--grids 1000,2000] [--iters 300] [--kernel csr-scalar] [--dump DIR]
 *     [--check 8,32,64] [--inner-rtols 1e-4,1e-5]
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { csrSpmv, generators, HostOperator } from '../packages/formats/src/index';
import { createGpuContext, GpuVectorSpace, gpuOperatorFromCsr } from '../packages/gpu/src/index';
import { cg, refinedSolve } from '../packages/solvers/src/index';

const argv = process.argv.slice(2);
const opt = (n: string) => (argv.includes(n) ? argv[argv.indexOf(n) + 1] : undefined);
const out = opt('--out') ?? 'bench/out/cg.json';
const grids = (opt('--grids') ?? '1000,2000').split(',').map(Number);
const iters = Number(opt('--iters') ?? 300);
const kernel = opt('--kernel') ?? 'csr-scalar';
const dumpDir = opt('--dump');
const refine = !argv.includes('--no-refine');
const checks = (opt('--check') ?? '8,32,64').split(',').map(Number);
/** Inner relative tolerances of the refinement to compare (fewer outer steps vs longer inner solves). */
const innerRtols = (opt('--inner-rtols') ?? '1e-4').split(',').map(Number);

const ctx = await createGpuContext();
console.log(ctx.describeText().split('\n')[0]);
const space = new GpuVectorSpace(ctx);
const rows: Record<string, unknown>[] = [];
for (const n of grids) {
  const a = generators.poisson2d(n);
  if (dumpDir) {
    mkdirSync(dumpDir, { recursive: true });
    const base = join(dumpDir, `poisson2d-${n}`);
    writeFileSync(`${base}.rowptr`, new Uint8Array(a.rowPtr.buffer));
    writeFileSync(`${base}.cols`, new Uint8Array(a.colIdx.buffer));
    writeFileSync(`${base}.vals`, new Uint8Array(Float32Array.from(a.values).buffer));
  }
  const op = gpuOperatorFromCsr(ctx, a, { kernel });
  const bHost = csrSpmv(a, new Float64Array(a.rows).fill(1));
  const b = space.fromArray(bHost);
  // warm-up (pipelines, clocks), then every checkEvery twice in interleaved order
  await cg(space, op, b, { rtol: 1e-30, maxIterations: 200, checkEvery: 32 }).then((r) => space.release(r.x));
  for (const checkEvery of [...checks, ...[...checks].reverse()]) {
    await ctx.finish();
    const t0 = performance.now();
    const r = await cg(space, op, b, { rtol: 1e-30, maxIterations: iters, checkEvery });
    await ctx.finish();
    const ms = performance.now() - t0;
    space.release(r.x);
    const row = { rows: a.rows, nnz: a.rowPtr[a.rows], kernel: op.label, checkEvery, iterations: r.iterations, reason: r.reason, msPerIter: ms / Math.max(1, r.iterations), readbacks: r.stats.readbacks };
    rows.push(row);
    console.log(`poisson2d ${n}x${n} cg checkEvery=${checkEvery}: ${r.iterations} iterations (${r.reason}), ${(ms / Math.max(1, r.iterations)).toFixed(4)} ms/iter, ${r.stats.readbacks} readbacks`);
  }
  for (const innerRtol of refine ? innerRtols : []) {
    const t0 = performance.now();
    const r = await refinedSolve({ hostOperator: HostOperator.fromCsr(a), innerOperator: op, innerSpace: space, b: bHost, rtol: 1e-10, inner: { method: 'cg', rtol: innerRtol, checkEvery: 32, maxIterations: 20000 } });
    const ms = performance.now() - t0;
    rows.push({ rows: a.rows, kind: 'refined-to-1e-10', innerRtol, ms, outer: r.outerIterations, inner: r.innerIterations, relativeResidual: r.trueResidual / r.bNorm, converged: r.converged });
    console.log(`poisson2d ${n}x${n} refined CG to 1e-10 (inner rtol ${innerRtol}): ${r.converged ? 'converged' : r.reason}, ${r.outerIterations} outer / ${r.innerIterations} inner, rel.res ${(r.trueResidual / r.bNorm).toExponential(2)}, ${ms.toFixed(0)} ms`);
  }
  op.dispose();
  space.release(b);
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, JSON.stringify({ date: new Date().toISOString(), device: ctx.describe(), rows }, null, 1));
}
ctx.dispose();
