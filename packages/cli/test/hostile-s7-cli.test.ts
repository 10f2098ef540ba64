/**
 * Session 7 hostile inputs through the CLI: each case gave a silent wrong answer, a misleading
 * exit code or message before its fix. Tiny files written here.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../src/main';
import { captured, captureOutput } from './capture';

captureOutput();
const dir = mkdtempSync(join(tmpdir(), 'gpusparse-s7-'));
afterAll(() => rmSync(dir, { recursive: true, force: true })); // the null-device nodes too
const gpuTierSkipped = process.env.GPUSPARSE_GPU_TIER === 'skip' && process.env.GPUSPARSE_REQUIRE_GPU !== '1';

/** A diagonal Matrix Market file with the given values. */
function diag(name: string, values: string[]): string {
  const path = join(dir, name);
  writeFileSync(path, `%%MatrixMarket matrix coordinate real general\n${values.length} ${values.length} ${values.length}\n${values.map((v, i) => `${i + 1} ${i + 1} ${v}`).join('\n')}\n`);
  return path;
}
/** The entries of a coordinate Matrix Market file as "i j value" lines. */
const entries = (path: string) => readFileSync(path, 'utf8').split('\n').filter((l) => /^\d+ \d+ /.test(l)).slice(1);

describe.skipIf(gpuTierSkipped)('spgemm outside float32 on the device', () => {
  it('values 1e20 (products 1e40) or 1e-30 (products 1e-60): C = A·B to float32 rounding, exit 0 (was Infinity written, or the entries dropped)', async () => {
    for (const [name, values] of [['big.mtx', ['1e20', '3e19', '-2e20']], ['tiny.mtx', ['3e-30', '1e-30', '-2e-30']]] as const) {
      const a = diag(name, [...values]);
      const out = join(dir, `c-${name}`);
      captured.stdout = '';
      expect(await main(['spgemm', a, a, '-o', out, '--backend', 'webgpu', '--check', '--json'])).toBe(0);
      expect(JSON.parse(captured.stdout)).toMatchObject({ nnzC: 3, engine: expect.stringMatching(/^webgpu/), check: { pass: true } });
      const c = entries(out).map((l) => Number(l.split(' ')[2]));
      values.forEach((v, i) => {
        expect(Math.abs(c[i]! - Number(v) ** 2) / Number(v) ** 2).toBeLessThan(1e-6);
      });
    }
  });
  it('products beyond float32 even scaled: webgpu exit 3 naming both ranges; auto multiplies on the host and says so', async () => {
    const a = diag('span.mtx', ['1e-30', '1', '1e-12']);
    const out = join(dir, 'span-c.mtx');
    expect(await main(['spgemm', a, a, '-o', out, '--backend', 'webgpu', '--json'])).toBe(3);
    expect(JSON.parse(captured.stdout).error).toMatchObject({ name: 'InvalidMatrixError', exitCode: 3, message: expect.stringMatching(/got A from 1\.00e-30 to 1\.00e\+0 .*--backend cpu/) });
    captured.stdout = '';
    expect(await main(['spgemm', a, a, '-o', out, '--json'])).toBe(0);
    expect(JSON.parse(captured.stdout)).toMatchObject({ engine: 'host float64', note: expect.stringMatching(/cannot hold these operands' products .*float64 host product/) });
    const c = entries(out).map((l) => Number(l.split(' ')[2]));
    [1e-60, 1, 1e-24].forEach((want, i) => {
      expect(c[i]! / want).toBeCloseTo(1, 12);
    });
  });
});

/** Big-endian PETSc binary from parts: int32 header words, then float64 values, per part. */
function petsc(name: string, parts: [number[], number[]][]): string {
  const bufs = parts.map(([ints, doubles]) => {
    const buf = Buffer.alloc(4 * ints.length + 8 * doubles.length);
    for (const [i, v] of ints.entries()) buf.writeInt32BE(v, 4 * i);
    for (const [i, v] of doubles.entries()) buf.writeDoubleBE(v, 4 * ints.length + 8 * i);
    return buf;
  });
  const path = join(dir, name);
  writeFileSync(path, Buffer.concat(bufs));
  return path;
}

describe('a right-hand side of the wrong length is bad input (exit 3), not a usage error (was exit 2)', () => {
  const a3 = diag('a3.mtx', ['4', '4', '4']);
  it('solve with a Matrix Market b of 2 rows, or 3×2; export --rhs with a PETSc vector of 5', async () => {
    const b2 = join(dir, 'b2.mtx');
    writeFileSync(b2, '%%MatrixMarket matrix array real general\n2 1\n1\n2\n');
    const b32 = join(dir, 'b32.mtx');
    writeFileSync(b32, '%%MatrixMarket matrix array real general\n3 2\n1\n2\n3\n4\n5\n6\n');
    const v5 = petsc('v5.petsc', [[[1211214, 5], [1, 2, 3, 4, 5]]]);
    for (const [args, message] of [
      [['solve', a3, b2], /b \(.*b2\.mtx\): expected length 3 \(A's rows\), got 2×1/],
      [['solve', a3, b32], /b \(.*b32\.mtx\): expected length 3×1 \(a vector of A's rows\), got 3×2/],
      [['export', a3, '-o', join(dir, 'e.petsc'), '--rhs', v5], /--rhs \(.*v5\.petsc\): expected length 3 \(A's rows\), got a PETSc vector of 5/],
    ] as const) {
      captured.stdout = '';
      expect(await main([...args, '--backend', 'cpu', '--json']), args.join(' ')).toBe(3);
      expect(JSON.parse(captured.stdout).error).toMatchObject({ name: 'DimensionMismatchError', exitCode: 3, message: expect.stringMatching(message) });
    }
  });
  it('solve with a PETSc file holding A (3×3) and a vector of 5 after it', async () => {
    const mv = petsc('mv.petsc', [[[1211216, 3, 3, 3, 1, 1, 1, 0, 1, 2], [4, 4, 4]], [[1211214, 5], [1, 2, 3, 4, 5]]]);
    expect(await main(['solve', mv, '--backend', 'cpu', '--json'])).toBe(3);
    expect(JSON.parse(captured.stdout).error.message).toMatch(/b stored in .*mv\.petsc: expected length 3 \(A's rows\), got a vector of 5/);
  });
});

describe('ci --export-petsc', () => {
  const h4 = join(__dirname, '../../../testdata/fcidump/H4_sto6g_R1.8_block2.FCIDUMP');
  it('--ms2 0.5 and --irrep 9 / 0 / 2.5: usage errors (exit 2) as in the built-in driver (were exit 3)', async () => {
    for (const flags of [['--ms2', '0.5'], ['--irrep', '9'], ['--irrep', '0'], ['--irrep', '2.5']]) {
      captured.stderr = '';
      expect(await main(['ci', h4, '--export-petsc', join(dir, 'h.petsc'), ...flags]), flags.join(' ')).toBe(2);
      expect(captured.stderr).toMatch(new RegExp(`${flags[0]}: expected .*got '${flags[1]}'`));
    }
  });
  it('to a full device (/dev/full): exit 5 naming the path (was a bare "ENOSPC: no space left on device, write")', async () => {
    expect(await main(['ci', h4, '--export-petsc', '/dev/full', '--json'])).toBe(5);
    expect(JSON.parse(captured.stdout).error).toMatchObject({ name: 'OutputSpaceError', exitCode: 5, message: expect.stringMatching(/^writing \/dev\/full failed: ENOSPC/) });
  });
});

/** A null character device (1,3) made in the temporary folder, or undefined without root. */
function nullDevice(name: string): string | undefined {
  const path = join(dir, name);
  return spawnSync('mknod', [path, 'c', '1', '3']).status === 0 ? path : undefined;
}
const canMknod = nullDevice('probe-null') !== undefined;

describe.skipIf(!canMknod)('PETSc output to a device (a null device made in the temporary folder)', () => {
  it('export -o <null device> [--rhs ones]: exit 0, the device stays (was exit 70 after ftruncate EINVAL, and the device node removed: as root, /dev/null)', async () => {
    for (const extra of [[], ['--rhs', 'ones']]) {
      const nul = nullDevice(`null-export${extra.length}`)!;
      expect(await main(['export', 'gen:laplacian1d:100', '-o', nul, ...extra, '--json']), extra.join(' ')).toBe(0);
      expect(statSync(nul).isCharacterDevice()).toBe(true);
    }
    expect(readdirSync(dir).filter((f) => f.includes('partial'))).toEqual([]);
  });
  it('ci --export-petsc <null device>: exit 0, no diagonal file beside it, the device stays', async () => {
    const nul = nullDevice('null-ci')!;
    const h4 = join(__dirname, '../../../testdata/fcidump/H4_sto6g_R1.8_block2.FCIDUMP');
    expect(await main(['ci', h4, '--export-petsc', nul, '--json'])).toBe(0);
    expect(JSON.parse(captured.stdout)).toMatchObject({ determinants: 36, diagonal: null });
    expect(statSync(nul).isCharacterDevice()).toBe(true);
    expect(existsSync(`${nul}.diag`)).toBe(false);
  });
});
