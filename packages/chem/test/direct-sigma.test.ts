/**
 * The direct σ (packages/chem/src/direct) against the explicitly assembled Hamiltonian: σ = H·c
 * to float64 rounding on FCI and CAS spaces with and without point-group blocks, MS2 = 0, 1, 2,
 * 3, permuted layouts, one and two threads; and the refusals of spaces it does not cover.
 */
import { HostOperator, NotSupportedError } from '@gpusparse/formats';
import { describe, expect, it } from 'vitest';
import { buildCiSpace, type SpaceSpec } from '../src/determinants/build';
import { directSigmaOperator } from '../src/direct/operator';
import { readFcidump } from '../src/fcidump/node';
import type { Fcidump } from '../src/fcidump/types';
import { assembleHamiltonian } from '../src/hamiltonian/assemble';
import { data, randomVector } from './helpers/vectors';

/** max |σ_direct − σ_explicit| / max |σ_explicit| over two random vectors; also the diagonals. */
async function compare(fd: Fcidump, spec: SpaceSpec, opts: { irrep?: number; ms2?: number; referenceLevel?: number }, threads = 1) {
  const { fcidump, space } = buildCiSpace(fd, spec, opts);
  const h = await assembleHamiltonian(fcidump, space, { workers: 0 });
  const explicit = HostOperator.fromCsr(h.matrix);
  const direct = await directSigmaOperator(fcidump, space, { threads });
  try {
    let worst = 0;
    for (const seed of [1, 2]) {
      const c = randomVector(space.size, seed);
      const a = new Float64Array(space.size);
      const b = new Float64Array(space.size);
      explicit.apply(c, a);
      direct.apply(c, b);
      let scale = 0;
      let diff = 0;
      for (let i = 0; i < a.length; i++) {
        scale = Math.max(scale, Math.abs(a[i]!));
        diff = Math.max(diff, Math.abs(a[i]! - b[i]!));
      }
      worst = Math.max(worst, diff / scale);
    }
    const d = direct.diagonal();
    let ddiff = 0;
    for (let i = 0; i < d.length; i++) ddiff = Math.max(ddiff, Math.abs(d[i]! - h.diagonal[i]!));
    return { size: space.size, rel: worst, diag: ddiff, threads: direct.threads };
  } finally {
    direct.dispose();
  }
}

describe('direct σ = explicit H·c', () => {
  it('H8/STO-6G FCI (4900 dets, MS2 = 0): no symmetry and the Ag block', async () => {
    const fd = await readFcidump(data('H8_sto6g_R1.8_block2.FCIDUMP'));
    const all = await compare(fd, 'fci', {});
    expect(all.size).toBe(4900);
    expect(all.rel).toBeLessThan(1e-12);
    expect(all.diag).toBeLessThan(1e-12);
    const ag = await compare(fd, 'fci', { irrep: 1 });
    expect(ag.size).toBeLessThan(4900);
    expect(ag.rel).toBeLessThan(1e-12);
  });

  it.each([1, 2, 3, 4, 5, 6, 7, 8])('N2/STO-3G FCI, D2h irrep %i (MS2 = 0)', async (irrep) => {
    const fd = await readFcidump(data('N2_sto3g_R1.1A_block2.FCIDUMP'));
    const r = await compare(fd, 'fci', { irrep });
    expect(r.rel).toBeLessThan(1e-12);
    expect(r.diag).toBeLessThan(1e-11);
  });

  it('O2 CAS(12e,8o) C1, MS2 = 2 (triplet sector) and MS2 = 0 with the space permuted by excitation level', async () => {
    const fd = await readFcidump(data('O2_cas12e8o_C1_dice.FCIDUMP'));
    const t = await compare(fd, 'fci', { ms2: 2 });
    expect(t.rel).toBeLessThan(1e-12);
    const p = await compare(fd, 'fci', { referenceLevel: 2 });
    expect(p.size).toBe(784);
    expect(p.rel).toBeLessThan(1e-12);
    expect(p.diag).toBeLessThan(1e-11);
  });

  it('C4 CAS(8e,12o) MS2 = 3 (NELEC = 7), B3u block, on two threads', async () => {
    const fd = await readFcidump(data('C4_sto3g_cas8e12o_spin3_dice.FCIDUMP'));
    const r = await compare(fd, 'fci', { irrep: 2 }, 2);
    expect(r.size).toBe(6532);
    expect(r.threads).toBe(2);
    expect(r.rel).toBeLessThan(1e-12);
  });

  it('H2O/STO-2G (C2v) and N2/STO-3G CAS(6e,6o) spaces (frozen core folded into the integrals)', async () => {
    const h2o = await readFcidump(data('H2O_sto2g_hande.FCIDUMP'));
    for (const irrep of [1, 2, 3, 4]) expect((await compare(h2o, 'fci', { irrep })).rel).toBeLessThan(1e-12);
    const n2 = await readFcidump(data('N2_sto3g_R2.06bohr_chemps2.FCIDUMP'));
    const cas: SpaceSpec = { kind: 'cas', electrons: 6, orbitals: 6 };
    expect((await compare(n2, cas, { irrep: 1 })).rel).toBeLessThan(1e-12);
    expect((await compare(n2, cas, { ms2: 2 })).rel).toBeLessThan(1e-12);
  });

  it('H2/cc-pVTZ with complex Lz orbitals (4-fold integral symmetry, 784 dets)', async () => {
    const fd = await readFcidump(data('H2_ccpvtz_Lz_hande.FCIDUMP'));
    expect(fd.symmetry).toBe(4);
    const r = await compare(fd, 'fci', {});
    expect(r.rel).toBeLessThan(1e-12);
  });

  it('the same σ, bit for bit, on one and on two threads', async () => {
    const fd = await readFcidump(data('H8_sto6g_R1.8_block2.FCIDUMP'));
    const { fcidump, space } = buildCiSpace(fd, 'fci', {});
    const one = await directSigmaOperator(fcidump, space);
    const two = await directSigmaOperator(fcidump, space, { threads: 2 });
    try {
      const c = randomVector(space.size, 7);
      const a = new Float64Array(space.size);
      const b = new Float64Array(space.size);
      one.apply(c, a);
      two.apply(c, b);
      expect(two.threads).toBe(2);
      expect(Array.from(b)).toEqual(Array.from(a));
    } finally {
      two.dispose();
    }
  });
});

