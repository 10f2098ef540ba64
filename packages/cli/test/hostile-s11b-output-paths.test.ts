/**
 * Session 11 hostile output paths: `solve A.mtx -o A.mtx` replaced the matrix by x without a word
 * (so did convert and export), an output in a missing folder failed only after the solve, two
 * options naming one file wrote it twice. Now all are usage errors (exit 2) before any work.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../src/main';
import { captured, captureOutput } from './capture';

captureOutput();
const dir = mkdtempSync(join(tmpdir(), 'gpusparse-s11b-out-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const text = '%%MatrixMarket matrix coordinate real symmetric\n3 3 5\n1 1 4\n2 1 -1\n2 2 4\n3 2 -1\n3 3 4\n';

function input(name: string): string {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
}

describe('an output that is an input file', () => {
  const cases: [string, (a: string) => string[]][] = [
    ['solve -o', (a) => ['solve', a, '--backend', 'cpu', '-o', a]],
    ['convert -o', (a) => ['convert', a, '--to', 'ell', '-o', a]],
    ['export -o', (a) => ['export', a, '-o', a]],
    ['spgemm -o B', (a) => ['spgemm', join(dir, 'other.mtx'), a, '--backend', 'cpu', '-o', a]],
  ];
  for (const [name, args] of cases) {
    it(`${name}: refused, the input unchanged (was overwritten, exit 0)`, async () => {
      const a = input(`${name.replace(/\W/g, '')}.mtx`);
      input('other.mtx');
      expect(await main([...args(a), '--json'])).toBe(2);
      expect(JSON.parse(captured.stdout).error.message).toMatch(/that is the input file .*writing it would replace the input/);
      expect(readFileSync(a, 'utf8')).toBe(text);
    });
  }
  it('the same file through another spelling of its path (./, ..) is found too', async () => {
    const a = input('spelled.mtx');
    mkdirSync(join(dir, 'sub'), { recursive: true });
    expect(await main(['solve', a, '--backend', 'cpu', '-o', join(dir, 'sub', '..', '.', 'spelled.mtx')])).toBe(2);
    expect(readFileSync(a, 'utf8')).toBe(text);
  });
});

describe('outputs checked before the work', () => {
  it('a missing folder: usage error naming the folder (was exit 3 after the solve)', async () => {
    const x = join(dir, 'no-such-folder', 'x.mtx');
    expect(await main(['solve', 'gen:poisson2d:30', '--backend', 'cpu', '-o', x, '--json'])).toBe(2);
    const doc = JSON.parse(captured.stdout) as { error: { message: string } };
    expect(doc.error.message).toBe(`--output ${x}: the folder ${join(dir, 'no-such-folder')} does not exist (create it first)`);
  });
  it('a folder given as the output file: usage error (was EISDIR after the conversion)', async () => {
    expect(await main(['convert', 'gen:poisson2d:4', '--to', 'ell', '-o', dir])).toBe(2);
    expect(captured.stderr).toMatch(/expected a file path, got a folder/);
  });
  it('a path under a regular file (file/x.mtx): usage error naming it', async () => {
    const f = input('plain.mtx');
    expect(await main(['solve', 'gen:poisson2d:4', '--backend', 'cpu', '--plot', join(f, 'conv.svg')])).toBe(2);
    expect(captured.stderr).toMatch(/plain\.mtx is not a folder/);
  });
  it('-o and --plot naming one file: usage error (the plot overwrote x)', async () => {
    const p = join(dir, 'both.out');
    expect(await main(['solve', 'gen:poisson2d:4', '--backend', 'cpu', '-o', p, '--plot', p])).toBe(2);
    expect(captured.stderr).toMatch(/--plot .*both\.out: the same file as --output/);
  });
  it('a good output path still works (the checks refuse nothing else)', async () => {
    const x = join(dir, 'x.mtx');
    expect(await main(['solve', 'gen:poisson2d:4', '--backend', 'cpu', '-o', x])).toBe(0);
    expect(readFileSync(x, 'utf8')).toMatch(/^%%MatrixMarket matrix array real general/);
  });
});
