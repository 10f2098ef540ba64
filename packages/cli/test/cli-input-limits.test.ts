// Issue 13, CLI side: usage errors (2) for unknown names and malformed numbers, resource errors
// (5) for what cannot fit (memory, a full disk) with bytes or the path in the message, 70 only
// for bugs, and −0 kept in JSON. In-process runs of main(); the big inputs are in
// cli-hostile-input.test.ts (child processes with a memory cap).
import { mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ResourceLimitError } from '@gpusparse/formats';
import { describe, expect, it } from 'vitest';
import { exitCodeOf, main } from '../src/main';
import { jsonText } from '../src/util/context';
import { captured, captureOutput } from './capture';
import { dataFile } from '../../../testdata/index';

const data = (f: string) => dataFile('matrices', f);
const fcidump = new URL('../../chem/data/H2O_sto2g_hande.FCIDUMP', import.meta.url).pathname;

captureOutput();

describe('unknown names are usage errors (exit 2) listing the valid ones', () => {
  it('convert --to nope', async () => {
    expect(await main(['convert', data('bcsstk01.mtx'), '--to', 'nope', '-o', '/tmp/x.json'])).toBe(2);
    expect(captured.stderr).toMatch(/--to: unknown format 'nope': expected one of csr, coo, csc, ell/);
  });
  it('ci --format nope (CPU backend too)', async () => {
    expect(await main(['ci', fcidump, '--format', 'nope', '--backend', 'cpu'])).toBe(2);
    expect(captured.stderr).toMatch(/--format: unknown format 'nope': expected one of auto, csr, coo/);
  });
  it('solve --kernel bogus, on the default backend and with --backend cpu', async () => {
    expect(await main(['solve', 'gen:laplacian1d:10', '--kernel', 'bogus'])).toBe(2);
    expect(captured.stderr).toMatch(/--kernel: unknown kernel 'bogus': expected one of csr-/);
    captured.stderr = '';
    expect(await main(['solve', 'gen:laplacian1d:10', '--kernel', 'bogus', '--backend', 'cpu'])).toBe(2);
    expect(captured.stderr).toMatch(/unknown kernel 'bogus'/);
  });
  it('eigs --kernel bogus --backend cpu (checked where the operator is built)', async () => {
    expect(await main(['eigs', 'gen:laplacian1d:10', '--k', '1', '--kernel', 'bogus', '--backend', 'cpu'])).toBe(2);
    expect(captured.stderr).toMatch(/--kernel: unknown kernel 'bogus'/);
  });
  it('a valid --kernel with --backend cpu is not silently ignored: a note says so', async () => {
    expect(await main(['solve', 'gen:laplacian1d:10', '--kernel', 'csr-vector', '--backend', 'cpu'])).toBe(0);
    expect(captured.stderr).toMatch(/--kernel csr-vector selects a WebGPU kernel; the CPU backend multiplies with float64 host CSR/);
  });
  it('tune --kernels and bench --kernels with a bogus id', async () => {
    expect(await main(['tune', 'gen:laplacian1d:10', '--kernels', 'csr-vector,bogus'])).toBe(2);
    expect(captured.stderr).toMatch(/--kernels: unknown kernel 'bogus'/);
    expect(await main(['bench', 'gen:laplacian1d:10', '--kernels', 'bogus'])).toBe(2);
  });
  it('info --formats with an unknown name', async () => {
    expect(await main(['info', 'gen:laplacian1d:10', '--formats', 'csr,nope'])).toBe(2);
    expect(captured.stderr).toMatch(/--formats: unknown format 'nope'/);
  });
});

describe('numeric options: decimal and exponent forms only (exit 2 naming the option)', () => {
  for (const bad of ['0x1', '', ' ', '1e', 'nan', 'inf', 'Infinity', '-1', '1e400']) {
    it(`--rtol '${bad}'`, async () => {
      expect(await main(['solve', 'gen:laplacian1d:10', '--backend', 'cpu', `--rtol=${bad}`])).toBe(2);
      expect(captured.stderr).toMatch(/--rtol: expected a finite decimal number ≥ 0/);
    });
  }
  it('integers must be safe integers in range', async () => {
    expect(await main(['solve', 'gen:laplacian1d:10', '--backend', 'cpu', '--maxit', '9007199254740993'])).toBe(2);
    expect(captured.stderr).toMatch(/--maxit: expected an integer of magnitude at most 2\^53 − 1/);
    expect(await main(['solve', 'gen:laplacian1d:10', '--backend', 'cpu', '--maxit', '2.5'])).toBe(2);
    expect(await main(['solve', 'gen:laplacian1d:10', '--backend', 'cpu', '--restart', '0'])).toBe(2);
    expect(await main(['start', '--grid', '0x10'])).toBe(2);
    expect(captured.stderr).toMatch(/--grid: expected an integer in \[2, 20724\]/);
  });
  it('exponent forms are accepted', async () => {
    expect(await main(['solve', 'gen:laplacian1d:10', '--backend', 'cpu', '--rtol', '1E-10', '--maxit', '1e3', '--json'])).toBe(0);
    expect(JSON.parse(captured.stdout).converged).toBe(true);
  });
  it('convert --param and --C are strict too', async () => {
    expect(await main(['convert', data('bcsstk01.mtx'), '--to', 'sell', '--C', '0x8', '-o', '/tmp/x.json'])).toBe(2);
    expect(captured.stderr).toMatch(/--param C: expected a finite decimal number/);
  });
  it('generator arguments are strict integers', async () => {
    expect(await main(['info', 'gen:poisson2d:0x10'])).toBe(2);
    expect(await main(['info', 'gen:poisson2d:1e1', '--formats', 'csr'])).toBe(0);
    expect(captured.stdout).toMatch(/100 x 100/);
  });
});

