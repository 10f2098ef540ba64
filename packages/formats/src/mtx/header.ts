/**
 * The banner line and the size line of a Matrix Market file. Cold code (two lines per file).
 * @module
 */
import { MatrixMarketError, quoteInput } from './errors';
import { parseIntToken, tokenRanges, tokenText } from './scan';
import type { MatrixMarketField, MatrixMarketFormat, MatrixMarketSymmetry } from './types';

const MAX_INT32 = 2147483647;
const BANNER = "banner '%%MatrixMarket matrix <format> <field> <symmetry>'";

/** The three choices the banner makes. */
export interface MatrixMarketBanner {
  readonly format: MatrixMarketFormat;
  readonly field: MatrixMarketField;
  readonly symmetry: MatrixMarketSymmetry;
}

/**
 * Parse the banner `%%MatrixMarket matrix <format> <field> <symmetry>` (case-insensitive) from
 * `buf[s..e)`. Throws MatrixMarketError naming the bad word; `complex` is rejected with
 * "complex matrices are not supported". O(line length).
 */
export function parseBanner(buf: Uint8Array, s: number, e: number, file: string, line: number): MatrixMarketBanner {
  const words = tokenRanges(buf, s, Math.min(e, s + 4096)).map(([a, b]) => tokenText(buf, a, b));
  const whole = () => quoteInput(tokenText(buf, s, Math.min(e, s + 80)));
  const fail = (expected: string, got: string) => new MatrixMarketError(file, line, expected, got);
  if (words[0]?.toLowerCase() !== '%%matrixmarket') {
    throw fail(`${BANNER} as the first line`, words[0]?.startsWith('%') ? `${whole()} (a comment before the banner, or a misspelt banner)` : `${whole()} (no banner)`);
  }
  if (words.length !== 5) {
    throw fail(`${BANNER} (5 words)`, `${words.length} word${words.length === 1 ? '' : 's'}: ${whole()}`);
  }
  const [object, format, field, symmetry] = words.slice(1).map((w) => w.toLowerCase()) as [string, string, string, string];
  if (object !== 'matrix') throw fail("object 'matrix' in the banner (vectors are not supported)", quoteInput(words[1]!));
  if (format !== 'coordinate' && format !== 'array') throw fail("format 'coordinate' or 'array' in the banner", quoteInput(words[2]!));
  if (field === 'complex') {
    throw fail("field 'real', 'integer' or 'pattern' in the banner", "'complex': complex matrices are not supported");
  }
  if (field !== 'real' && field !== 'integer' && field !== 'pattern') {
    throw fail("field 'real', 'integer' or 'pattern' in the banner", quoteInput(words[3]!));
  }
  if (symmetry !== 'general' && symmetry !== 'symmetric' && symmetry !== 'skew-symmetric' && symmetry !== 'hermitian') {
    throw fail("symmetry 'general', 'symmetric', 'skew-symmetric' or 'hermitian' in the banner", quoteInput(words[4]!));
  }
  if (format === 'array' && field === 'pattern') throw fail("field 'real' or 'integer' for an array file (pattern is coordinate only)", "'pattern'");
  if (field === 'pattern' && symmetry === 'skew-symmetric') throw fail("symmetry 'general' or 'symmetric' for a pattern file", "'skew-symmetric'");
  return { format, field, symmetry };
}

/** Shape and declared entry count read from the size line. */
export interface MatrixMarketSize {
  readonly rows: number;
  readonly cols: number;
  /** L for coordinate; the number of values the array file must hold otherwise. */
  readonly declared: number;
}

/**
 * Parse the size line `M N L` (coordinate) or `M N` (array). Sizes must be integers in
 * [0, 2^31 − 1]; symmetric kinds must be square. O(line length).
 */
export function parseSizeLine(
  buf: Uint8Array,
  s: number,
  e: number,
  file: string,
  line: number,
  format: MatrixMarketFormat,
  symmetry: MatrixMarketSymmetry,
): MatrixMarketSize {
  const ranges = tokenRanges(buf, s, Math.min(e, s + 4096));
  const want = format === 'coordinate' ? 3 : 2;
  const shape = format === 'coordinate' ? "size line 'rows cols entries'" : "size line 'rows cols'";
  const fail = (expected: string, got: string) => new MatrixMarketError(file, line, expected, got);
  if (ranges.length !== want) {
    throw fail(`${shape} (${want} integers)`, `${ranges.length} field${ranges.length === 1 ? '' : 's'}: ${quoteInput(tokenText(buf, s, Math.min(e, s + 80)))}`);
  }
  const names = ['row count', 'column count', 'entry count'];
  const vals = ranges.map(([a, b], k) => {
    const v = parseIntToken(buf, a, b);
    const text = quoteInput(tokenText(buf, a, Math.min(b, a + 40)));
    if (Number.isNaN(v)) throw fail(`an integer ${names[k]} in the ${shape}`, `${text} (not an integer)`);
    if (v < 0) throw fail(`a non-negative ${names[k]} in the ${shape}`, `${text} (negative)`);
    if (v > MAX_INT32) throw fail(`${k === 2 ? 'an' : 'a'} ${names[k]} of at most ${MAX_INT32} in the ${shape}`, `${text} (too large for 32-bit indices)`);
    return v;
  });
  const rows = vals[0]!;
  const cols = vals[1]!;
  if (symmetry !== 'general' && rows !== cols) throw fail(`a square matrix for ${symmetry} storage`, `${rows}x${cols}`);
  let declared: number;
  if (format === 'coordinate') declared = vals[2]!;
  else if (symmetry === 'general') declared = rows * cols;
  else if (symmetry === 'skew-symmetric') declared = (rows * Math.max(rows - 1, 0)) / 2;
  else declared = (rows * (rows + 1)) / 2;
  return { rows, cols, declared };
}
