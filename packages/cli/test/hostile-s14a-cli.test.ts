/**
 * Session 14 hardening (s14-harden-e): the command with `--json` on bad input. Every failure must
 * exit non-zero and print exactly one JSON object on stdout — no stack trace, no partial document —
 * naming what was expected, what came and where. Found before the fixes:
 * - `-k -1` (a one-letter option with a negative value) got parseArgs' "argument is ambiguous"
 *   instead of the option's own check (`--k -1` was already joined);
 * - the JSON error carried only name, message and exitCode: the reader's file, line, expected and
 *   got (MatrixMarketError, FcidumpError, InvalidParameterError) were only inside the message.
 * Found fine (kept here as the invariant): a missing file, a folder, a truncated file, an empty
 * file, a truncated or corrupt gzip, an entry 1e999 / 0x10, an empty path, --rtol 1e999 / 0x10 /
 * '', --maxit 0x10 / '' / 1e999, an unknown option or command, a truncated FCIDUMP, a folder as
 * FCIDUMP, `gen:poisson2d:abc`. Left as documented: an option given twice takes its last value
 * (docs/guides/cli.md "Options given twice"; refusing it was tried and withdrawn in session 12 and
 * the convention is pinned by hostile-s12b-cli).
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { main } from '../src/main';
import { captured, captureOutput } from './capture';

captureOutput();

const dir = mkdtempSync(join(tmpdir(), 'gpusparse-s14a-'));
const file = (name: string, text: string | Buffer) => {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
};
const banner = '%%MatrixMarket matrix coordinate real general\n';
const f = {
  truncated: file('trunc.mtx', `${banner}3 3 4\n1 1 1\n2 2 1\n3 3`),
  empty: file('empty.mtx', ''),
  huge: file('huge.mtx', `${banner}2 2 2\n1 1 1e999\n2 2 1\n`),
  hex: file('hex.mtx', `${banner}2 2 2\n1 1 0x10\n2 2 1\n`),
  gzCut: file('cut.mtx.gz', gzipSync(`${banner}3 3 3\n1 1 1\n2 2 1\n3 3 1\n`).subarray(0, 20)),
  gzBad: file('bad.mtx.gz', Buffer.from([0x1f, 0x8b, 8, 0, 0x67, 0x61, 0x72, 0x62, 0x61, 0x67, 0x65])),
  fcidump: file('cut.FCIDUMP', '&FCI NORB=2,NELEC=2,MS2=0,\n ORBSYM=1,1,\n ISYM=1,\n&END\n 0.5 1 1 1 1\n 0.2'),
  folder: join(dir, 'folder.mtx'),
};
mkdirSync(f.folder);

/** Run the command; the exit code and the one JSON document stdout must hold (throws when it is not exactly one). */
async function runJson(args: string[]): Promise<{ exit: number; doc: { error?: Record<string, unknown> } & Record<string, unknown> }> {
  captured.stdout = '';
  captured.stderr = '';
  const exit = await main([...args, '--json']);
  return { exit, doc: JSON.parse(captured.stdout) };
}

describe('--json on bad input', () => {
  it('every failure: exit ≠ 0, one JSON error object on stdout, no stack trace (cases that were already fine)', async () => {
    const cases: string[][] = [
      ['info', join(dir, 'missing.mtx')],
      ['info', f.folder],
      ['info', f.truncated],
      ['info', f.empty],
      ['info', f.huge],
      ['info', f.hex],
      ['info', f.gzCut],
      ['info', f.gzBad],
      ['info', ''],
      ['solve', 'gen:poisson2d:4', '--backend', 'cpu', '--rtol', '1e999'],
      ['solve', 'gen:poisson2d:4', '--backend', 'cpu', '--rtol', '0x10'],
      ['solve', 'gen:poisson2d:4', '--backend', 'cpu', '--rtol', ''],
      ['solve', 'gen:poisson2d:4', '--backend', 'cpu', '--maxit', '0x10'],
      ['solve', 'gen:poisson2d:4', '--backend', 'cpu', '--maxit', '1e999'],
      ['solve', 'gen:poisson2d:abc', '--backend', 'cpu'],
      ['solve', 'gen:poisson2d:4', '--nosuchflag'],
      ['nosuchcommand'],
      ['ci', f.fcidump, '--backend', 'cpu'],
      ['ci', f.folder, '--backend', 'cpu'],
    ];
    for (const args of cases) {
      const { exit, doc } = await runJson(args);
      expect(exit, args.join(' ')).toBeGreaterThan(0);
      expect(doc.error?.message, args.join(' ')).toMatch(/expected|Unknown option/);
      expect(captured.stderr, args.join(' ')).not.toMatch(/\n\s+at /);
    }
  }, 60_000);

  it("-k -1 reaches the option's own check (was parseArgs' 'argument is ambiguous')", async () => {
    for (const k of ['-1', '-0']) {
      const { exit, doc } = await runJson(['eigs', 'gen:poisson2d:4', '--backend', 'cpu', '-k', k]);
      expect(exit).toBe(2);
      expect(doc.error?.message).toMatch(new RegExp(`--k: expected an integer ≥ 1 .*got '${k}'`));
    }
  });

  it('the JSON error carries the reader\'s file, line, expected and got (were only in the message)', async () => {
    const mtx = (await runJson(['info', f.truncated])).doc.error!;
    expect(mtx).toMatchObject({ name: 'MatrixMarketError', file: f.truncated, line: 5, exitCode: 3 });
    expect(mtx.expected).toMatch(/3 fields/);
    expect(mtx.got).toMatch(/2 fields/);
    const fcidump = (await runJson(['ci', f.fcidump, '--backend', 'cpu'])).doc.error!;
    expect(fcidump).toMatchObject({ name: 'FcidumpError', file: f.fcidump, line: 6 });
    expect(typeof fcidump.expected).toBe('string');
    const missing = (await runJson(['info', join(dir, 'missing.mtx')])).doc.error!;
    expect(missing).toMatchObject({ file: join(dir, 'missing.mtx'), code: 'ENOENT' });
  });
});
