import { describe, expect, it } from 'vitest';
import {
  type AxtComMatrix,
  type AxtMatrix,
  type AxtParams,
  type AxtUncMatrix,
  axtCheckHdrFit,
  axtch1Format,
  axtchFormat,
  axtFastSegmentedSum,
  axtFromCsr,
  axtHdrOffset,
  axtHdrPack,
  axtHdrRow,
  axtLoadX,
  axtResolveParams,
  axtSpmvReference,
  axtStorageBytes,
  axtToCsr,
  axtuh1Format,
  axtuhFormat,
} from '../src/axt/index';
import { InvalidMatrixError, InvalidParameterError } from '../src/core/errors';
import type { CsrMatrix } from '../src/core/types';
import { csr, csrEquals, csrFromTriplets, csrNnz, csrSpmv } from '../src/csr/csr';
import * as gen from '../src/generators/index';
import { readMatrixMarket } from '../src/mtx/index';
import { formats } from '../src/registry';
import { dataFile } from '../../../testdata/index';

/*
 * Fig. 1 of seed 004 is an image that the markdown does not contain. Reconstructed from the text:
 * - THW = 4 (one of the values tried on the GPU) and BS = 4 (stated in §2.3.3: "using BS=4 for
 *   the hdr[] elements of the compacted versions of the AXT format in Fig. 1"), so a block is one
 *   tile; TH = 2 for the 2-D variants (not stated; our choice).
 * - A 6×6 matrix with 16 non-zeros chosen so that the AXTCH1 layout has four tiles where T0 holds
 *   entries of three rows and three non-zero hdr entries, T1 and T3 mix rows, and T2 holds one
 *   row and one non-zero hdr entry (§2.3.3). Row lengths 2, 1, 3, 6, 1, 3.
 * - Values a_ij = 10(i+1) + (j+1), x_j = j + 1, so x slots show column + 1 (0 = padding).
 */
const FIG1 = csrFromTriplets(
  6,
  6,
  [0, 0, 1, 2, 2, 2, 3, 3, 3, 3, 3, 3, 4, 5, 5, 5],
  [0, 2, 1, 0, 3, 5, 0, 1, 2, 3, 4, 5, 4, 1, 3, 5],
  [11, 13, 22, 31, 34, 36, 41, 42, 43, 44, 45, 46, 55, 62, 64, 66],
);
const X6 = Float64Array.from([1, 2, 3, 4, 5, 6]);
const Y6 = [50, 44, 383, 931, 275, 776]; // A·x by hand

/** Split ax[] into its per-run entry halves and x halves (runs of THW). */
function halves(ax: Float64Array, thw: number): { a: number[]; x: number[] } {
  const a: number[] = [];
  const x: number[] = [];
  for (let p = 0; p < ax.length; p += 2 * thw) {
    a.push(...ax.subarray(p, p + thw));
    x.push(...ax.subarray(p + thw, p + 2 * thw));
  }
  return { a, x };
}

