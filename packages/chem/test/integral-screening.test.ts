/**
 * Integral screening of the string-driven assembly (src/hamiltonian/screening.ts): the
 * screened kernel gives the unscreened kernel's matrix (and the hash kernel's) bit for bit —
 * same rows, columns, values and diagonal — on Hubbard chains L = 6–10, molecular FCIDUMPs
 * with and without point-group sectors, and synthetic integrals that exercise each path (many
 * pair classes merged, 4-fold integrals, zero diagonals, a drop tolerance); the screen itself
 * finds what the integrals imply; the sampled nnz estimate matches screened Hamiltonians.
 */
import { describe, expect, it } from 'vitest';
import { buildCiSpace, type BuildSpaceOptions, type SpaceSpec } from '../src/determinants/build';
import { fciSpace } from '../src/determinants/space';
import { countSpace } from '../src/determinants/count';
import { occupiedOrbitals } from '../src/determinants/index';
import { pairHashGet } from '../src/determinants/pair-hash';
import { type StringList, stringIndex } from '../src/determinants/strings';
import { applySingle, spinTables } from '../src/hamiltonian/tables';
import { readFcidump } from '../src/fcidump/node';
import { parseFcidump } from '../src/fcidump/parse';
import type { Fcidump } from '../src/fcidump/types';
import { type AssembledHamiltonian, assembleHamiltonian, autoWorkers, kernelContext } from '../src/hamiltonian/assemble';
import { productContext } from '../src/hamiltonian/product';
import { estimateNnz } from '../src/hamiltonian/nnz-estimate';
import { spinSquaredExpectations } from '../src/hamiltonian/spin';
import { integralScreen, pairClasses } from '../src/hamiltonian/screening';
import { dataFile } from '../../../testdata/index';

const data = (f: string) => dataFile('fcidump', f);

/** The open 1-D Hubbard chain (hopping −t between neighbours, on-site U) as FCIDUMP text. */
function hubbardText(l: number, u = 2, t = 1): string {
  const na = Math.ceil(l / 2);
  const nb = Math.floor(l / 2);
  const lines = [`&FCI NORB=${l},NELEC=${na + nb},MS2=${na - nb},`, '&END'];
  for (let i = 1; i <= l; i++) lines.push(`${u} ${i} ${i} ${i} ${i}`);
  for (let i = 1; i < l; i++) lines.push(`${-t} ${i + 1} ${i} 0 0`);
  lines.push('0.0 0 0 0 0');
  return `${lines.join('\n')}\n`;
}

/** Bit-identical matrices (Object.is on values: −0 and +0 differ); returns nnz. */
function expectIdentical(got: AssembledHamiltonian, ref: AssembledHamiltonian): number {
  expect(got.stats.nnz).toBe(ref.stats.nnz);
  expect(got.matrix.rowPtr).toEqual(ref.matrix.rowPtr);
  let bad = 0;
  for (let k = 0; k < ref.stats.nnz; k++) if (got.matrix.colIdx[k] !== ref.matrix.colIdx[k] || !Object.is(got.matrix.values[k], ref.matrix.values[k])) bad++;
  for (let i = 0; i < ref.matrix.rows; i++) if (!Object.is(got.diagonal[i], ref.diagonal[i])) bad++;
  expect(bad).toBe(0);
  return ref.stats.nnz;
}

/** Screened string kernel against the unscreened one and (when `hash`) the hash kernel. */
async function compareAll(fd: Fcidump, spec: SpaceSpec, opts: BuildSpaceOptions, o: { hash?: boolean; dropTolerance?: number } = {}): Promise<AssembledHamiltonian> {
  const { fcidump, space } = buildCiSpace(fd, spec, opts);
  const tol = o.dropTolerance ?? 0;
  const screened = await assembleHamiltonian(fcidump, space, { workers: 0, dropTolerance: tol });
  const plain = await assembleHamiltonian(fcidump, space, { workers: 0, dropTolerance: tol, screen: false });
  expect(screened.stats.kernel).toBe('string');
  expect(expectIdentical(screened, plain)).toBeGreaterThan(space.size);
  if (o.hash !== false) expectIdentical(screened, await assembleHamiltonian(fcidump, space, { workers: 0, dropTolerance: tol, kernel: 'reference' }));
  return screened;
}

/** An Fcidump from explicit integrals (h symmetric; eri as given, norb⁴). */
function synthetic(norb: number, nelec: number, h1: Float64Array, eri: Float64Array, symmetry: 8 | 4 = 8): Fcidump {
  return { file: 'synthetic', norb, nelec, ms2: nelec % 2, orbsym: new Int32Array(norb).fill(1), isym: 1, h1, eri, ecore: 0, orbitalEnergies: undefined, symmetry, header: {}, notes: [] };
}

