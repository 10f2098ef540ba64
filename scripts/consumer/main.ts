/**
 * A consumer of the packed packages, type-checked with `moduleResolution: NodeNext` and `strict`
 * and run with plain `node` outside the workspace (scripts/consumer/run.mjs copies it there).
 * It reads a Matrix Market file, solves with CG on the CPU (float64) and, when an adapter exists,
 * on WebGPU (float32 inner CG refined to float64), checks the true residuals, and runs a small
 * CI calculation from the FCIDUMP that @gpusparse/chem ships, and the one-call API of
 * @gpusparse/cli (solve, eigsh). Exit 1 on any wrong answer.
 */
import { readFile } from 'node:fs/promises';
import { ciEnergies, parseFcidump } from '@gpusparse/chem';
import { eigsh, solve } from '@gpusparse/cli';
import { readFcidump } from '@gpusparse/chem/node';
import { type CsrMatrix, csrSpmv, HostOperator, HostVectorSpace, readMatrixMarket } from '@gpusparse/formats';
import { createGpuContext, GpuVectorSpace, gpuOperatorFromCsr, NoAdapterError } from '@gpusparse/gpu';
import { cg, jacobi, refinedSolve } from '@gpusparse/solvers';

const [mtx = 'bcsstk01.mtx', fcidump = 'node_modules/@gpusparse/chem/data/H2O_sto2g_hande.FCIDUMP'] = process.argv.slice(2);
let failures = 0;
function check(what: string, ok: boolean, detail: string): void {
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}: ${detail}`);
  if (!ok) failures++;
}

/** ‖b − A·x‖ / ‖b‖ in float64. */
function relResidual(a: CsrMatrix, x: Float64Array, b: Float64Array): number {
  const ax = csrSpmv(a, x);
  let r = 0;
  let nb = 0;
  for (let i = 0; i < b.length; i++) {
    r += (b[i]! - ax[i]!) ** 2;
    nb += b[i]! ** 2;
  }
  return Math.sqrt(r / nb);
}

const a = (await readMatrixMarket(mtx)).matrix;
const b = csrSpmv(a, Float64Array.from({ length: a.rows }, (_, i) => 1 + Math.sin(i)));
const host = HostOperator.fromCsr(a);
const cpuSpace = new HostVectorSpace();
const cpu = await cg(cpuSpace, host, b, { rtol: 1e-10, preconditioner: jacobi(cpuSpace, host.diagonal!()), maxIterations: 20 * a.rows });
const cpuRes = relResidual(a, await cpuSpace.toArray(cpu.x), b);
check(`CPU CG on ${mtx} (${a.rows}×${a.cols}, nnz ${a.rowPtr[a.rows]})`, cpu.converged && cpuRes < 1e-8, `${cpu.reason} in ${cpu.iterations} iterations, ‖b − Ax‖/‖b‖ = ${cpuRes.toExponential(2)}`);

try {
  const ctx = await createGpuContext();
  const space = new GpuVectorSpace(ctx);
  const op = gpuOperatorFromCsr(ctx, a, { kernel: 'csr-vector', params: { lanes: 4 } });
  const r = await refinedSolve({ hostOperator: host, innerOperator: op, innerSpace: space, b, rtol: 1e-10, inner: { method: 'cg', rtol: 1e-3, preconditioner: jacobi(space, host.diagonal!()), maxIterations: 20 * a.rows } });
  const res = relResidual(a, r.x, b);
  check(`WebGPU refined CG (${ctx.describe().adapter.description || 'adapter'})`, r.converged && res < 1e-8, `${r.reason}, ${r.outerIterations} outer / ${r.innerIterations} inner iterations, ‖b − Ax‖/‖b‖ = ${res.toExponential(2)}`);
  ctx.dispose();
} catch (e) {
  if (!(e instanceof NoAdapterError)) throw e;
  console.log(`skip WebGPU: no adapter (${e.message.split('\n')[0]})`);
}

// the one-call API of @gpusparse/cli: backend picked (WebGPU when an adapter exists), float64 answer
const one = await solve(mtx, b, { method: 'cg', rtol: 1e-10 });
check(`solve('${mtx}', b) on ${one.backend}`, one.converged && one.x instanceof Float64Array && relResidual(a, one.x, b) < 1e-8, `${one.reason}, ‖b − Ax‖/‖b‖ = ${relResidual(a, one.x, b).toExponential(2)}`);
const eig = await eigsh(a, 2, { which: 'largest', backend: 'cpu' });
const av = csrSpmv(a, eig.vectors[0]!);
const eigRes = Math.sqrt(av.reduce((s, y, i) => s + (y - eig.values[0]! * eig.vectors[0]![i]!) ** 2, 0));
check('eigsh(A, 2, { which: largest })', eig.converged && eigRes < 1e-6 * Math.abs(eig.values[0]!), `λ = ${eig.values.map((v) => v.toExponential(6)).join(', ')}, ‖Av − λv‖ = ${eigRes.toExponential(2)}`);

// chem: the same FCIDUMP through the parser and the Node reader, then FCI in A1 (HANDE: −72.786196191345)
const parsed = parseFcidump(await readFile(fcidump, 'utf8'));
const fd = await readFcidump(fcidump);
check('FCIDUMP parse = read', parsed.norb === fd.norb && parsed.nelec === fd.nelec, `norb ${fd.norb}, nelec ${fd.nelec}`);
const ci = await ciEnergies(fd, { solver: 'dense', irrep: 1 });
const e0 = ci.energies[0]!;
check('FCI energy of H2O/STO-2G (A1)', Math.abs(e0 - -72.786196191345) < 1e-8, `E0 = ${e0.toFixed(10)} Eh over ${ci.determinants} determinants`);

console.log(failures === 0 ? 'consumer: all checks passed' : `consumer: ${failures} check(s) failed`);
process.exit(failures === 0 ? 0 : 1);
