/**
 * The cost of the CI driver's float64 polish after a float32 solve, counted in products (device
 * independent): a float32-emulating host backend, H8/STO-6G FCI (4 900 determinants), 4 roots
 * (+ 1 guard root), energies against the reference.
 */
import { describe, expect, it } from 'vitest';
import { Float32HostSpace, float32CsrOperator } from '../../solvers/test/eigen-f32-space';
import { dataFile } from '../../../testdata/index';
import { type CiBackend, ciEnergies } from '../src/index';
import { readFcidump } from '../src/node';

const f32Backend: CiBackend<Float64Array> = { space: new Float32HostSpace(), operator: (m) => float32CsrOperator(m) };

describe('CI float64 polish cost', () => {
  it('H8 FCI, 4 roots: one correction round, float64 and float32 correction products pinned, E0 to 1e-8 Eh', async () => {
    const fd = await readFcidump(dataFile('fcidump', 'H8_sto6g_R1.8_block2.FCIDUMP'));
    const r = await ciEnergies(fd, { nroots: 4, workers: 0, solver: 'davidson', backend: f32Backend, assembly: 'whole', tol: 1e-8 });
    expect(r.solver.converged).toBe(true);
    expect(Math.abs(r.energies[0]! - -4.3450794027)).toBeLessThan(1e-8); // FCI-exact DMRG (testdata README)
    for (const x of r.residualNorms) expect(x).toBeLessThan(1e-8);
    const m = /float64 polish \((\d+) host matvecs, (\d+) float32 correction matvecs\)/.exec(r.solver.method);
    expect(m, r.solver.method).not.toBeNull();
    // before (lavapipe, same counts): 20 float64 + 260 float32 — every root, the guard too, 26
    // inner products each, two rounds, and k products at exit
    expect([Number(m![1]), Number(m![2])]).toEqual([9, 64]);
  });
});
