/**
 * Node-only FCIDUMP file reading (plain or gzip). Kept apart from the parser so that
 * browsers can use ./parse.ts alone.
 * @module
 */
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { FcidumpError } from './errors';
import { type ParseFcidumpOptions, parseFcidump } from './parse';
import type { Fcidump } from './types';

/**
 * Read and parse an FCIDUMP file; `.gz` files (or any file starting with the gzip magic bytes)
 * are inflated with node:zlib. Cost: one file read plus {@link parseFcidump}.
 * @example
 * const fd = await readFcidump('/data/H4.FCIDUMP');
 * const fd2 = await readFcidump(new URL('./H2O.FCIDUMP.gz', import.meta.url));
 */
export async function readFcidump(path: string | URL, options: Omit<ParseFcidumpOptions, 'file'> = {}): Promise<Fcidump> {
  const file = typeof path === 'string' ? path : fileURLToPath(path);
  let bytes: Buffer;
  try {
    bytes = await readFile(file);
  } catch (e) {
    throw new FcidumpError(file, undefined, 'a readable file', (e as Error).message);
  }
  if (bytes.length >= 2 && bytes[0] === 0x1f && bytes[1] === 0x8b) {
    try {
      bytes = gunzipSync(bytes);
    } catch (e) {
      throw new FcidumpError(file, undefined, 'valid gzip data', (e as Error).message);
    }
  }
  return parseFcidump(bytes.toString('utf8'), { ...options, file });
}
