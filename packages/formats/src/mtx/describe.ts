/**
 * Wording of the reader's error messages (what was expected, what came), kept in one place so
 * every message has the same shape. Cold code: only runs when a file is malformed.
 * @module
 */
import { quoteInput } from './errors';
import { tokenRanges, tokenText } from './scan';
import type { MatrixMarketField, MatrixMarketFormat } from './types';

/** "row index in [1, 5]". */
export function describeIndex(kind: 'row' | 'column', max: number): string {
  return max === 0 ? `no ${kind} index (the matrix has 0 ${kind}s)` : `a ${kind} index in [1, ${max}] (1-based)`;
}

/** What a bad number token was: quoted, with the reason (not a number, non-finite, out of range). */
export function describeValue(buf: Uint8Array, s: number, e: number, v: number): string {
  const text = quoteInput(tokenText(buf, s, Math.min(e, s + 64)) + (e - s > 64 ? '…' : ''));
  if (Number.isNaN(v)) {
    const t = tokenText(buf, s, Math.min(e, s + 16)).toLowerCase().replace(/^[+-]/, '');
    if (t === 'nan' || t === 'inf' || t === 'infinity') return `${text} (non-finite value)`;
    return `${text} (not a decimal number)`;
  }
  if (!Number.isFinite(v)) return `${text} (non-finite: overflows a double)`;
  return `${text} (out of range)`;
}

/** "3 fields (row column value)" for a coordinate real file, etc. */
export function describeFields(nf: number, format: MatrixMarketFormat, field: MatrixMarketField): string {
  if (format === 'array') return `1 field (one ${field} value per line in an array file)`;
  return nf === 2 ? '2 fields (row column) per entry of a pattern file' : `3 fields (row column value) per entry of a ${field} file`;
}

/** "2 fields: \"1 2\"". */
export function describeFieldsGot(buf: Uint8Array, s: number, e: number): string {
  const n = tokenRanges(buf, s, e).length;
  return `${n} field${n === 1 ? '' : 's'}: ${quoteInput(tokenText(buf, s, Math.min(e, s + 64)) + (e - s > 64 ? '…' : ''))}`;
}