/** Deterministic pseudo-random numbers in [−1, 1). */
function lcg(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 31 - 1;
  };
}

describe('integral screen', () => {
  it('Hubbard chain: only nearest-neighbour singles, no (qp|kk), no alpha-beta doubles', () => {
    const fd = parseFcidump(hubbardText(8));
    const s = integralScreen(fd.norb, fd.h1, fd.eri);
    for (let q = 0; q < 8; q++) {
      for (let p = 0; p < 8; p++) {
        if (p === q) continue;
        expect(s.single[q * 8 + p]).toBe(Math.abs(p - q) === 1 ? 1 : 0);
        expect(s.coulomb[q * 8 + p]).toBe(0);
      }
    }
    expect(s.classes.count).toBe(1);
    expect(s.classes.alpha.every((c) => c === 0)).toBe(true);
  });

  it('N2 STO-3G (D2h): pair classes separate every zero (qp|ur) pattern the integrals have', async () => {
    const fd = await readFcidump(data('N2_sto3g_R1.1A_block2.FCIDUMP'));
    const n = fd.norb;
    const c = pairClasses(n, fd.eri);
    expect(c.count).toBeGreaterThan(2);
    let linked = 0;
    for (let qp = 0; qp < n * n; qp++) {
      for (let ur = 0; ur < n * n; ur++) {
        if (qp % (n + 1) === 0 || ur % (n + 1) === 0 || fd.eri[qp * n * n + ur] === 0) continue;
        linked++;
        expect(c.alpha[qp]).toBe(c.beta[ur]);
        expect(c.alpha[qp]).toBeGreaterThan(0);
      }
    }
    expect(linked).toBeGreaterThan(100);
    // with the irrep products as classes, pairs of one class share the product of their irreps
    const irrepOf = (pair: number) => (fd.orbsym[Math.floor(pair / n)]! - 1) ^ (fd.orbsym[pair % n]! - 1);
    for (let a = 0; a < n * n; a++) for (let b = 0; b < n * n; b++) if (c.alpha[a]! > 0 && c.alpha[a] === c.alpha[b]) expect(irrepOf(a)).toBe(irrepOf(b));
  });

  it('merges components past maxClasses and still separates what must be separate', () => {
    // (ij|ij) exchange-type integrals only: each pair {ij, ji} its own component (28 of them)
    const n = 8;
    const eri = new Float64Array(n ** 4);
    for (let i = 0; i < n; i++) {
      for (let j = 0; j < n; j++) {
        if (i === j) continue;
        eri[((i * n + j) * n + i) * n + j] = 0.1;
        eri[((i * n + j) * n + j) * n + i] = 0.1;
      }
    }
    expect(pairClasses(n, eri).count).toBe(29);
    const merged = pairClasses(n, eri, 5);
    expect(merged.count).toBe(5);
    for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) if (i !== j) expect(merged.alpha[i * n + j]).toBe(merged.beta[j * n + i]);
  });
});

