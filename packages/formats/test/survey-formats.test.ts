import { describe, expect, it } from 'vitest';
import { InvalidMatrixError, InvalidParameterError } from '../src/core/errors';
import type { FormatDescriptor, SparseMatrix } from '../src/core/types';
import { csrFromDense } from '../src/csr/csr';
import { acsrBlockKind, acsrFormat, acsrFromCsr, acsrRowBlocks } from '../src/acsr/index';
import { bcsrFormat, bcsrFromCsr } from '../src/bcsr/index';
import { cmrsFormat, cmrsFromCsr } from '../src/cmrs/index';
import { csbFormat, csbFromCsr } from '../src/csb/index';
import { oneDenseRow, uniformRandom } from '../src/generators/index';
import { mqtFormat, mqtFromCsr, mqtMaxStructureBits, mqtStructureBits, qcsrDecodeTree, qcsrFormat, qcsrFromCsr, qcsrLeafKind } from '../src/quadtree/index';
import { rgcsrFormat, rgcsrFromCsr } from '../src/rgcsr/index';
import { sbcsrFormat, sbcsrFromCsr, scsrFormat, scsrFromCsr } from '../src/streamed/index';
import { cases, expectRoundTrip, expectSpmvMatches, vectorFor } from './format-cases';

// survey eq. 2.1 (DIA / BCSR / quadtree examples) and eq. 2.30 (CMRS / streamed examples)
const survey21 = csrFromDense([
  [0, 4, 0, 7, 0],
  [2, 0, 3, 0, 6],
  [0, 5, 0, 0, 0],
  [0, 0, 0, 0, 2],
  [1, 0, 0, 6, 0],
]);
const survey230 = csrFromDense([
  [4, 5, 0, 1, 0],
  [0, 7, 8, 0, 0],
  [0, 9, 2, 3, 0],
  [0, 0, 0, 6, 0],
  [0, 0, 0, 10, 11],
]);
const ints = Float64Array.from([1, 2, 3, 4, 5]);
const y21 = [36, 41, 10, 10, 25];

