/**
 * Session 9 hardening (s9b-harden-c): an eigsMixed whose Lanczos fast phase was capped by
 * `fastMaxIterations` in the middle of its multiplicity check must not pass for a checked
 * answer: `multiplicityChecked` false and a warning, not only a word in `detail`.
 */
import { generators, HostOperator } from '@gpusparse/formats';
import { describe, expect, it } from 'vitest';
import { eigsMixed } from '../src/eigen/mixed';
import { Float32HostSpace, float32CsrOperator } from './eigen-f32-space';

// 2-D Laplacian 20×20: λ₂ = λ₃ (modes (1,2) and (2,1)), so k = 3 needs the check
const a = generators.poisson2d(20);
const run = (fastMaxIterations?: number, fastCheckMultiplicity?: boolean) =>
  eigsMixed({ method: 'lanczos', k: 3, fastOperator: float32CsrOperator(a), fastSpace: new Float32HostSpace(), hostOperator: HostOperator.fromCsr(a), ...(fastMaxIterations ? { fastMaxIterations } : {}), ...(fastCheckMultiplicity === undefined ? {} : { fastCheckMultiplicity }) });

describe('eigsMixed: a multiplicity check cut short by fastMaxIterations is reported as such', () => {
  it('cap 60 (the first Lanczos run converged, the check did not finish): multiplicityChecked false, a warning', async () => {
    const r = await run(60);
    // the case: the check itself was cut short
    expect(r.phases[0]!.reason).toBe('max-iterations');
    expect(r.detail).toMatch(/multiplicity check \d ended with max-iterations/);
    expect(r.multiplicityChecked).toBe(false);
    expect((r.stats.warnings ?? []).join('\n')).toMatch(/multiplicity check did not complete .*missed copy of a multiple eigenvalue is not excluded/);
  });

  it('cap 40 (the fast phase stopped before the check): multiplicityChecked false, a warning', async () => {
    const r = await run(40);
    expect(r.phases[0]!.reason).toBe('max-iterations');
    expect(r.multiplicityChecked).toBe(false);
    expect((r.stats.warnings ?? []).join('\n')).toMatch(/ended 'max-iterations' before the check/);
  });

  it('no cap: the check completes, multiplicityChecked true, no warning, the double eigenvalue found', async () => {
    const r = await run();
    expect(r.converged).toBe(true);
    expect(r.multiplicityChecked).toBe(true);
    expect(r.stats.warnings).toBeUndefined();
    expect(Math.abs(r.values[1]! - r.values[2]!)).toBeLessThan(1e-10);
  });

  it('check switched off: multiplicityChecked absent (nothing was claimed)', async () => {
    const r = await run(undefined, false);
    expect(r.multiplicityChecked).toBeUndefined();
    expect(r.stats.warnings).toBeUndefined();
  });
});
