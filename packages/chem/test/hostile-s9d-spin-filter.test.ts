/**
 * Session 9 (wave 2): the spin filter of the time-reversal half space (solveSpinFiltered) shifts
 * a root of the wrong spin out of the way (H + shift·|q⟩⟨q|). A root that converged only
 * loosely (a Davidson stopped by the energy bound) still holds a little of the wanted spin; the
 * shift (about twice the spectrum's width) times that part would move the wanted energies, so q
 * is projected onto its own spin first. This test gives the filter a quintet root with a 1 %
 * singlet admixture and an exact (dense) solver: the singlet energies must come out exactly.
 */
import type { LinearOperator } from '@gpusparse/formats';
import type { EigenResult } from '@gpusparse/solvers';
import { describe, expect, it } from 'vitest';
import { symmetricEigenDense } from '../src/dense-eigen';
import { buildCiSpace } from '../src/determinants/build';
import { directSigmaOperator } from '../src/direct/operator';
import { readFcidump } from '../src/fcidump/node';
import { solveSpinFiltered } from '../src/spin-guess';
import { data } from './helpers/vectors';

/** The lowest `k` eigenpairs of `op` (n × n), by dense diagonalisation: an exact stand-in for Davidson. */
function denseLowest(op: LinearOperator<Float64Array>, n: number, k: number): EigenResult<Float64Array> {
  const a = new Float64Array(n * n);
  const e = new Float64Array(n);
  const col = new Float64Array(n);
  for (let j = 0; j < n; j++) {
    e.fill(0);
    e[j] = 1;
    op.apply(e, col);
    for (let i = 0; i < n; i++) a[i * n + j] = col[i]!;
  }
  const { values, vectors } = symmetricEigenDense(a, n);
  const m = Math.min(k, n);
  return {
    values: Array.from(values.subarray(0, m)),
    vectors: vectors.slice(0, m),
    residualNorms: new Array<number>(m).fill(0),
    converged: true,
    reason: 'converged',
    iterations: 1,
    history: [],
    stats: { matvecs: n } as EigenResult<Float64Array>['stats'],
    method: 'dense',
  };
}

const axpy = (a: number, x: Float64Array, y: Float64Array) => y.map((v, i) => v + a * x[i]!);
const normalised = (v: Float64Array) => {
  const n = Math.sqrt(v.reduce((s, x) => s + x * x, 0));
  return v.map((x) => x / n);
};

describe('spin filter: a loosely converged root of the wrong spin does not move the wanted energies', () => {
  it('H4/STO-6G, even parity (S = 0, 2): a quintet root with a 1 % singlet part is shifted out; the two lowest singlets stay exact', async () => {
    const fd = await readFcidump(data('H4_sto6g_R1.8_block2.FCIDUMP'));
    const { fcidump, space } = buildCiSpace(fd, 'fci', {});
    const sigma = await directSigmaOperator(fcidump, space, { timeReversal: 'even' });
    const half = sigma.half!;
    const n = half.rows;
    const exact = denseLowest(half, n, n);
    const s2 = half.spinSquared(exact.vectors);
    const singlets = exact.values.map((_, r) => r).filter((r) => Math.abs(s2[r]!) < 1e-8);
    const quintet = exact.values.findIndex((_, r) => Math.abs(s2[r]! - 6) < 1e-8);
    expect(singlets.length).toBeGreaterThanOrEqual(2);
    expect(quintet).toBeGreaterThanOrEqual(0);
    const [s0, s1] = singlets as [number, number];
    // the quintet root as a Davidson stopped early leaves it: 1 % of the singlet ground state in it
    const q = normalised(axpy(0.01, exact.vectors[s0]!, exact.vectors[quintet]!));
    const first: EigenResult<Float64Array> = { ...exact, values: [exact.values[quintet]!, exact.values[s0]!, exact.values[s1]!], vectors: [q, exact.vectors[s0]!, exact.vectors[s1]!], residualNorms: [0, 0, 0] };
    const res = await solveSpinFiltered(first, { half, space, multiplicity: 1, nroots: 2, spare: [], solve: async (op, starts) => denseLowest(op, n, starts.length) });
    expect(res.deflated).toBe(1);
    // without the projection the shift (≈ 2 × the width) times the 1e-4 singlet weight of q moves E0 by ~1e-4 Eh
    expect(Math.abs(res.values[0]! - exact.values[s0]!)).toBeLessThan(1e-10);
    expect(Math.abs(res.values[1]! - exact.values[s1]!)).toBeLessThan(1e-10);
    // … and their states are pure singlets (without the projection ⟨S²⟩ ≈ 5e-4)
    expect(Math.abs(res.s2[0]!)).toBeLessThan(1e-8);
    expect(Math.abs(res.s2[1]!)).toBeLessThan(1e-8);
    sigma.dispose?.();
  });
});
