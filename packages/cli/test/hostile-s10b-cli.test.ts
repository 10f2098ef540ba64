/**
 * Session 10 hostile inputs through the CLI. The Matrix Market reader's warnings (an integer
 * rounded past 2^53, repeated positions summed, a value read as 0) were printed by `info` and
 * `solve` only: eigs, convert, tune, bench, export and spgemm used the changed matrix without a
 * word, and a `pattern` file (no values) was solved as a matrix of ones without one. Tiny files
 * written here; the CPU backend.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../src/main';
import { captured, captureOutput } from './capture';

captureOutput();
const dir = mkdtempSync(join(tmpdir(), 'gpusparse-s10b-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function mtx(name: string, banner: string, body: string): string {
  const path = join(dir, name);
  writeFileSync(path, `%%MatrixMarket matrix ${banner}\n${body}`);
  return path;
}

describe("the reader's warnings reach stderr in every command", () => {
  // diag(2^53 + 1, 4, 4): float64 holds 2^53 + 1 as 2^53
  const rounded = mtx('rounded.mtx', 'coordinate integer symmetric', '3 3 3\n1 1 9007199254740993\n2 2 4\n3 3 4\n');
  // the leading block of a file pasted twice: A(1..2, 1..2) read doubled
  const twice = mtx('twice.mtx', 'coordinate real symmetric', '4 4 8\n1 1 4\n2 1 -1\n2 2 4\n1 1 4\n2 1 -1\n2 2 4\n3 3 4\n4 4 4\n');
  const commands: [string, (a: string) => string[]][] = [
    ['eigs', (a) => ['eigs', a, '--k', '1', '--backend', 'cpu', '--json']],
    ['convert', (a) => ['convert', a, '--to', 'ell', '-o', join(dir, 'out.mtx'), '--json']],
    ['export', (a) => ['export', a, '-o', join(dir, 'out.petsc'), '--json']],
    ['spgemm', (a) => ['spgemm', a, a, '-o', join(dir, 'c.mtx'), '--backend', 'cpu', '--json']],
    ['solve', (a) => ['solve', a, '--backend', 'cpu', '--json']],
  ];
  for (const [name, args] of commands) {
    it(`${name}: the 2^53 rounding and the summed repeats are warned about on stderr (eigs, convert, export, spgemm said nothing); stdout stays one JSON document`, async () => {
      for (const [file, want] of [
        [rounded, /^warning: .*rounded\.mtx:3: integer value 9007199254740993 is above 2\^53 in magnitude and was rounded to 9007199254740992/m],
        [twice, /^warning: .*twice\.mtx:2: 3 entries repeat positions given earlier in the file and were summed into it \(8 entries read, 5 distinct positions\)/m],
      ] as const) {
        captured.stdout = '';
        captured.stderr = '';
        expect(await main(args(file)), `${name} ${file}`).toBe(0);
        expect(captured.stderr, `${name} ${file}`).toMatch(want);
        expect(() => JSON.parse(captured.stdout), `${name} ${file}`).not.toThrow();
        expect(captured.stdout, name).not.toMatch(/warning:/);
      }
    });
  }
  it('a warning is printed once (solve and info printed it themselves before)', async () => {
    expect(await main(['info', twice, '--json'])).toBe(0);
    expect(captured.stderr.match(/entries repeat positions/g)).toHaveLength(1);
  });
});

describe('a pattern file given to a command that needs values', () => {
  it('solve and eigs say every entry is taken as 1 (solved as ones without a word)', async () => {
    const p = mtx('pattern.mtx', 'coordinate pattern symmetric', '3 3 5\n1 1\n2 1\n2 2\n3 2\n3 3\n');
    for (const args of [['solve', p, '--backend', 'cpu'], ['eigs', p, '--k', '1', '--backend', 'cpu']]) {
      captured.stderr = '';
      expect(await main(args), args[0]).toBe(0);
      expect(captured.stderr, args[0]).toMatch(/^warning: .*pattern\.mtx: a pattern file \(structure only, no values\): every stored entry is taken as 1$/m);
    }
  });
});

describe("'-' as an output file", () => {
  it("-o - (convert, spgemm, export, solve), --plot -, --spy -, --export-petsc -: usage error naming the option (wrote a file named '-' in the working directory)", async () => {
    const a = mtx('a.mtx', 'coordinate real symmetric', '2 2 2\n1 1 4\n2 2 4\n');
    const fd = join(dir, 'none.FCIDUMP'); // never read: the option is refused first
    const cases = [
      ['convert', a, '--to', 'ell', '-o', '-'],
      ['spgemm', a, a, '-o', '-', '--backend', 'cpu'],
      ['export', a, '-o', '-'],
      ['solve', a, '--backend', 'cpu', '-o', '-'],
      ['solve', a, '--backend', 'cpu', '--plot', '-'],
      ['info', a, '--spy', '-'],
      ['ci', fd, '--export-petsc', '-'],
    ];
    const cwd = process.cwd();
    process.chdir(dir);
    try {
      for (const args of cases) {
        captured.stdout = '';
        expect(await main([...args, '--json']), args.join(' ')).toBe(2);
        const flag = args[args.indexOf('-') - 1]!.replace(/^-o$/, '--output');
        expect(JSON.parse(captured.stdout).error.message, args.join(' ')).toBe(`${flag}: expected a file name, got '-' (standard output carries the command's summary or its --json document; write to a file)`);
      }
      expect(existsSync(join(dir, '-'))).toBe(false);
    } finally {
      process.chdir(cwd);
    }
  });
});

describe('a row whose non-zeros are all below float32 on WebGPU', () => {
  it('diag(4, 4, 1e-39): exit 3 naming row 3 and --backend cpu (was TuningError, 170 kernels rejected); --backend cpu solves it', async () => {
    const a = mtx('tinyrow.mtx', 'coordinate real symmetric', '3 3 4\n1 1 4\n2 1 -1\n2 2 4\n3 3 1e-39\n');
    expect(await main(['solve', a, '--backend', 'webgpu', '--json'])).toBe(3);
    expect(JSON.parse(captured.stdout).error).toMatchObject({ name: 'InvalidMatrixError', message: expect.stringMatching(/^A\(row 3\): expected a row with some \|value\| ≥ 1\.2e-38 .*use --backend cpu/) });
    captured.stdout = '';
    expect(await main(['solve', a, '--backend', 'cpu', '--json'])).toBe(0);
    expect(JSON.parse(captured.stdout).converged).toBe(true);
  });
});

describe('--help under --json', () => {
  it('gpusparse --help --json and <command> --help --json: one JSON document { usage } (was the plain text on stdout); without --json the text', async () => {
    for (const args of [['--help', '--json'], ['solve', '--help', '--json'], ['ci', '-h', '--json']]) {
      captured.stdout = '';
      expect(await main(args), args.join(' ')).toBe(0);
      expect(JSON.parse(captured.stdout).usage, args.join(' ')).toMatch(/^usage: gpusparse /);
    }
    captured.stdout = '';
    expect(await main(['solve', '--help'])).toBe(0);
    expect(captured.stdout).toMatch(/^usage: gpusparse solve /);
  });
});

describe('ci --ms2 with an FCIDUMP whose MS2 has the wrong parity', () => {
  it('NELEC=3, MS2=0 (as PySCF writes it): --ms2 1 runs with a note (was refused at the header whatever --ms2 said); without --ms2 the error names --ms2', async () => {
    let body = '';
    for (let i = 1; i <= 3; i++) body += ` ${0.5 + 0.1 * i} ${i} ${i} ${i} ${i}\n ${-1 + 0.2 * i} ${i} ${i} 0 0\n`;
    const fd = join(dir, 'radical.FCIDUMP');
    writeFileSync(fd, ` &FCI NORB=3,NELEC=3,MS2=0,\n &END\n${body} 0.1 2 1 0 0\n 0.5 0 0 0 0\n`);
    expect(await main(['ci', fd, '--backend', 'cpu', '--ms2', '1', '--json'])).toBe(0);
    const r = JSON.parse(captured.stdout);
    expect(r.space).toMatch(/2α,1β/);
    expect(r.notes).toContain('MS2=0 in the header does not match NELEC=3 (odd/even): the given ms2 = 1 is used');
    captured.stdout = '';
    expect(await main(['ci', fd, '--backend', 'cpu', '--json'])).toBe(3);
    expect(JSON.parse(captured.stdout).error.message).toMatch(/got 0 \(PySCF's writer puts MS2=0 unless told.*--ms2, e\.g\. 1\)/);
  });
});
