/**
 * The byte accounting of bench/spmv.ts (issue 20): x gather sectors per 32-row block, the DRAM /
 * CSR-equivalent rates, and the cuSPARSE anchor join. No device needed.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type CsrMatrix, generators } from '@gpusparse/formats';
import { describe, expect, it } from 'vitest';
import { accountBytes, gatherLinesPerEntry, readCusparse, xGatherBytes } from '../../../bench/spmv-bytes';

const csr = (rows: number, cols: number, lists: number[][]): CsrMatrix => {
  const rowPtr = new Int32Array(rows + 1);
  lists.forEach((l, i) => {
    rowPtr[i + 1] = rowPtr[i]! + l.length;
  });
  return { format: 'csr', rows, cols, rowPtr, colIdx: Int32Array.from(lists.flat()), values: new Float64Array(lists.flat().length).fill(1) };
};

describe('xGatherBytes', () => {
  it('counts each 32-byte sector once per 32-row block', () => {
    // rows 0 and 1 share block 0: columns 0..7 are one sector, column 8 a second; row 32 starts block 1
    const lists: number[][] = Array.from({ length: 33 }, () => []);
    lists[0] = [0, 7];
    lists[1] = [1, 8];
    lists[32] = [0];
    expect(xGatherBytes(csr(33, 16, lists))).toBe(3 * 32);
  });

  it('is about three x bands per block on a 5-point stencil, and the identity reads x once', () => {
    const n = 64;
    const a = generators.poisson2d(n);
    const g = xGatherBytes(a);
    expect(g / (4 * a.cols)).toBeGreaterThan(2.9);
    expect(g / (4 * a.cols)).toBeLessThan(3.6);
    const id = csr(64, 64, Array.from({ length: 64 }, (_, i) => [i]));
    expect(xGatherBytes(id)).toBe(4 * 64);
  });

  it('refuses a block or sector that is not a count of rows or a multiple of 4 bytes', () => {
    const a = csr(1, 1, [[0]]);
    expect(() => xGatherBytes(a, 0)).toThrow(/block expected an integer ≥ 1, got 0/);
    expect(() => xGatherBytes(a, 32, 6)).toThrow(/sector expected a multiple of 4 bytes, got 6/);
  });
});

describe('gatherLinesPerEntry', () => {
  it('counts 128-byte lines per 32 entries of a row, or per slot of 32 rows', () => {
    // 32 rows, each: columns 64·i and 64·i + 1 (row i's two entries share a line; slot 0 of the
    // 32 rows touches 32 lines, as does slot 1, the same ones)
    const a = csr(32, 2048, Array.from({ length: 32 }, (_, i) => [64 * i, 64 * i + 1]));
    expect(gatherLinesPerEntry(a, 'row')).toBe(0.5);
    expect(gatherLinesPerEntry(a, 'slice')).toBe(1);
    // rows i: columns i and 100 + i: slot 0 of the 32 rows = columns 0..31 (1 line), slot 1 = 100..131 (2 lines)
    const b = csr(32, 200, Array.from({ length: 32 }, (_, i) => [i, 100 + i]));
    expect(gatherLinesPerEntry(b, 'row')).toBe(1);
    expect(gatherLinesPerEntry(b, 'slice')).toBe(3 / 64);
    // 40 entries in one row: chunks of 32 and 8 consecutive columns, one line each
    expect(gatherLinesPerEntry(csr(1, 64, [Array.from({ length: 40 }, (_, k) => k)]), 'row')).toBe(2 / 40);
    expect(gatherLinesPerEntry(csr(3, 3, [[], [], []]), 'slice')).toBe(0);
  });

  it('with maxEntries below nnz counts every s-th block of rows only', () => {
    // blocks of 32 rows: 0 and 2 with both entries of a row in one line, block 1 with two lines per row
    const rows = Array.from({ length: 96 }, (_, i) => (i >= 32 && i < 64 ? [0, 1000 + 64 * i] : [64 * i, 64 * i + 1]));
    const a = csr(96, 8192, rows);
    expect(gatherLinesPerEntry(a, 'row')).toBeCloseTo(2 / 3, 12);
    expect(gatherLinesPerEntry(a, 'row', 128, 32, 192)).toBeCloseTo(2 / 3, 12);
    // 192 entries, at most 96: s = 2, blocks 0 and 2
    expect(gatherLinesPerEntry(a, 'row', 128, 32, 96)).toBe(0.5);
    expect(gatherLinesPerEntry(a, 'slice', 128, 32, 96)).toBe(gatherLinesPerEntry(csr(64, 8192, [...rows.slice(0, 32), ...rows.slice(64)]), 'slice'));
  });
});

describe('accountBytes', () => {
  it('derives the rates from the byte counts and the time', () => {
    // 1 000 rows, 1 000 cols, 9 000 entries; a DIA-like 36 000 device bytes; 1 µs
    const b = accountBytes({ rows: 1000, cols: 1000, nnz: 9000, deviceBytes: 36_000, xGather: 12_000, ms: 1e-3, copyGbs: 100 });
    expect(b.dramBytes).toBe(44_000);
    expect(b.gbs).toBeCloseTo(44, 10);
    expect(b.fractionOfCopy).toBeCloseTo(0.44, 10);
    expect(b.floorMs).toBeCloseTo(4.4e-4, 12);
    expect(b.matrixBytesPerNnz).toBe(4);
    expect(b.csrGbs).toBeCloseTo((72_000 + 4004 + 8000) / 1e3, 10);
    expect(b.gatherGbs).toBeCloseTo((36_000 + 12_000 + 4000) / 1e3, 10);
  });

  it('refuses a time or copy bandwidth that is not positive', () => {
    expect(() => accountBytes({ rows: 1, cols: 1, nnz: 1, deviceBytes: 8, xGather: 4, ms: 0, copyGbs: 1 })).toThrow(/expected ms > 0 and copyGbs > 0, got 0 and 1/);
  });
});

describe('readCusparse', () => {
  const dir = mkdtempSync(join(tmpdir(), 'spmv-bytes-'));

  it('keeps the float32 times by matrix name without the .csr suffix; a missing file is empty', () => {
    const f = join(dir, 'anchor.jsonl');
    writeFileSync(
      f,
      [
        JSON.stringify({ matrix: 'banded-2000000-b9.csr', dtype: 'float32', spmv_ms: 0.146 }),
        JSON.stringify({ matrix: 'banded-2000000-b9.csr', dtype: 'float64', spmv_ms: 0.195 }),
        JSON.stringify({ matrix: 'ci-H10.csr', dtype: 'float32', spmv_ms: 0.207 }),
        '',
      ].join('\n'),
    );
    const m = readCusparse(f);
    expect([...m.entries()]).toEqual([
      ['banded-2000000-b9', 0.146],
      ['ci-H10', 0.207],
    ]);
    expect(readCusparse(join(dir, 'none.jsonl')).size).toBe(0);
    expect(readCusparse(undefined).size).toBe(0);
  });

  it('names the file and line of a line that is not the anchor JSON', () => {
    const f = join(dir, 'bad.jsonl');
    writeFileSync(f, `${JSON.stringify({ matrix: 'a.csr', dtype: 'float32', spmv_ms: 1 })}\nnot json\n`);
    expect(() => readCusparse(f)).toThrow(/bad\.jsonl:2: expected one JSON object per line/);
    writeFileSync(f, `${JSON.stringify({ matrix: 'a.csr', dtype: 'float32' })}\n`);
    expect(() => readCusparse(f)).toThrow(/bad\.jsonl:1: expected "matrix" \(string\) and "spmv_ms" \(number\)/);
  });
});
