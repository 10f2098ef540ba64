/**
 * Session 13: BiCGStab's near-breakdown (ω ≈ 0: t ⟂ s to rounding) went on with ω as rounding
 * noise, the next β = (ρ/ρ_old)·(α/ω) blew the iterates up and the solve ended 'breakdown' through
 * the divergence guard, its detail saying "divergence" ([[1, 2], [3, 4]], b = 1: at iteration 5).
 * BiCG with ⟨p̂, A·p⟩ at rounding level ([[ε, 1], [−1, ε]], ε = 1e-17, b = e₁) likewise. Now a
 * denominator whose cosine with its vectors is at rounding level (|cos| ≤ 16·max(1, log₂ n)·u) is a
 * near-breakdown named in the detail with its value and limit, at the iteration it happens, and
 * x is the last good iterate (BiCGStab: the half step x + α·p̂). A small cosine above rounding (ε =
 * 1e-12) still diverges, its detail now naming the likely cause.
 */
import { HostOperator, HostVectorSpace } from '@gpusparse/formats';
import { describe, expect, it } from 'vitest';
import { bicg, bicgstab, nearZeroCosine } from '../src/index';
import { denseToCsr } from './eigen-matrices';

const space = new HostVectorSpace();
const op = (m: number[][]) => HostOperator.fromCsr(denseToCsr(m));

describe('BiCGStab and BiCG near-breakdowns are named, not called divergence', () => {
  it('bicgstab [[1, 2], [3, 4]], b = 1 (t ⟂ s at step 1): near-breakdown of cos²∠(t, s) at iteration 1, x the half step (true rel 0.40), checkEvery 1 and 8', async () => {
    for (const checkEvery of [1, 8]) {
      const r = await bicgstab(space, op([[1, 2], [3, 4]]), Float64Array.from([1, 1]), { rtol: 1e-10, checkEvery });
      expect(r.reason).toBe('breakdown');
      expect(r.iterations).toBe(1);
      expect(r.detail).toMatch(/^bicgstab: near-breakdown at iteration 1: cos²∠\(t, s\) = .* not above .*rounding noise in the f64 space/);
      expect(r.detail).not.toMatch(/divergence/);
      // x = x₀ + α·p̂ = (0.2, 0.2): its residual is s, recomputed
      expect(Array.from(r.x).map((v) => Math.round(v * 1e12) / 1e12)).toEqual([0.2, 0.2]);
      expect(r.trueResidual / r.bNorm).toBeCloseTo(0.4, 10);
    }
  });
  it('bicg and bicgstab on [[1e-17, 1], [−1, 1e-17]], b = e₁: near-breakdown named (was divergence, residual estimate 1e17); x = x₀', async () => {
    const a = op([[1e-17, 1], [-1, 1e-17]]);
    const b = Float64Array.from([1, 0]);
    const r1 = await bicg(space, a, b, { rtol: 1e-10 });
    expect(r1.reason).toBe('breakdown');
    expect(r1.detail).toMatch(/^bicg: near-breakdown at iteration 1: cos²∠ of ⟨p̂, A·p⟩ = 1\.00e-34/);
    expect(Array.from(r1.x)).toEqual([0, 0]);
    const r2 = await bicgstab(space, a, b, { rtol: 1e-10 });
    expect(r2.reason).toBe('breakdown');
    expect(r2.detail).toMatch(/near-breakdown at iteration 1/);
    expect(r2.trueResidual).toBeLessThanOrEqual(1);
  });
  it('a small cosine above rounding (ε = 1e-12) still diverges, the detail naming the likely cause; sound systems are unaffected', async () => {
    const r = await bicg(space, op([[1e-12, 1], [-1, 1e-12]]), Float64Array.from([1, 0]), { rtol: 1e-10 });
    expect(r.reason).toBe('breakdown');
    expect(r.detail).toMatch(/divergence at iteration 1: .*a near-breakdown of the biorthogonal recurrence/);
    for (const solve of [bicg, bicgstab]) {
      const ok = await solve(space, op([[4, 1, 0], [2, 5, 1], [0, 1, 3]]), Float64Array.from([1, 2, 3]), { rtol: 1e-12 });
      expect(ok.reason).toBe('converged');
    }
    expect(nearZeroCosine(2, 2 ** -53)).toBeCloseTo(16 * 2 ** -53, 30);
    expect(nearZeroCosine(2 ** 20, 2 ** -24)).toBeCloseTo(16 * 20 * 2 ** -24, 20);
  });
});
