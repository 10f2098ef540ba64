import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { InvalidMatrixError } from '../src/core/errors';
import type { CsrMatrix } from '../src/core/types';
import { csrEquals, csrFromTriplets, csrToDense } from '../src/csr/csr';
import { banded, rng, uniformRandom } from '../src/generators/index';
import {
  formatMatrixMarket,
  formatReal,
  MatrixMarketError,
  parseMatrixMarket,
  parseMatrixMarketStream,
  readMatrixMarket,
  writeMatrixMarket,
} from '../src/mtx/index';
import { parseRealToken } from '../src/mtx/scan';

const B = (kind: string) => `%%MatrixMarket matrix ${kind}\n`;
const dense = (text: string, opts = {}) => csrToDense(parseMatrixMarket(text, opts).matrix);

/** Run `f`, require a MatrixMarketError at `line` whose message matches `re`; return it. */
function mmError(f: () => unknown, line: number, re: RegExp): MatrixMarketError {
  let caught: unknown;
  try {
    f();
  } catch (e) {
    caught = e;
  }
  expect(caught).toBeInstanceOf(MatrixMarketError);
  const err = caught as MatrixMarketError;
  expect(err.message).toMatch(re);
  expect(err.line).toBe(line);
  expect(err.message).toContain(`${err.file}:${line}: expected ${err.expected}, got ${err.got}`);
  return err;
}

