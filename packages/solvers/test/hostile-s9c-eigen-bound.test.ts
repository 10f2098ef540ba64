/**
 * Session 9 hardening (s9b-harden-c): eigsMixed with accept 'bound' must never certify an
 * eigenvalue to a tolerance its polish arithmetic cannot resolve. The rounding allowance of the
 * bound is 64·u·‖A‖; ‖A‖ must be the operator's norm (both ends of the spectrum), not the
 * largest wanted |θ| (on a Laplacian the wanted roots are ~10⁴× smaller than ‖A‖).
 */
import { csrSpmv, generators, HostOperator, HostVectorSpace, type LinearOperator } from '@gpusparse/formats';
import { describe, expect, it } from 'vitest';
import { type DevicePolish, eigsMixed } from '../src/eigen/mixed';
import { Float32HostSpace, float32CsrOperator } from './eigen-f32-space';
import { laplacian1dEigenvalues } from './eigen-matrices';

const n = 300;
const a = generators.laplacian1d(n);
const exact = laplacian1dEigenvalues(n).sort((p, q) => p - q);
const normA = exact[n - 1]!; // ≈ 4, against a smallest eigenvalue ≈ 1.1e-4

/**
 * A "float64-accurate device space" emulated on the host whose products carry a rounding error
 * of relative size u = 2⁻⁴⁴ of ‖A‖·‖x‖ (what df64 products do), deterministic per call.
 */
function noisyPolish(u: number): DevicePolish<Float64Array, Float64Array, unknown> {
  const space = new HostVectorSpace();
  let seed = 12345;
  const rnd = () => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed / 2147483648 - 0.5;
  };
  const noisy = (x: Float64Array, y: Float64Array) => {
    csrSpmv(a, x, y);
    let xn = 0;
    for (const v of x) xn += v * v;
    const scale = u * normA * Math.sqrt(xn / n) * 2;
    for (let i = 0; i < n; i++) y[i]! += scale * rnd();
  };
  const operator: LinearOperator<Float64Array> = {
    rows: n,
    cols: n,
    apply: noisy,
    applyScaled(alpha, x, beta, y) {
      const t = new Float64Array(n);
      noisy(x, t);
      for (let i = 0; i < n; i++) y[i] = alpha * t[i]! + (beta === 0 ? 0 : beta * y[i]!);
    },
  };
  return {
    space: space as DevicePolish<Float64Array, Float64Array, unknown>['space'],
    operator,
    fromFast: (v) => v.slice(),
    toFast: (p, s) => p.map((x) => Math.fround(s * x)),
    unitRoundoff: u,
  };
}

describe('eigsMixed accept bound: the rounding allowance scales with ‖A‖, not with the wanted roots', () => {
  it('host polish: the allowance is 64·u·‖A‖ with ‖A‖ ≈ λmax (was 64·u·max wanted |θ|, ~10⁴× smaller)', async () => {
    const r = await eigsMixed({ method: 'lanczos', k: 3, fastOperator: float32CsrOperator(a), fastSpace: new Float32HostSpace(), hostOperator: HostOperator.fromCsr(a), accept: 'bound', fastCheckMultiplicity: false });
    expect(r.converged).toBe(true);
    expect(r.bounds!.allowance).toBeGreaterThanOrEqual(64 * 2 ** -53 * 0.9 * normA);
    for (let i = 0; i < 3; i++) {
      expect(Math.abs(r.values[i]! - exact[i]!)).toBeLessThanOrEqual(Math.max(r.bounds!.bound[i]!, 1e-10 * exact[i]!) + 1e-15);
    }
  });

  it('a df64-like polish (u = 2⁻⁴⁴) cannot resolve tol·|θ| ≈ 1e-14: no root is accepted by the bound, and every finite bound holds', async () => {
    const u = 2 ** -44;
    const r = await eigsMixed({ method: 'lanczos', k: 3, fastOperator: float32CsrOperator(a), fastSpace: new Float32HostSpace(), devicePolish: noisyPolish(u), accept: 'bound', fastCheckMultiplicity: false, polishMaxIterations: 20 });
    const b = r.bounds!;
    expect(b.allowance).toBeGreaterThanOrEqual(64 * u * 0.9 * normA);
    // the allowance alone exceeds tol·|θ| of every wanted root: the bound cannot accept any
    expect(b.acceptedBy).not.toContain('bound');
    for (let i = 0; i < 3; i++) {
      if (Number.isFinite(b.bound[i]!)) expect(r.values[i]! - exact[i]!).toBeLessThanOrEqual(b.bound[i]! + 1e-15);
    }
  });
});
