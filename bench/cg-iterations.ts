/**
 * Inner iteration counts of refined CG (df64 outer state, float32 reliable-update CG) to a true
 * relative residual of 1e-8, against float64 CG on the host (what CuPy's float64 CG does), for
 * a set of inner settings — counts are machine independent, so this runs on lavapipe (issue 15:
 * 199 inner iterations against CuPy's 160 on the 27-point stencil 120³).
 *
 *   npx tsx bench/cg-iterations.ts [--grid 40] [--poisson 40] [--mtx a.mtx,b.mtx] [--settings d3,d4,d2,...]
 *
 * Settings: dK = δ 1e-K (residual reduction between replacements); 'lagN' check lag N;
 * 'ceK' checkEvery K. Prints one line per (matrix, setting): inner iterations, per segment, the
 * true relative residual, and the float64 CG count.
 */
import { type CsrMatrix, csrSpmv, generators, HostOperator, HostVectorSpace, readMatrixMarket } from '../packages/formats/src/index';
import { createGpuContext, gpuOperatorFromCsr, GpuVectorSpace } from '../packages/gpu/src/index';
import { cg, type InnerSolveOptions, refinedSolve } from '../packages/solvers/src/index';
import { stencil27 } from './df64-matrices';

const argv = process.argv.slice(2);
const opt = (n: string) => (argv.includes(n) ? argv[argv.indexOf(n) + 1] : undefined);
const settings = (opt('--settings') ?? 'd3,d4,d2').split(',');

/** The inner options of a setting name (joined by '+', e.g. d4+lag2). */
function innerOf(name: string): InnerSolveOptions<unknown> {
  const o: Record<string, unknown> = { method: 'cg' };
  for (const part of name.split('+')) {
    const m = /^(d|lag|ce)(\d+)$/.exec(part);
    if (!m) throw new Error(`--settings ${part}: expected dK, lagN or ceK`);
    if (m[1] === 'd') o.rtol = 10 ** -Number(m[2]);
    if (m[1] === 'lag') o.checkLag = Number(m[2]);
    if (m[1] === 'ce') o.checkEvery = Number(m[2]);
  }
  return o as InnerSolveOptions<unknown>;
}

function trueRelative(a: CsrMatrix, x: Float64Array, b: Float64Array): number {
  const ax = csrSpmv(a, x);
  let r = 0;
  let bb = 0;
  for (let i = 0; i < b.length; i++) {
    r += (b[i]! - ax[i]!) ** 2;
    bb += b[i]! ** 2;
  }
  return Math.sqrt(r / bb);
}

const ctx = await createGpuContext();
const space = new GpuVectorSpace(ctx);

async function run(name: string, a: CsrMatrix): Promise<void> {
  const b = csrSpmv(a, new Float64Array(a.cols).fill(1));
  const hs = new HostVectorSpace();
  const ref = await cg(hs, HostOperator.fromCsr(a), b, { rtol: 1e-8, maxIterations: 100_000 });
  console.log(`${name}: float64 CG ${ref.iterations} iterations (${ref.reason})`);
  const op = gpuOperatorFromCsr(ctx, a, { kernel: 'csr-vector' });
  for (const s of settings) {
    const res = await refinedSolve({ innerOperator: op, innerSpace: space, b, rtol: 1e-8, inner: innerOf(s) as InnerSolveOptions<never> });
    const rel = trueRelative(a, res.x, b);
    const est = res.inner.map((i, k) => `${i.iterations}@${i.relativeResidual.toExponential(0)}→${(res.history[k + 1]!.residual / res.bNorm).toExponential(0)}`);
    console.log(`COUNT ${name} ${s} inner ${res.innerIterations} [${est.join(', ')}] rel ${rel.toExponential(2)} ${res.reason} (float64 CG ${ref.iterations})`);
  }
  op.dispose();
}

const grid = Number(opt('--grid') ?? 40);
if (grid > 0) await run(`stencil27-${grid}`, stencil27(grid));
const pg = Number(opt('--poisson') ?? 0);
if (pg > 0) await run(`poisson7-${pg}`, generators.poisson3d(pg));
for (const path of (opt('--mtx') ?? '').split(',').filter(Boolean)) await run(path.replace(/^.*\//, ''), (await readMatrixMarket(path)).matrix);
ctx.dispose();
