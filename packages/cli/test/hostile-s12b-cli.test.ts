/**
 * Session 12 sweep of command-line flag combinations. Fixed: `--restart` with cg, bicgstab or
 * bicg did nothing; it is a usage error (exit 2). Kept and now documented (docs/guides/cli.md): an
 * option given twice takes its last value, a `--no-` form wins over its twin (cli-wording pins
 * `tune --cache p --no-cache`). Found fine: --atol −1, --restart 0,
 * --check-every 0, --maxit 1.5, --precond ilu, --backend gpu, --np without --engine, eigs -k 0
 * and past n, --which largest with lobpcg, --tol 0, tune --backend cpu, convert without --to,
 * solve with 0 or 3 arguments (all exit 2 with the option named).
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../src/main';
import { captured, captureOutput } from './capture';

captureOutput();
const dir = mkdtempSync(join(tmpdir(), 'gpusparse-s12b-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const A = 'gen:laplacian1d:10';

describe('flag combinations', () => {
  it('an option given twice takes its last value (a shell alias can be overridden); the same flag twice is harmless', async () => {
    const [x1, x2] = [join(dir, 'x1.mtx'), join(dir, 'x2.mtx')];
    expect(await main(['solve', A, '--backend', 'cpu', '-o', x1, '-o', x2])).toBe(0);
    expect([existsSync(x1), existsSync(x2)]).toEqual([false, true]);
    for (const [first, last] of [['1e-3', '1e-12'], ['1e-12', '1e-3']]) {
      captured.stdout = '';
      expect(await main(['solve', 'gen:poisson2d:30', '--backend', 'cpu', '--rtol', first!, `--rtol=${last}`, '--json', '--json'])).toBe(0);
      const r = JSON.parse(captured.stdout).relativeResidualFloat64 as number;
      expect(r).toBeLessThanOrEqual(Number(last));
      if (last === '1e-3') expect(r).toBeGreaterThan(1e-10);
    }
  });
  it('--restart with a method that does not restart: usage error (was ignored); a bad value still names the value', async () => {
    expect(await main(['solve', A, '--backend', 'cpu', '--restart', '5'])).toBe(2);
    expect(captured.stderr).toContain('--restart: only with --method gmres (cg does not restart)');
    expect(await main(['solve', A, '--backend', 'cpu', '--method', 'bicgstab', '--restart', '5'])).toBe(2);
    expect(await main(['solve', A, '--backend', 'cpu', '--restart', '0'])).toBe(2);
    expect(captured.stderr).toMatch(/--restart: expected an integer in \[1, /);
    expect(await main(['solve', A, '--backend', 'cpu', '--method', 'gmres', '--restart', '5', '--json'])).toBe(0);
  });
});

describe('the browser page and the stream reader with gzip data (session 12)', () => {
  it("a .mtx.gz chosen in the page is gunzipped (was refused: 'gzip-compressed data'); a damaged one is named", async () => {
    const { gzipSync } = await import('node:zlib');
    const { gunzipIfNeeded, makeMatrix } = await import('../../../examples/browser/compute');
    const text = '%%MatrixMarket matrix coordinate real symmetric\n2 2 2\n1 1 4\n2 2 5\n';
    const bytes = await gunzipIfNeeded(new Uint8Array(gzipSync(text)), 'a.mtx.gz');
    expect(Array.from(makeMatrix({ kind: 'file', name: 'a.mtx.gz', bytes }).a.values)).toEqual([4, 5]);
    const plain = new TextEncoder().encode(text);
    expect(await gunzipIfNeeded(plain, 'a.mtx')).toBe(plain);
    await expect(gunzipIfNeeded(new Uint8Array(gzipSync(text)).subarray(0, 20), 'cut.mtx.gz')).rejects.toThrow(/file cut\.mtx\.gz: expected a complete gzip stream of Matrix Market text, got a damaged one/);
  });
  it('parseMatrixMarketStream on gzip bytes names gzip and the way out (was a banner of binary bytes), also when the first chunk is one byte', async () => {
    const { gzipSync } = await import('node:zlib');
    const { parseMatrixMarketStream } = await import('@gpusparse/formats');
    const gz = new Uint8Array(gzipSync('%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 2\n'));
    for (const chunks of [[gz], [gz.subarray(0, 1), gz.subarray(1)]]) {
      await expect(parseMatrixMarketStream(chunks, 'a.mtx.gz')).rejects.toThrow(/a\.mtx\.gz:0: expected uncompressed Matrix Market text, got gzip-compressed data .*DecompressionStream\('gzip'\)/);
    }
    const text = new TextEncoder().encode('%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 2\n');
    const r = await parseMatrixMarketStream([text.subarray(0, 1), text.subarray(1, 2), text.subarray(2)], 'one-byte-chunks.mtx');
    expect(Array.from(r.matrix.values)).toEqual([2]);
  });
});

describe('gen: specs past the old per-row heap check (session 12)', () => {
  it('gen:poisson3d:120 (1.7 M rows) in a 64 MB V8 heap: built (was ResourceLimitError "one small array per row on the V8 heap", 172.8 MB needed)', async () => {
    const { spawnSync } = await import('node:child_process');
    const mainTs = new URL('../src/main.ts', import.meta.url).pathname;
    const r = spawnSync(process.execPath, ['--max-old-space-size=64', '--import', 'tsx', mainTs, 'info', 'gen:poisson3d:120', '--formats', 'csr', '--backend', 'cpu'], { encoding: 'utf8', timeout: 120_000 });
    expect(r.stderr).not.toMatch(/ResourceLimitError|heap/);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/gen:poisson3d:120: 1728000 x 1728000, nnz 12009600/);
  }, 150_000);
});