/** σ of the time-reversed operator on a vector of parity s against explicit H·c. */
async function compareTimeReversed(fd: Fcidump, opts: { irrep?: number; referenceLevel?: number }, parity: 'even' | 'odd', threads = 1) {
  const { fcidump, space } = buildCiSpace(fd, 'fci', opts);
  const h = await assembleHamiltonian(fcidump, space, { workers: 0 });
  const explicit = HostOperator.fromCsr(h.matrix);
  const op = await directSigmaOperator(fcidump, space, { timeReversal: parity, threads });
  try {
    const s = parity === 'even' ? 1 : -1;
    const r = randomVector(space.size, 3);
    const c = new Float64Array(space.size);
    // c(I, J) = (r(I, J) + s·r(J, I)) / 2 through the space's own (α, β) → index hash
    const index = new Map<string, number>();
    for (let k = 0; k < space.size; k++) index.set(`${space.detAlpha[k]},${space.detBeta[k]}`, k);
    for (let k = 0; k < space.size; k++) c[k] = 0.5 * (r[k]! + s * r[index.get(`${space.detBeta[k]},${space.detAlpha[k]}`)!]!);
    const a = new Float64Array(space.size);
    const b = new Float64Array(space.size);
    explicit.apply(c, a);
    op.apply(c, b);
    let scale = 0;
    let diff = 0;
    for (let i = 0; i < a.length; i++) {
      scale = Math.max(scale, Math.abs(a[i]!));
      diff = Math.max(diff, Math.abs(a[i]! - b[i]!));
    }
    return diff / scale;
  } finally {
    op.dispose();
  }
}

describe('direct σ with MS2 = 0 time-reversal symmetry (half the rows)', () => {
  it.each([
    ['even', 1],
    ['odd', 1],
    ['even', 6],
    ['odd', 6],
  ] as const)('N2/STO-3G, %s spins, irrep %i: σ = H·c on vectors of that parity', async (parity, irrep) => {
    const fd = await readFcidump(data('N2_sto3g_R1.1A_block2.FCIDUMP'));
    expect(await compareTimeReversed(fd, { irrep }, parity)).toBeLessThan(1e-12);
  });

  it('O2 CAS(12e,8o) C1 permuted by excitation level, on two threads', async () => {
    const fd = await readFcidump(data('O2_cas12e8o_C1_dice.FCIDUMP'));
    expect(await compareTimeReversed(fd, { referenceLevel: 2 }, 'odd', 2)).toBeLessThan(1e-12);
    expect(await compareTimeReversed(fd, {}, 'even', 2)).toBeLessThan(1e-12);
  });

  it('project() maps a vector onto the chosen parity (the start vectors of a parity-restricted solve)', async () => {
    const fd = await readFcidump(data('O2_cas12e8o_C1_dice.FCIDUMP'));
    const { fcidump, space } = buildCiSpace(fd, 'fci', { referenceLevel: 1 });
    const op = await directSigmaOperator(fcidump, space, { timeReversal: 'odd' });
    const v = randomVector(space.size, 5);
    op.project!(v);
    const index = new Map<string, number>();
    for (let k = 0; k < space.size; k++) index.set(`${space.detAlpha[k]},${space.detBeta[k]}`, k);
    for (let k = 0; k < space.size; k++) expect(v[index.get(`${space.detBeta[k]},${space.detAlpha[k]}`)!]! + v[k]!).toBe(0);
  });

  it('MS2 ≠ 0 is refused', async () => {
    const fd = await readFcidump(data('O2_cas12e8o_C1_dice.FCIDUMP'));
    const { fcidump, space } = buildCiSpace(fd, 'fci', { ms2: 2 });
    await expect(directSigmaOperator(fcidump, space, { timeReversal: 'even' })).rejects.toThrow(/MS2 = 0/);
  });
});

describe('direct σ refusals', () => {
  it('truncated CI (not the full string structure) is refused with NotSupportedError', async () => {
    const fd = await readFcidump(data('H8_sto6g_R1.8_block2.FCIDUMP'));
    const { fcidump, space } = buildCiSpace(fd, { kind: 'cisd' }, {});
    await expect(directSigmaOperator(fcidump, space)).rejects.toThrow(NotSupportedError);
    await expect(directSigmaOperator(fcidump, space)).rejects.toThrow(/truncated CI needs the explicit Hamiltonian/);
  });

  it('a vector of the wrong length is refused', async () => {
    const fd = await readFcidump(data('H4_sto6g_R1.8_block2.FCIDUMP'));
    const { fcidump, space } = buildCiSpace(fd, 'fci', {});
    const op = await directSigmaOperator(fcidump, space);
    expect(() => op.apply(new Float64Array(space.size - 1), new Float64Array(space.size))).toThrow(/expected length 36, got 35/);
    await expect(directSigmaOperator(fcidump, space, { threads: 0 })).rejects.toThrow(/threads/);
  });
});