describe('AXT reference tier: the Fig. 1 example (reconstructed)', () => {
  it('AXTUH1 (THW = 4): same ax[] as AXC, one rwp entry per tile', () => {
    const m = axtFromCsr(FIG1, { thw: 4, th: 1, mode: 'UNC' }) as AxtUncMatrix;
    expect(m.variant).toBe('AXTUH1');
    expect(m.nTiles).toBe(7);
    axtLoadX(m, X6);
    const h = halves(m.ax, 4);
    expect(h.a).toEqual([11, 13, 0, 0, 22, 0, 0, 0, 31, 34, 36, 0, 41, 42, 43, 44, 45, 46, 0, 0, 55, 0, 0, 0, 62, 64, 66, 0]);
    expect(h.x).toEqual([1, 3, 0, 0, 2, 0, 0, 0, 1, 4, 6, 0, 1, 2, 3, 4, 5, 6, 0, 0, 5, 0, 0, 0, 2, 4, 6, 0]);
    expect(Array.from(m.rwp)).toEqual([0, 1, 2, 3, 3, 4, 5]);
    expect(Array.from(m.xIdx)).toEqual([0, 2, -1, -1, 1, -1, -1, -1, 0, 3, 5, -1, 0, 1, 2, 3, 4, 5, -1, -1, 4, -1, -1, -1, 1, 3, 5, -1]);
    expect(Array.from(axtSpmvReference(m, X6))).toEqual(Y6);
  });
  it('AXTUH (THW = 4, TH = 2): rows in whole tile columns, column-major, rwp per column', () => {
    const m = axtFromCsr(FIG1, { thw: 4, th: 2, mode: 'UNC' }) as AxtUncMatrix;
    expect(m.variant).toBe('AXTUH');
    expect(m.nTiles).toBe(3); // 10 columns used of 12
    axtLoadX(m, X6);
    const h = halves(m.ax, 4); // per tile: step 0 (4 lanes), step 1 (4 lanes)
    expect(h.a).toEqual([11, 22, 31, 36, 13, 0, 34, 0, 41, 43, 45, 55, 42, 44, 46, 0, 62, 66, 0, 0, 64, 0, 0, 0]);
    expect(h.x).toEqual([1, 2, 1, 6, 3, 0, 4, 0, 1, 3, 5, 5, 2, 4, 6, 0, 2, 6, 0, 0, 4, 0, 0, 0]);
    expect(Array.from(m.rwp)).toEqual([0, 1, 2, 2, 3, 3, 3, 4, 5, 5, 0, 0]);
    expect(Array.from(axtSpmvReference(m, X6))).toEqual(Y6);
  });
  it('AXTCH1 (THW = 4, BS = 4): packed rows, hdr = row << 2 | offset at partition heads', () => {
    const m = axtFromCsr(FIG1, { thw: 4, th: 1, mode: 'COM', bs: 4 }) as AxtComMatrix;
    expect(m.variant).toBe('AXTCH1');
    expect(m.nTiles).toBe(4);
    expect(m.offsetBits).toBe(2);
    axtLoadX(m, X6);
    const h = halves(m.ax, 4);
    expect(h.a).toEqual([11, 13, 22, 31, 34, 36, 41, 42, 43, 44, 45, 46, 55, 62, 64, 66]);
    expect(h.x).toEqual([1, 3, 2, 1, 4, 6, 1, 2, 3, 4, 5, 6, 5, 2, 4, 6]);
    // T0: (0,1) (1,0) (2,0); T1: (2,1) (3,1); T2: (3,3); T3: (4,0) (5,2)
    expect(Array.from(m.hdr)).toEqual([1, 0, 4, 8, 9, 0, 13, 0, 15, 0, 0, 0, 16, 22, 0, 0]);
    const nonZeroPerTile = [0, 1, 2, 3].map((t) => Array.from(m.hdr.subarray(4 * t, 4 * t + 4)).filter((v) => v !== 0).length);
    expect(nonZeroPerTile).toEqual([3, 2, 1, 2]); // T0 three rows, T2 one row (the text's statement)
    expect(Array.from(axtSpmvReference(m, X6))).toEqual(Y6);
  });
  it('AXTCH (THW = 4, TH = 2): packed rows column-major, vertical offsets in 1 bit', () => {
    const m = axtFromCsr(FIG1, { thw: 4, th: 2, mode: 'COM' }) as AxtComMatrix;
    expect(m.variant).toBe('AXTCH');
    expect(m.nTiles).toBe(2);
    expect(m.offsetBits).toBe(1);
    axtLoadX(m, X6);
    const h = halves(m.ax, 4);
    expect(h.a).toEqual([11, 22, 34, 41, 13, 31, 36, 42, 43, 45, 55, 64, 44, 46, 62, 66]);
    expect(h.x).toEqual([1, 2, 4, 1, 3, 1, 6, 2, 3, 5, 5, 4, 4, 6, 2, 6]);
    expect(Array.from(m.hdr)).toEqual([1, 2, 5, 7, 0, 4, 0, 0, 7, 7, 8, 11, 0, 0, 10, 0]);
    expect(Array.from(axtSpmvReference(m, X6))).toEqual(Y6);
  });
  it('round-trips all four variants and counts storage by hand', () => {
    const cases: [Partial<AxtParams>, number, Record<string, number>][] = [
      // [params, slots, arrays] with float64 values and int32 indices
      [{ thw: 4, th: 1, mode: 'UNC' }, 28, { ax: 28 * 16, rwp: 7 * 4, xIdx: 28 * 4 }],
      [{ thw: 4, th: 2, mode: 'UNC' }, 24, { ax: 24 * 16, rwp: 12 * 4, xIdx: 24 * 4 }],
      [{ thw: 4, th: 1, mode: 'COM', bs: 4 }, 16, { ax: 16 * 16, hdr: 16 * 4, xIdx: 16 * 4 }],
      [{ thw: 4, th: 2, mode: 'COM' }, 16, { ax: 16 * 16, hdr: 16 * 4, xIdx: 16 * 4 }],
    ];
    for (const [p, slots, arrays] of cases) {
      const m = axtFromCsr(FIG1, p);
      expect(csrEquals(axtToCsr(m), FIG1)).toBe(true);
      const st = axtStorageBytes(m);
      expect(st.storedElements).toBe(slots);
      expect(st.arrays).toEqual(arrays);
      expect(st.bytes).toBe(Object.values(arrays).reduce((s, v) => s + v, 0));
      expect(st.beta).toBe(16 / slots);
      expect(st.padding).toBe(slots - 16);
    }
    // float32 values, as on the GPU: ax halves, indices unchanged
    expect(axtStorageBytes(axtFromCsr(FIG1, { thw: 4, th: 2, mode: 'UNC' }), { valueBytes: 4 }).arrays.ax).toBe(24 * 8);
  });
});