describe('screened assembly equals the unscreened one bit for bit', () => {
  it('Hubbard chains L = 6–10 (and the hash kernel up to L = 9)', async () => {
    for (const l of [6, 7, 8, 9, 10]) {
      const h = await compareAll(parseFcidump(hubbardText(l)), 'fci', {}, { hash: l <= 9 });
      expect(h.matrix.rows).toBe(fciSpace(l, Math.ceil(l / 2), Math.floor(l / 2)).size);
    }
  });

  it('molecular FCIDUMPs: H4, N2 STO-3G (all and its irrep), H2O, CH4, O2 CAS, C4 CAS, He2, H8', async () => {
    const cases: [string, BuildSpaceOptions][] = [
      ['H4_sto6g_R1.8_block2.FCIDUMP', {}],
      ['N2_sto3g_R1.1A_block2.FCIDUMP', {}],
      ['N2_sto3g_R2.06bohr_chemps2.FCIDUMP', { irrep: 'isym' }],
      ['H2O_sto2g_hande.FCIDUMP', { irrep: 'isym' }],
      ['CH4_sto3g_chemps2.FCIDUMP', { irrep: 'isym' }],
      ['O2_cas12e8o_C1_dice.FCIDUMP', {}],
      ['C4_sto3g_cas8e12o_spin3_dice.FCIDUMP', { irrep: 'isym' }],
      ['He2_dice.FCIDUMP', { irrep: 1 }],
      ['H8_sto6g_R1.8_block2.FCIDUMP', {}],
    ];
    for (const [file, opts] of cases) await compareAll(await readFcidump(data(file)), 'fci', opts, { hash: file !== 'H8_sto6g_R1.8_block2.FCIDUMP' });
  });

  it('reordered space (rows sorted in the kernel) and a drop tolerance', async () => {
    const n2 = await readFcidump(data('N2_sto3g_R1.1A_block2.FCIDUMP'));
    await compareAll(n2, 'fci', { referenceLevel: 2 });
    await compareAll(n2, 'fci', { irrep: 'isym' }, { dropTolerance: 0.01 });
  });

  it('synthetic sparse integrals: merged pair classes, 4-fold integrals, zero diagonals', async () => {
    const n = 8;
    const rnd = lcg(7);
    // sparse random h, a few Coulomb and exchange-type (ij|ij) integrals, one (ij|kl) of each kind
    const h1 = new Float64Array(n * n);
    const eri = new Float64Array(n ** 4);
    const at = (i: number, j: number, k: number, l: number) => ((i * n + j) * n + k) * n + l;
    for (let i = 0; i < n; i++) {
      for (let j = i; j < n; j++) {
        if ((i + 2 * j) % 3 !== 0) continue;
        h1[i * n + j] = h1[j * n + i] = rnd();
      }
      eri[at(i, i, i, i)] = 0.5 + rnd() / 4;
    }
    for (let i = 0; i < n; i++) {
      for (let j = 0; j < n; j++) {
        if (i === j || (i * j) % 4 !== 1) continue;
        const v = rnd() / 5;
        eri[at(i, j, i, j)] = eri[at(j, i, j, i)] = v;
        eri[at(i, j, j, i)] = eri[at(j, i, i, j)] = v;
      }
    }
    eri[at(0, 3, 5, 6)] = 0.05; // one general 4-index integral, left unsymmetrized (4-fold file)
    const fd = synthetic(n, 6, h1, eri, 4);
    expect(pairClasses(n, eri).count).toBeGreaterThan(3);
    await compareAll(fd, 'fci', {});
    // zero on-site energies and U = 0: every diagonal element is a sum of zeros
    const hub0 = parseFcidump(hubbardText(8, 0));
    const z = await compareAll(hub0, 'fci', {});
    expect(Array.from(z.diagonal).every((d) => Object.is(d, 0))).toBe(true);
  });

  it('FCI spaces need no (α, β) table (index = a·nβ + b); an irrep sector keeps its table', async () => {
    const hub = buildCiSpace(parseFcidump(hubbardText(8)), 'fci', {});
    const p = productContext(kernelContext(hub.fcidump, hub.space), hub.space)!;
    expect(p.full).toBe(1);
    expect(p.pairIndex.length).toBe(0);
    const n2 = buildCiSpace(await readFcidump(data('N2_sto3g_R1.1A_block2.FCIDUMP')), 'fci', { irrep: 'isym' });
    const q = productContext(kernelContext(n2.fcidump, n2.space), n2.space)!;
    expect(q.full).toBe(0);
    expect(q.pairIndex.length).toBe(n2.space.alpha.count * n2.space.beta.count);
  });

  it('on a worker thread too (Hubbard L = 9)', async () => {
    const fd = parseFcidump(hubbardText(9));
    const { fcidump, space } = buildCiSpace(fd, 'fci', {});
    const threaded = await assembleHamiltonian(fcidump, space, { workers: 1 });
    expect(threaded.stats.workers).toBe(1);
    expectIdentical(threaded, await assembleHamiltonian(fcidump, space, { workers: 0, screen: false }));
  });

  it('refuses a negative or non-finite drop tolerance (the screen relies on zeros being dropped)', async () => {
    const fd = parseFcidump(hubbardText(4));
    const { fcidump, space } = buildCiSpace(fd, 'fci', {});
    await expect(assembleHamiltonian(fcidump, space, { dropTolerance: -1 })).rejects.toThrow(/dropTolerance.*finite number ≥ 0/);
    await expect(assembleHamiltonian(fcidump, space, { dropTolerance: Number.NaN })).rejects.toThrow(/dropTolerance/);
  });
});

