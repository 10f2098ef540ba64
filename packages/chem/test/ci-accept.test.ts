/**
 * `accept: 'bound'` in the CI driver's host float64 polish (float32 solve, then Jacobi–Davidson
 * in float64 on the host: the path of `--polish host`, a spin penalty, or a device without df64),
 * against `accept: 'residual'`, on H8/STO-6G FCI (4 900 determinants) with a float32-emulating
 * host backend; and the case that keeps 'residual' the polish's default (and a residual floor under the float64 default): an eigenvalue missed below the
 * guard makes the bound wrong while the residual rule still holds.
 */
import { csrFromTriplets, HostOperator } from '@gpusparse/formats';
import { ritzValueBounds } from '@gpusparse/solvers';
import { describe, expect, it } from 'vitest';
import { Float32HostSpace, float32CsrOperator } from '../../solvers/test/eigen-f32-space';
import { dataFile } from '../../../testdata/index';
import { type CiBackend, ciEnergies } from '../src/index';
import { readFcidump } from '../src/node';

const H8_FCI = -4.3450794024; // FCI-exact DMRG, /work/shared/data/fcidump/README.md (our dense/Davidson float64: −4.3450794027)

/** float32 solve, no device polish: the driver polishes in float64 on the host. */
const f32Backend = (): CiBackend<Float64Array> => ({ space: new Float32HostSpace(), operator: (m) => float32CsrOperator(m) });

describe("CI host polish: accept 'bound'", () => {
  it('H8 FCI, 2 roots: same energies as the residual rule (1e-9 Eh), certified bounds ≤ tol, fewer correction products', async () => {
    const fd = await readFcidump(dataFile('fcidump', 'H8_sto6g_R1.8_block2.FCIDUMP'));
    const opts = { nroots: 2, workers: 0, solver: 'davidson' as const, assembly: 'whole' as const, tol: 1e-8 };
    const res = await ciEnergies(fd, { ...opts, backend: f32Backend() });
    const bnd = await ciEnergies(fd, { ...opts, backend: f32Backend(), accept: 'bound' });
    for (const r of [res, bnd]) {
      expect(r.solver.converged, r.solver.method).toBe(true);
      expect(r.solver.method).toContain('float64 polish');
      expect(Math.abs(r.energies[0]! - H8_FCI)).toBeLessThan(1e-8);
    }
    expect(Math.abs(bnd.energies[1]! - res.energies[1]!)).toBeLessThan(1e-9);
    expect(res.bounds!.accept).toBe('residual');
    expect(res.bounds!.acceptedBy).toEqual(['residual', 'residual']);
    res.residualNorms.forEach((x) => { expect(x).toBeLessThanOrEqual(1e-8); });
    expect(bnd.bounds!.accept).toBe('bound');
    expect(bnd.bounds!.acceptedBy).toEqual(['bound', 'bound']);
    bnd.bounds!.bound.forEach((b, i) => {
      expect(b, `root ${i}`).toBeLessThanOrEqual(1e-8);
      // the bound holds against the residual rule's energy (accurate to ‖r‖²/gap ≪ 1e-12 there)
      expect(bnd.energies[i]! - res.energies[i]!, `root ${i}`).toBeLessThanOrEqual(b + 1e-12);
    });
    // residuals reported as they are: above tol, as the bound needs only ≈ √(tol·gap)
    expect(Math.max(...bnd.residualNorms)).toBeGreaterThan(1e-8);
    const corr = (m: string) => Number(/(\d+) float32 correction matvecs/.exec(m)![1]);
    expect(corr(bnd.solver.method)).toBeLessThan(corr(res.solver.method));
    expect(bnd.notes.join('\n')).toContain('host polish: roots accepted by bound, bound');
  });

  it('one root: a guard root is added so the bound can apply', async () => {
    const fd = await readFcidump(dataFile('fcidump', 'H4_sto6g_R1.8_block2.FCIDUMP'));
    const r = await ciEnergies(fd, { nroots: 1, workers: 0, solver: 'davidson', backend: f32Backend(), accept: 'bound' });
    expect(Math.abs(r.energies[0]! - -2.1903842178)).toBeLessThan(1e-8); // README reference (FCI-exact DMRG)
    expect(r.bounds!.acceptedBy).toEqual(['bound']);
    expect(r.bounds!.bound[0]).toBeLessThanOrEqual(1e-8);
  });

  it("a float64 backend (no polish): accept 'bound' is its Davidson's stop, with a guard root for one root", async () => {
    const fd = await readFcidump(dataFile('fcidump', 'H4_sto6g_R1.8_block2.FCIDUMP'));
    const r = await ciEnergies(fd, { nroots: 1, workers: 0, solver: 'davidson', accept: 'bound' });
    expect(Math.abs(r.energies[0]! - -2.1903842178)).toBeLessThan(1e-8);
    expect(r.bounds!.accept).toBe('bound');
    expect(r.bounds!.bound[0]).toBeLessThanOrEqual(1e-8);
    expect(r.solver.method).toContain('k=2'); // the guard root
    expect(r.notes.join('\n')).not.toMatch(/no float32 phase/);
  });
});

describe("why 'residual' stays the default of the float32 polish and the floor stays under 'bound': a missed eigenvalue below the guard", () => {
  it('the bound is violated by orders of magnitude; the residual rule (|θ − λ| ≤ ‖r‖ for some λ) still holds', () => {
    // A = diag(0, 0.01, 1, 2): the Rayleigh–Ritz space spans x0 = (e0 + δ·e1)/‖·‖ and e2, e3 —
    // the eigenvalue 0.01 (e.g. a state of a symmetry the start vectors barely touch) is missed,
    // so the guard θ = 1 stands for λ₂ while λ₁ = 0.01 lies below it.
    const d = 1e-3;
    const op = HostOperator.fromCsr(csrFromTriplets(4, 4, [0, 1, 2, 3], [0, 1, 2, 3], [0, 0.01, 1, 2]));
    const x0 = Float64Array.from([1, d, 0, 0].map((v) => v / Math.hypot(1, d)));
    const ax = new Float64Array(4);
    op.apply(x0, ax);
    const theta0 = x0.reduce((t, v, i) => t + v * ax[i]!, 0);
    for (let i = 0; i < 4; i++) ax[i]! -= theta0 * x0[i]!;
    const r0 = Math.sqrt(ax.reduce((t, v) => t + v * v, 0));
    const { bound } = ritzValueBounds([theta0, 1], [r0, 0]);
    const trueError = theta0 - 0; // λ₀ = 0
    expect(trueError).toBeGreaterThan(100 * bound[0]!); // the "certified" bound is wrong
    expect(trueError).toBeLessThanOrEqual(r0); // Krylov–Weinberg: within ‖r‖ of an eigenvalue
  });
});
