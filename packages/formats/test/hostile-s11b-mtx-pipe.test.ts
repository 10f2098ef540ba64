// Session 11 hardening: a Matrix Market file that is not a regular file. The reader opened the
// path twice (2 bytes at position 0 to look for the gzip magic, then the stream): a named pipe
// or a piped /dev/stdin failed with ESPIPE, and a sniff that did read would have taken the
// writer's bytes before the second open. Now one open serves both, reading from the current
// position.
import { execFileSync, spawn } from 'node:child_process';
import { closeSync, constants, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { readMatrixMarket } from '../src/mtx/node';

const dir = mkdtempSync(join(tmpdir(), 'gpusparse-s11b-pipe-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const text = '%%MatrixMarket matrix coordinate real symmetric\n3 3 5\n1 1 4\n2 1 -1\n2 2 4\n3 2 -1\n3 3 4\n';

/**
 * Read `fifo` while a child process writes `bytes` into it; fails (rather than hangs) after 60 s —
 * a hang is forever, while a loaded CI machine can take seconds to start the writer (session 13).
 */
async function readWhileWritten(fifo: string, bytes: Buffer) {
  const src = join(dir, `src-${Math.random().toString(36).slice(2)}`);
  writeFileSync(src, bytes);
  const writer = spawn('sh', ['-c', 'cat "$1" > "$2"', 'sh', src, fifo], { stdio: 'ignore' });
  let timer: NodeJS.Timeout | undefined;
  const hang = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('readMatrixMarket did not return in 60 s')), 60_000);
  });
  try {
    return await Promise.race([readMatrixMarket(fifo), hang]);
  } finally {
    clearTimeout(timer);
    writer.kill();
    // a reader still blocked in open() of the pipe is released by a writer that opens and closes
    try {
      closeSync(openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK));
    } catch {
      // no reader waiting: nothing to release
    }
  }
}

describe.skipIf(process.platform === 'win32')('Matrix Market from a named pipe', () => {
  it('plain text: read once, the same matrix as the file (ESPIPE before: the sniff read at position 0)', async () => {
    const fifo = join(dir, 'plain.fifo');
    execFileSync('mkfifo', [fifo]);
    const r = await readWhileWritten(fifo, Buffer.from(text));
    expect(r.matrix.rows).toBe(3);
    expect(Array.from(r.matrix.values)).toEqual([4, -1, -1, 4, -1, -1, 4]);
  }, 90_000);

  it('gzip-compressed: the magic bytes are found in the stream and it is inflated (ESPIPE before: the sniff read at position 0)', async () => {
    const fifo = join(dir, 'gz.fifo');
    execFileSync('mkfifo', [fifo]);
    const r = await readWhileWritten(fifo, gzipSync(text));
    expect(Array.from(r.matrix.rowPtr)).toEqual([0, 2, 5, 7]);
  }, 90_000);

  it('a 1-byte and an empty pipe: the banner error, not a hang (ESPIPE before)', async () => {
    const one = join(dir, 'one.fifo');
    execFileSync('mkfifo', [one]);
    await expect(readWhileWritten(one, Buffer.from('%'))).rejects.toThrow(/one\.fifo:1: expected banner/);
    const none = join(dir, 'none.fifo');
    execFileSync('mkfifo', [none]);
    await expect(readWhileWritten(none, Buffer.alloc(0))).rejects.toThrow(/none\.fifo:1: expected banner .*empty input/);
  }, 90_000);
});

describe.skipIf(process.platform === 'win32')('Matrix Market piped into /dev/stdin', () => {
  it('a child process reading /dev/stdin from a pipe gets the matrix (ESPIPE before)', async () => {
    // a script file for the child (vitest rewrites dynamic imports written in this file's text)
    const script = join(dir, 'child.mts');
    writeFileSync(script, ["import { readMatrixMarket } from '", join(import.meta.dirname, '../src/mtx/node.ts'), "';\n", "const r = await readMatrixMarket('/dev/stdin');\n", 'console.log(r.matrix.rows, r.matrix.values.length);\n'].join(''));
    const gz = join(dir, 'a.mtx.gz');
    writeFileSync(gz, gzipSync(text));
    // a shell pipe (node's own stdin 'pipe' is a socket, which /dev/stdin cannot open)
    const out = execFileSync('sh', ['-c', 'cat "$1" | "$2" --import tsx "$3"', 'sh', gz, process.execPath, script], { encoding: 'utf8' });
    expect(out.trim()).toBe('3 7');
  }, 90_000);
});
