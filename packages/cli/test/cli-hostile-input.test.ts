// Issue 13 regression inputs run through the real CLI in a child process with a V8 heap cap
// (--max-old-space-size=512) and a time cap; the child reports its peak resident memory. The
// inputs are generated here as streams of concatenated gzip members (a few hundred kB on disk
// for 10^8 lines), never committed.
import { spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';

const repo = new URL('../../../', import.meta.url).pathname;
const mainTs = new URL('../src/main.ts', import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), 'gpusparse-hostile-'));
/** Preloaded in the child: prints its peak resident set (kB) on exit. */
const REPORT_RSS = `data:text/javascript,process.on('exit',()=>process.stderr.write('maxrss-kB='+process.resourceUsage().maxRSS+'\\n'))`;

interface Run {
  status: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  maxRssMB: number;
  seconds: number;
}

/** Run the CLI under a 512 MB V8 heap and a time cap. */
function cli(args: string[], timeoutMs: number, stdoutFd?: number): Run {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, ['--max-old-space-size=512', '--import', 'tsx', '--import', REPORT_RSS, mainTs, ...args], {
    cwd: repo,
    encoding: 'utf8',
    timeout: timeoutMs,
    stdio: ['ignore', stdoutFd ?? 'pipe', 'pipe'],
  });
  const rss = /maxrss-kB=(\d+)/.exec(r.stderr ?? '');
  return {
    status: r.status,
    signal: r.signal,
    stdout: r.stdout ?? '',
    stderr: r.stderr ?? '',
    maxRssMB: rss ? Number(rss[1]) / 1024 : Number.NaN,
    seconds: (performance.now() - t0) / 1000,
  };
}

/** A gzip file of `head`, then `count` copies of `line`, then `tail`, as concatenated members. */
function gzipOfRepeats(name: string, head: string, line: string, count: number, tail: string): string {
  const path = join(dir, name);
  const per = 1 << 20;
  const block = gzipSync(line.repeat(per));
  const fd = openSync(path, 'w');
  writeSync(fd, gzipSync(head));
  let left = count;
  for (; left >= per; left -= per) writeSync(fd, block);
  if (left > 0) writeSync(fd, gzipSync(line.repeat(left)));
  writeSync(fd, gzipSync(tail));
  closeSync(fd);
  return path;
}

describe('hostile Matrix Market input through the CLI (512 MB heap cap)', () => {
  it('1.4·10^8 header comment lines (a 280 kB gzip) are read with bounded memory', () => {
    const path = gzipOfRepeats('comments.mtx.gz', '%%MatrixMarket matrix coordinate real general\n', '%\n', 1.4e8, '2 2 1\n2 1 3.5\n');
    const r = cli(['info', path, '--formats', 'csr'], 120_000);
    expect(r.signal, r.stderr).toBeNull();
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/2 x 2, nnz 1/);
    expect(r.maxRssMB).toBeLessThan(400);
  }, 130_000);

  it('1.79·10^8 duplicate "1 1 1" lines for a 1x1 matrix: typed error at the size line', () => {
    const path = gzipOfRepeats('dup.mtx.gz', '%%MatrixMarket matrix coordinate real general\n1 1 179000000\n', '1 1 1\n', 1.79e8, '');
    const r = cli(['info', path], 60_000);
    expect(r.status, r.stderr).toBe(3);
    expect(r.stderr).toMatch(/dup\.mtx\.gz:2: expected an entry count of at most 1 \(the cells of a 1x1 matrix\), got 179000000/);
    expect(r.maxRssMB).toBeLessThan(400);
  }, 70_000);

  it('the same duplicates under an honest header and --lenient: typed error at the second entry', () => {
    const path = gzipOfRepeats('dup2.mtx.gz', '%%MatrixMarket matrix coordinate real general\n1 1 1\n', '1 1 1\n', 1.79e8, '');
    const r = cli(['info', path, '--lenient'], 60_000);
    expect(r.status, r.stderr).toBe(3);
    expect(r.stderr).toMatch(/dup2\.mtx\.gz:4: expected at most 1 entries for a 1x1 general matrix, got entry number 2/);
  }, 70_000);

  describe('a 4 194 304² matrix with 64 entries in one row', () => {
    const path = join(dir, 'wide.mtx');
    writeFileSync(path, `%%MatrixMarket matrix coordinate real general\n4194304 4194304 64\n${Array.from({ length: 64 }, (_, j) => `1 ${j + 1} 1.0\n`).join('')}`);

    it('info estimates ELL/DIA-like tables from row statistics and does not build them', () => {
      const r = cli(['info', path, '--formats', 'csr,coo,ell,ell-r,sell,dia,hm,cdm'], 60_000);
      expect(r.status, r.stderr).toBe(0);
      expect(r.stdout).toMatch(/ell not built: needs 3\.2 GB \(4194304 rows × longest row 64\), over the report limit of 268\.4 MB/);
      expect(r.stdout).toMatch(/dia not built: needs 2\.1 GB \(64 occupied diagonals × 4194304 rows\)/);
      expect(r.stdout).toMatch(/^sell\s+C=32,sigma=128\s+\d+/m);
      expect(r.maxRssMB).toBeLessThan(800);
    }, 70_000);

    it('convert --to ell refuses with exit 5, bytes needed vs available', () => {
      const r = cli(['convert', path, '--to', 'ell', '-o', join(dir, 'wide.json')], 60_000);
      expect(r.status, r.stderr).toBe(5);
      expect(r.stderr).toMatch(/ResourceLimitError: convert --to ell: .*4194304 rows × longest row 64.*needs \d+\.\d GB, \d+\.\d [MG]B available/);
      expect(r.maxRssMB).toBeLessThan(800);
    }, 70_000);
  });

  it('standard output on a full device (/dev/full): exit 5 naming it, no unhandled error event', () => {
    const fd = openSync('/dev/full', 'w');
    try {
      const r = cli(['info', 'gen:laplacian1d:10', '--formats', 'csr'], 60_000, fd);
      expect(r.status, r.stderr).toBe(5);
      expect(r.stderr).toMatch(/writing standard output failed: ENOSPC/);
      expect(r.stderr).not.toMatch(/Unhandled 'error' event/);
    } finally {
      closeSync(fd);
    }
  }, 70_000);
});
