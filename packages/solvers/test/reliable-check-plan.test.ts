/**
 * The check plan of reliable-update CG: checks are planned for the nearer event (a replacement
 * at δ, or the stop), so a segment ends near δ instead of running on to float32's floor, where
 * the recursive residual drifts from the true one and the replacement restarts the direction.
 * Issue 15: the 27-point stencil needed 199 inner iterations against float64 CG's 160.
 */
import { type CsrMatrix, generators, HostOperator, HostVectorSpace } from '@gpusparse/formats';
import { describe, expect, it } from 'vitest';
import { cg, refinedSolve } from '../src/index';
import { f32Operator, Float32HostSpace } from './krylov-f32-space';
import { norm, residual64 } from './krylov-matrices';

/** 27-point stencil on an n³ grid: 26 on the diagonal, −1 to every neighbour (SPD). */
function stencil27(n: number): CsrMatrix {
  const rows = n ** 3;
  const rowPtr = new Int32Array(rows + 1);
  const cols: number[] = [];
  const vals: number[] = [];
  for (let p = 0; p < rows; p++) {
    const [i, j, k] = [p % n, Math.floor(p / n) % n, Math.floor(p / (n * n))];
    for (let dk = -1; dk <= 1; dk++)
      for (let dj = -1; dj <= 1; dj++)
        for (let di = -1; di <= 1; di++) {
          const [a, b, c] = [i + di, j + dj, k + dk];
          if (a < 0 || a >= n || b < 0 || b >= n || c < 0 || c >= n) continue;
          const q = a + n * (b + n * c);
          cols.push(q);
          vals.push(q === p ? 26 : -1);
        }
    rowPtr[p + 1] = cols.length;
  }
  return { format: 'csr', rows, cols: rows, rowPtr, colIdx: Int32Array.from(cols), values: Float64Array.from(vals) };
}

describe('reliable CG check plan', () => {
  it.each([
    ['stencil27 24³', stencil27(24)],
    ['poisson3d 24³', generators.poisson3d(24)],
  ] as const)('%s: lag 4, 1e-8 within float64 CG’s iterations + (lag + 8) per segment, every segment stopped near δ', async (_n, a) => {
    const b = new Float64Array(a.rows);
    const ones = new Float64Array(a.rows).fill(1);
    HostOperator.fromCsr(a).apply(ones, b);
    const ref = await cg(new HostVectorSpace(), HostOperator.fromCsr(a), b, { rtol: 1e-8 });
    const res = await refinedSolve({ hostOperator: HostOperator.fromCsr(a), innerOperator: f32Operator(a), innerSpace: new Float32HostSpace(), b, rtol: 1e-8, inner: { method: 'cg', checkLag: 4 } });
    expect(res.reason, res.detail).toBe('converged');
    expect(residual64(a, res.x, b).r).toBeLessThanOrEqual(1e-8 * norm(b));
    console.log(`${_n}: float64 CG ${ref.iterations}, reliable CG lag 4 ${res.innerIterations} [${res.inner.map((i) => `${i.iterations}@${i.relativeResidual.toExponential(0)}`).join(', ')}]`);
    // before: poisson3d 24³ 101 iterations against 61 (the first segment ran to 1e-8)
    expect(res.innerIterations).toBeLessThanOrEqual(ref.iterations + 12 * res.inner.length);
    // no segment but the last ran its recursive residual more than 3 decades past δ = 1e-3
    for (let i = 0; i + 1 < res.inner.length; i++) expect(res.inner[i]!.relativeResidual * res.bNorm).toBeGreaterThanOrEqual(1e-6 * res.history[i]!.residual);
  });
});
