// Bounded memory on hostile Matrix Market input (issue 13, points 2, 3 and 6): header comments
// kept up to a cap, declared sizes checked at the size line before anything is allocated,
// memory estimates refused with ResourceLimitError, indices past 2^53 typed errors, −0 kept.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { InvalidParameterError, ResourceLimitError } from '../src/core/errors';
import { checkStrictNumber, parseStrictNumber } from '../src/core/numbers';
import { csrFromTriplets } from '../src/csr/csr';
import { laplacian1d, poisson2d, poisson3d } from '../src/generators/index';
import { MatrixMarketError, parseMatrixMarket, readMatrixMarket } from '../src/mtx/index';
import { defaultReportMaxBytes, estimateFormatStorage } from '../src/report/estimate';
import { formatReport, formatReportTable } from '../src/report/format-report';

const BANNER = '%%MatrixMarket matrix coordinate real general\n';

function mtxError(f: () => unknown): MatrixMarketError {
  try {
    f();
  } catch (e) {
    if (e instanceof MatrixMarketError) return e;
    throw e;
  }
  throw new Error('expected a MatrixMarketError');
}

describe('header comments are kept up to a cap, then counted', () => {
  it('keeps the first 1000 lines and counts the rest', () => {
    const text = `${BANNER}${'% note\n'.repeat(5000)}1 1 1\n1 1 2\n`;
    const r = parseMatrixMarket(text);
    expect(r.header.comments).toHaveLength(1000);
    expect(r.header.comments[0]).toBe(' note');
    expect(r.header.omittedComments).toBe(4000);
    expect(r.matrix.values[0]).toBe(2);
  });
  it('caps the kept bytes too (one huge comment line does not count as one small one)', () => {
    const long = `%${'x'.repeat(40000)}\n`;
    const r = parseMatrixMarket(`${BANNER}${long}${long}${long}1 1 0\n`, { maxCommentBytes: 65536 });
    expect(r.header.comments).toHaveLength(1);
    expect(r.header.omittedComments).toBe(2);
  });
  it('reads a gzip of 2·10^6 comment lines as a stream (the caps hold; the file is not inflated whole)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gpusparse-mtx-'));
    const path = join(dir, 'comments.mtx.gz');
    const block = gzipSync('%c\n'.repeat(1 << 20));
    // concatenated gzip members: a valid gzip file, inflated member after member
    writeFileSync(path, Buffer.concat([gzipSync(BANNER), block, block, gzipSync('2 2 1\n2 2 5\n')]));
    const r = await readMatrixMarket(path);
    expect(r.header.comments).toHaveLength(1000);
    expect(r.header.omittedComments).toBe(2 * (1 << 20) - 1000);
    expect(Array.from(r.matrix.values)).toEqual([5]);
  });
});

describe('declared sizes are checked at the size line, before allocation', () => {
  it('a 1x1 matrix declaring 179000000 entries is an error on line 2', () => {
    // only the header: the reader must stop there, not after reading the entries
    const e = mtxError(() => parseMatrixMarket(`${BANNER}1 1 179000000\n1 1 1\n`, 'dup.mtx'));
    expect(e.line).toBe(2);
    expect(e.message).toMatch(/dup\.mtx:2: expected an entry count of at most 1 .*got 179000000/);
  });
  it('symmetric and skew-symmetric files are bounded by their stored triangle', () => {
    expect(mtxError(() => parseMatrixMarket('%%MatrixMarket matrix coordinate real symmetric\n3 3 7\n')).expected).toMatch(/at most 6 .*stored triangle/);
    expect(mtxError(() => parseMatrixMarket('%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 4\n')).expected).toMatch(/at most 3/);
    // exactly the triangle is fine (and a truncation error follows, at end of file)
    expect(mtxError(() => parseMatrixMarket('%%MatrixMarket matrix coordinate real symmetric\n3 3 6\n')).line).toBe(3);
  });
  it('strictCount: false cannot read more entries than the matrix has cells', () => {
    const e = mtxError(() => parseMatrixMarket(`${BANNER}1 1 1\n1 1 1\n1 1 1\n`, { strictCount: false }));
    expect(e.line).toBe(4);
    expect(e.expected).toMatch(/at most 1 entries/);
  });
  it('refuses a header whose arrays exceed maxBytes with ResourceLimitError (needed vs available)', () => {
    let err: unknown;
    try {
      parseMatrixMarket(`${BANNER}100000 100000 50000000\n`, { name: 'big.mtx', maxBytes: 1e9 });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ResourceLimitError);
    const r = err as ResourceLimitError;
    expect(r.bytesNeeded).toBe(36 * 50000000 + 4 * 100001);
    expect(r.bytesAvailable).toBe(1e9);
    expect(r.message).toMatch(/big\.mtx:2: .*needs 1\.8 GB, 1\.0 GB available/);
  });
  it('refuses triplet growth past maxBytes (entries beyond a lenient count)', () => {
    const body = '1 1 1\n'.repeat(70000);
    expect(() => parseMatrixMarket(`${BANNER}1000 1000 1\n${body}`, { strictCount: false, maxBytes: 2e6 })).toThrow(ResourceLimitError);
  });
  it('checks the dimension limit at the size line (a 2^31-1 square with 4 entries)', () => {
    const e = mtxError(() => parseMatrixMarket(`${BANNER}2147483647 2147483647 4\n`));
    expect(e.line).toBe(2);
    expect(e.expected).toMatch(/rows and columns of at most 4194304/);
  });
});