describe('generated matrices are checked before allocation', () => {
  it('gen:poisson2d:100000 (10^10 rows) is outside the 32-bit range: exit 2 with the size', async () => {
    expect(await main(['info', 'gen:poisson2d:100000'])).toBe(2);
    expect(captured.stderr).toMatch(/'gen:poisson2d:100000' has 10000000000 rows and 49999600000 non-zeros: expected at most 2147483647 of each/);
  });
  it('gen:poisson2d:20000 fits 32-bit indices but not this process: exit 5 with bytes needed and available', async () => {
    // 4·10^8 rows: 24 GB of CSR, and 40 GB of V8 heap for the generator's per-row arrays
    expect(await main(['info', 'gen:poisson2d:20000'])).toBe(5);
    expect(captured.stderr).toMatch(/ResourceLimitError: 'gen:poisson2d:20000' \(400000000 rows.*needs \d+\.\d [GT]B, \d+\.\d [MGT]B available/);
  });
});

describe('a full device when writing output is exit 5 naming the path', () => {
  it('convert -o /dev/full (JSON)', async () => {
    expect(await main(['convert', data('bcsstk01.mtx'), '--to', 'ell', '-o', '/dev/full'])).toBe(5);
    expect(captured.stderr).toMatch(/writing \/dev\/full failed: ENOSPC \(no space left on the device\) with \d+ bytes to write/);
  });
  it('convert to a .mtx path on a full device (the streaming Matrix Market writer)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gpusparse-'));
    const o = join(dir, 'full.mtx');
    symlinkSync('/dev/full', o);
    expect(await main(['convert', data('bcsstk01.mtx'), '--to', 'sell', '-o', o])).toBe(5);
    expect(captured.stderr).toMatch(/writing .*full\.mtx failed: ENOSPC/);
  });
  it('info --spy /dev/full', async () => {
    expect(await main(['info', 'gen:laplacian1d:10', '--spy', '/dev/full', '--formats', 'csr'])).toBe(5);
    expect(captured.stderr).toMatch(/writing \/dev\/full failed: ENOSPC/);
  });
  it('EDQUOT, EFBIG and allocation RangeErrors map to 5; other errors stay 70', () => {
    const coded = (code: string) => Object.assign(new Error(`${code}: x`), { code });
    expect(exitCodeOf(coded('EDQUOT'))).toBe(5);
    expect(exitCodeOf(coded('EFBIG'))).toBe(5);
    expect(exitCodeOf(new RangeError('Invalid typed array length: 10000000001'))).toBe(5);
    expect(exitCodeOf(new RangeError('Array buffer allocation failed'))).toBe(5);
    expect(exitCodeOf(new ResourceLimitError('x', 2, 1))).toBe(5);
    expect(exitCodeOf(coded('EROFS'))).toBe(3);
    expect(exitCodeOf(new RangeError('offset is out of bounds'))).toBe(70);
    expect(exitCodeOf(new TypeError('x is not a function'))).toBe(70);
  });
});

describe('−0 survives JSON output', () => {
  it('jsonText writes -0 (JSON.parse reads it back as −0)', () => {
    const text = jsonText({ a: -0, v: Float64Array.of(-0, 0, 1.5), s: 'keep "-0" strings' });
    expect(text).toBe('{"a":-0,"v":[-0,0,1.5],"s":"keep \\"-0\\" strings"}');
    const back = JSON.parse(text);
    expect(Object.is(back.a, -0)).toBe(true);
    expect(Object.is(back.v[0], -0)).toBe(true);
    expect(Object.is(back.v[1], 0)).toBe(true);
  });
  it('convert: the JSON file keeps the −0 values its "round trip exact" line is about', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gpusparse-'));
    const src = join(dir, 'negzero.mtx');
    writeFileSync(src, '%%MatrixMarket matrix coordinate real general\n2 2 3\n1 1 -0\n1 2 -0.0\n2 2 1.5\n');
    const o = join(dir, 'a.json');
    expect(await main(['convert', src, '--to', 'coo', '-o', o])).toBe(0);
    expect(captured.stdout).toMatch(/round trip exact/);
    const conv = JSON.parse(readFileSync(o, 'utf8'));
    expect(conv.values.map((x: number) => Object.is(x, -0))).toEqual([true, true, false]);
  });
});
