/**
 * Determinant spaces (sizes, irreps, truncation, ordering), the CAS effective Hamiltonian
 * against the full Hamiltonian on the same determinants, formats and export.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { csrSpmv, getFormat, readMatrixMarket } from '@gpusparse/formats';
import { describe, expect, it } from 'vitest';
import { ciEnergies, hostBackend } from '../src/ci';
import { symmetricEigenDense } from '../src/dense-eigen';
import { binomial, buildCiSpace, fciSpace, occupiedOrbitals, orderByExcitation, spaceFromDeterminants, truncatedSpace } from '../src/determinants/index';
import { chooseActiveSpace } from '../src/fcidump/active-space';
import { readFcidump } from '../src/fcidump/node';
import { assembleHamiltonian, toFormat } from '../src/hamiltonian/assemble';
import { symmetrizeCsr, writeHamiltonianMatrixMarket } from '../src/hamiltonian/export';
import { syntheticCiMatrix } from '../src/synthetic';
import { jacobiEigen } from './helpers/jacobi';
import { dataFile } from '../../../testdata/index';

const data = (f: string) => dataFile('fcidump', f);

describe('determinant spaces', () => {
  it('FCI sizes, irrep sectors partition the space', () => {
    expect(fciSpace(8, 4, 4).size).toBe(4900);
    const orbsym = Int32Array.from([1, 1, 1, 5, 5, 5, 2, 6, 3, 7]);
    let total = 0;
    for (let g = 1; g <= 8; g++) total += fciSpace(10, 7, 7, { orbsym, irrep: g }).size;
    expect(total).toBe(binomial(10, 7) ** 2);
  });

  it('explicit lists reject repeats and bad orbitals', () => {
    expect(() => spaceFromDeterminants(3, [{ alpha: [0], beta: [1] }, { alpha: [0], beta: [1] }])).toThrow(/dets\[1\]: expected a determinant not already listed, got a repeat of dets\[0\]/);
    expect(() => spaceFromDeterminants(3, [{ alpha: [0], beta: [3] }])).toThrow(/dets\[0\]\.beta/);
    expect(() => spaceFromDeterminants(3, [{ alpha: [0], beta: [1] }, { alpha: [0, 1], beta: [1] }])).toThrow(/dets\[1\]\.alpha/);
  });

  it('truncated CI counts: CISD of 4 electrons in 6 orbitals', () => {
    const s = truncatedSpace(6, 2, { alpha: [0, 1], beta: [0, 1] }, { referenceLevel: 0 });
    // level 0: 1; level 1: 2·(2·4) = 16; level 2: αα C(2,2)C(4,2)·2 = 12, αβ 8·8 = 64 → 76
    expect(s.size).toBe(1 + 16 + 76);
    expect(s.referenceSize).toBe(1);
    for (let k = 1; k < s.size; k++) expect(s.excitation![k]!).toBeGreaterThanOrEqual(s.excitation![k - 1]!);
  });

  it('orderByExcitation puts the reference region first (seed 001 Reference + Expansion)', async () => {
    const fd = await readFcidump(data('H4_sto6g_R1.8_block2.FCIDUMP'));
    const base = fciSpace(4, 2, 2);
    const s = orderByExcitation(base, { alpha: [0, 1], beta: [0, 1] }, 2);
    expect(s.size).toBe(36);
    expect(s.referenceSize).toBe(1 + 8 + 1 + 1 + 16); // levels 0, 1, 2
    const h1 = await assembleHamiltonian(fd, base, { workers: 0 });
    const h2 = await assembleHamiltonian(fd, s, { workers: 0 });
    const e1 = jacobiEigen(csrDense(h1.matrix)).values;
    const e2 = jacobiEigen(csrDense(h2.matrix)).values;
    for (let k = 0; k < 36; k++) expect(e2[k]).toBeCloseTo(e1[k]!, 12);
  });

  it('CAS(6,6) of N2: the frozen-core effective Hamiltonian equals H on the same determinants', async () => {
    const fd = await readFcidump(data('N2_sto3g_R1.1A_block2.FCIDUMP'));
    const { core, active } = chooseActiveSpace(fd, 6, 6);
    expect(core.length).toBe(4);
    const cas = await ciEnergies(fd, { space: { kind: 'cas', electrons: 6, orbitals: 6 }, solver: 'dense', nroots: 3 });
    expect(cas.determinants).toBe(400);
    const act = fciSpace(6, 3, 3);
    const dets = Array.from({ length: act.size }, (_, k) => ({
      alpha: [...core, ...occupiedOrbitals(act.alpha.lo[act.detAlpha[k]!]!, 0).map((p) => active[p]!)],
      beta: [...core, ...occupiedOrbitals(act.beta.lo[act.detBeta[k]!]!, 0).map((p) => active[p]!)],
    }));
    const full = spaceFromDeterminants(fd.norb, dets);
    const h = await assembleHamiltonian(fd, full, { workers: 0 });
    const n = full.size;
    const a = new Float64Array(n * n);
    for (let i = 0; i < n; i++) for (let k = h.matrix.rowPtr[i]!; k < h.matrix.rowPtr[i + 1]!; k++) a[i * n + h.matrix.colIdx[k]!] = h.matrix.values[k]!;
    const ev = symmetricEigenDense(a, n).values;
    for (let r = 0; r < 3; r++) expect(Math.abs(cas.energies[r]! - (ev[r]! + fd.ecore))).toBeLessThan(1e-9);
    // and CAS lies above full CI (−107.654122447525)
    expect(cas.energies[0]!).toBeGreaterThan(-107.654122447525);
  });

  it('aufbau reference of an irrep-ordered file uses orbital energies', async () => {
    const fd = await readFcidump(data('N2_sto3g_R1.1A_block2.FCIDUMP'));
    const { reference, space } = buildCiSpace(fd, { kind: 'cisd' }, { irrep: 'isym' });
    expect(reference.alpha.length).toBe(7);
    expect(space.label).toMatch(/^CISD/);
    const h = await assembleHamiltonian(fd, space, { workers: 0 });
    expect(space.excitation![0]).toBe(0);
    // RHF energy −107.49650051179789 (pyscf) = ⟨reference|H|reference⟩
    expect(h.diagonal[0]! + fd.ecore).toBeCloseTo(-107.49650051179789, 8);
  });
});

describe('formats, backends, export, synthetic', () => {
  it('the Hamiltonian converts through the format registry and gives the same products', async () => {
    const fd = await readFcidump(data('H4_sto6g_R1.8_block2.FCIDUMP'));
    const h = await assembleHamiltonian(fd, orderByExcitation(fciSpace(4, 2, 2), { alpha: [0, 1], beta: [0, 1] }, 1), { workers: 0 });
    const x = Float64Array.from({ length: 36 }, (_, i) => Math.sin(i));
    const ref = csrSpmv(h.matrix, x);
    for (const name of ['ell', 'sell', 'hybrid', 'coo']) {
      const m = toFormat(h.matrix, name);
      const y = getFormat(name).spmvReference(m, x);
      for (let i = 0; i < 36; i++) expect(y[i]).toBeCloseTo(ref[i]!, 12);
      const op = await hostBackend().operator(h.matrix, name);
      const z = new Float64Array(36);
      op.apply(x, z);
      for (let i = 0; i < 36; i++) expect(z[i]).toBeCloseTo(ref[i]!, 12);
    }
  });

  it('Matrix Market export round-trips (symmetric lower triangle)', async () => {
    const fd = await readFcidump(data('H4_sto6g_R1.8_block2.FCIDUMP'));
    const h = await assembleHamiltonian(fd, fciSpace(4, 2, 2), { workers: 0 });
    const path = join(await mkdtemp(join(tmpdir(), 'chem-mtx-')), 'h4.mtx');
    await writeHamiltonianMatrixMarket(path, h.matrix, { comments: [`ecore ${fd.ecore}`] });
    const back = await readMatrixMarket(path);
    const sym = symmetrizeCsr(h.matrix);
    expect(back.matrix.rowPtr).toEqual(sym.rowPtr);
    expect(Array.from(back.matrix.values)).toEqual(Array.from(sym.values));
  });

  it('synthetic matrix has seed 001 statistics and is symmetric', () => {
    const s = syntheticCiMatrix({ n: 1000, seed: 3 });
    expect(s.label).toMatch(/synthetic/);
    expect(s.boundary).toBe(100);
    expect(s.measured.referenceDensity).toBeGreaterThan(0.18);
    expect(s.measured.referenceDensity).toBeLessThan(0.22);
    expect(s.measured.expansionDensity).toBeGreaterThan(0.008);
    expect(s.measured.expansionDensity).toBeLessThan(0.012);
    const m = s.matrix;
    const dense = new Map<number, number>();
    for (let i = 0; i < m.rows; i++) for (let k = m.rowPtr[i]!; k < m.rowPtr[i + 1]!; k++) dense.set(i * m.cols + m.colIdx[k]!, m.values[k]!);
    for (const [key, v] of dense) expect(dense.get((key % m.cols) * m.cols + Math.floor(key / m.cols))).toBe(v);
    expect(symmetrizeCsr(m).values).toEqual(m.values);
  });
});

function csrDense(m: { rows: number; rowPtr: Int32Array; colIdx: Int32Array; values: Float64Array }): number[][] {
  const out = Array.from({ length: m.rows }, () => new Array<number>(m.rows).fill(0));
  for (let i = 0; i < m.rows; i++) for (let k = m.rowPtr[i]!; k < m.rowPtr[i + 1]!; k++) out[i]![m.colIdx[k]!] = m.values[k]!;
  return out;
}
