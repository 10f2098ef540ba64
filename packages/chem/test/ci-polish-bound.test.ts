/**
 * The CI driver's device polish (polishCi) with bound acceptance, run without a GPU: a
 * float32-emulating host backend for the solve and, as the "device" polish space, the float64
 * host space (the df64 space's stand-in; same code path as on WebGPU). H8/STO-6G FCI
 * (4 900 determinants), 4 roots + 1 guard, energies against the FCI-exact reference.
 */
import { HostOperator, HostVectorSpace, type LinearOperator } from '@gpusparse/formats';
import { describe, expect, it } from 'vitest';
import { Float32HostSpace, float32CsrOperator } from '../../solvers/test/eigen-f32-space';
import { dataFile } from '../../../testdata/index';
import { boundTarget, type CiBackend, type CiDevicePolish, ciEnergies } from '../src/index';
import { readFcidump } from '../src/node';

/** Counts the polish space's products. */
function counted(op: LinearOperator<Float64Array>, n: { products: number }): LinearOperator<Float64Array> {
  return {
    rows: op.rows,
    cols: op.cols,
    apply(x, y) {
      n.products++;
      op.apply(x, y);
    },
    applyScaled(a, x, b, y) {
      n.products++;
      op.applyScaled(a, x, b, y);
    },
  };
}

function hostPolish(n: { products: number; shared: number }): CiDevicePolish<Float64Array, Float64Array> {
  return {
    space: new HostVectorSpace(),
    precision: 'float64 (host stand-in)',
    operator(matrix, _sink, fast) {
      if (fast) n.shared++; // the driver hands its fast operator over for sharing
      return counted(HostOperator.fromCsr(matrix!), n);
    },
    fromFast: (v) => Float64Array.from(v),
    toFast: (p, s) => Float64Array.from(p, (x) => Math.fround(s * x)),
    unitRoundoff: 2 ** -53,
  };
}

describe('CI device polish with bound acceptance', () => {
  it('H8 FCI, 4 roots: energies to 1e-8 Eh, every root certified by the bound, no correction solve', async () => {
    const fd = await readFcidump(dataFile('fcidump', 'H8_sto6g_R1.8_block2.FCIDUMP'));
    const n = { products: 0, shared: 0 };
    const backend: CiBackend<Float64Array> = { space: new Float32HostSpace(), operator: (m) => float32CsrOperator(m), devicePolish: async () => hostPolish(n) };
    const r = await ciEnergies(fd, { nroots: 4, workers: 0, solver: 'davidson', backend, assembly: 'whole', tol: 1e-8, accept: 'bound' });
    expect(r.solver.converged, r.solver.method).toBe(true);
    expect(Math.abs(r.energies[0]! - -4.3450794027)).toBeLessThan(1e-8); // FCI-exact DMRG (testdata README)
    const m = /polish \((\d+) device matvecs, (\d+) float32 correction matvecs\)/.exec(r.solver.method);
    expect(m, r.solver.method).not.toBeNull();
    const note = r.notes.find((x) => x.includes('accepted by'));
    expect(note, r.notes.join('\n')).toBeDefined();
    // every root certified: 0 ≤ E − λ ≤ bound ≤ 1e-8 Eh (the bounds themselves are checked
    // against dense float64 spectra in packages/solvers/test/eigen-bounds.test.ts)
    const bounds = /certified bounds ((?:\S+ )+)Eh \(/.exec(note!)![1]!.trim().split(' ').map(Number);
    expect(note).toContain('accepted by bound, bound, bound, bound');
    expect(bounds).toHaveLength(4);
    bounds.forEach((b, i) => { expect(b, `root ${i}`).toBeLessThanOrEqual(1e-8); });
    // the residual rule: 72 float32 products, then 9 float64 + 64 float32 correction products
    // (ci-polish-cost.test.ts); the bound: the float32 phase to 0.3·√tol = 3e-5 (more float32
    // products), then one Rayleigh–Ritz step (5 products) and no correction; + 4 in the final check
    const f32 = /float32, (\d+) matvecs/.exec(r.solver.method);
    expect(Number(f32![1])).toBeGreaterThan(72);
    expect([Number(m![1]), Number(m![2])]).toEqual([5, 0]);
    expect(n.products).toBe(5 + 4);
    expect(n.shared).toBe(1);
  });

  it('the corrections aim at the residual where the bound meets tol: ½·√(tol·gap/nroots), never below tol', () => {
    const t = boundTarget(1e-8, 2);
    expect(t([-2, -1.5, -1.1])).toBeCloseTo(0.5 * Math.sqrt((1e-8 * 0.4) / 2), 15); // gap to the guard 0.4
    expect(t([-2, -1.5, -1.5])).toBe(1e-8); // degenerate with the guard: the residual rule's tol
    expect(t([-2, -1.5])).toBe(1e-8); // no guard
  });

  it("rejects an unknown accept value", async () => {
    const fd = await readFcidump(dataFile('fcidump', 'H4_sto6g_R1.8_block2.FCIDUMP'));
    await expect(ciEnergies(fd, { nroots: 1, workers: 0, accept: 'energy' as never })).rejects.toThrow(/accept/);
  });
});