describe('Matrix Market reader: fields, symmetries, formats', () => {
  it('coordinate real general: 1-based to 0-based, canonical CSR, header', () => {
    const r = parseMatrixMarket(`${B('coordinate real general')}% a comment\n%\n3 4 4\n3 1 2.5\n1 4 -1e-3\n1 1 .5\n2 2 7.\n`, 'g.mtx');
    expect(Array.from(r.matrix.rowPtr)).toEqual([0, 2, 3, 4]);
    expect(Array.from(r.matrix.colIdx)).toEqual([0, 3, 1, 0]);
    expect(Array.from(r.matrix.values)).toEqual([0.5, -0.001, 7, 2.5]);
    expect(r.header).toEqual({
      object: 'matrix',
      format: 'coordinate',
      field: 'real',
      symmetry: 'general',
      rows: 3,
      cols: 4,
      declaredEntries: 4,
      actualEntries: 4,
      comments: [' a comment', ''],
      omittedComments: 0,
    });
    expect(r.warnings).toEqual([]);
  });
  it('integer and pattern fields (pattern values are 1)', () => {
    expect(dense(`${B('coordinate integer general')}2 2 2\n1 2 -7\n2 1 +3\n`)).toEqual([
      [0, -7],
      [3, 0],
    ]);
    expect(dense(`${B('coordinate pattern general')}2 3 3\n1 3\n2 1\n2 2\n`)).toEqual([
      [0, 0, 1],
      [1, 1, 0],
    ]);
  });
  it('symmetric, hermitian (real) and skew-symmetric are expanded', () => {
    const lower = '3 3 4\n1 1 2\n2 1 -1\n3 2 4\n3 3 5\n';
    const sym = [
      [2, -1, 0],
      [-1, 0, 4],
      [0, 4, 5],
    ];
    expect(dense(B('coordinate real symmetric') + lower)).toEqual(sym);
    expect(dense(B('coordinate real hermitian') + lower)).toEqual(sym);
    expect(dense(`${B('coordinate pattern symmetric')}3 3 2\n2 1\n3 3\n`)).toEqual([
      [0, 1, 0],
      [1, 0, 0],
      [0, 0, 1],
    ]);
    expect(dense(`${B('coordinate integer skew-symmetric')}3 3 2\n2 1 3\n3 2 -4\n`)).toEqual([
      [0, -3, 0],
      [3, 0, 4],
      [0, -4, 0],
    ]);
  });
  it('array files: general column-major, symmetric and skew lower triangle, zeros dropped or kept', () => {
    expect(dense(`${B('array real general')}2 3\n1\n4\n2\n0\n3\n6\n`)).toEqual([
      [1, 2, 3],
      [4, 0, 6],
    ]);
    const a = parseMatrixMarket(`${B('array real general')}2 2\n1\n0\n0\n2\n`);
    expect(a.matrix.rowPtr[2]).toBe(2);
    expect(a.header.declaredEntries).toBe(4);
    expect(parseMatrixMarket(`${B('array real general')}2 2\n1\n0\n0\n2\n`, { arrayZeros: 'keep' }).matrix.rowPtr[2]).toBe(4);
    expect(dense(`${B('array real symmetric')}3 3\n1\n2\n3\n4\n5\n6\n`)).toEqual([
      [1, 2, 3],
      [2, 4, 5],
      [3, 5, 6],
    ]);
    expect(dense(`${B('array integer skew-symmetric')}3 3\n1\n2\n3\n`)).toEqual([
      [0, -1, -2],
      [1, 0, -3],
      [2, 3, 0],
    ]);
    expect(dense(`${B('array real hermitian')}2 2\n1\n2\n3\n`)).toEqual([
      [1, 2],
      [2, 3],
    ]);
  });
  it('sums duplicates (also mirrored ones in symmetric files)', () => {
    expect(dense(`${B('coordinate real general')}2 2 4\n1 1 1\n1 1 2\n2 1 0.5\n2 1 0.25\n`)).toEqual([
      [3, 0],
      [0.75, 0],
    ]);
    expect(dense(`${B('coordinate real symmetric')}2 2 2\n2 1 1\n2 1 2\n`)).toEqual([
      [0, 3],
      [3, 0],
    ]);
  });
  it('accepts comments and blank lines anywhere, CRLF, tabs, a BOM, upper-case banner words, empty shapes', () => {
    const text = `\uFEFF\n%%MatrixMarket MATRIX Coordinate REAL General\r\n\r\n% c\r\n  \t\r\n2 2 2\r\n% mid\r\n\r\n1\t1   3\r\n   \n2 2 4\r\n% end`;
    const r = parseMatrixMarket(text);
    expect(csrToDense(r.matrix)).toEqual([
      [3, 0],
      [0, 4],
    ]);
    expect(r.header.comments).toEqual([' c']);
    expect(parseMatrixMarket(`${B('coordinate real general')}0 0 0\n`).matrix.rows).toBe(0);
    expect(parseMatrixMarket(`${B('array real general')}0 5\n`).matrix.cols).toBe(5);
  });
  it('parses numbers exactly: every syntax, and 20000 random doubles bit-exactly', () => {
    const enc = new TextEncoder();
    const p = (s: string) => parseRealToken(enc.encode(s), 0, s.length);
    for (const s of ['1', '-1', '+2.5', '1.', '.5', '-.5e1', '1e5', '1E+05', '2.5e-3', '123456789.1234567901234', '0.1', '1e-320', '4.9e-324', '1.7976931348623157e308', '0.000001234']) {
      expect(Object.is(p(s), Number(s))).toBe(true);
    }
    expect(p('1d-3')).toBe(0.001);
    expect(p('1.5D2')).toBe(150);
    expect(Object.is(p('-0'), -0)).toBe(true);
    expect(Object.is(p('-0.000e5'), -0)).toBe(true);
    for (const bad of ['', '-', '.', 'e5', '1e', '1e+', '1.2.3', '0x10', 'nan', 'inf', '1,5', '--1', '1e5.5']) expect(p(bad)).toBeNaN();
    expect(p('1e400')).toBe(Number.POSITIVE_INFINITY);
    const r = rng(7);
    const bits = new Float64Array(1);
    const words = new Uint32Array(bits.buffer);
    for (let t = 0; t < 20000; t++) {
      words[0] = Math.floor(r() * 2 ** 32);
      words[1] = Math.floor(r() * 2 ** 32);
      const v = t % 2 === 0 ? bits[0]! : (r() - 0.5) * 10 ** Math.floor(r() * 40 - 20);
      if (!Number.isFinite(v)) continue;
      const s = formatReal(v);
      expect(Object.is(p(s), v)).toBe(true);
    }
  });
  it('gives the same result for any chunking of the stream', async () => {
    const text = `\uFEFF${B('coordinate real symmetric')}% x\n5 5 6\n1 1 1.25\n3 1 -2e-3\n\n4 2 7\n5 5 .5\n% y\n5 4 3\n2 2 9\n`;
    const whole = parseMatrixMarket(text).matrix;
    const bytes = new TextEncoder().encode(text);
    for (const size of [1, 2, 3, 5, 7, 16, 1000]) {
      const chunks: Uint8Array[] = [];
      for (let s = 0; s < bytes.length; s += size) chunks.push(bytes.slice(s, s + size));
      const r = await parseMatrixMarketStream(chunks);
      expect(csrEquals(r.matrix, whole)).toBe(true);
    }
    await expect(parseMatrixMarketStream([text.slice(0, 40), text.slice(40)])).resolves.toBeTruthy();
  });
});

