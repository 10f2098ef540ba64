import { csrSpmv, generators as g } from '../packages/formats/src/index';
import { eigsh, solve } from '../packages/cli/src/index';
const a = g.poisson2d(60);
const ones = new Float64Array(a.rows).fill(1);
const b = csrSpmv(a, ones);
console.log('env cap', process.env.GPUSPARSE_MAX_BINDING_BYTES, 'nnz', a.values.length, 'colIdx bytes', 4 * a.values.length);
try {
  const t0 = performance.now();
  const r = await solve(a, b, { rtol: 1e-10 });
  console.log('solve', r.converged, r.reason, r.relativeResidual, r.operator, r.backend, (performance.now() - t0).toFixed(0), 'ms');
} catch (e) { console.log('solve threw', (e as Error).name, (e as Error).message); }
try {
  const r = await eigsh(a, 2, {});
  console.log('eigsh', r.converged, r.values, r.operator);
} catch (e) { console.log('eigsh threw', (e as Error).name, (e as Error).message); }
