/**
 * Session 12: eigsMixed on a badly scaled matrix. Session 11 found A·1e-30 (poisson2d 24²)
 * ending 'max-iterations' after 50 polish iterations with the right values: the float32 fast
 * phase and the 'jd' corrections worked on vectors whose float32 norms underflow. Now eigsMixed
 * solves (2^s·A)·v = (2^s·λ)·v — an exact power-of-two scale from one probe product — and
 * scales the eigenvalues, residual norms and bounds back; a device polish whose operator already
 * multiplies by 2^s·A says so in `devicePolish.scale` (df64 of A·1e-30, see
 * packages/gpu/test/hostile-s12a-df64-flush). Float32 host emulation (eigen-f32-space.ts).
 */
import { type CsrMatrix, csrDiagonal, csrSpmv, generators, HostOperator, HostVectorSpace, InvalidParameterError } from '@gpusparse/formats';
import { describe, expect, it } from 'vitest';
import { type DevicePolish, eigsMixed } from '../src/index';
import { Float32HostSpace, float32CsrOperator } from './eigen-f32-space';

const m = 24;
const a0 = generators.poisson2d(m); // n = 576
const scaled = (s: number): CsrMatrix => ({ ...a0, values: a0.values.map((v) => v * s) });
/** The k lowest eigenvalues of poisson2d(m): 4 − 2cos(iπ/(m+1)) − 2cos(jπ/(m+1)). */
function lowest(k: number): number[] {
  const l: number[] = [];
  for (let i = 1; i <= m; i++) for (let j = 1; j <= m; j++) l.push(4 - 2 * Math.cos((i * Math.PI) / (m + 1)) - 2 * Math.cos((j * Math.PI) / (m + 1)));
  return l.sort((x, y) => x - y).slice(0, k);
}
/** ‖A·v − λ·v‖ / ‖v‖ in float64 on the host. */
const residual = (a: CsrMatrix, v: Float64Array, lambda: number) => Math.hypot(...csrSpmv(a, v).map((t, j) => t - lambda * v[j]!)) / Math.hypot(...v);