describe('Matrix Market reader: gzip and files', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mtx-test-'));
  const text = `${B('coordinate real general')}2 2 2\n1 1 1.5\n2 1 -3\n`;
  it('detects gzip by the magic bytes, not the extension', async () => {
    writeFileSync(join(dir, 'z.mtx'), gzipSync(text));
    writeFileSync(join(dir, 'plain.mtx.gz'), text);
    const a = await readMatrixMarket(join(dir, 'z.mtx'));
    const b = await readMatrixMarket(join(dir, 'plain.mtx.gz'));
    expect(csrToDense(a.matrix)).toEqual([
      [1.5, 0],
      [-3, 0],
    ]);
    expect(csrEquals(a.matrix, b.matrix)).toBe(true);
  });
  it('reports a corrupt or truncated gzip file, a missing file, and gzip handed to the in-memory parser', async () => {
    const gz = gzipSync(text.repeat(1));
    writeFileSync(join(dir, 'cut.mtx.gz'), gz.subarray(0, gz.length - 9));
    await expect(readMatrixMarket(join(dir, 'cut.mtx.gz'))).rejects.toThrow(MatrixMarketError);
    const bad = Uint8Array.from(gz);
    bad[20] ^= 0xff;
    writeFileSync(join(dir, 'bad.mtx.gz'), bad);
    await expect(readMatrixMarket(join(dir, 'bad.mtx.gz'))).rejects.toThrow(MatrixMarketError);
    const missing = await readMatrixMarket(join(dir, 'nope.mtx')).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(MatrixMarketError);
    expect((missing as MatrixMarketError).message).toMatch(/ENOENT/);
    expect((missing as MatrixMarketError).line).toBe(0);
    mmError(() => parseMatrixMarket(gz, 'g.gz'), 0, /gzip-compressed data/);
  });
  it('names the file in errors from readMatrixMarket', async () => {
    writeFileSync(join(dir, 'e.mtx'), `${B('coordinate real general')}2 2 1\n3 1 1\n`);
    const e = (await readMatrixMarket(join(dir, 'e.mtx')).catch((x: unknown) => x)) as MatrixMarketError;
    expect(e).toBeInstanceOf(MatrixMarketError);
    expect(e.file).toBe(join(dir, 'e.mtx'));
    expect(e.line).toBe(3);
  });
});