describe('worked examples', () => {
  it('BCSR, 2×2 blocks of survey eq. 2.1', () => {
    const b = bcsrFromCsr(survey21, { blockSize: 2 });
    expect(Array.from(b.rowPtr)).toEqual([0, 3, 5, 7]);
    expect(Array.from(b.colIdx)).toEqual([0, 1, 2, 0, 2, 0, 1]);
    expect(Array.from(b.values)).toEqual([0, 4, 2, 0, 0, 7, 3, 0, 0, 0, 6, 0, 0, 5, 0, 0, 0, 0, 2, 0, 1, 0, 0, 0, 0, 6, 0, 0]);
    expect(Array.from(bcsrFormat.spmvReference(b, ints))).toEqual(y21);
    const s = bcsrFormat.storageBytes(b, { valueBytes: 8, indexBytes: 4 });
    expect(s.bytes).toBe(28 * 8 + 7 * 4 + 4 * 4);
    expect(s.beta).toBe(9 / 28);
    const rc = bcsrFromCsr(survey21, { blockRows: 1, blockCols: 3 });
    expect(Array.from(rc.colIdx)).toEqual([0, 1, 0, 1, 0, 1, 0, 1]);
  });
  it('CSB, z = 2 on survey eq. 2.1, Z-Morton order inside a block', () => {
    const c = csbFromCsr(survey21, { blockSize: 2 });
    expect(Array.from(c.blockPtr)).toEqual([0, 2, 4, 5, 6, 6, 7, 8, 9, 9]);
    expect(Array.from(c.values)).toEqual([4, 2, 7, 3, 6, 5, 2, 1, 6]);
    expect(Array.from(c.rowIdx)).toEqual([0, 1, 0, 1, 1, 0, 1, 0, 0]);
    expect(Array.from(c.colIdx)).toEqual([1, 0, 1, 0, 0, 1, 0, 0, 1]);
    // (0, 2) then (1, 0) in row order, but Morton puts (1, 0) (key 2) before (0, 2) (key 4)
    const m = csbFromCsr(csrFromDense([[0, 0, 5, 0], [6, 0, 0, 0]]), { blockSize: 4 });
    expect(Array.from(m.values)).toEqual([6, 5]);
    expect(csbFormat.storageBytes(c, { valueBytes: 8, indexBytes: 4 }).bytes).toBe(9 * 8 + 2 * 9 * 4 + 10 * 4);
  });
  it('RgCSR, the survey example (eq. 2.21–2.24, group size 3)', () => {
    const a = csrFromDense([
      [0, 4, 0, 7, 0],
      [2, 0, 3, 0, 6],
      [0, 5, 0, 0, 0],
      [0, 0, 0, 0, 2],
      [1, 0, 0, 6, 0],
      [0, 0, 4, 0, 0],
    ]);
    const g = rgcsrFromCsr(a, { groupSize: 3 });
    expect(Array.from(g.values)).toEqual([4, 2, 5, 7, 3, 0, 0, 6, 0, 2, 1, 4, 0, 6, 0]);
    expect(Array.from(g.colIdx)).toEqual([1, 0, 1, 3, 2, -1, -1, 4, -1, 4, 0, 2, -1, 3, -1]);
    expect(Array.from(g.rowLength)).toEqual([2, 3, 1, 1, 2, 1]);
    expect(Array.from(g.groupPtr)).toEqual([0, 9, 15]);
    // 2X + m + Ng (+1) with X = 15
    expect(rgcsrFormat.storageBytes(g, { valueBytes: 4, indexBytes: 4 }).bytes).toBe(4 * (2 * 15 + 6 + 3));
  });
  it('CMRS, strip height 2 on survey eq. 2.30', () => {
    const c = cmrsFromCsr(survey230, { stripHeight: 2 });
    expect(Array.from(c.colIdx)).toEqual([0, 1, 3, 1, 2, 1, 2, 3, 3, 3, 4]);
    expect(Array.from(c.stripPtr)).toEqual([0, 5, 9, 11]);
    expect(Array.from(c.rowInStrip)).toEqual([0, 0, 0, 1, 1, 0, 0, 0, 1, 0, 0]);
    expect(cmrsFormat.storageBytes(c, { valueBytes: 4, indexBytes: 4 }).bytes).toBe(4 * (3 * 11 + 4));
  });
  it('streamed CSR, 4 streams on survey eq. 2.30 (eq. 2.38–2.46)', () => {
    const s = scsrFromCsr(survey230, { numStreams: 4 });
    expect(Array.from(s.ptr)).toEqual([0, 3, 5]);
    const L = s.streamLength;
    const stream = (arr: ArrayLike<number>, t: number) => Array.from(arr).slice(t * L, (t + 1) * L);
    expect(stream(s.colIdx, 0)).toEqual([0, 1, 3, 3, 4]);
    expect(stream(s.colIdx, 1)).toEqual([1, 2, 2, -1, -1]);
    expect(stream(s.colIdx, 2)).toEqual([1, 2, 3, -1, -1]);
    expect(stream(s.colIdx, 3)).toEqual([3, 3, 3, -1, -1]);
    expect(stream(s.values, 0)).toEqual([4, 5, 1, 10, 11]);
    expect(stream(s.values, 1)).toEqual([7, 8, 0, 0, 0]);
    expect(stream(s.values, 2)).toEqual([9, 2, 3, 0, 0]);
    expect(stream(s.values, 3)).toEqual([6, 0, 0, 0, 0]);
    // 2·(Ns·max NZS) + Sr + 1
    expect(scsrFormat.storageBytes(s, { valueBytes: 4, indexBytes: 4 }).bytes).toBe(4 * (2 * 20 + 3));
  });
  it('streamed BCSR, 4×4 blocks on survey eq. 2.30 (eq. 2.51–2.54)', () => {
    const s = sbcsrFromCsr(survey230, { blockSize: 4 });
    expect(Array.from(s.ind)).toEqual([0, 0, 1]);
    expect(Array.from(s.ptr)).toEqual([0, 1, 3]);
    expect(Array.from(s.values.slice(2 * 12, 3 * 12))).toEqual([0, 9, 2, 3, 0, 0, 0, 0, 0, 0, 0, 0]);
    expect(Array.from(s.values.slice(0, 12))).toEqual([4, 5, 0, 1, 0, 0, 0, 10, 11, 0, 0, 0]);
    expect(sbcsrFormat.storageBytes(s, { valueBytes: 8, indexBytes: 4 }).bytes).toBe(48 * 8 + 3 * 4 + 3 * 4);
  });
  it('adaptive CSR row blocks: blocks of ≤ blockNnz, a long row alone', () => {
    expect(Array.from(acsrRowBlocks(Int32Array.from([0, 3, 5, 8, 9, 11]), 5, 4, 1024))).toEqual([0, 1, 2, 4, 5]);
    // row 5 has 40 non-zeros: its own block
    const a = oneDenseRow(12, 50, 2, 40, 5, 3);
    const m = acsrFromCsr(a, { blockNnz: 8 });
    expect(Array.from(m.rowBlocks)).toEqual([0, 4, 5, 6, 10, 12]);
    expect(acsrBlockKind(m, 2)).toBe('vector');
    expect(acsrBlockKind(m, 0)).toBe('stream');
    expect(Array.from(acsrRowBlocks(new Int32Array(11), 10, 4, 3))).toEqual([0, 3, 6, 9, 10]);
    const s = acsrFormat.storageBytes(m, { valueBytes: 8, indexBytes: 4 });
    expect(s.bytes).toBe(62 * 12 + 13 * 4 + 6 * 4);
  });
  it('quad-tree CSR, leaf 2 on survey eq. 2.1', () => {
    const q = qcsrFromCsr(survey21, { leafSize: 2 });
    expect(q.depth).toBe(2);
    expect(q.numNodes).toBe(4);
    expect(Array.from(q.tree)).toEqual([0x3577]);
    expect(Array.from(q.leafRow)).toEqual([0, 0, 2, 0, 2, 4, 4]);
    expect(Array.from(q.leafCol)).toEqual([0, 2, 0, 4, 4, 0, 2]);
    expect(Array.from(q.values)).toEqual([4, 2, 7, 3, 5, 6, 2, 1, 6]);
    expect(Array.from(q.colIdx)).toEqual([1, 0, 1, 0, 1, 0, 0, 0, 1]);
    expect(Array.from(q.leafRowPtr)).toEqual([0, 1, 2, 2, 3, 4, 4, 5, 5, 5, 5, 6, 6, 6, 7, 7, 8, 8, 8, 9, 9]);
    const dec = qcsrDecodeTree(q);
    expect(Array.from(dec.leafRow)).toEqual(Array.from(q.leafRow));
    expect(Array.from(dec.leafCol)).toEqual(Array.from(q.leafCol));
    expect(Array.from(qcsrFormat.spmvReference(q, ints))).toEqual(y21);
    expect(qcsrFormat.storageBytes(q, { valueBytes: 8, indexBytes: 4 }).bytes).toBe(72 + 36 + 84 + 56 + 4);
    expect(qcsrLeafKind(qcsrFromCsr(csrFromDense([[1, 2], [3, 4]]), { leafSize: 2 }), 0)).toBe('full');
    expect(qcsrLeafKind(q, 0)).toBe('mixed');
  });
  it('minimal quadtree bit stream of survey eq. 2.1', () => {
    const m = mqtFromCsr(survey21);
    expect(m.depth).toBe(3);
    expect(m.numNodes).toBe(11);
    // nibbles 7,7,5,3 | 6,6,2,4,4,1,2 (breadth first, LSB first)
    expect(Array.from(m.bits)).toEqual([0x42663577, 0x214]);
    expect(Array.from(m.values)).toEqual([4, 2, 7, 3, 5, 6, 2, 1, 6]);
    expect(Array.from(mqtFormat.spmvReference(m, ints))).toEqual(y21);
    expect(mqtFormat.storageBytes(m, { valueBytes: 8 }).bytes).toBe(9 * 8 + 8);
  });
  it('minimal quadtree structure stays within the survey bound (eq. 2.29)', () => {
    for (const perRow of [1, 4, 16, 64]) {
      const a = uniformRandom(64, 64, perRow, perRow);
      const nnz = a.rowPtr[64];
      expect(mqtStructureBits(mqtFromCsr(a))).toBeLessThanOrEqual(mqtMaxStructureBits(64, nnz) + 1e-9);
    }
  });
});

