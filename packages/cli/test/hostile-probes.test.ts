/**
 * A hostile user's inputs to the CLI (session 6 hardening): each case is one that gave a wrong
 * exit code, a crash-like "bug" exit (70), a silently meaningless result or non-JSON output under
 * --json before its fix. The inputs are tiny files written here.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../src/main';
import { captured, captureOutput } from './capture';

captureOutput();
const dir = mkdtempSync(join(tmpdir(), 'gpusparse-probes-'));
const gpuTierSkipped = process.env.GPUSPARSE_GPU_TIER === 'skip' && process.env.GPUSPARSE_REQUIRE_GPU !== '1';

/** A Matrix Market file in the temporary folder: banner fields, then the size line and entries. */
function mtx(name: string, banner: string, body: string): string {
  const path = join(dir, name);
  writeFileSync(path, `%%MatrixMarket matrix ${banner}\n${body}`);
  return path;
}
const spd3 = mtx('spd3.mtx', 'coordinate real symmetric', '3 3 5\n1 1 4\n2 1 1\n2 2 4\n3 2 1\n3 3 4\n');
const upper = mtx('upper.mtx', 'coordinate real general', '3 3 5\n1 1 1\n1 2 10\n2 2 2\n2 3 7\n3 3 3\n');
const empty00 = mtx('empty00.mtx', 'coordinate real general', '0 0 0\n');
const huge = mtx('huge.mtx', 'coordinate real symmetric', '2 2 2\n1 1 4e39\n2 2 1\n');
const tiny = mtx('tiny.mtx', 'coordinate real symmetric', '2 2 2\n1 1 4e-42\n2 2 1e-42\n');
const vector = (name: string, values: string[]) => mtx(name, 'array real general', `${values.length} 1\n${values.join('\n')}\n`);
const truncated = mtx('trunc.mtx', 'coordinate real general', '3 3 4\n1 1 1\n2 2 1\n3 3 1\n');

/** The --json error document on stdout (and the plain message still on stderr). */
function jsonError(): { name: string; message: string; exitCode: number } {
  const j = JSON.parse(captured.stdout);
  expect(Object.keys(j)).toEqual(['error']);
  return j.error;
}

describe('--json stays valid JSON on errors', () => {
  it('bad input (a truncated Matrix Market file): {"error": …} with the class, message and exit code 3', async () => {
    expect(await main(['info', truncated, '--backend', 'cpu', '--json'])).toBe(3);
    const e = jsonError();
    expect(e).toMatchObject({ name: 'MatrixMarketError', exitCode: 3 });
    expect(e.message).toMatch(/trunc\.mtx:6: expected 4 entries/);
    expect(captured.stderr).toMatch(/trunc\.mtx:6/);
  });
  it('usage errors (--rtol abc, a missing option value, an unknown option): exit 2 with the error object', async () => {
    expect(await main(['solve', spd3, '--backend', 'cpu', '--json', '--rtol', 'abc'])).toBe(2);
    expect(jsonError()).toMatchObject({ name: 'UsageError', exitCode: 2, message: expect.stringMatching(/--rtol: expected .*got 'abc'/) });
    captured.stdout = '';
    expect(await main(['solve', spd3, '--json', '--bogus'])).toBe(2);
    expect(jsonError().message).toMatch(/--bogus/);
    captured.stdout = '';
    expect(await main(['frobnicate', '--json'])).toBe(2);
    expect(jsonError().message).toMatch(/unknown command 'frobnicate'/);
  });
  it('a missing file and a directory given as a file: exit 3, JSON error naming the path', async () => {
    expect(await main(['ci', join(dir, 'none.FCIDUMP'), '--backend', 'cpu', '--json'])).toBe(3);
    expect(jsonError().message).toMatch(/none\.FCIDUMP/);
    captured.stdout = '';
    expect(await main(['info', dir, '--backend', 'cpu', '--json'])).toBe(3);
    expect(jsonError().message).toMatch(/EISDIR/);
  });
  it('a solver that does not converge still prints its result document, not an error object', async () => {
    expect(await main(['solve', spd3, '--backend', 'cpu', '--json', '--maxit', '0'])).toBe(1);
    const j = JSON.parse(captured.stdout);
    expect(j.error).toBeUndefined();
    expect(j.converged).toBe(false);
  });
  it('without --json stdout stays empty on errors', async () => {
    expect(await main(['info', truncated, '--backend', 'cpu'])).toBe(3);
    expect(captured.stdout).toBe('');
  });
});