describe('hdr bit packing', () => {
  it('packs offset in the low bits and the row in the high bits', () => {
    expect(axtHdrPack(5, 2, 2)).toBe(0b10110);
    expect(axtHdrRow(0b10110, 2)).toBe(5);
    expect(axtHdrOffset(0b10110, 2)).toBe(2);
    // BS = 1024: 10 offset bits, 22 row bits; the largest row and offset use all 32 bits
    const top = axtHdrPack(2 ** 22 - 1, 1023, 10);
    expect(top).toBe(2 ** 32 - 1);
    expect(axtHdrRow(top, 10)).toBe(2 ** 22 - 1);
    expect(axtHdrOffset(top, 10)).toBe(1023);
    expect(new Uint32Array([top])[0]).toBe(top);
    expect(axtHdrPack(0, 0, 10)).toBe(0); // the row-0 caveat of hdr.ts
    const r = gen.rng(3);
    for (let t = 0; t < 200; t++) {
      const bits = Math.floor(r() * 11);
      const row = Math.floor(r() * 2 ** (32 - bits));
      const off = Math.floor(r() * 2 ** bits);
      const h = axtHdrPack(row, off, bits);
      expect([axtHdrRow(h, bits), axtHdrOffset(h, bits)]).toEqual([row, off]);
    }
  });
  it('refuses fields that do not fit', () => {
    expect(() => axtHdrPack(0, 4, 2)).toThrow(InvalidParameterError);
    expect(() => axtHdrPack(2 ** 22, 0, 10)).toThrow(/hdr row/);
    expect(() => axtCheckHdrFit(2 ** 22, 10, 'bs', 1024, 32)).not.toThrow();
    expect(() => axtCheckHdrFit(2 ** 22 + 1, 10, 'bs', 1024, 32)).toThrow(/BS ≤ 512 fits/);
    expect(() => axtCheckHdrFit(5_558_326, 10, 'bs', 1024, 32)).toThrow(/BS ≤ 512 fits/); // M24, §2.3.3
    expect(() => axtCheckHdrFit(2 ** 28, 10, 'bs', 1024, 32)).toThrow(/no BS ≥ THW = 32 fits/);
    expect(() => axtCheckHdrFit(2 ** 29, 4, 'th', 16, 32)).toThrow(/TH ≤ 8 fits/);
  });
  it('the fast segmented sum (Eq. (1)) on a hand example, one lane and two lanes', () => {
    const y = new Float64Array(3);
    // is = 1..6, partitions [0,1] row 0, [2] row 2, [3,5] row 1, 2 offset bits
    axtFastSegmentedSum(Float64Array.from([1, 2, 3, 4, 5, 6]), Uint32Array.from([1, 0, 8, 6, 0, 0]), 0, 6, 1, 2, y, new Float64Array(6));
    expect(Array.from(y)).toEqual([3, 15, 3]);
    // two lanes, three steps: lane 0 = [1, 3, 5] rows (0: 1, 1: 3+5); lane 1 = [2, 4, 6] row 2 (head 0 → row 0!)
    const y2 = new Float64Array(3);
    const hdr = Uint32Array.from([0, 0b1010, 0b101, 0, 0, 0]); // (0,0) | (2,2) ; (1,1) at step 1 lane 0
    axtFastSegmentedSum(Float64Array.from([1, 2, 3, 4, 5, 6]), hdr, 0, 3, 2, 2, y2, new Float64Array(6));
    expect(Array.from(y2)).toEqual([1, 8, 12]);
  });
});