// biome-ignore lint/suspicious/noExplicitAny: heterogeneous descriptors
type AnyDescriptor = FormatDescriptor<SparseMatrix & any, any>;
const sweep: { f: AnyDescriptor; params: object[] }[] = [
  { f: bcsrFormat, params: [{}, { blockSize: 1 }, { blockSize: 3 }, { blockRows: 2, blockCols: 5 }] },
  { f: csbFormat, params: [{}, { blockSize: 1 }, { blockSize: 4 }, { blockSize: 7 }] },
  { f: rgcsrFormat, params: [{}, { groupSize: 1 }, { groupSize: 3 }, { groupSize: 8 }] },
  { f: cmrsFormat, params: [{}, { stripHeight: 1 }, { stripHeight: 3 }, { stripHeight: 16 }] },
  { f: acsrFormat, params: [{}, { blockNnz: 1 }, { blockNnz: 7 }, { blockNnz: 32, maxRowsPerBlock: 4 }] },
  { f: scsrFormat, params: [{}, { numStreams: 1 }, { numStreams: 3 }, { numStreams: 64 }] },
  { f: sbcsrFormat, params: [{}, { blockSize: 1 }, { blockSize: 2 }, { blockRows: 3, blockCols: 2 }] },
  { f: qcsrFormat, params: [{}, { leafSize: 1 }, { leafSize: 3 }, { leafSize: 8 }] },
  { f: mqtFormat, params: [{}] },
];

