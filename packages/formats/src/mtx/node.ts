/**
 * Node-only Matrix Market file I/O: streaming read of `.mtx` / `.mtx.gz` (gzip detected from the
 * magic bytes 1f 8b, not from the extension) and streaming write with optional gzip. The parser
 * itself (parse.ts, parser.ts) has no node imports and also runs in browsers.
 * @module
 */
import { createWriteStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import { createGunzip, createGzip } from 'node:zlib';
import { GpuSparseError } from '../core/errors';
import type { CsrMatrix } from '../core/types';
import { MatrixMarketError } from './errors';
import { matrixMarketChunks } from './format';
import { availableMemoryBytes } from './host-memory';
import { MatrixMarketParser } from './parser';
import type { MatrixMarketReadOptions, MatrixMarketReadResult, MatrixMarketWriteOptions } from './types';

const CHUNK = 1 << 16;

function pathText(path: string | URL): string {
  return path instanceof URL ? fileURLToPath(path) : path;
}

function ioError(file: string, line: number, what: string, e: unknown): MatrixMarketError {
  const err = e as { code?: string; message?: string };
  const message = err.message ?? String(e);
  // Node's fs messages already begin with the code ("ENOENT: no such file …"): name it once
  const got = err.code && !message.startsWith(`${err.code}:`) ? `${err.code}: ${message}` : message;
  return new MatrixMarketError(file, line, what, got, err.code);
}

/**
 * The file's bytes from ONE open: the first two are read to look for the gzip magic (1f 8b), then
 * the rest streams from the same handle. Opening twice (a 2-byte sniff, then the stream) hung on a
 * named pipe (the sniff took the writer's data, the second open waited for another writer) and
 * failed with ESPIPE on a piped /dev/stdin.
 */
async function openBytes(file: string): Promise<{ gz: boolean; bytes: AsyncIterable<Uint8Array>; close: () => void }> {
  const fh = await open(file, 'r');
  const head = new Uint8Array(2);
  let got = 0;
  try {
    // position null: the current position, which a pipe (no seeking) also has
    for (let n = -1; got < 2 && n !== 0; got += n) n = (await fh.read(head, got, 2 - got, null)).bytesRead;
  } catch (e) {
    await fh.close();
    throw e;
  }
  const rest = fh.createReadStream({ highWaterMark: CHUNK });
  async function* all(): AsyncGenerator<Uint8Array> {
    if (got > 0) yield head.subarray(0, got);
    yield* rest as AsyncIterable<Uint8Array>;
  }
  return { gz: got === 2 && head[0] === 0x1f && head[1] === 0x8b, bytes: all(), close: () => rest.destroy() };
}

/**
 * Read a Matrix Market file (plain or gzip-compressed) into canonical CSR, streaming: the file is
 * read in 64 KiB chunks (decompressed on the fly when it starts with the gzip magic bytes) and
 * parsed byte by byte, so memory is the triplets and the CSR, never the text. Cost: O(bytes +
 * nnz). Options as {@link parseMatrixMarket}; errors are {@link MatrixMarketError} (including
 * a missing file, a read error or corrupt gzip data).
 * @example
 * const { matrix, header } = await readMatrixMarket('bcsstk13.mtx');
 * const trp = await readMatrixMarket('ExaSP2_trpcage_8K.mtx.gz', { strictCount: false, onWarning: console.warn });
 */
export async function readMatrixMarket(path: string | URL, opts: MatrixMarketReadOptions = {}): Promise<MatrixMarketReadResult> {
  const file = pathText(path);
  const name = opts.name ?? file;
  let src: Awaited<ReturnType<typeof openBytes>>;
  try {
    src = await openBytes(file);
  } catch (e) {
    throw ioError(name, 0, 'a readable Matrix Market file', e);
  }
  const { gz } = src;
  const parser = new MatrixMarketParser({ ...opts, name, maxBytes: opts.maxBytes ?? availableMemoryBytes() });
  const gunzip = gz ? createGunzip({ chunkSize: CHUNK }) : null;
  const input = gunzip ? Readable.from(src.bytes, { objectMode: false }) : null;
  const source = gunzip && input ? input.pipe(gunzip) : src.bytes;
  // an error of the file stream must reach the consumer of the gunzip stream
  if (gunzip) input?.on('error', (e) => gunzip.destroy(e));
  try {
    for await (const chunk of source as AsyncIterable<Uint8Array>) parser.push(chunk);
  } catch (e) {
    if (e instanceof GpuSparseError) throw e;
    throw ioError(name, parser.line + 1, gz ? 'a valid gzip stream of Matrix Market text' : 'a readable Matrix Market file', e);
  } finally {
    input?.destroy();
    gunzip?.destroy();
    src.close();
  }
  return parser.finish();
}

/**
 * Write `a` as a Matrix Market file, streaming (~64 KiB pieces with back-pressure), gzip-compressed
 * when `opts.gzip` is true or, by default, when the path ends in `.gz`. Options and checks as
 * {@link formatMatrixMarket}. Cost: O(nnz) (O(rows·cols) for array format).
 * Throws InvalidMatrixError for a matrix the chosen output cannot hold, MatrixMarketError when
 * the file cannot be written.
 * @example
 * await writeMatrixMarket('/tmp/a.mtx.gz', a, { symmetry: 'symmetric' });
 */
export async function writeMatrixMarket(path: string | URL, a: CsrMatrix, opts: MatrixMarketWriteOptions = {}): Promise<void> {
  const file = pathText(path);
  const gzip = opts.gzip ?? file.endsWith('.gz');
  // run the checks (and fail) before the file is created
  const pieces = matrixMarketChunks(a, opts);
  const first = pieces.next();
  function* all(): Generator<string> {
    if (!first.done) yield first.value;
    yield* pieces;
  }
  const source = Readable.from(all(), { objectMode: false });
  try {
    if (gzip) await pipeline(source, createGzip(), createWriteStream(file));
    else await pipeline(source, createWriteStream(file));
  } catch (e) {
    throw ioError(file, 0, 'a writable file', e);
  }
}
