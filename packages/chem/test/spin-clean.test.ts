/**
 * Spin-clean Davidson on the time-reversal half space: start vectors projected onto the wanted
 * spin (the other spins of the parity removed by S² products), a preconditioner diagonal
 * averaged per configuration, and a P space of whole configurations — together they commute
 * with S², so a quintet among the lowest even-spin states never enters a singlet solve.
 */
import { describe, expect, it } from 'vitest';
import { buildCiSpace } from '../src/determinants/build';
import { directSigmaOperator } from '../src/direct/operator';
import { readFcidump } from '../src/fcidump/node';
import { applyPSpaceInverse, configurationAverage, pSpace, wholeConfigurations } from '../src/pspace-precond';
import { data, randomVector } from './helpers/vectors';

async function n2Half(irrep: number, parity: 'even' | 'odd') {
  const fd = await readFcidump(data('N2_sto3g_R1.1A_block2.FCIDUMP'));
  const { fcidump, space } = buildCiSpace(fd, 'fci', { irrep });
  return directSigmaOperator(fcidump, space, { timeReversal: parity });
}

describe('spin-clean Davidson pieces', () => {
  it.each([
    [1, 'even', 1, 0],
    [6, 'odd', 3, 2],
  ] as const)('N2/STO-3G irrep %i (%s): spinProject leaves ⟨S²⟩ = S(S+1) of a random vector, and a projected vector unchanged', async (irrep, parity, m, s2) => {
    const op = await n2Half(irrep, parity);
    const half = op.half!;
    const u = randomVector(half.rows, 11);
    // a random vector of the parity mixes spins
    expect(Math.abs(half.spinSquared([u])[0]! - s2)).toBeGreaterThan(0.1);
    half.spinProject(u, m);
    expect(Math.abs(half.spinSquared([u])[0]! - s2)).toBeLessThan(1e-10);
    const again = Float64Array.from(u);
    half.spinProject(again, m);
    for (let k = 0; k < u.length; k++) expect(Math.abs(again[k]! - u[k]!)).toBeLessThan(1e-12 * Math.max(1, Math.abs(u[k]!)));
    op.dispose();
  });

  it('configurationAverage and wholeConfigurations', () => {
    expect(Array.from(configurationAverage(Float64Array.of(1, 3, 5, 7), Int32Array.of(0, 0, 1, 0)))).toEqual([11 / 3, 11 / 3, 5, 11 / 3]);
    const cfg = Int32Array.of(2, 0, 1, 0, 2, 1);
    const d = Float64Array.of(5, 1, 3, 2, 6, 4);
    // seed coordinate 1 (configuration 0) completes to 1 and 3; then configuration 1 (2, 5) fits within 4
    expect(Array.from(wholeConfigurations(Int32Array.of(1, 2), cfg, d, 4))).toEqual([1, 3, 2, 5]);
    // past the limit a whole configuration is dropped, never a part of one; the first is always kept
    expect(Array.from(wholeConfigurations(Int32Array.of(1, 2), cfg, d, 3))).toEqual([1, 3]);
    expect(Array.from(wholeConfigurations(Int32Array.of(0), cfg, d, 1))).toEqual([0, 4]);
  });

  it('N2/STO-3G Ag: the P space is made of whole configurations, a singlet residual gives a singlet correction, the spectral solve equals the LU', async () => {
    const op = await n2Half(1, 'even');
    const half = op.half!;
    const cfg = half.configurations();
    const ps = pSpace(half, 8)!;
    expect(ps.diagonal).toBeDefined();
    const inP = new Set(ps.idx);
    for (const i of ps.idx) for (let j = 0; j < cfg.length; j++) if (cfg[j] === cfg[i]) expect(inP.has(j)).toBe(true);
    const r = randomVector(half.rows, 4);
    half.spinProject(r, 1);
    expect(Math.abs(half.spinSquared([r])[0]!)).toBeLessThan(1e-10);
    const t = applyPSpaceInverse(ps, ps.diagonal!, r, -107.6, 1e-3);
    expect(Math.abs(half.spinSquared([t])[0]!)).toBeLessThan(1e-9);
    // the block diagonalised once (ps.eig) gives the LU path's correction
    expect(ps.eig?.values.length).toBe(ps.idx.length);
    const lu = applyPSpaceInverse({ idx: ps.idx, block: ps.block }, ps.diagonal!, r, -107.6, 1e-3);
    for (let k = 0; k < t.length; k++) expect(Math.abs(t[k]! - lu[k]!)).toBeLessThan(1e-10 * Math.max(1, Math.abs(lu[k]!)));
    // the plain diagonal does not keep the spin
    const plain = applyPSpaceInverse({ idx: ps.idx, block: ps.block }, half.diagonal(), r, -107.6, 1e-3);
    expect(Math.abs(half.spinSquared([plain])[0]!)).toBeGreaterThan(1e-6);
    op.dispose();
  });
});
