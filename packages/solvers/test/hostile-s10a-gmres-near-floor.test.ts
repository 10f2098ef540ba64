/**
 * Session 10: GMRES at a tolerance just above float32's attainable accuracy. On the H100
 * (bench/hostile-s9.ts, poisson2d 256², gmres(30), rtol 1e-5) the solve ended 'breakdown' at true
 * rel 1.00e-5 after 3 877 iterations — after a fallback to the verified kernel, but plain GMRES
 * does the same on lavapipe with no fault at all (2 458 iterations, 1.000e-5): each cycle stopped
 * as soon as the least-squares estimate passed tol, x + V·y then sat a rounding gap above it,
 * and three such cycles were called stagnation. Now a false convergence halves the level the
 * next cycle's estimate must reach (to tol/16 at most), and the stagnation exit hands back the
 * best x seen. Emulated on the host in float32 (poisson2d 80², rtol 1.5e-6: 'breakdown' at 1.54e-6
 * before; after a fallback, rtol 2e-6: 'breakdown' at 2.00e-6 before).
 */
import { csrSpmv, generators } from '@gpusparse/formats';
import { describe, expect, it } from 'vitest';
import { gmres } from '../src/krylov/gmres';
import { Float32HostSpace, float32CsrOperator } from './eigen-f32-space';
import { wrongUntilFallback } from './support/faults';

const space = new Float32HostSpace();

function problem(nx: number) {
  const a = generators.poisson2d(nx);
  const b = csrSpmv(a, new Float64Array(a.rows).fill(1));
  const bNorm = Math.hypot(...b);
  const trueRel = (x: Float64Array) => Math.hypot(...csrSpmv(a, x).map((v, i) => b[i]! - v)) / bNorm;
  return { a, b, trueRel };
}

describe('gmres near float32 accuracy: a false convergence makes the next cycle aim lower', () => {
  const { a, b, trueRel } = problem(80);
  const rtol = 1.5e-6;

  it("plain float32 GMRES(30), poisson2d 80², rtol 1.5e-6: converged (was 'breakdown' at 1.54e-6)", async () => {
    const r = await gmres(space, float32CsrOperator(a), space.fromArray(b), { rtol, maxIterations: 3000, checkEvery: 30, orthogonalization: 'cgs2' });
    expect(r.reason, r.detail).toBe('converged');
    expect(trueRel(r.x)).toBeLessThan(1.05 * rtol);
  });

  it("after a fallback from a wrong tuned kernel, rtol 2e-6: converged on the verified kernel, with the warning (was 'breakdown' at 2.00e-6)", async () => {
    const op = wrongUntilFallback(a);
    const r = await gmres(space, op, space.fromArray(b), { rtol: 2e-6, maxIterations: 3000, checkEvery: 30, orthogonalization: 'cgs2' });
    expect(op.fell).toBeDefined();
    expect((r.stats.warnings ?? []).join('\n')).toMatch(/fell back to the verified kernel/);
    expect(r.reason, r.detail).toBe('converged');
    expect(trueRel(r.x)).toBeLessThan(1.05 * 2e-6);
  });

  it('below the attainable accuracy: still a stagnation breakdown, never converged, x the best one seen', async () => {
    const small = problem(48);
    const r = await gmres(space, float32CsrOperator(small.a), space.fromArray(small.b), { rtol: 1e-7, maxIterations: 3000, checkEvery: 30, orthogonalization: 'cgs2' });
    expect(r.reason).toBe('breakdown');
    expect(r.converged).toBe(false);
    expect(r.detail).toMatch(/stagnation/);
    // the reported residual is the one of the returned x
    expect(Math.abs(small.trueRel(r.x) - r.trueResidual / r.bNorm)).toBeLessThan(0.1 * small.trueRel(r.x));
  });
});