describe('AXTCH1 block boundaries (THW = 2, BS = 4)', () => {
  // rows 0, 3, 5 empty; row 1 = slots 0..2; row 2 = slots 3..12 (10 entries > BS: it starts in block 0 and
  // crosses 3 block boundaries, ending alone at the start of block 3); row 4 = slot 13; no padding (whole tiles)
  const rows = [1, 1, 1, ...Array<number>(10).fill(2), 4];
  const cols = [0, 3, 5, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 9];
  const a = csrFromTriplets(6, 10, rows, cols, cols.map((c, k) => k + 1 + c / 16));
  it('heads at each block start and each row start; a shorter last block (padding to whole tiles only)', () => {
    const m = axtFromCsr(a, { thw: 2, th: 1, mode: 'COM', bs: 4 }) as AxtComMatrix;
    expect(m.nTiles).toBe(7); // 14 entries = 7 tiles of 2: blocks of 4, 4, 4 and a last block of 2 slots
    const H = (r: number, o: number) => axtHdrPack(r, o, 2);
    expect(Array.from(m.hdr)).toEqual([H(1, 2), 0, 0, H(2, 0), H(2, 3), 0, 0, 0, H(2, 3), 0, 0, 0, H(2, 0), H(4, 0)]);
    expect(Array.from(m.xIdx.subarray(12))).toEqual([9, 9]);
    // with THW = 4 the last tile is padded: 14 entries → 16 slots, hdr and xIdx mark the padding
    const m4 = axtFromCsr(a, { thw: 4, th: 1, mode: 'COM', bs: 8 }) as AxtComMatrix;
    // block 1 = slots 8..15: row 2 continues (slots 8..12, offset 4), row 4 at slot 13, padding 14..15; 3 offset bits
    expect(Array.from(m4.hdr.subarray(8))).toEqual([axtHdrPack(2, 4, 3), 0, 0, 0, 0, axtHdrPack(4, 0, 3), 0, 0]);
    expect(Array.from(m4.xIdx.subarray(12))).toEqual([9, 9, -1, -1]);
    expect(csrEquals(axtToCsr(m4), a)).toBe(true);
    expect(csrEquals(axtToCsr(m), a)).toBe(true);
    const x = Float64Array.from({ length: 10 }, (_, j) => 2 ** -j);
    expect(Array.from(axtSpmvReference(m, x))).toEqual(Array.from(csrSpmv(a, x)));
  });
  it('a row-0 head with offset 0 packs to 0 and is still counted (first slot of a block)', () => {
    // row 0 has 5 entries: slots 0..3 and slot 4 = alone at the start of block 1 → hdr[4] = (0, 0) = 0
    const b = csrFromTriplets(2, 6, [0, 0, 0, 0, 0, 1], [0, 1, 2, 3, 4, 5], [1, 2, 3, 4, 5, 6]);
    const m = axtFromCsr(b, { thw: 2, th: 1, mode: 'COM', bs: 4 }) as AxtComMatrix;
    expect(Array.from(m.hdr)).toEqual([3, 0, 0, 0, 0, 4]); // 6 slots: block 0, then a last block of 2
    const x = Float64Array.from([1, 1, 1, 1, 1, 1]);
    expect(Array.from(axtSpmvReference(m, x))).toEqual([15, 6]);
    expect(csrEquals(axtToCsr(m), b)).toBe(true);
    // same for AXTCH: row 0 continues at the top of the next column with one entry
    const c = axtFromCsr(b, { thw: 2, th: 4, mode: 'COM' }) as AxtComMatrix;
    expect(Array.from(c.hdr)).toEqual([3, 0, 0, 4, 0, 0, 0, 0]);
    expect(Array.from(axtSpmvReference(c, x))).toEqual([15, 6]);
  });
});

