import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { csrSpmv, readMatrixMarket } from '@gpusparse/formats';
import { describe, expect, it } from 'vitest';
import { main } from '../src/main';
import { captured, captureOutput } from './capture';
import { dataFile } from '../../../testdata/index';

captureOutput();

describe('gpusparse solve -o x.mtx / --json --with-x (CPU backend)', () => {
  const a = dataFile('matrices', 'bcsstk01.mtx');

  it('-o writes x as a Matrix Market n×1 array that reads back and solves A x = A·1; --with-x gives the same x in JSON', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gpusparse-x-'));
    const xPath = join(dir, 'x.mtx');
    expect(await main(['solve', a, '--backend', 'cpu', '--precond', 'jacobi', '--rtol', '1e-10', '-o', xPath, '--json', '--with-x'])).toBe(0);
    const j = JSON.parse(captured.stdout);
    expect(j.xFile).toBe(xPath);
    expect(readFileSync(xPath, 'utf8')).toMatch(/^%%MatrixMarket matrix array real general\n% x from gpusparse solve/);
    const x = (await readMatrixMarket(xPath)).matrix;
    expect([x.rows, x.cols]).toEqual([48, 1]);
    const xs = new Float64Array(48);
    for (let i = 0; i < 48; i++) for (let k = x.rowPtr[i]!; k < x.rowPtr[i + 1]!; k++) xs[i] = x.values[k]!;
    // the file holds exactly the x of the JSON output (shortest round-trip decimals)
    expect(Array.from(xs)).toEqual(j.x);
    // and it is the solution: A·x = A·1 to the requested tolerance
    const am = (await readMatrixMarket(a)).matrix;
    const b = csrSpmv(am, new Float64Array(48).fill(1));
    const r = csrSpmv(am, xs);
    let rn = 0;
    let bn = 0;
    for (let i = 0; i < 48; i++) {
      rn += (r[i]! - b[i]!) ** 2;
      bn += b[i]! ** 2;
    }
    expect(Math.sqrt(rn / bn)).toBeLessThan(1e-9);
  });

  it('without -o or --with-x the JSON has no x (output size stays O(history))', async () => {
    expect(await main(['solve', 'gen:poisson2d:8', '--backend', 'cpu', '--json'])).toBe(0);
    const j = JSON.parse(captured.stdout);
    expect(j.x).toBeUndefined();
    expect(j.xFile).toBeUndefined();
  });

  it('the text output names the file x went to', async () => {
    const xPath = join(mkdtempSync(join(tmpdir(), 'gpusparse-x-')), 'x.mtx');
    expect(await main(['solve', 'gen:poisson2d:8', '--backend', 'cpu', '--output', xPath])).toBe(0);
    expect(captured.stdout).toContain(`x written to ${xPath}`);
    expect((await readMatrixMarket(xPath)).matrix.rows).toBe(64);
  });

  it('--with-x without --json is a usage error (exit 2)', async () => {
    expect(await main(['solve', 'gen:poisson2d:8', '--backend', 'cpu', '--with-x'])).toBe(2);
    expect(captured.stderr).toMatch(/--with-x: .*--json/);
  });

  it('an output path in a missing folder fails with a message naming the path, not a stack trace', async () => {
    const xPath = join(tmpdir(), 'gpusparse-no-such-dir', 'sub', 'x.mtx');
    const code = await main(['solve', 'gen:poisson2d:8', '--backend', 'cpu', '-o', xPath]);
    expect(code).not.toBe(0);
    expect(code).not.toBe(70);
    expect(captured.stderr).toContain(xPath);
  });
});