/** Same-spin doubles of a string list as spinTables built them before screening: every p<q → r<u. */
function referenceDoubles(list: StringList, n: number, eri: Float64Array): { dOff: number[]; dTarget: number[]; dValue: number[] } {
  const g = (i: number, j: number, k: number, l: number) => eri[((i * n + j) * n + k) * n + l]!;
  const dOff = [0];
  const dTarget: number[] = [];
  const dValue: number[] = [];
  for (let str = 0; str < list.count; str++) {
    const occ = occupiedOrbitals(list.lo[str]!, list.hi[str]!);
    const virt = [...Array(n).keys()].filter((o) => !occ.includes(o));
    for (let x = 0; x < occ.length; x++) {
      for (let y = x + 1; y < occ.length; y++) {
        for (let v = 0; v < virt.length; v++) {
          const [s1, a1, b1] = applySingle(list.lo[str]!, list.hi[str]!, occ[x]!, virt[v]!);
          for (let w = v + 1; w < virt.length; w++) {
            const [s2, a2, b2] = applySingle(a1, b1, occ[y]!, virt[w]!);
            const t = stringIndex(list, a2, b2);
            if (t < 0) continue;
            const val = s1 * s2 * (g(virt[v]!, occ[x]!, virt[w]!, occ[y]!) - g(virt[v]!, occ[y]!, virt[w]!, occ[x]!));
            if (val === 0) continue;
            dTarget.push(t);
            dValue.push(val);
          }
        }
      }
    }
    dOff.push(dTarget.length);
  }
  return { dOff, dTarget, dValue };
}

describe('same-spin double tables', () => {
  it('skip zero integral differences before the string lookup: the same lists, bit for bit', async () => {
    const fds = [parseFcidump(hubbardText(9)), await readFcidump(data('N2_sto3g_R1.1A_block2.FCIDUMP')), await readFcidump(data('O2_cas12e8o_C1_dice.FCIDUMP'))];
    for (const fd0 of fds) {
      const { fcidump, space } = buildCiSpace(fd0, 'fci', {});
      for (const list of [space.alpha, space.beta]) {
        const got = spinTables(list, fcidump.norb, fcidump.h1, fcidump.eri);
        const ref = referenceDoubles(list, fcidump.norb, fcidump.eri);
        expect(Array.from(got.dOff)).toEqual(ref.dOff);
        expect(Array.from(got.dTarget)).toEqual(ref.dTarget);
        expect(Array.from(got.dValue).every((v, k) => Object.is(v, ref.dValue[k]))).toBe(true);
      }
    }
  });
});

describe('around the screened assembly', () => {
  it("'auto' uses every core: cores − 1 workers plus the main thread", () => {
    expect(autoWorkers(4e7, 16)).toBe(15);
    expect(autoWorkers(4e7, 2)).toBe(1);
    expect(autoWorkers(4e7, 256)).toBe(63);
    expect(autoWorkers(10_000, 16)).toBe(0);
  });

  it('the determinant hash is built on first use only, and the string kernel never uses it', async () => {
    const fd = parseFcidump(hubbardText(8));
    const { fcidump, space } = buildCiSpace(fd, 'fci', {});
    // a view of the space whose hash must not be touched
    const noHash = Object.create(space, { detHash: { get: () => expect.fail('detHash read by the string assembly') } }) as typeof space;
    const h = await assembleHamiltonian(fcidump, noHash, { workers: 0 });
    expect(h.stats.kernel).toBe('string');
    expectIdentical(h, await assembleHamiltonian(fcidump, space, { workers: 0, kernel: 'reference' }));
    // ⟨S²⟩ of an FCI space looks determinants up arithmetically: no hash either
    const v = Float64Array.from({ length: space.size }, (_, i) => Math.sin(i + 1));
    const s2 = spinSquaredExpectations(noHash, [v])[0]!;
    expect(s2).toBeGreaterThan(0);
    const built = space.detHash;
    expect(spinSquaredExpectations(space, [v])[0]).toBe(s2);
    expect(space.detHash).toBe(built);
    for (let i = 0; i < space.size; i++) expect(pairHashGet(built, space.detAlpha[i]!, space.detBeta[i]!)).toBe(i);
  });

  it('the sampled nnz estimate matches the screened Hubbard L = 11 Hamiltonian', async () => {
    const fd = parseFcidump(hubbardText(11));
    const { fcidump, space } = buildCiSpace(fd, 'fci', {});
    const h = await assembleHamiltonian(fcidump, space, { workers: 0 });
    const counted = countSpace({ norb: 11, nalpha: 6, nbeta: 5, irreps: new Array(11).fill(0), target: 0 });
    const e = estimateNnz(fcidump, counted);
    expect(Math.abs(e.nnz - h.stats.nnz) / h.stats.nnz).toBeLessThan(0.06);
    expect(Math.abs(e.nnz - h.stats.nnz)).toBeLessThanOrEqual(4 * e.stderr + 1);
  });
});
