/**
 * Example: let the autotuner choose the SpMV format and parameters for a matrix by measurement,
 * print its report (every candidate: timed, pruned with the reason, or skipped for the budget),
 * show that a second call is a cache hit, and use the tuned operator in a CG solve.
 *
 *   pnpm tsx examples/autotune-report.ts [A.mtx]
 *
 * Needs a WebGPU adapter (lavapipe works): the tuner measures GPU kernels. Without one it says
 * so and exits 77, which `pnpm examples` counts as skipped.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { csrSpmv, generators, readMatrixMarket } from '@gpusparse/formats';
import { autotune, GpuVectorSpace, reportTable, tunedOperator } from '@gpusparse/gpu';
import { cg } from '@gpusparse/solvers';
import { requireGpuContext } from './_backend';

const ctx = await requireGpuContext('the autotuner (it times GPU kernels)');
const path = process.argv[2];
const a = path ? (await readMatrixMarket(path)).matrix : generators.ciLike(3000, { maxPerRow: 300 });
console.log(`${path ?? 'ciLike(3000): a synthetic CI-like matrix (Reference band + sparse Expansion)'}: ${a.rows}×${a.cols}, nnz ${a.rowPtr[a.rows]}`);

const cache = join(mkdtempSync(join(tmpdir(), 'gpusparse-tune-')), 'tune.json'); // a private cache for the example
const first = await autotune(ctx, a, { expectedProducts: 2000, cache, warn: () => {} });
console.log(reportTable(first.report, { maxRows: 25 }));
console.log(`\nchoice: ${first.kernel} ${JSON.stringify(first.params)}; tuning spent ${first.report.spentMs.toFixed(0)} ms of a ${first.report.budgetMs.toFixed(0)} ms budget (${first.report.method} timing)`);

const second = await autotune(ctx, a, { expectedProducts: 2000, cache });
console.log(`second call: source '${second.report.source}', ${second.report.timed} candidates timed, ${second.report.spentMs.toFixed(1)} ms`);

// the tuned operator in a solve (the matrix is made SPD-ish by the generator's dominant diagonal)
const op = await tunedOperator(ctx, a, { expectedProducts: 2000, cache });
const space = new GpuVectorSpace(ctx);
const xStar = Float64Array.from({ length: a.rows }, (_, i) => 1 + (i % 7) / 7);
const b = space.fromArray(csrSpmv(a, xStar));
const r = await cg(space, op, b, { rtol: 1e-5 });
console.log(`CG (float32) on ${op.label}: ${r.reason} in ${r.iterations} iterations`);
ctx.dispose();
if (second.report.source !== 'cache' || second.kernel !== first.kernel) process.exit(1);