/** Per-row error bound: CSR-style c·n·ε·Σ|a x| plus, for Eq. (1), the scanned group's Σ|a x| times its length. */
function expectClose(m: AxtMatrix, a: CsrMatrix, x: Float64Array, y: Float64Array, label: string): void {
  const ref = csrSpmv(a, x);
  const eps = 2 ** -52;
  const rowAbs = new Float64Array(a.rows);
  const nnz = csrNnz(a);
  const groupLen = m.mode === 'COM' ? (m.th === 1 ? (m.bs ?? 1) : m.th * m.thw) : 1;
  const groupAbs = new Float64Array(Math.ceil(nnz / groupLen) + 1);
  for (let i = 0; i < a.rows; i++) {
    for (let k = a.rowPtr[i]!; k < a.rowPtr[i + 1]!; k++) {
      const v = Math.abs(a.values[k]! * x[a.colIdx[k]!]!);
      rowAbs[i]! += v;
      groupAbs[Math.floor(k / groupLen)]! += v;
    }
  }
  for (let i = 0; i < a.rows; i++) {
    let scanAbs = 0;
    if (m.mode === 'COM') {
      for (let g = Math.floor(a.rowPtr[i]! / groupLen); g * groupLen < a.rowPtr[i + 1]!; g++) scanAbs += 2 * groupLen * groupAbs[g]!;
    }
    const n = a.rowPtr[i + 1]! - a.rowPtr[i]!;
    const tol = 4 * eps * ((n + 2) * rowAbs[i]! + scanAbs);
    if (!(Math.abs(y[i]! - ref[i]!) <= tol)) throw new Error(`${label}: row ${i}: got ${y[i]}, expected ${ref[i]} ± ${tol}`);
  }
}

const GENERATED: [string, CsrMatrix][] = [
  ['uniform', gen.uniformRandom(50, 40, 5, 11)],
  ['power-law', gen.powerLaw(80, 60, { seed: 12 })],
  ['empty rows', gen.withEmptyRows(60, 50, 4, 0.4, 13)],
  ['one dense row', gen.oneDenseRow(40, 300, 3, 260, 7, 14)],
  ['banded', gen.banded(50, 2, 3, { seed: 15 })],
  ['block-structured', gen.blockStructured(6, 8, 3, 2, 2, 16)],
  ['rectangular wide', gen.uniformRandom(30, 70, 6, 17)],
  ['rectangular tall', gen.uniformRandom(70, 30, 3, 18)],
  ['n = 0', csr(0, 0, [0], [], [])],
  ['0 × 5', csr(0, 5, [0], [], [])],
  ['5 × 0', csr(5, 0, [0, 0, 0, 0, 0, 0], [], [])],
  ['n = 1', gen.uniformRandom(1, 1, 1, 19)],
  ['n = 1 empty', csr(1, 1, [0, 0], [], [])],
];

const GRID: Partial<AxtParams>[] = [];
for (const thw of [1, 4, 32, 64]) {
  for (const th of [1, 2, 3, 7]) GRID.push({ thw, th, mode: 'UNC' });
  for (const th of [2, 3, 8]) GRID.push({ thw, th, mode: 'COM' });
  for (const bs of [Math.max(thw, 4), 64, 1024]) GRID.push({ thw, th: 1, mode: 'COM', bs });
}

describe('AXT conformance on the generators × (THW, TH, MODE, BS)', () => {
  for (const [name, a] of GENERATED) {
    it(`${name}: round trip, product against CSR, layout invariants`, () => {
      const x = Float64Array.from({ length: a.cols }, (_, j) => Math.sin(j + 1) + 0.25);
      for (const p of GRID) {
        const label = `${name} ${JSON.stringify(p)}`;
        const m = axtFromCsr(a, p);
        expect(m.variant, label).toBe(`AXT${p.mode === 'UNC' ? 'U' : 'C'}H${p.th === 1 ? '1' : ''}`);
        expect(m.format, label).toBe(m.variant.toLowerCase());
        expect(csrEquals(axtToCsr(m), a), label).toBe(true);
        const slots = m.xIdx.length;
        expect(m.ax.length, label).toBe(2 * slots);
        expect(slots, label).toBe(m.nTiles * m.th * m.thw);
        expect(m.xIdx.filter((c) => c >= 0).length, label).toBe(csrNnz(a));
        if (m.mode === 'COM') {
          expect(m.hdr.length, label).toBe(slots);
          const unit = m.th * m.thw; // padding below one tile
          expect(slots - csrNnz(a), label).toBeLessThan(unit);
          expect(slots % unit, label).toBe(0);
        } else {
          expect(m.rwp.length, label).toBe(m.th === 1 ? m.nTiles : m.nTiles * m.thw);
        }
        const st = axtStorageBytes(m);
        expect(st.beta, label).toBe(slots === 0 ? 1 : csrNnz(a) / slots);
        expectClose(m, a, x, axtSpmvReference(m, x), label);
      }
    });
  }
  it('registry descriptors run the same checks with their defaults', () => {
    const a = gen.powerLaw(120, 90, { seed: 21 });
    const x = Float64Array.from({ length: a.cols }, (_, j) => 1 / (j + 1));
    for (const d of [axtuh1Format, axtuhFormat, axtch1Format, axtchFormat]) {
      expect(formats).toContain(d);
      const m = (d.fromCsr as (a: CsrMatrix) => AxtMatrix)(a);
      expect(m.format).toBe(d.name);
      expect(csrEquals(d.toCsr(m as never), a)).toBe(true);
      expectClose(m, a, x, d.spmvReference(m as never, x), d.name);
    }
  });
});

