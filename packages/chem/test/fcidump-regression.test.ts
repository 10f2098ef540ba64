/**
 * Regression tests for the FCIDUMP inputs of issue 13 (points 1 and 3), run in child processes
 * with a memory cap (`--max-old-space-size=256`) and a time cap, as the audit ran them: each
 * must end in a typed error (or, for the padded header, the right integrals), never a crash,
 * an abort, an exit 70 or gigabytes of memory. The large inputs are generated here, in a
 * temporary folder, not committed.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const child = fileURLToPath(new URL('./fixtures/fcidump-child.ts', import.meta.url));
const cli = join(root, 'packages/cli/src/main.ts');
const h2o = readFileSync(new URL('../data/H2O_sto2g_hande.FCIDUMP', import.meta.url), 'utf8');
const lines = h2o.slice(0, -1).split('\n');
const CAP = ['--max-old-space-size=256', '--import', 'tsx'];

let dir = '';
const files: Record<string, string> = {};

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'fcidump-regression-'));
  const put = async (name: string, data: string | Buffer) => {
    files[name] = join(dir, name);
    await writeFile(files[name]!, data);
  };
  await put('core-cut.FCIDUMP', h2o.slice(0, -30));
  await put('half.FCIDUMP', `${lines.slice(0, 247).join('\n')}\n`);
  await put('header-only.FCIDUMP', `${lines.slice(0, 4).join('\n')}\n`);
  await put('conflict.FCIDUMP', h2o.replace('\n     0.78581546037192  7  0  0  0', '\n    -0.25  2  1  2  1\n     0.78581546037192  7  0  0  0'));
  await put('hex-core.FCIDUMP', h2o.replace(/\n\s*9\.009352032085\s+0\s+0\s+0\s+0\n$/, '\n 0x9 0 0 0 0\n'));
  await put('long-header-padded.FCIDUMP', h2o.replace('ORBSYM=1,1,3,1,4,1,3,', `ORBSYM=1,1,3,1,4,1,3,${' '.repeat(200_000)}`));
  await put('long-header-list.FCIDUMP', h2o.replace('ORBSYM=1,1,3,1,4,1,3,', `ORBSYM=${'1,'.repeat(100_000)}`));
  // 120 MB that never closes the header (the audit's case)
  await put('no-end.FCIDUMP', Buffer.concat([Buffer.from(' &FCI NORB=7,NELEC=10,\n'), Buffer.alloc(120_000_000, ' 0.5 1 1 1 1\n')]));
  // gzip bombs: a valid header then 700 MB of lines, and 700 MB of header, as concatenated
  // gzip members (~2 MB on disk)
  const member = gzipSync(Buffer.alloc(1_000_000, '    0.065168989486074  2  1  2  1\n'));
  const bomb = Array.from({ length: 700 }, () => member);
  await put('bomb.FCIDUMP.gz', Buffer.concat([gzipSync(`${lines.slice(0, 4).join('\n')}\n`), ...bomb]));
  await put('bomb-header.FCIDUMP.gz', Buffer.concat([gzipSync(' &FCI NORB=7,NELEC=10,\n'), ...bomb]));
  await put('huge-norb.FCIDUMP', ' &FCI NORB=100000000,NELEC=2 &END\n 1.0 1 1 1 1\n 0.0 0 0 0 0\n');
  await put('no-core.FCIDUMP', `${lines.slice(0, -1).join('\n')}\n`);
}, 60_000);

interface Result {
  file: string;
  ok: boolean;
  typed?: boolean;
  name?: string;
  message?: string;
  ecore?: number;
  ms: number;
}

describe('issue 13 FCIDUMP inputs under a 256 MB heap cap', () => {
  it('each is a typed error naming file and line (or parses correctly), no crash, bounded time and memory', () => {
    const names = Object.keys(files).filter((n) => n !== 'no-core.FCIDUMP');
    const run = spawnSync(process.execPath, [...CAP, child, ...names.map((n) => files[n]!)], { cwd: root, encoding: 'utf8', timeout: 90_000 });
    expect(run.signal, run.stderr).toBeNull();
    expect(run.status, run.stderr).toBe(0);
    const out = run.stdout.trim().split('\n').map((l) => JSON.parse(l) as Result & { done?: boolean; rss?: number });
    const last = out.pop()!;
    expect(last.done).toBe(true);
    expect(last.rss!).toBeLessThan(600e6); // the tables of NORB=7 are 20 kB; node itself ~100-200 MB
    const by = Object.fromEntries(out.map((r) => [r.file.slice(dir.length + 1), r]));
    const expectations: Record<string, RegExp | 'ok'> = {
      'core-cut.FCIDUMP': /core-cut\.FCIDUMP:495: expected a core-energy line/,
      'half.FCIDUMP': /half\.FCIDUMP:247: expected a core-energy line/,
      'header-only.FCIDUMP': /header-only\.FCIDUMP:4: expected integral lines after the header/,
      'conflict.FCIDUMP': /conflict\.FCIDUMP:494: expected the same value as line 10 for \(2 1\|2 1\)/,
      'hex-core.FCIDUMP': /hex-core\.FCIDUMP:495:2: expected a finite number .*got "0x9"/,
      'long-header-padded.FCIDUMP': 'ok',
      'long-header-list.FCIDUMP': /long-header-list\.FCIDUMP:2: expected ORBSYM with NORB=7 entries, got 100000 entries/,
      'no-end.FCIDUMP': /no-end\.FCIDUMP:\d+: expected the end of the namelist header .* within its first 1048576 characters/,
      'bomb.FCIDUMP.gz': /bomb\.FCIDUMP\.gz:\d+: expected at most \d+ lines after the header for NORB=7/,
      'bomb-header.FCIDUMP.gz': /bomb-header\.FCIDUMP\.gz:\d+: expected the end of the namelist header/,
      'huge-norb.FCIDUMP': /FCIDUMP integral tables for NORB=100000000 .*needs .* available/,
    };
    for (const [name, want] of Object.entries(expectations)) {
      const r = by[name]!;
      expect(r, name).toBeDefined();
      expect(r.ms, name).toBeLessThan(20_000);
      if (want === 'ok') {
        expect(r.ok, `${name}: ${r.message}`).toBe(true);
        expect(r.ecore).toBe(9.009352032085);
      } else {
        expect(r.ok, name).toBe(false);
        expect(r.typed, `${name}: ${r.name} ${r.message}`).toBe(true);
        expect(r.message, name).toMatch(want);
      }
    }
    expect(by['huge-norb.FCIDUMP']!.name).toBe('ResourceLimitError');
  }, 120_000);

  it('the CLI: exit 3 with the message for damaged input; --allow-missing-core accepts a file without the constant', () => {
    const ci = (...args: string[]) => spawnSync(process.execPath, [...CAP, cli, 'ci', ...args, '--backend', 'cpu', '--irrep', '1'], { cwd: root, encoding: 'utf8', timeout: 120_000 });
    const bomb = ci(files['bomb.FCIDUMP.gz']!);
    expect(bomb.status, bomb.stderr).toBe(3);
    expect(bomb.stderr).toMatch(/FcidumpError: .*bomb\.FCIDUMP\.gz:\d+: expected at most/);
    const strict = ci(files['no-core.FCIDUMP']!);
    expect(strict.status, strict.stderr).toBe(3);
    expect(strict.stderr).toMatch(/no-core\.FCIDUMP:494: expected a core-energy line .*--allow-missing-core/);
    const lenient = ci(files['no-core.FCIDUMP']!, '--allow-missing-core');
    expect(lenient.status, lenient.stderr).toBe(0);
    // the electronic energy alone: the reference −72.786196191345 minus the constant 9.009352032085
    expect(lenient.stdout).toMatch(/ 0 +-81\.79554822/);
  }, 240_000);
});
