/**
 * In-memory and stream entry points of the Matrix Market reader (no node imports: usable in
 * browsers; node file reading lives in node.ts).
 * @module
 */
import { GpuSparseError } from '../core/errors';
import { MatrixMarketError } from './errors';
import { MatrixMarketParser } from './parser';
import type { MatrixMarketReadOptions, MatrixMarketReadResult } from './types';

/** Bytes per push when parsing an in-memory buffer (bounds the work done per line lookup). */
const SLICE = 1 << 20;

function normalise(opts: string | MatrixMarketReadOptions | undefined): MatrixMarketReadOptions {
  return typeof opts === 'string' ? { name: opts } : (opts ?? {});
}

function isGzip(b: Uint8Array): boolean {
  return b.length >= 2 && b[0] === 0x1f && b[1] === 0x8b;
}

/** The error for gzip bytes given to a reader of text, with the way out in Node and in a browser. */
const gzipError = (name: string | undefined): MatrixMarketError =>
  new MatrixMarketError(name ?? '<input>', 0, 'uncompressed Matrix Market text', "gzip-compressed data (use readMatrixMarket in Node, which decompresses; in a browser pipe the stream through new DecompressionStream('gzip') first)");

/**
 * Parse a whole Matrix Market file held in memory (a string or its bytes) into canonical CSR.
 * Coordinate and array formats; real, integer and pattern fields (pattern values are 1);
 * general, symmetric, skew-symmetric and hermitian symmetry, expanded to the full matrix;
 * duplicates summed; indices converted to 0-based. Cost: O(bytes + nnz) time, memory about
 * 16 bytes per stored entry plus the CSR. Gzip data is refused here (use `readMatrixMarket`
 * in node, or decompress first in a browser).
 *
 * The second argument is the name used in errors, or an options object
 * ({@link MatrixMarketReadOptions}: name, strictCount, onWarning, arrayZeros, maxLineBytes).
 * Throws {@link MatrixMarketError} (with file, line, expected, got) for any malformed input.
 * @example
 * const { matrix, header } = parseMatrixMarket(
 *   '%%MatrixMarket matrix coordinate real symmetric\n2 2 2\n1 1 4\n2 1 -1\n', 'tiny.mtx');
 * // matrix = [[4, -1], [-1, 0]] in CSR; header.symmetry === 'symmetric'
 */
export function parseMatrixMarket(data: string | Uint8Array, opts?: string | MatrixMarketReadOptions): MatrixMarketReadResult {
  const o = normalise(opts);
  const bytes = typeof data === 'string' ? new TextEncoder().encode(data) : data;
  if (isGzip(bytes)) throw gzipError(o.name);
  const p = new MatrixMarketParser(o);
  for (let s = 0; s < bytes.length; s += SLICE) p.push(bytes.subarray(s, Math.min(bytes.length, s + SLICE)));
  return p.finish();
}

/**
 * Parse a Matrix Market file arriving as a sequence of byte chunks (a node Readable, a web
 * ReadableStream with async iteration, or any (async) iterable of Uint8Array; string chunks
 * are UTF-8 encoded). The text is never held whole: memory is the triplets plus one line.
 * The chunks must be uncompressed (decompress gzip before, as `readMatrixMarket` does).
 * Throws {@link MatrixMarketError}; an error of the source itself is rethrown as one.
 * @example
 * const res = await parseMatrixMarketStream(fs.createReadStream('a.mtx'), { name: 'a.mtx' });
 */
export async function parseMatrixMarketStream(
  source: AsyncIterable<Uint8Array | string> | Iterable<Uint8Array | string>,
  opts?: string | MatrixMarketReadOptions,
): Promise<MatrixMarketReadResult> {
  const o = normalise(opts);
  const p = new MatrixMarketParser(o);
  const enc = new TextEncoder();
  // the first bytes are held until two are seen: gzip data (a .mtx.gz File's stream in a browser)
  // was parsed as text and reported as a banner of binary bytes
  let head: Uint8Array | undefined = new Uint8Array(0);
  try {
    for await (const chunk of source) {
      const bytes = typeof chunk === 'string' ? enc.encode(chunk) : chunk;
      if (head === undefined) {
        p.push(bytes);
        continue;
      }
      const joined: Uint8Array = new Uint8Array(head.length + bytes.length);
      joined.set(head);
      joined.set(bytes, head.length);
      if (joined.length < 2) {
        head = joined;
        continue;
      }
      if (isGzip(joined)) throw gzipError(o.name);
      head = undefined;
      p.push(joined);
    }
    if (head?.length) p.push(head);
  } catch (e) {
    if (e instanceof GpuSparseError) throw e;
    const err = e as { code?: string; message?: string };
    throw new MatrixMarketError(o.name ?? '<input>', p.line + 1, 'a readable stream of Matrix Market bytes', `${err.code ? `${err.code}: ` : ''}${err.message ?? String(e)}`);
  }
  return p.finish();
}
