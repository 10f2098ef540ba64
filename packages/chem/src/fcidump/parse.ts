/**
 * FCIDUMP text parser (no file system: usable in a browser). Node file reading, streamed and
 * with `.gz`, is in ./node.ts; both use the chunked reader of ./reader.ts.
 *
 * Format: a Fortran namelist header `&FCI NORB=…, NELEC=…, MS2=…, ORBSYM=…, ISYM=…, &END`
 * (or `/` as terminator, one key per line allowed), then lines `value i j k l`:
 * all four > 0 → (ij|kl); k = l = 0 → h_ij; j = k = l = 0 → Molpro orbital energy (kept
 * aside, not part of H); all zero → the constant.
 * @module
 */
import { FcidumpReader, type ParseFcidumpOptions } from './reader';
import type { Fcidump } from './types';


/**
 * Parse FCIDUMP text into dense integrals. Cost: O(characters + norb⁴) time, ≈ 8.5·norb⁴ bytes
 * (checked against `options.memoryBytes` before allocation: ResourceLimitError).
 * Throws {@link FcidumpError} naming the file, line (and column for a bad token) on malformed,
 * truncated or self-contradicting input, and for UHF files (not supported).
 * @example
 * const fd = parseFcidump(text, { file: 'h2.FCIDUMP' });
 * fd.h1[0]; // h_00
 */
export function parseFcidump(text: string, options: ParseFcidumpOptions = {}): Fcidump {
  const reader = new FcidumpReader(options);
  reader.push(text);
  return reader.end();
}
