/**
 * Strict number grammar for text that a user typed (CLI options, generator arguments): decimal
 * and exponent forms only. `Number()` is too lenient for that — it reads `0x1` as 1, `''` and
 * `' '` as 0, `1e` as NaN but `Infinity` as a number — so every numeric option goes through here.
 * @module
 */

/** `[+-]? (digits [. digits?] | . digits) ([eE] [+-]? digits)?` — nothing else. */
const DECIMAL = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

/**
 * Parse a decimal number (`12`, `-0.5`, `.5`, `1e-8`, `2.5E+3`). Returns NaN for anything else:
 * empty text, spaces, hex/octal/binary prefixes, `nan`, `inf`, `Infinity`, `1e`, `1_000`.
 * A value that overflows a double (`1e400`) is returned as ±Infinity, so callers that need a
 * finite value test `Number.isFinite`. O(length).
 * @example
 * parseStrictNumber('1e-8'); // 1e-8
 * parseStrictNumber('0x1'); // NaN
 */
export function parseStrictNumber(text: string): number {
  return DECIMAL.test(text) ? Number(text) : Number.NaN;
}

/** Why {@link checkStrictNumber} refused a text, or the value when it is acceptable. */
export type StrictNumberResult = { ok: true; value: number } | { ok: false; expected: string };

/** Range and kind constraints of {@link checkStrictNumber}. */
export interface StrictNumberRange {
  /** Require a safe integer (|n| ≤ 2^53 − 1, no fraction; `1e6` is accepted). */
  readonly integer?: boolean;
  /** Smallest accepted value (inclusive). */
  readonly min?: number;
  /** Largest accepted value (inclusive). */
  readonly max?: number;
}

/**
 * Parse `text` with {@link parseStrictNumber} and check it against `range`. Returns the value,
 * or a phrase saying what was expected (for an error message that also names the option).
 * O(length).
 * @example
 * checkStrictNumber('9007199254740993', { integer: true }); // { ok: false, expected: 'an integer of magnitude at most 2^53 − 1 ...' }
 */
export function checkStrictNumber(text: string, range: StrictNumberRange = {}): StrictNumberResult {
  const kind = range.integer ? 'an integer' : 'a finite decimal number';
  const bounds = describeRange(range);
  const expected = `${kind}${bounds} (decimal digits, optional sign, fraction and exponent)`;
  const v = parseStrictNumber(text);
  if (Number.isNaN(v)) return { ok: false, expected };
  if (!Number.isFinite(v)) return { ok: false, expected: `${kind}${bounds} (the value overflows a double)` };
  if (range.integer && !Number.isSafeInteger(v)) {
    return { ok: false, expected: Number.isInteger(v) ? `an integer of magnitude at most 2^53 − 1${bounds} (larger ones cannot be represented exactly)` : expected };
  }
  if ((range.min !== undefined && v < range.min) || (range.max !== undefined && v > range.max)) return { ok: false, expected: `${kind}${bounds}` };
  return { ok: true, value: v };
}

function describeRange(r: StrictNumberRange): string {
  if (r.min !== undefined && r.max !== undefined) return ` in [${r.min}, ${r.max}]`;
  if (r.min !== undefined) return ` ≥ ${r.min}`;
  if (r.max !== undefined) return ` ≤ ${r.max}`;
  return '';
}
