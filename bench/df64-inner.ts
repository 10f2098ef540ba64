/**
 * Inner iteration counts of refined GMRES(30) / CG to 1e-8 with float32 correction solves —
 * machine-independent figures for the inner-tolerance policy (issue 15). The float32 space is
 * the host emulation of the test suite (every vector and scalar rounded to float32; reductions
 * in float64, so a little optimistic), or lavapipe / any WebGPU device with --device.
 *
 *   pnpm tsx bench/df64-inner.ts [--device] [--rows 100000] [--mtx PATH:gmres,...] [--variants fixed4,adaptive]
 */
import { type CsrMatrix, csrSpmv, HostOperator, readMatrixMarket } from '../packages/formats/src/index';
import { refinedSolve } from '../packages/solvers/src/index';
import { f32Operator, Float32HostSpace } from '../packages/solvers/test/krylov-f32-space';
import { powerLawDominant, stencil27 } from './df64-matrices';

const argv = process.argv.slice(2);
const opt = (n: string) => (argv.includes(n) ? argv[argv.indexOf(n) + 1] : undefined);
const rows = Number(opt('--rows') ?? 100_000);
const grid = Number(opt('--grid') ?? 30);
const onDevice = argv.includes('--device');
const variants = (opt('--variants') ?? 'fixed4,fixed5,fixed6').split(',');
const INNER: Record<string, Record<string, unknown>> = {
  fixed3: { rtol: 1e-3 },
  fixed4: { rtol: 1e-4 },
  fixed5: { rtol: 1e-5 },
  fixed6: { rtol: 1e-6 },
  adaptive: {},
};

const cases: { name: string; a: CsrMatrix; method: 'cg' | 'gmres' }[] = [];
if (!opt('--only') || opt('--only') === 'powerlaw') cases.push({ name: `powerlaw-${rows}`, a: powerLawDominant(rows), method: 'gmres' });
if (opt('--only') === 'stencil') cases.push({ name: `stencil27-${grid}`, a: stencil27(grid), method: 'cg' });
for (const spec of (opt('--mtx') ?? '').split(',').filter(Boolean)) {
  const [path, method] = spec.split(':');
  cases.push({ name: path!.split('/').pop()!.replace(/\.mtx(\.gz)?$/, ''), a: (await readMatrixMarket(path!)).matrix, method: method as 'cg' | 'gmres' });
}

async function spaceAndOp(a: CsrMatrix) {
  if (!onDevice) return { space: new Float32HostSpace(), op: f32Operator(a), host: HostOperator.fromCsr(a), dispose: () => {} };
  const g = await import('../packages/gpu/src/index');
  const ctx = await g.createGpuContext();
  const op = g.gpuOperatorFromCsr(ctx, a);
  return { space: new g.GpuVectorSpace(ctx), op, host: undefined, dispose: () => {
      op.dispose();
      ctx.dispose();
    },
  };
}

for (const c of cases) {
  const b = csrSpmv(c.a, new Float64Array(c.a.cols).fill(1));
  for (const v of variants) {
    const { space, op, host, dispose } = await spaceAndOp(c.a);
    const t = performance.now();
    const res = await refinedSolve({ hostOperator: host, innerOperator: op as never, innerSpace: space as never, b, rtol: 1e-8, inner: { method: c.method, ...(c.method === 'gmres' ? { restart: 30 } : {}), ...INNER[v] } });
    const ax = csrSpmv(c.a, res.x as Float64Array);
    let r = 0;
    let bb = 0;
    for (let i = 0; i < b.length; i++) {
      r += (b[i]! - ax[i]!) ** 2;
      bb += b[i]! ** 2;
    }
    const steps = res.inner.map((i) => `${i.iterations}:${i.relativeResidual.toExponential(1)}${i.reason === 'converged' ? '' : `(${i.reason})`}`).join(' ');
    console.log(`${c.name} ${c.method} ${v} outer ${res.outerIterations} inner ${res.innerIterations} readbacks ${res.stats.readbacks} matvecs ${res.stats.matvecs} rel ${Math.sqrt(r / bb).toExponential(2)} ${res.reason} [${steps}] ${((performance.now() - t) / 1000).toFixed(1)} s`);
    dispose();
  }
}