describe('Matrix Market reader: malformed input raises MatrixMarketError at the right line', () => {
  const G = B('coordinate real general');
  const cases: Array<[string, string | Uint8Array, number, RegExp, object?]> = [
    ['empty file', '', 1, /banner.*end of file \(empty input\)/],
    ['only blank lines', '\n  \n', 3, /end of file/],
    ['missing banner', '3 3 1\n1 1 1\n', 1, /banner.*no banner/],
    ['comment before the banner', '% hi\n%%MatrixMarket matrix coordinate real general\n', 1, /comment before the banner/],
    ['misspelt banner', '%%MatrixMarkett matrix coordinate real general\n1 1 0\n', 1, /banner/],
    ['banner with 4 words', '%%MatrixMarket matrix coordinate real\n1 1 0\n', 1, /5 words.*got 4 words/],
    ['banner with 6 words', '%%MatrixMarket matrix coordinate real general x\n', 1, /got 6 words/],
    ['unknown object', '%%MatrixMarket vector coordinate real general\n', 1, /object 'matrix'.*"vector"/],
    ['unknown format', '%%MatrixMarket matrix sparse real general\n', 1, /format 'coordinate' or 'array'.*"sparse"/],
    ['unknown field', '%%MatrixMarket matrix coordinate double general\n', 1, /field .*"double"/],
    ['complex field', '%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 0\n', 1, /complex matrices are not supported/],
    ['unknown symmetry', '%%MatrixMarket matrix coordinate real upper\n', 1, /symmetry .*"upper"/],
    ['array pattern', '%%MatrixMarket matrix array pattern general\n', 1, /pattern is coordinate only/],
    ['pattern skew', '%%MatrixMarket matrix coordinate pattern skew-symmetric\n', 1, /pattern file/],
    ['missing size line', `${G}% only comments\n`, 3, /size line.*end of file/],
    ['size line with 2 fields', `${G}3 3\n`, 2, /3 integers.*got 2 fields/],
    ['size line with 4 fields', `${G}3 3 1 1\n`, 2, /3 integers.*got 4 fields/],
    ['non-integer size', `${G}3 3.0 1\n`, 2, /integer column count.*"3.0"/],
    ['negative size', `${G}-3 3 1\n`, 2, /non-negative row count.*"-3" \(negative\)/],
    ['negative entry count', `${G}3 3 -1\n`, 2, /non-negative entry count/],
    ['size beyond int32', `${G}3000000000 1 0\n`, 2, /at most 2147483647/],
    ['symmetric non-square', `${B('coordinate real symmetric')}3 4 1\n`, 2, /square matrix for symmetric storage, got 3x4/],
    ['fewer entries than declared', `${G}3 3 3\n1 1 1\n2 2 2\n`, 5, /3 entries \(declared on line 2\), got end of file after 2 entries/],
    ['more entries than declared', `${G}3 3 1\n1 1 1\n% c\n2 2 2\n`, 5, /1 entries \(declared on line 2\), got entry number 2/],
    ['row index 0', `${G}3 3 1\n0 1 1\n`, 3, /row index in \[1, 3\].*"0"/],
    ['row index > M', `${G}3 3 1\n4 1 1\n`, 3, /row index in \[1, 3\].*"4" \(out of range\)/],
    ['column index > N', `${G}3 2 1\n1 3 1\n`, 3, /column index in \[1, 2\].*"3"/],
    ['negative index', `${G}3 3 1\n1 -1 1\n`, 3, /column index/],
    ['fractional index', `${G}3 3 1\n1.5 1 1\n`, 3, /row index.*"1.5" \(not a decimal number\)/],
    ['non-numeric value', `${G}3 3 1\n1 1 abc\n`, 3, /finite real number.*"abc" \(not a decimal number\)/],
    ['nan value', `${G}3 3 1\n1 1 NaN\n`, 3, /"NaN" \(non-finite value\)/],
    ['inf value', `${G}3 3 1\n1 1 -inf\n`, 3, /"-inf" \(non-finite value\)/],
    ['overflowing value', `${G}3 3 1\n1 1 1e400\n`, 3, /"1e400" \(non-finite: overflows a double\)/],
    ['hex value', `${G}3 3 1\n1 1 0x10\n`, 3, /"0x10"/],
    ['non-integer value in an integer file', `${B('coordinate integer general')}3 3 1\n1 1 2.5\n`, 3, /an integer value.*"2.5"/],
    ['too few fields', `${G}3 3 1\n1 2\n`, 3, /3 fields \(row column value\).*got 2 fields: "1 2"/],
    ['one field', `${G}3 3 1\n1\n`, 3, /got 1 field: "1"/],
    ['too many fields', `${G}3 3 1\n1 2 3 4\n`, 3, /got 4 fields/],
    ['pattern entry with a value', `${B('coordinate pattern general')}3 3 1\n1 2 3\n`, 3, /2 fields \(row column\).*got 3 fields/],
    ['two values on an array line', `${B('array real general')}1 2\n1 2\n`, 3, /1 field.*got 2 fields/],
    ['too many array values', `${B('array real general')}1 2\n1\n2\n3\n`, 5, /2 values.*value number 3/],
    ['too few array values', `${B('array real symmetric')}2 2\n1\n2\n`, 5, /3 entries.*end of file after 2/],
    ['symmetric upper-triangle entry', `${B('coordinate real symmetric')}3 3 2\n1 1 1\n1 2 5\n`, 4, /lower triangle.*row 1, column 2/],
    ['skew-symmetric diagonal entry', `${B('coordinate real skew-symmetric')}3 3 1\n2 2 1\n`, 3, /strictly below the diagonal.*row 2, column 2/],
    ['truncated mid-line', `${G}3 3 2\n1 1 1.5\n2 2`, 4, /got 2 fields: "2 2"/],
    ['truncated after a full entry', `${G}3 3 3\n1 1 1.5\n2 2 3`, 5, /3 entries \(declared on line 2\), got end of file after 2 entries/],
    ['binary garbage', Uint8Array.from([0, 1, 2, 255, 254, 10, 200, 13, 10]), 1, /no banner/],
    ['binary garbage in an entry', `${G}3 3 1\n1 1 \u0001\u0002\n`, 3, /\\x01\\x02/],
    ['NUL inside a number', `${G}3 3 1\n1 1 1\u00002\n`, 3, /not a decimal number/],
    ['line longer than maxLineBytes', `${G}3 3 1\n1 1 ${'1'.repeat(300)}\n`, 3, /a line of at most 100 bytes/, { maxLineBytes: 100 }],
  ];
  for (const [title, text, line, re, opts] of cases) {
    it(title, () => {
      const err = mmError(() => parseMatrixMarket(text, { name: 'bad.mtx', ...opts }), line, re);
      expect(err.file).toBe('bad.mtx');
    });
  }
  it('the same errors arrive through the stream, one byte at a time', async () => {
    for (const [, text, line, re, opts] of cases) {
      const bytes = typeof text === 'string' ? new TextEncoder().encode(text) : text;
      const chunks = Array.from(bytes, (b) => Uint8Array.of(b));
      const e = (await parseMatrixMarketStream(chunks, { name: 's', ...opts }).catch((x: unknown) => x)) as MatrixMarketError;
      expect(e, String(text)).toBeInstanceOf(MatrixMarketError);
      expect(e.line).toBe(line);
      expect(e.message).toMatch(re);
    }
  });
  it('strictCount: false keeps extra entries and warns with the line', () => {
    const seen: string[] = [];
    const r = parseMatrixMarket(`${G}3 3 1\n1 1 1\n2 2 2\n3 3 3\n`, { strictCount: false, onWarning: (w) => seen.push(`${w.line}: ${w.message}`) });
    expect(csrToDense(r.matrix)).toEqual([
      [1, 0, 0],
      [0, 2, 0],
      [0, 0, 3],
    ]);
    expect(r.header.declaredEntries).toBe(1);
    expect(r.header.actualEntries).toBe(3);
    expect(seen).toEqual(['4: size line (line 2) declares 1 entries but the file has 3; the 2 extra entries from line 4 on were kept (strictCount: false)']);
    expect(r.warnings).toHaveLength(1);
    mmError(() => parseMatrixMarket(`${G}3 3 2\n1 1 1\n`, { strictCount: false }), 4, /end of file after 1 entries/);
  });
});

