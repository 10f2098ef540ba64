/**
 * Session 11 hostile input paths on the CLI: a named pipe, '-' for standard input, a PETSc name
 * on a pipe. The loader opened the path to look for a PETSc class id, closed it, then opened it
 * again for the Matrix Market reader: on a named pipe the second open waited for a writer that
 * had already written (a hang), and '-' was looked up as a file named '-' (ENOENT).
 */
import { execFileSync, spawn } from 'node:child_process';
import { closeSync, constants, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../src/main';
import { captured, captureOutput } from './capture';

captureOutput();
const dir = mkdtempSync(join(tmpdir(), 'gpusparse-s11b-paths-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const text = '%%MatrixMarket matrix coordinate real symmetric\n3 3 5\n1 1 4\n2 1 -1\n2 2 4\n3 2 -1\n3 3 4\n';
const file = join(dir, 'a.mtx');
writeFileSync(file, text);

/**
 * Run `main(args)` while a child process writes the test matrix into `fifo`; fails after 60 s instead
 * of hanging — a hang is forever, while a loaded CI machine can take seconds to start the writer
 * and load the command's modules (session 13).
 */
async function withWriter(fifo: string, args: string[]): Promise<number> {
  const writer = spawn('sh', ['-c', 'cat "$1" > "$2"', 'sh', file, fifo], { stdio: 'ignore' });
  let timer: NodeJS.Timeout | undefined;
  const hang = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`gpusparse ${args.join(' ')} did not return in 60 s`)), 60_000);
  });
  try {
    return await Promise.race([main(args), hang]);
  } finally {
    clearTimeout(timer);
    writer.kill();
    try {
      closeSync(openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK)); // release a reader blocked in open()
    } catch {
      // no reader waiting
    }
  }
}

describe.skipIf(process.platform === 'win32')('a matrix from a named pipe or standard input', () => {
  it('info on a named pipe reads the matrix once (hung before: the PETSc sniff opened it first)', async () => {
    const fifo = join(dir, 'a.fifo');
    execFileSync('mkfifo', [fifo]);
    expect(await withWriter(fifo, ['info', fifo, '--json'])).toBe(0);
    const doc = JSON.parse(captured.stdout) as { stats: { rows: number; nnz: number } };
    expect(doc.stats).toMatchObject({ rows: 3, nnz: 7 });
  }, 90_000);

  it("solve on a named pipe: the answer of the file's matrix", async () => {
    const fifo = join(dir, 'b.fifo');
    execFileSync('mkfifo', [fifo]);
    expect(await withWriter(fifo, ['solve', fifo, '--backend', 'cpu', '--json'])).toBe(0);
    const doc = JSON.parse(captured.stdout) as { converged: boolean; relativeResidualFloat64: number };
    expect(doc.converged).toBe(true);
    expect(doc.relativeResidualFloat64).toBeLessThan(1e-6);
  }, 90_000);

  it('a PETSc name on a pipe: a usage error saying the reader needs a regular file (not a wrong-format error)', async () => {
    const fifo = join(dir, 'c.petsc');
    execFileSync('mkfifo', [fifo]);
    expect(await main(['info', fifo])).toBe(2);
    expect(captured.stderr).toMatch(/c\.petsc is a pipe or device: the PETSc reader needs a regular file/);
  });

  it("'-' reads standard input (was ENOENT for a file named '-')", () => {
    const cli = join(import.meta.dirname, '../src/main.ts');
    const out = execFileSync('sh', ['-c', 'cat "$1" | "$2" --import tsx "$3" info - --json', 'sh', file, process.execPath, cli], { encoding: 'utf8' });
    expect(JSON.parse(out)).toMatchObject({ matrix: '/dev/stdin', stats: { rows: 3, nnz: 7 } });
  }, 90_000);
});