describe('eigsMixed at A·2^±100: solved as 2^s·A and scaled back', () => {
  for (const method of ['lanczos', 'davidson', 'lobpcg'] as const) {
    it(`${method}: A·1e-30 and A·1e30 converge, 3 lowest to 1e-10, float64 residuals ≤ 1e-9·‖A‖ (A·1e-30 was 'max-iterations')`, async () => {
      const want = lowest(3);
      for (const sa of [1e-30, 1e30]) {
        const a = scaled(sa);
        const seen: number[] = [];
        const r = await eigsMixed({ method, k: 3, fastOperator: float32CsrOperator(a), fastSpace: new Float32HostSpace(), hostOperator: HostOperator.fromCsr(a), diagonal: csrDiagonal(a), rtol: 1e-10, onIteration: (i) => void seen.push(...i.values) });
        expect(r.reason, `${method} ${sa}`).toBe('converged');
        for (const [i, l] of r.values.entries()) expect(Math.abs(l / sa - want[i]!) / want[i]!, `${method} ${sa} λ${i}`).toBeLessThan(1e-10);
        for (const [i, v] of r.vectors.entries()) expect(residual(a, v, r.values[i]!), `${method} ${sa}`).toBeLessThan(1e-9 * 8 * sa);
        for (const x of r.residualNorms) expect(x).toBeLessThan(1e-9 * 8 * sa); // in A's units
        expect(r.detail).toMatch(/solved as 2\^-?\d+·A/);
        // progress in A's units too
        expect(Math.max(...seen.map(Math.abs))).toBeLessThan(20 * sa);
      }
    });
  }

  it('A in range: not scaled (no detail; the probe, one product, counted in the fast phase)', async () => {
    const fast = float32CsrOperator(a0);
    let products = 0;
    const counted = {
      ...fast,
      apply(x: Float64Array, y: Float64Array) {
        products++;
        fast.apply(x, y);
      },
      applyScaled(al: number, x: Float64Array, be: number, y: Float64Array) {
        products++;
        fast.applyScaled(al, x, be, y);
      },
    };
    const r = await eigsMixed({ method: 'lanczos', k: 2, fastOperator: counted, fastSpace: new Float32HostSpace(), hostOperator: HostOperator.fromCsr(a0) });
    expect(r.converged).toBe(true);
    expect(r.detail ?? '').not.toMatch(/solved as/);
    expect(r.phases[0]!.matvecs + (r.phases[1]!.innerMatvecs ?? 0)).toBe(products);
    expect(r.stats.matvecs).toBe(r.phases.reduce((s, p) => s + p.matvecs + (p.innerMatvecs ?? 0), 0));
  });

  it('a device polish that multiplies by 2^s·A (devicePolish.scale): no probe, the fast operator scaled to match, values in A units', async () => {
    const sa = 1e-30;
    const s = 2 ** 98;
    const a = scaled(sa);
    const f32 = new Float32HostSpace();
    const host = new HostVectorSpace();
    const polish: DevicePolish<Float64Array, Float64Array, unknown> = {
      space: host,
      operator: HostOperator.fromCsr({ ...a, values: a.values.map((v) => v * s) }),
      fromFast: (v) => Float64Array.from(v),
      toFast: (p, scale) => f32.fromArray(p.map((x) => x * scale)),
      scale: s,
    };
    const r = await eigsMixed({ method: 'lanczos', k: 2, fastOperator: float32CsrOperator(a), fastSpace: f32, devicePolish: polish, rtol: 1e-10 });
    expect(r.reason).toBe('converged');
    const want = lowest(2);
    for (const [i, l] of r.values.entries()) expect(Math.abs(l / sa - want[i]!) / want[i]!).toBeLessThan(1e-10);
    for (const [i, v] of r.vectors.entries()) expect(residual(a, v, r.values[i]!)).toBeLessThan(1e-9 * 8 * sa);
    await expect(eigsMixed({ method: 'lanczos', k: 2, fastOperator: float32CsrOperator(a), fastSpace: f32, devicePolish: { ...polish, scale: 3 } })).rejects.toThrow(InvalidParameterError);
  });
});

describe('the scaling wrapper keeps a tuned operator’s verified-kernel check', () => {
  it('runsUnverified / applyVerified (× s) / fallBackToVerified / labels pass through scaledOperator', async () => {
    const { scaledOperator } = await import('../src/eigen/mixed-scale');
    const host = HostOperator.fromCsr(a0);
    let unverified = true;
    let fellBack = '';
    const tuned = {
      rows: host.rows,
      cols: host.cols,
      apply: (x: Float64Array, y: Float64Array) => host.apply(x, y),
      applyScaled: (al: number, x: Float64Array, be: number, y: Float64Array) => host.applyScaled(al, x, be, y),
      runsUnverified: () => unverified,
      applyVerified: (x: Float64Array, y: Float64Array) => host.apply(x, y),
      fallBackToVerified: (why: string) => {
        fellBack = why;
        unverified = false;
      },
      verifiedLabel: 'csr-vector',
      activeLabel: 'ell',
    };
    const space = new HostVectorSpace();
    const op = scaledOperator(tuned, 2 ** 10, 'test', space);
    const x = Float64Array.from({ length: a0.rows }, (_, i) => i % 3);
    const [y1, y2] = [new Float64Array(a0.rows), new Float64Array(a0.rows)];
    op.apply(x, y1);
    op.applyVerified!(x, y2);
    const ref = csrSpmv(a0, x).map((v) => v * 2 ** 10);
    expect(Array.from(y1)).toEqual(Array.from(ref));
    expect(Array.from(y2)).toEqual(Array.from(ref));
    expect(op.runsUnverified!()).toBe(true);
    expect([op.verifiedLabel, op.activeLabel]).toEqual(['csr-vector', 'ell']);
    op.fallBackToVerified!('why');
    expect(fellBack).toBe('why');
    expect(op.runsUnverified!()).toBe(false);
    expect(op.diagonal).toBeUndefined();
  });
});