describe('survey formats: round trips and products on the generators', () => {
  for (const { f, params } of sweep) {
    it(`${f.name}: every generator × ${params.length} parameter sets`, () => {
      for (const { name, a } of cases()) {
        for (const p of params) {
          const m = f.fromCsr(a, p);
          expect(m.nnz, `${name} ${JSON.stringify(p)}`).toBe(a.rowPtr[a.rows]);
          expectRoundTrip(a, f.toCsr(m));
          const x = vectorFor(a.cols);
          expectSpmvMatches(a, x, f.spmvReference(m, x));
          const y = new Float64Array(a.rows).fill(3);
          expect(f.spmvReference(m, x, y)).toBe(y);
          expectSpmvMatches(a, x, y);
          const st = f.storageBytes(m);
          expect(st.nnz).toBe(m.nnz);
          expect(st.beta).toBeLessThanOrEqual(1);
          expect(st.bytes).toBeGreaterThanOrEqual(0);
        }
      }
    });
  }
  it('rejects bad parameters, naming them', () => {
    const a = uniformRandom(10, 10, 2, 1);
    expect(() => bcsrFromCsr(a, { blockSize: 0 })).toThrow(InvalidParameterError);
    expect(() => bcsrFromCsr(a, { blockRows: 2.5 })).toThrow(/blockRows/);
    expect(() => csbFromCsr(a, { blockSize: 0 })).toThrow(/blockSize/);
    expect(() => csbFromCsr(uniformRandom(300, 300, 1, 1), { blockSize: 1, maxBlocks: 1000 })).toThrow(/90000/);
    expect(() => rgcsrFromCsr(a, { groupSize: -1 })).toThrow(/groupSize/);
    expect(() => cmrsFromCsr(a, { stripHeight: 0 })).toThrow(/stripHeight/);
    expect(() => acsrFromCsr(a, { blockNnz: 0 })).toThrow(/blockNnz/);
    expect(() => scsrFromCsr(a, { numStreams: 0 })).toThrow(/numStreams/);
    expect(() => sbcsrFromCsr(a, { blockCols: 0 })).toThrow(/blockCols/);
    expect(() => qcsrFromCsr(a, { leafSize: Number.NaN })).toThrow(/leafSize/);
  });
  it('rejects non-canonical CSR and oversized padding before allocating', () => {
    const unsorted = { format: 'csr' as const, rows: 2, cols: 3, rowPtr: Int32Array.from([0, 2, 2]), colIdx: Int32Array.from([2, 0]), values: Float64Array.from([1, 2]) };
    for (const { f } of sweep) expect(() => f.fromCsr(unsorted), f.name).toThrow(InvalidMatrixError);
    expect(() => rgcsrFromCsr(oneDenseRow(20000, 20000, 1, 20000, 0, 1), { groupSize: 20000 })).toThrow(/slots/);
  });
  it('rejects a wrong vector length', () => {
    const a = uniformRandom(6, 5, 2, 1);
    for (const { f } of sweep) expect(() => f.spmvReference(f.fromCsr(a), new Float64Array(6))).toThrow(/expected length 5/);
  });
});
