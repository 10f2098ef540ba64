/**
 * Session 9 hostile inputs through the CLI (the second helper's sweep): each case gave a silent
 * wrong answer, a "bug" exit (70) or a misleading message before its fix. Tiny files written here.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../src/main';
import { captured, captureOutput } from './capture';

captureOutput();
const dir = mkdtempSync(join(tmpdir(), 'gpusparse-s9b-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A Matrix Market file in the temporary folder: banner fields, then the size line and entries. */
function mtx(name: string, banner: string, body: string): string {
  const path = join(dir, name);
  writeFileSync(path, `%%MatrixMarket matrix ${banner}\n${body}`);
  return path;
}
/** The --json error document on stdout. */
const jsonError = () => JSON.parse(captured.stdout).error as { name: string; message: string; exitCode: number };

describe('spgemm whose product leaves float64', () => {
  it('diag(−0, 5e-324, 1e308)²: exit 3 naming row 3, column 3 (was exit 0 with "Infinity" in the JSON C, or "row 2, column 2" for .mtx)', async () => {
    const a = mtx('special.mtx', 'coordinate real general', '3 3 3\n1 1 -0\n2 2 4.9e-324\n3 3 1e308\n');
    for (const out of ['c.json', 'c.mtx']) {
      captured.stdout = '';
      expect(await main(['spgemm', a, a, '-o', join(dir, out), '--backend', 'cpu', '--json']), out).toBe(3);
      expect(jsonError()).toMatchObject({
        name: 'InvalidMatrixError',
        exitCode: 3,
        message: expect.stringMatching(/^spgemm C = A·B: expected entries within float64 .*got Infinity at row 3, column 3: .*scale A or B down/),
      });
    }
    // operands whose product fits are still multiplied
    const b = mtx('fits.mtx', 'coordinate real general', '3 3 3\n1 1 -0\n2 2 4.9e-324\n3 3 1e154\n');
    captured.stdout = '';
    expect(await main(['spgemm', b, b, '-o', join(dir, 'ok.mtx'), '--backend', 'cpu', '--json'])).toBe(0);
    expect(JSON.parse(captured.stdout)).toMatchObject({ nnzC: 3, engine: 'host float64' });
  });
});

describe('tune options the tuner refuses', () => {
  it('--fraction 0 / 2 and --budget-ms 0: usage errors (exit 2) naming the option (were exit 70, "this looks like a bug")', async () => {
    const a = mtx('spd3.mtx', 'coordinate real symmetric', '3 3 5\n1 1 4\n2 1 1\n2 2 4\n3 2 1\n3 3 4\n');
    for (const [flag, value, want] of [
      ['--fraction', '0', /--fraction: expected a number in \(0, 1\], got '0'/],
      ['--fraction', '2', /--fraction: expected a number in \(0, 1\], got '2'/],
      ['--budget-ms', '0', /--budget-ms: expected a number > 0, got '0'/],
    ] as const) {
      captured.stdout = '';
      // the check comes before any adapter is opened: the same on a machine without a GPU
      expect(await main(['tune', a, flag, value, '--json']), `${flag} ${value}`).toBe(2);
      expect(jsonError()).toMatchObject({ name: 'UsageError', exitCode: 2, message: expect.stringMatching(want) });
    }
  });
});

describe('solve --method gmres with a restart beyond the matrix', () => {
  it('--restart 999999999999 on a 3×3 system: converged (was exit 5, "Invalid typed array length … please report it")', async () => {
    const a = mtx('spd3b.mtx', 'coordinate real symmetric', '3 3 5\n1 1 4\n2 1 1\n2 2 4\n3 2 1\n3 3 4\n');
    expect(await main(['solve', a, '--backend', 'cpu', '--method', 'gmres', '--restart', '999999999999', '--json'])).toBe(0);
    expect(JSON.parse(captured.stdout)).toMatchObject({ converged: true, method: 'gmres(3)' });
  });
});

describe('a non-square matrix for solve or eigs is bad input', () => {
  it('a 2×3 A: exit 3, InvalidMatrixError naming the file (was exit 2, a usage error, as if the command line were wrong)', async () => {
    const rect = mtx('rect.mtx', 'coordinate real general', '2 3 3\n1 1 4\n2 2 1\n1 3 1\n');
    for (const [cmd, want] of [
      ['solve', /rect\.mtx: expected a square matrix for solve, got 2×3/],
      ['eigs', /rect\.mtx: expected a square \(symmetric\) matrix for eigs, got 2×3/],
    ] as const) {
      captured.stdout = '';
      expect(await main([cmd, rect, '--backend', 'cpu', '--json']), cmd).toBe(3);
      expect(jsonError()).toMatchObject({ name: 'InvalidMatrixError', exitCode: 3, message: expect.stringMatching(want) });
    }
  });
});