describe('AXT on real matrices (shared/data/matrices)', () => {
  for (const file of ['west0479.mtx', 'rajat19.mtx', 'bcsstk08.mtx']) {
    it(`${file}: round trip and product, paper parameters (Tables 2–3)`, async () => {
      const { matrix: a } = await readMatrixMarket(dataFile('matrices', file));
      const x = Float64Array.from({ length: a.cols }, (_, j) => Math.sin(j + 1));
      const grid: Partial<AxtParams>[] = [
        { thw: 8, th: 1, mode: 'UNC' },
        { thw: 8, th: 8, mode: 'UNC' },
        { thw: 32, th: 4, mode: 'UNC' },
        { thw: 8, th: 1, mode: 'COM', bs: 512 },
        { thw: 32, th: 1, mode: 'COM', bs: 1024 },
        { thw: 8, th: 64, mode: 'COM' },
        { thw: 32, th: 4, mode: 'COM' },
      ];
      for (const p of grid) {
        const m = axtFromCsr(a, p);
        expect(csrEquals(axtToCsr(m), a), `${file} ${JSON.stringify(p)}`).toBe(true);
        expectClose(m, a, x, axtSpmvReference(m, x), `${file} ${JSON.stringify(p)}`);
        // compacted variants store every entry back to back: β below 1 only by the last tile
        if (m.mode === 'COM') expect(axtStorageBytes(m).padding).toBeLessThan(m.th * m.thw);
      }
    });
  }
});

describe('AXT explicit zeros, x loading and non-finite x', () => {
  const a = csr(3, 4, [0, 3, 3, 5], [0, 1, 3, 0, 2], [0, 2, -0, 5, 0]);
  it('keeps explicit zeros (including −0) apart from padding', () => {
    for (const p of GRID) {
      const m = axtFromCsr(a, p);
      const back = axtToCsr(m);
      expect(csrEquals(back, a), JSON.stringify(p)).toBe(true);
      expect(Object.is(back.values[2], -0)).toBe(true);
    }
  });
  it('loads x through xIdx, padding gets 0', () => {
    const m = axtFromCsr(a, { thw: 4, th: 2, mode: 'UNC' });
    const x = Float64Array.from([7, 8, 9, 10]);
    axtLoadX(m, x);
    for (let s = 0; s < m.xIdx.length; s++) {
      const xp = 2 * 4 * Math.floor(s / 4) + (s % 4) + 4;
      expect(m.ax[xp]).toBe(m.xIdx[s]! >= 0 ? x[m.xIdx[s]!] : 0);
    }
  });
  it('non-finite x reaches only the rows that use it, as in CSR', () => {
    const b = gen.uniformRandom(40, 30, 4, 31);
    const x = Float64Array.from({ length: 30 }, (_, j) => (j === 7 ? Number.POSITIVE_INFINITY : j === 11 ? Number.NaN : 1));
    const ref = csrSpmv(b, x);
    for (const p of GRID) {
      const y = axtSpmvReference(axtFromCsr(b, p), x);
      for (let i = 0; i < b.rows; i++) {
        if (Number.isFinite(ref[i]!)) expect(Math.abs(y[i]! - ref[i]!), `${JSON.stringify(p)} row ${i}`).toBeLessThan(1e-12);
        else expect(y[i], `${JSON.stringify(p)} row ${i}`).toBe(ref[i]);
      }
    }
  });
});

