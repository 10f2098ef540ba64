/**
 * Session 13: the CI driver asked for more roots of a multiplicity than the space holds. Session
 * 12 made the dense solve refuse it, but the Davidson path (host and device, API and CLI) returned
 * roots of other spins named only in `notes`. Now the count of states of the multiplicity is
 * known before any solve (./src/spin-count.ts: the branching-diagram count per configuration, the
 * projected S² of a configuration the space holds only in part) and every path refuses
 * `nroots` above it with the same InvalidParameterError 'nroots' ("at most N: the states of
 * multiplicity m in this space"), before the Hamiltonian is assembled.
 */
import { InvalidParameterError } from '@gpusparse/formats';
import { describe, expect, it } from 'vitest';
import { buildCiSpace, ciEnergies, fciSpace, spinSquaredMatrix, symmetricEigenDense } from '../src/index';
import { readFcidump } from '../src/fcidump/node';
import { spinStateCount } from '../src/spin-count';
import type { DeterminantSpace } from '../src/determinants/space';
import { data } from './helpers/vectors';

/** Eigenvalues S(S+1) of the space's (projected) S², by a dense solve of the whole matrix. */
function denseSpinCount(space: DeterminantSpace, m: number): number {
  const s2 = spinSquaredMatrix(space);
  const n = space.size;
  const a = new Float64Array(n * n);
  for (let i = 0; i < n; i++) for (let k = s2.rowPtr[i]!; k < s2.rowPtr[i + 1]!; k++) a[i * n + s2.colIdx[k]!] = s2.values[k]!;
  const t = ((m - 1) / 2) * ((m + 1) / 2);
  return Array.from(symmetricEigenDense(a, n).values).filter((v) => Math.abs(v - t) < 1e-8).length;
}

describe('states of a multiplicity in a determinant space', () => {
  it('FCI spaces: the closed form, the grouped count and a dense S² agree (H4 4o: 20 singlets, 15 triplets, 1 quintet; 6o 3α3β, 3α1β)', () => {
    expect([1, 3, 5].map((m) => spinStateCount(fciSpace(4, 2, 2), m, true).count)).toEqual([20, 15, 1]);
    for (const [na, nb] of [[3, 3], [3, 1], [2, 1]] as const) {
      const space = fciSpace(6, na, nb);
      for (let m = na - nb + 1; m <= na + nb + 1; m += 2) {
        const dense = denseSpinCount(space, m);
        expect(spinStateCount(space, m, true)).toEqual({ count: dense, exact: true });
        expect(spinStateCount(space, m, false)).toEqual({ count: dense, exact: true });
      }
    }
  });
  it('a truncated space from an open-shell reference (configurations held in part): the projected count equals the dense one', async () => {
    const fd = await readFcidump(data('H8_sto6g_R1.8_block2.FCIDUMP'));
    const { space } = buildCiSpace(fd, { kind: 'cisd' }, { ms2: 2 });
    let partial = false;
    for (const m of [3, 5, 7]) {
      const c = spinStateCount(space, m, false);
      expect(c).toEqual({ count: denseSpinCount(space, m), exact: true });
      partial ||= c.count !== spinStateCount(space, m, true).count;
    }
    expect(partial).toBe(true); // the space does hold configurations in part: the closed form would be wrong here
  });
});

describe('ciEnergies refuses more roots of a multiplicity than exist, on every path, before the solve', () => {
  it('H4: Davidson (was: 21 singlets returned with a triplet, named in notes) and dense give the same error; the count itself runs', async () => {
    const fd = await readFcidump(data('H4_sto6g_R1.8_block2.FCIDUMP'));
    for (const [m, count] of [[1, 20], [3, 15], [5, 1]] as const) {
      for (const solver of ['davidson', 'dense'] as const) {
        const stages: string[] = [];
        const run = ciEnergies(fd, { workers: 0, nroots: count + 1, spin: { multiplicity: m }, solver, onProgress: (p) => stages.push(p.stage) });
        await expect(run).rejects.toThrow(InvalidParameterError);
        await expect(run).rejects.toThrow(new RegExp(`nroots: expected at most ${count}: the states of multiplicity ${m} in this space`));
        expect(stages).not.toContain('assembly'); // refused before H was built
      }
    }
    const ok = await ciEnergies(fd, { workers: 0, nroots: 1, spin: { multiplicity: 5 }, solver: 'davidson' });
    expect(Math.abs(ok.s2[0]! - 6)).toBeLessThan(1e-6);
    expect(ok.spinShortfall).toBeUndefined();
    expect(ok.solver.converged).toBe(true);
  });
  it('an operator factory (the host direct σ with time reversal) is refused the same way', async () => {
    const { directHamiltonian } = await import('../src/index');
    const fd = await readFcidump(data('H4_sto6g_R1.8_block2.FCIDUMP'));
    await expect(ciEnergies(fd, { workers: 0, nroots: 2, spin: { multiplicity: 5 }, solver: 'davidson', hamiltonian: directHamiltonian() })).rejects.toThrow(/at most 1: the states of multiplicity 5/);
  });
});

describe('the safety net: roots that still miss the multiplicity are not converged', () => {
  it('H4, 20 singlets by Davidson with 1 iteration (each repetition with a raised penalty too): roots of another spin → spinShortfall named, solver.converged false', async () => {
    const fd = await readFcidump(data('H4_sto6g_R1.8_block2.FCIDUMP'));
    const r = await ciEnergies(fd, { workers: 0, nroots: 20, spin: { multiplicity: 1 }, solver: 'davidson', maxIterations: 1 });
    const off = r.s2.map((x, i) => (Math.abs(x) > 1e-3 ? i : -1)).filter((i) => i >= 0);
    expect(off.length).toBeGreaterThan(0); // one iteration from the (seeded) starts leaves triplets among the 20
    expect(r.spinShortfall).toEqual({ otherSpin: off, missing: 0 });
    expect(r.solver.converged).toBe(false);
    expect(r.notes.join('\n')).toMatch(/request for 20 root\(s\) of multiplicity 1 is not met/);
  });
});
