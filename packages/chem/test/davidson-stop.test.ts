/** The energy-change stop rule (src/davidson-stop.ts) as a Davidson acceptRoots test. */
import { describe, expect, it } from 'vitest';
import { energyChangeAccept } from '../src/davidson-stop';

describe('energyChangeAccept', () => {
  it('accepts a root only after a previous iteration, on |ΔE| < e and ‖r‖ ≤ √e', () => {
    const accept = energyChangeAccept(1e-8);
    expect(accept([-1, -0.5], [1e-9, 1e-9], undefined)).toEqual([false, false]);
    expect(accept([-1, -0.5], [5e-5, 5e-5], [-1 + 5e-9, -0.5 + 2e-8])).toEqual([true, false]);
    // the energy stalled but the residual is large: not accepted (a stalled subspace)
    expect(accept([-1], [2e-4], [-1])).toEqual([false]);
  });

  it('refuses a threshold outside (0, 1) Eh, naming it', () => {
    for (const bad of [0, -1e-8, 1, Number.NaN, Number.POSITIVE_INFINITY]) expect(() => energyChangeAccept(bad)).toThrow(/energyChange/);
  });
});