describe("names that are Object.prototype's keys", () => {
  it("command 'toString', solve --method toString, gen:toString / gen:__proto__: usage errors (were exit 70, TypeErrors)", async () => {
    const a = mtx('spd3c.mtx', 'coordinate real symmetric', '3 3 5\n1 1 4\n2 1 1\n2 2 4\n3 2 1\n3 3 4\n');
    for (const [args, want] of [
      [['toString'], /unknown command 'toString'/],
      [['constructor'], /unknown command 'constructor'/],
      [['solve', a, '--backend', 'cpu', '--method', 'toString'], /--method: expected cg, gmres, bicgstab or bicg, got 'toString'/],
      [['info', 'gen:toString:3'], /unknown generator 'toString'/],
      [['solve', 'gen:__proto__:3', '--backend', 'cpu'], /unknown generator '__proto__'/],
    ] as const) {
      captured.stdout = '';
      expect(await main([...args, '--json']), args.join(' ')).toBe(2);
      expect(jsonError()).toMatchObject({ name: 'UsageError', exitCode: 2, message: expect.stringMatching(want) });
    }
  });
  it("convert --param toString=3 / constructor=3 (accepted and written into the parameters) and ci --space constructor: usage errors", async () => {
    const a = mtx('spd3d.mtx', 'coordinate real symmetric', '3 3 5\n1 1 4\n2 1 1\n2 2 4\n3 2 1\n3 3 4\n');
    for (const [to, param] of [['ell', 'toString=3'], ['sell', 'constructor=3']]) {
      captured.stdout = '';
      expect(await main(['convert', a, '--to', to!, '--param', param!, '-o', join(dir, 'p.json'), '--json'])).toBe(2);
      expect(jsonError().message).toMatch(new RegExp(`--param ${param!.split('=')[0]}: unknown parameter`));
    }
    const h4 = join(__dirname, '../../../testdata/fcidump/H4_sto6g_R1.8_block2.FCIDUMP');
    captured.stdout = '';
    expect(await main(['ci', h4, '--backend', 'cpu', '--space', 'constructor', '--json'])).toBe(2); // was exit 3: "level … got function Object()"
    expect(jsonError().message).toMatch(/--space: expected fci, cis, cisd, cisdt, ci:<level> or cas:<electrons>,<orbitals>, got 'constructor'/);
  });
});

describe('start with a grid that cannot be built', () => {
  it('--grid 20724 (4.3e8 rows): exit 5, ResourceLimitError before the CI part (was a V8 heap-limit abort, exit 134, after it)', async () => {
    expect(await main(['start', '--grid', '20724', '--backend', 'cpu', '--json'])).toBe(5);
    expect(jsonError()).toMatchObject({ name: 'ResourceLimitError', exitCode: 5, message: expect.stringMatching(/'gen:poisson2d:20724' \(429484176 rows.*choose a smaller size/) });
    expect(captured.stderr).not.toMatch(/main job on/); // refused before the backend was opened
  });
});

describe('eigs on a matrix smaller than the default k', () => {
  it('a 3×3 matrix without --k: its 3 eigenvalues (was exit 2, "--k: expected 1..3, got 4" for a --k never given); --k 4 still refused', async () => {
    const a = mtx('spd3e.mtx', 'coordinate real symmetric', '3 3 5\n1 1 4\n2 1 1\n2 2 4\n3 2 1\n3 3 4\n');
    expect(await main(['eigs', a, '--backend', 'cpu', '--json'])).toBe(0);
    const j = JSON.parse(captured.stdout);
    // A = [[4,1,0],[1,4,1],[0,1,4]]: λ = 4 − √2, 4, 4 + √2
    expect(j.values).toHaveLength(3);
    for (const [i, want] of [4 - Math.SQRT2, 4, 4 + Math.SQRT2].entries()) expect(j.values[i]).toBeCloseTo(want, 8);
    captured.stdout = '';
    expect(await main(['eigs', a, '--backend', 'cpu', '--k', '4', '--json'])).toBe(2);
    expect(jsonError().message).toMatch(/--k: expected an integer in 1\.\.3 \(the matrix order\), got 4/);
  });
});

describe('ci --irrep with a list holding an impossible irrep', () => {
  it('--irrep 1,2 on H4 (irreps 1, 5 only) and --irrep 1,5 --nroots 17 (irrep 5 holds 16): refused before the first run (irrep 1 was solved, then discarded by the error)', async () => {
    const h4 = join(__dirname, '../../../testdata/fcidump/H4_sto6g_R1.8_block2.FCIDUMP');
    for (const [flags, want] of [
      [['--irrep', '1,2'], /InvalidParameterError: .*irrep 2 is not in the point group of the file/],
      [['--irrep', '1,5', '--nroots', '17'], /InvalidParameterError: parameter nroots: expected an integer in 1\.\.16 \(the space size\), got 17/],
    ] as const) {
      captured.stdout = '';
      captured.stderr = '';
      expect(await main(['ci', h4, '--backend', 'cpu', ...flags]), flags.join(' ')).toBe(3);
      expect(captured.stderr).toMatch(want);
      // no irrep was solved first: no result table, no finished stage
      expect(captured.stdout).toBe('');
      expect(captured.stderr).not.toMatch(/done: converged/);
    }
  });
});
