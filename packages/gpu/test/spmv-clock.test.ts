/**
 * Session 11 additions to bench/spmv.ts (issue 20): the SM clock sampled during each timing
 * (nvidia-smi's CSV joined with the timing windows, `CLOCK-LOW` below 1 500 MHz) and the raw CSR
 * triples of `--dump` read back as `NAME.csr`; the Reference-region share of bench/spmv-refregion.ts.
 * No device needed.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generators, InvalidMatrixError } from '@gpusparse/formats';
import { describe, expect, it } from 'vitest';
import { dumpCsr } from '../../../bench/dump';
import { clockIn, clockIsLow, clockText, LOW_CLOCK_MHZ, parseClockCsv, readClockLog } from '../../../bench/spmv-clock';
import { readRawCsr } from '../../../bench/spmv-raw';
import { referenceShare } from '../../../bench/spmv-refregion';

// what `nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem --format=csv -lms 100` prints, the last line cut by the kill
const CSV = `timestamp, clocks.current.sm [MHz], clocks.current.memory [MHz]
2026/11/26 01:34:12.100, 1980 MHz, 2619 MHz
2026/11/26 01:34:12.200, 1755 MHz, 2619 MHz
2026/11/26 01:34:12.300, 540 MHz, 2619 MHz
2026/11/26 01:34:12.40`;
const at = (s: number, ms: number) => new Date(2026, 10, 26, 1, 34, s, ms).getTime();

describe('SM clock log', () => {
  it('parses the samples as local time, skipping the header and a cut line', () => {
    const s = parseClockCsv(CSV);
    expect(s).toEqual([
      { t: at(12, 100), sm: 1980, mem: 2619 },
      { t: at(12, 200), sm: 1755, mem: 2619 },
      { t: at(12, 300), sm: 540, mem: 2619 },
    ]);
  });

  it('takes the samples inside the padded windows and flags a clock below 1 500 MHz', () => {
    const s = parseClockCsv(CSV);
    expect(LOW_CLOCK_MHZ).toBe(1500);
    // a 20 ms timing between two samples: the 150 ms pad reaches both neighbours
    expect(clockIn(s, [[at(12, 120), at(12, 140)]])).toEqual({ minSm: 1755, maxSm: 1980, samples: 2, low: false });
    expect(clockIn(s, [[at(12, 120), at(12, 140)]], 0)).toBeUndefined();
    // two rounds, the second at 540 MHz
    const two = clockIn(s, [
      [at(12, 90), at(12, 110)],
      [at(12, 290), at(12, 310)],
    ], 0);
    expect(two).toEqual({ minSm: 540, maxSm: 1980, samples: 2, low: true });
    expect(clockText(two)).toBe(' | SM 540–1980 MHz (2) CLOCK-LOW');
    expect(clockText(clockIn(s, [[at(12, 100), at(12, 200)]], 0))).toBe(' | SM 1755–1980 MHz (2)');
    expect(clockText(undefined)).toBe(' | SM ? (no sample)');
  });

  it('reads a log file, and nothing where there is none', () => {
    const dir = mkdtempSync(join(tmpdir(), 'spmv-clock-'));
    writeFileSync(join(dir, 'clocks.csv'), CSV);
    expect(readClockLog(join(dir, 'clocks.csv'))).toHaveLength(3);
    expect(readClockLog(join(dir, 'none.csv'))).toEqual([]);
    expect(readClockLog(undefined)).toEqual([]);
  });

  it('says the clock is low from the newest sample only (the bench heats on while it is)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'spmv-clock-'));
    writeFileSync(join(dir, 'low.csv'), CSV); // newest parsed sample: 540 MHz
    writeFileSync(join(dir, 'high.csv'), `${CSV.split('\n').slice(0, 3).join('\n')}\n2026/11/26 01:34:12.300, 1980 MHz, 2619 MHz\n`);
    expect(clockIsLow(join(dir, 'low.csv'))).toBe(true);
    expect(clockIsLow(join(dir, 'high.csv'))).toBe(false);
    expect(clockIsLow(join(dir, 'none.csv'))).toBe(false);
    expect(clockIsLow(undefined)).toBe(false);
  });
});

describe('readRawCsr', () => {
  const dir = mkdtempSync(join(tmpdir(), 'spmv-raw-'));

  it('reads back what --dump wrote (values rounded to float32, as the bench times them)', () => {
    const a = generators.powerLaw(500, 500, { seed: 2, minLen: 0, maxLen: 40 });
    dumpCsr(dir, 'pl', a);
    const b = readRawCsr(join(dir, 'pl.csr'));
    expect(b.rows).toBe(500);
    expect(b.cols).toBe(500);
    expect([...b.rowPtr]).toEqual([...a.rowPtr]);
    expect([...b.colIdx]).toEqual([...a.colIdx]);
    expect([...b.values]).toEqual([...Float32Array.from(a.values)]);
  });

  it('names the file and the inconsistency of a damaged triple', () => {
    const w = (name: string, a: Uint32Array | Float32Array) => writeFileSync(join(dir, name), new Uint8Array(a.buffer));
    w('bad.rowptr', Uint32Array.of(0, 2, 1));
    w('bad.cols', Uint32Array.of(0, 1));
    w('bad.vals', Float32Array.of(1, 2));
    expect(() => readRawCsr(join(dir, 'bad'))).toThrow(InvalidMatrixError);
    expect(() => readRawCsr(join(dir, 'bad'))).toThrow(/bad\.rowptr: row 1 ends at 1 before it starts at 2/);
    w('short.rowptr', Uint32Array.of(0, 2, 3));
    w('short.cols', Uint32Array.of(0, 1, 2));
    w('short.vals', Float32Array.of(1, 2));
    expect(() => readRawCsr(join(dir, 'short.csr'))).toThrow(/expected 3 entries \(the last row pointer\) in \.cols and \.vals, got 3 and 2/);
    writeFileSync(join(dir, 'odd.rowptr'), Uint8Array.of(0, 0, 0));
    expect(() => readRawCsr(join(dir, 'odd'))).toThrow(/odd\.rowptr: expected a whole number of 4-byte words, got 3 bytes/);
  });
});

describe('referenceShare', () => {
  it('counts the entries in the first B columns, the ELL width they need and its padding', () => {
    // rows: [0, 1, 5], [2, 6], [7], [] — B = 3 holds 0, 1, 2
    const a = { format: 'csr' as const, rows: 4, cols: 8, rowPtr: Int32Array.of(0, 3, 5, 6, 6), colIdx: Int32Array.of(0, 1, 5, 2, 6, 7), values: new Float64Array(6).fill(1) };
    expect(referenceShare(a, 3)).toEqual({ share: 0.5, refNnz: 3, width: 2, meanPerRow: 0.75, padding: 8 / 3, density: 3 / 12, rowsTouching: 2 });
    expect(referenceShare(a, 8).share).toBe(1);
    expect(referenceShare(a, 0)).toMatchObject({ share: 0, width: 0, padding: 0 });
  });
});