describe('indices and values at the edges of double precision', () => {
  it('an index above 2^53 is a typed error naming the line', () => {
    const e = mtxError(() => parseMatrixMarket(`${BANNER}3 3 1\n9007199254740993 1 1\n`));
    expect(e.line).toBe(3);
    expect(e.expected).toMatch(/row/);
  });
  it('an index above the declared size is a typed error', () => {
    expect(mtxError(() => parseMatrixMarket(`${BANNER}3 3 1\n1 4 1\n`)).expected).toMatch(/column/);
  });
  it('keeps −0 values', () => {
    const r = parseMatrixMarket(`${BANNER}2 2 2\n1 1 -0\n2 2 -0.0e0\n`);
    expect(Object.is(r.matrix.values[0], -0)).toBe(true);
    expect(Object.is(r.matrix.values[1], -0)).toBe(true);
  });
});

describe('strict number grammar', () => {
  it('accepts decimal and exponent forms only', () => {
    for (const [t, v] of [['1', 1], ['-0.5', -0.5], ['.5', 0.5], ['5.', 5], ['1e-8', 1e-8], ['+2.5E+3', 2500]] as const) expect(parseStrictNumber(t)).toBe(v);
    for (const t of ['', ' ', ' 1', '0x1', '0b1', '0o7', '1e', 'e5', 'nan', 'NaN', 'inf', 'Infinity', '-Infinity', '1_000', '1,5', '.', '-', '1.2.3']) {
      expect(parseStrictNumber(t), t).toBeNaN();
    }
  });
  it('checks integers as safe integers and ranges', () => {
    expect(checkStrictNumber('1e6', { integer: true })).toEqual({ ok: true, value: 1e6 });
    expect(checkStrictNumber('9007199254740993', { integer: true }).ok).toBe(false);
    expect(checkStrictNumber('2.5', { integer: true }).ok).toBe(false);
    expect(checkStrictNumber('1e400').ok).toBe(false);
    expect(checkStrictNumber('-1', { min: 0 })).toEqual({ ok: false, expected: 'a finite decimal number ≥ 0' });
  });
});

describe('storage estimated from row statistics before a format is built', () => {
  // 4 194 304² with 64 entries in row 0: ELL would store 2^28 slots
  const n = 4194304;
  const cols = Int32Array.from({ length: 64 }, (_, j) => j);
  const hostile = csrFromTriplets(n, n, new Int32Array(64), cols, new Float64Array(64).fill(1));

  it('estimates ELL and DIA of the hostile matrix without building them', () => {
    expect(estimateFormatStorage(hostile, 'ell')).toMatchObject({ storedElements: n * 64, bytesF64: 12 * n * 64 });
    expect(estimateFormatStorage(hostile, 'dia', { maxDiagonals: 1024 })).toMatchObject({ storedElements: 64 * n });
    expect(estimateFormatStorage(hostile, 'sell', { C: 32 })?.storedElements).toBe(32 * 64);
    expect(estimateFormatStorage(hostile, 'csr')).toBeUndefined();
  });
  it('formatReport lists padded formats as not built, past its limit', () => {
    const r = formatReport(hostile, { formats: ['csr', 'ell', 'dia', 'sliced-ell'] });
    const by = (f: string) => r.entries.find((e) => e.format === f)!;
    expect(by('ell').skipped).toMatch(/needs 3\.2 GB \(4194304 rows × longest row 64\), over the report limit of 268\.4 MB/);
    expect(by('dia').skipped).toMatch(/needs 2\.1 GB/);
    expect(by('csr').skipped).toBeUndefined();
    expect(by('sliced-ell').storedElements).toBe(32 * 64);
    expect(defaultReportMaxBytes(hostile)).toBe(16 * (12 * 64 + 4 * (n + 1)));
    expect(formatReportTable(r)).toMatch(/ell not built: needs 3\.2 GB/);
  });
  it('estimates are upper bounds of what the formats store', () => {
    const a = poisson2d(30);
    const r = formatReport(a, { formats: ['ell', 'ell-r', 'sliced-ell', 'sliced-ell-r', 'sell', 'rgcsr', 'dia', 'hm', 'cdm'] });
    for (const e of r.entries) {
      const est = estimateFormatStorage(a, e.format, e.params)!;
      expect(e.storedElements, e.format).toBeLessThanOrEqual(est.storedElements);
      expect(e.bytesF64, e.format).toBeLessThanOrEqual(est.bytesF64 + 4 * a.rows + 1024);
    }
  });
});

describe('generators check their size before allocating', () => {
  it('poisson2d(100000) (10^10 rows) is an InvalidParameterError naming the size', () => {
    expect(() => poisson2d(100000)).toThrow(InvalidParameterError);
    expect(() => poisson2d(100000)).toThrow(/rows: expected an integer in \[0, 2147483647\] \(32-bit indices\), got 10000000000/);
    expect(() => poisson3d(2000)).toThrow(/got 8000000000/);
    expect(() => laplacian1d(-1)).toThrow(InvalidParameterError);
    expect(laplacian1d(3).rows).toBe(3);
  });
});
