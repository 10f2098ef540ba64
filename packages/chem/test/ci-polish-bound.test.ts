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
import { type CiBackend, type CiDevicePolish, ciEnergies } from '../src/index';
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
  it('H8 FCI, 4 roots: energies to 1e-8 Eh, most roots certified by the bound, fewer correction products than the residual rule', async () => {
    const fd = await readFcidump(dataFile('fcidump', 'H8_sto6g_R1.8_block2.FCIDUMP'));
    const n = { products: 0, shared: 0 };
    const backend: CiBackend<Float64Array> = { space: new Float32HostSpace(), operator: (m) => float32CsrOperator(m), devicePolish: async () => hostPolish(n) };
    const r = await ciEnergies(fd, { nroots: 4, workers: 0, solver: 'davidson', backend, assembly: 'whole', tol: 1e-8 });
    expect(r.solver.converged, r.solver.method).toBe(true);
    expect(Math.abs(r.energies[0]! - -4.3450794027)).toBeLessThan(1e-8); // FCI-exact DMRG (testdata README)
    const m = /polish \((\d+) device matvecs, (\d+) float32 correction matvecs\)/.exec(r.solver.method);
    expect(m, r.solver.method).not.toBeNull();
    const note = r.notes.find((x) => x.includes('accepted by'));
    expect(note, r.notes.join('\n')).toBeDefined();
    // every root certified: 0 ≤ E − λ ≤ bound ≤ 1e-8 Eh (the bounds themselves are checked
    // against dense float64 spectra in packages/solvers/test/eigen-bounds.test.ts)
    const bounds = /bounds ([^;]+);/.exec(note!)![1]!.split(' ').map(Number);
    expect(note).toContain('accepted by bound, bound, bound, bound');
    bounds.forEach((b, i) => { expect(b, `root ${i}`).toBeLessThanOrEqual(1e-8); });
    // the residual rule: 9 float64 + 64 float32 correction products (ci-polish-cost.test.ts);
    // the bound: 8 + 31 here (lavapipe-independent counts), + the 4 products of the final check
    expect([Number(m![1]), Number(m![2])]).toEqual([8, 31]);
    expect(n.products).toBe(8 + 4);
    expect(n.shared).toBe(1);
  });
});