/** Matrices whose values stress the writer: -0, subnormals, extremes, random bit patterns. */
function nastyMatrix(seed: number): CsrMatrix {
  const r = rng(seed);
  const ri: number[] = [];
  const ci: number[] = [];
  const v: number[] = [];
  const special = [-0, 5e-324, -2.2250738585072014e-308, 1.7976931348623157e308, 0.1, 1 / 3, 1e21, 123456789.12345679, -1e-300];
  const bits = new Float64Array(1);
  const words = new Uint32Array(bits.buffer);
  for (let k = 0; k < 300; k++) {
    ri.push(Math.floor(r() * 40));
    ci.push(Math.floor(r() * 30));
    words[0] = Math.floor(r() * 2 ** 32);
    words[1] = Math.floor(r() * 2 ** 32);
    v.push(k < special.length ? special[k]! : Number.isFinite(bits[0]!) ? bits[0]! : r());
  }
  // duplicates of (row, col) would be summed: keep the first of each
  const seen = new Set<number>();
  const keep = ri.map((i, k) => {
    const key = i * 30 + ci[k]!;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  const f = <T>(a: T[]) => a.filter((_, k) => keep[k]);
  return csrFromTriplets(40, 30, f(ri), f(ci), f(v));
}

describe('Matrix Market writer: round trip write → read is bit-exact', () => {
  it('coordinate real general, with -0, subnormals, extremes and random bit patterns', () => {
    for (const seed of [1, 2, 3]) {
      const a = nastyMatrix(seed);
      const back = parseMatrixMarket(formatMatrixMarket(a, { comments: ['made by a test', 'two\nlines'] }));
      expect(csrEquals(back.matrix, a)).toBe(true);
      expect(back.header.comments).toEqual(['made by a test', 'two', 'lines']);
    }
  });
  it('symmetric output writes the lower triangle only and refuses asymmetric matrices', () => {
    const s = banded(50, 3, 3, { spd: true });
    const text = formatMatrixMarket(s, { symmetry: 'symmetric' });
    const back = parseMatrixMarket(text);
    expect(back.header.symmetry).toBe('symmetric');
    expect(back.header.declaredEntries).toBe((s.rowPtr[50]! + 50) / 2);
    expect(csrEquals(back.matrix, s)).toBe(true);
    expect(() => formatMatrixMarket(uniformRandom(20, 20, 3, 1), { symmetry: 'symmetric' })).toThrow(InvalidMatrixError);
    expect(() => formatMatrixMarket(uniformRandom(20, 21, 3, 1), { symmetry: 'symmetric' })).toThrow(/square/);
  });
  it('array, integer and pattern output', () => {
    const a = uniformRandom(7, 5, 2, 3);
    expect(csrEquals(parseMatrixMarket(formatMatrixMarket(a, { format: 'array' })).matrix, a)).toBe(true);
    const s = banded(6, 1, 1, { spd: true });
    const sa = parseMatrixMarket(formatMatrixMarket(s, { format: 'array', symmetry: 'symmetric' }));
    expect(sa.header.declaredEntries).toBe(21);
    expect(csrEquals(sa.matrix, s)).toBe(true);
    const ints = csrFromTriplets(3, 3, [0, 1, 2], [2, 1, 0], [-5, 9007199254740991, 3]);
    expect(csrEquals(parseMatrixMarket(formatMatrixMarket(ints, { field: 'integer' })).matrix, ints)).toBe(true);
    expect(() => formatMatrixMarket(a, { field: 'integer' })).toThrow(/safe integers/);
    const pat = parseMatrixMarket(formatMatrixMarket(a, { field: 'pattern' })).matrix;
    expect(Array.from(pat.colIdx)).toEqual(Array.from(a.colIdx));
    expect(Array.from(pat.values).every((x) => x === 1)).toBe(true);
    const inf = csrFromTriplets(1, 1, [0], [0], [Number.POSITIVE_INFINITY]);
    expect(() => formatMatrixMarket(inf)).toThrow(/finite/);
  });
  it('writes files, plain and gzip (by extension or option), and reads them back bit-exactly', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mtx-write-'));
    const a = nastyMatrix(9);
    for (const [name, opts] of [
      ['a.mtx', {}],
      ['a.mtx.gz', {}],
      ['forced.mtx', { gzip: true }],
    ] as const) {
      await writeMatrixMarket(join(dir, name), a, opts);
      const raw = readFileSync(join(dir, name));
      expect(raw[0] === 0x1f && raw[1] === 0x8b).toBe(name !== 'a.mtx');
      expect(csrEquals((await readMatrixMarket(join(dir, name))).matrix, a)).toBe(true);
    }
    // a matrix large enough to need many 64 KiB pieces
    const big = uniformRandom(3000, 3000, 8, 4);
    await writeMatrixMarket(join(dir, 'big.mtx.gz'), big);
    expect(csrEquals((await readMatrixMarket(join(dir, 'big.mtx.gz'))).matrix, big)).toBe(true);
    await expect(writeMatrixMarket(join(dir, 'no-such-dir', 'x.mtx'), a)).rejects.toThrow(MatrixMarketError);
  });
});
