/**
 * Node-only FCIDUMP file reading (plain or gzip), streamed: the file is read in chunks (and
 * inflated as a stream) into the chunked reader, so neither the file nor its inflated text is
 * ever held whole in memory. Kept apart from the parser so that browsers can use ./parse.ts alone.
 * @module
 */
import { open } from 'node:fs/promises';
import { freemem } from 'node:os';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { createGunzip } from 'node:zlib';
import { FcidumpError } from './errors';
import { FcidumpReader, type ParseFcidumpOptions } from './reader';
import type { Fcidump } from './types';

/** Memory the integral tables may take: free memory, or the cgroup limit when lower. */
export function availableMemoryBytes(): number {
  const constrained = (process as { constrainedMemory?: () => number | undefined }).constrainedMemory?.() ?? 0;
  const free = freemem();
  return constrained > 0 ? Math.min(free, constrained) : free;
}

/**
 * The file from ONE open: the first two bytes (read from the current position, as a pipe allows)
 * say whether it is gzip, and the rest streams from the same handle. Opening twice (a sniff at
 * position 0, then the stream) failed with ESPIPE on a named pipe or a piped /dev/stdin.
 */
async function openFile(file: string): Promise<{ gz: boolean; raw: Readable }> {
  let fh: Awaited<ReturnType<typeof open>> | undefined;
  const head = Buffer.alloc(2);
  let got = 0;
  try {
    fh = await open(file, 'r');
    for (let n = -1; got < 2 && n !== 0; got += n) n = (await fh.read(head, got, 2 - got, null)).bytesRead;
  } catch (e) {
    await fh?.close();
    throw new FcidumpError(file, undefined, 'a readable file', (e as Error).message);
  }
  const rest = fh.createReadStream();
  async function* all(): AsyncGenerator<Buffer> {
    if (got > 0) yield head.subarray(0, got);
    yield* rest as AsyncIterable<Buffer>;
  }
  const raw = Readable.from(all(), { objectMode: false });
  raw.on('close', () => rest.destroy());
  return { gz: got === 2 && head[0] === 0x1f && head[1] === 0x8b, raw };
}

/**
 * Read and parse an FCIDUMP file; `.gz` files (any file starting with the gzip magic bytes) are
 * inflated as a stream with node:zlib. The inflated size is bounded by the reader's caps (header
 * size, line length, lines per NORB), so a decompression bomb is refused early with an
 * FcidumpError. Cost: one streamed read plus `parseFcidump`'s work.
 * @param path - a file path or file: URL, plain text or gzip
 * @returns the header (NORB, NELEC, MS2, ORBSYM, ISYM) and the integrals in Eh
 * @throws FcidumpError naming the file (and the line, for a malformed one) when it cannot be read,
 *   is not valid gzip, or is not a valid FCIDUMP (including no core-energy line, unless
 *   `allowMissingCoreEnergy`)
 * @example
 * const fd = await readFcidump('/data/H4.FCIDUMP');
 * const fd2 = await readFcidump(new URL('./H2O.FCIDUMP.gz', import.meta.url), { allowMissingCoreEnergy: true });
 */
export async function readFcidump(path: string | URL, options: Omit<ParseFcidumpOptions, 'file'> = {}): Promise<Fcidump> {
  const file = typeof path === 'string' ? path : fileURLToPath(path);
  const { gz, raw } = await openFile(file);
  const reader = new FcidumpReader({ memoryBytes: availableMemoryBytes(), ...options, file });
  const stream: Readable = gz ? raw.pipe(createGunzip()) : raw;
  if (gz) raw.on('error', (e) => stream.destroy(e));
  const decoder = new TextDecoder('utf-8');
  try {
    for await (const chunk of stream) reader.push(decoder.decode(chunk as Buffer, { stream: true }));
    reader.push(decoder.decode());
  } catch (e) {
    if (e instanceof FcidumpError) throw e;
    const err = e as NodeJS.ErrnoException;
    if (gz && typeof err.code === 'string' && err.code.startsWith('Z_')) throw new FcidumpError(file, undefined, 'valid gzip data', err.message);
    if (err.code !== undefined) throw new FcidumpError(file, undefined, 'a readable file', err.message);
    throw e;
  } finally {
    raw.destroy();
    stream.destroy();
  }
  return reader.end();
}