describe('eigs refuses what it cannot answer', () => {
  it('a non-symmetric matrix: exit 3 naming the first unequal pair (no "not converged" run with a misleading note)', async () => {
    for (const method of ['lanczos', 'davidson', 'lobpcg']) {
      captured.stderr = '';
      expect(await main(['eigs', upper, '--k', '1', '--method', method, '--backend', 'cpu'])).toBe(3);
      expect(captured.stderr).toMatch(/InvalidMatrixError: .*upper\.mtx.*expected a symmetric matrix.*row 1, column 2.*10.*row 2, column 1.*0/);
    }
  });
  it('a 0×0 matrix: exit 3 saying it has no eigenvalues (not "--k in 1..0")', async () => {
    expect(await main(['eigs', empty00, '--backend', 'cpu'])).toBe(3);
    expect(captured.stderr).toMatch(/0×0.*no eigenvalues/);
    expect(captured.stderr).not.toMatch(/1\.\.0/);
  });
});

describe.skipIf(gpuTierSkipped)('solve --backend webgpu edge values', () => {
  it('--maxit 0: a result (the tuner asked for ≥ 1 product), not a bug exit 70; "converged" only with a float64 residual that passes', async () => {
    // on WebGPU --maxit bounds each inner float32 solve of the refinement, so the solve may still converge
    const code = await main(['solve', spd3, '--backend', 'webgpu', '--maxit', '0', '--json']);
    expect([0, 1]).toContain(code);
    const j = JSON.parse(captured.stdout);
    expect(j.converged).toBe(code === 0);
    if (j.converged) expect(j.relativeResidualFloat64).toBeLessThanOrEqual(1e-8);
    expect(captured.stderr).not.toMatch(/bug/);
  });
  it('A outside the float32 range (4e39; every value below 1.2e-38): exit 3 naming the value and --backend cpu, not "no kernel passes verification"', async () => {
    expect(await main(['solve', huge, '--backend', 'webgpu'])).toBe(3);
    expect(captured.stderr).toMatch(/InvalidMatrixError: A\(row 1, column 1\): expected \|value\| ≤ 3\.4e38 .*float32.*got 4e\+39.*--backend cpu/);
    captured.stderr = '';
    expect(await main(['solve', tiny, '--backend', 'webgpu'])).toBe(3); // (eigs' shift-invert runs in float64 on the host and answers it)
    expect(captured.stderr).toMatch(/InvalidMatrixError: A: expected a largest \|value\| ≥ 1\.2e-38.*got 4e-42.*--backend cpu/);
    captured.stderr = '';
    expect(await main(['solve', huge, '--backend', 'cpu'])).toBe(0); // float64 holds it
  });
  it('b beyond float32 (1e39, 1e-39, 1e300): solved through a power-of-two scaling, x = A⁻¹b to the tolerance (was non-finite, x NaN)', async () => {
    for (const [name, scale] of [['b39.mtx', 1e39], ['bm39.mtx', 1e-39], ['b300.mtx', 1e300]] as const) {
      const b = vector(name, [`${scale}`, `${2 * scale}`, `${scale}`]);
      for (const extra of [[], ['--no-refine', '--rtol', '1e-5']]) {
        captured.stdout = '';
        expect(await main(['solve', spd3, b, '--backend', 'webgpu', '--json', '--with-x', ...extra])).toBe(0);
        const j = JSON.parse(captured.stdout);
        expect(j.converged).toBe(true);
        expect(j.relativeResidualFloat64).toBeLessThanOrEqual(extra.length ? 1e-5 : 1e-8);
        // A = [[4,1,0],[1,4,1],[0,1,4]], b = s·(1,2,1): x = s·(1,3,1)/7
        expect(j.x[1] / scale).toBeCloseTo(3 / 7, 4);
        expect(j.history.every((h: { residual: number }) => Number.isFinite(h.residual))).toBe(true);
      }
    }
  });});

describe('solve --backend cpu edge values', () => {
  it('b = 1e300 on the CPU backend too: converged, x = A⁻¹b (was non-finite: ‖b‖² overflowed float64)', async () => {
    const b = vector('b300cpu.mtx', ['1e300', '2e300', '1e300']);
    expect(await main(['solve', spd3, b, '--backend', 'cpu', '--json', '--with-x'])).toBe(0);
    const j = JSON.parse(captured.stdout);
    expect(j.converged).toBe(true);
    expect(j.relativeResidualFloat64).toBeLessThanOrEqual(1e-8);
    expect(j.x[0] / 1e300).toBeCloseTo(1 / 7, 10);
  });
});