describe('AXT parameter and input errors', () => {
  const a = gen.uniformRandom(10, 10, 3, 41);
  it('rejects bad THW, TH, MODE and BS, naming the parameter', () => {
    for (const thw of [0, 3, 128, 1.5]) expect(() => axtFromCsr(a, { thw })).toThrow(/parameter thw/);
    for (const th of [0, -1, 2.5]) expect(() => axtFromCsr(a, { th })).toThrow(/parameter th/);
    expect(() => axtFromCsr(a, { mode: 'ROW' as never })).toThrow(/parameter mode/);
    for (const bs of [3, 2048, 0]) expect(() => axtFromCsr(a, { mode: 'COM', th: 1, thw: 4, bs })).toThrow(/parameter bs/);
    expect(() => axtFromCsr(a, { mode: 'COM', th: 1, thw: 32, bs: 16 })).toThrow(/THW = 32 ≤ BS/);
    expect(() => axtFromCsr(a, { mode: 'UNC', th: 4, bs: 3 })).not.toThrow(); // BS only matters to AXTCH1
    expect(() => axtFromCsr(a, { th: 2 ** 40 })).toThrow(/at most 2\^30/);
  });
  it('descriptors refuse (mode, th) of another variant', () => {
    expect(() => axtuh1Format.fromCsr(a, { th: 4 })).toThrow(/parameter th: expected mode UNC and th = 1/);
    expect(() => axtuhFormat.fromCsr(a, { th: 1 })).toThrow(/th ≥ 2/);
    expect(() => axtch1Format.fromCsr(a, { mode: 'UNC' })).toThrow(/parameter mode/);
    expect(() => axtchFormat.fromCsr(a, { th: 1 })).toThrow(InvalidParameterError);
  });
  it('says which BS fits when the row index overflows hdr[]', () => {
    const big = csr(2 ** 22 + 1, 1, new Int32Array(2 ** 22 + 2), [], []);
    expect(() => axtFromCsr(big, { mode: 'COM', th: 1, bs: 1024 })).toThrow(/rows = 4194305 need 23 of the 32 bits, so BS ≤ 512 fits\), got 1024/);
    expect(axtResolveParams(big.rows, { mode: 'COM', th: 1, bs: 512 }).offsetBits).toBe(9);
  });
  it('rejects a non-canonical CSR at conversion', () => {
    const unsorted = csr(2, 3, [0, 2, 2], [2, 0], [1, 2], { validate: false });
    expect(() => axtFromCsr(unsorted, { mode: 'COM', th: 2 })).toThrow(/axtFromCsr: CSR colIdx\[1\] = 0 in row 0 after column 2: .*not sorted/);
    const shortPtr = { ...unsorted, rowPtr: Int32Array.from([0, 2]) };
    expect(() => axtFromCsr(shortPtr)).toThrow(/rowPtr has length 2: expected rows \+ 1 = 3/);
  });
  it('rejects wrong vector lengths and corrupted layouts', () => {
    const m = axtFromCsr(a, { thw: 4, th: 1, mode: 'COM', bs: 8 }) as AxtComMatrix;
    expect(() => axtSpmvReference(m, new Float64Array(9))).toThrow(/expected length 10, got 9/);
    expect(() => axtSpmvReference(m, new Float64Array(10), new Float64Array(3))).toThrow(/expected length 10/);
    const h = m.hdr.slice();
    h[1] = h[0]!; // a head inside a partition
    expect(() => axtToCsr({ ...m, hdr: h })).toThrow(InvalidMatrixError);
    const h2 = m.hdr.slice();
    h2[0] = axtHdrPack(99, 0, 3); // row out of range
    expect(() => axtSpmvReference({ ...m, hdr: h2 }, new Float64Array(10))).toThrow(/row 99/);
    const u = axtFromCsr(a, { thw: 4, th: 1, mode: 'UNC' }) as AxtUncMatrix;
    const rwp = u.rwp.slice();
    rwp[0] = 5; // rows out of order
    expect(() => axtToCsr({ ...u, rwp })).toThrow(/rows must not decrease/);
  });
});
