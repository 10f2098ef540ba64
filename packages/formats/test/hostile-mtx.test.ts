/**
 * Hostile Matrix Market inputs (session 6 hardening). The probes of truncated files, wrong
 * header fields and counts, out-of-range / zero-based indices, NaN / Inf / 1e999, complex and
 * hermitian fields, CRLF and a BOM all gave typed errors naming file:line already (mtx-fuzz,
 * mtx-limits, mtx.test); the cases here are the ones whose message was off before the fix, plus
 * the reading rules the probes relied on.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MatrixMarketError, readMatrixMarket } from '../src/index';

const dir = mkdtempSync(join(tmpdir(), 'gpusparse-hostile-mtx-'));
const file = (name: string, text: string) => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};

describe('Matrix Market files a hostile user gives', () => {
  it('a missing file or a directory: the path and the system code once (was "ENOENT: ENOENT: …")', async () => {
    for (const path of [join(dir, 'none.mtx'), dir]) {
      const e = await readMatrixMarket(path).catch((x: unknown) => x);
      expect(e).toBeInstanceOf(MatrixMarketError);
      const m = (e as Error).message;
      expect(m.startsWith(`${path}:0: expected a readable Matrix Market file, got E`)).toBe(true); // line 0: not tied to a line
      expect(m).not.toMatch(/(ENOENT|EISDIR): \1/);
      expect((e as MatrixMarketError).line).toBe(0);
    }
  });
  it('CRLF line endings and a UTF-8 BOM read as the same matrix as plain LF', async () => {
    const text = '%%MatrixMarket matrix coordinate real general\n% c\n2 2 2\n1 1 2\n2 1 -3\n';
    const plain = await readMatrixMarket(file('lf.mtx', text));
    for (const [name, t] of [['crlf.mtx', text.replace(/\n/g, '\r\n')], ['bom.mtx', `\ufeff${text}`]] as const) {
      const m = await readMatrixMarket(file(name, t));
      expect(m.matrix).toEqual(plain.matrix);
    }
  });
  it('duplicate coordinates are summed (one stored entry), as the format’s readers do', async () => {
    const m = await readMatrixMarket(file('dup.mtx', '%%MatrixMarket matrix coordinate real general\n2 2 3\n1 1 1\n1 1 2\n2 2 1\n'));
    expect(Array.from(m.matrix.values)).toEqual([3, 1]);
  });
  it('a zero-based index, NaN and 1e999: typed errors naming file:line and the token', async () => {
    const h = '%%MatrixMarket matrix coordinate real general\n2 2 1\n';
    for (const [name, entry, re] of [
      ['zero.mtx', '0 1 1', /zero\.mtx:3: expected a row index in \[1, 2\] \(1-based\), got "0"/],
      ['nan.mtx', '1 1 NaN', /nan\.mtx:3: expected a finite real number, got "NaN"/],
      ['big.mtx', '1 1 1e999', /big\.mtx:3: expected a finite real number, got "1e999"/],
    ] as const) {
      await expect(readMatrixMarket(file(name, `${h}${entry}\n`))).rejects.toThrow(re);
    }
  });
});
