/**
 * Example: solve A·x = b for a Matrix Market matrix with CG on WebGPU, to float64 accuracy by
 * mixed-precision iterative refinement (float32 CG on the device, float64 residuals on the host).
 *
 *   pnpm tsx examples/solve-matrix-market.ts [A.mtx]
 *
 * Default matrix: bcsstk13 (2003×2003 SPD, ill-conditioned; ../shared/data) or, without the
 * data folder, a generated 2-D Poisson matrix.
 */
import { csrSpmv, generators, HostOperator, readMatrixMarket } from '@gpusparse/formats';
import { gpuOperatorFromCsr } from '@gpusparse/gpu';
import { cg, jacobi, refinedSolve } from '@gpusparse/solvers';
import { exampleBackend, sharedData } from './_backend';

const path = process.argv[2] ?? (await sharedData('matrices', 'bcsstk13.mtx'));
const a = path ? (await readMatrixMarket(path)).matrix : generators.poisson2d(100);
console.log(`${path ?? 'poisson2d(100)'}: ${a.rows}×${a.cols}, nnz ${a.rowPtr[a.rows]}`);

// b = A·x* for a known x*, so the error can be checked
const xStar = Float64Array.from({ length: a.rows }, (_, i) => 1 + Math.sin(i));
const b = csrSpmv(a, xStar);
const host = HostOperator.fromCsr(a);
const be = await exampleBackend();

if (be.kind === 'webgpu') {
  const op = gpuOperatorFromCsr(be.ctx, a, { kernel: 'csr-vector', params: { lanes: 4 } });
  const pre = jacobi(be.space, host.diagonal!());
  const t0 = performance.now();
  const r = await refinedSolve({ hostOperator: host, innerOperator: op, innerSpace: be.space, b, rtol: 1e-10, inner: { method: 'cg', rtol: 1e-3, preconditioner: pre, maxIterations: 20 * a.rows } });
  console.log(`refined CG (float32 on ${op.label} + float64 residuals): ${r.reason} after ${r.outerIterations} outer / ${r.innerIterations} inner iterations, ${(performance.now() - t0).toFixed(0)} ms`);
  console.log(`relative residual ‖b − A·x‖/‖b‖ = ${(r.trueResidual / r.bNorm).toExponential(3)} (float64)`);
  if (!r.converged) process.exit(1);
} else {
  const pre = jacobi(be.space, host.diagonal!());
  const r = await cg(be.space, host, b, { rtol: 1e-10, preconditioner: pre, maxIterations: 20 * a.rows });
  console.log(`CG (float64, Jacobi): ${r.reason} in ${r.iterations} iterations, relative residual ${(r.trueResidual / r.bNorm).toExponential(3)}`);
  if (!r.converged) process.exit(1);
}
be.kind === 'webgpu' && be.ctx.dispose();
