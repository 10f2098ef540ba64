/**
 * Strict number grammar of the FCIDUMP reader: hand-written scanners (no regular expressions,
 * so no backtracking on long tokens). Reals: `[+-]? (digits [. digits?] | . digits)
 * ([eEdD] [+-]? digits)?` (Fortran `D` exponents are what many FCIDUMP writers emit); integers:
 * `[+-]? digits`, at most 2^53 − 1 in magnitude. `0x9`, `1.0.0`, `nan`, `inf`, `--1`, `1e`, an
 * empty token or trailing characters are refused.
 * @module
 */

const isDigit = (c: number) => c >= 48 && c <= 57;

/** Length of the run of digits in `s` starting at `i`. */
function digitsFrom(s: string, i: number): number {
  let k = i;
  while (k < s.length && isDigit(s.charCodeAt(k))) k++;
  return k - i;
}

/**
 * The value of a real token, or undefined when the token does not follow the grammar or
 * overflows float64.
 * @example
 * parseRealToken('-.5D-01'); // -0.05
 * parseRealToken('0x9'); // undefined
 */
export function parseRealToken(s: string): number | undefined {
  let i = 0;
  const c0 = s.charCodeAt(0);
  if (c0 === 43 || c0 === 45) i++; // + -
  const intDigits = digitsFrom(s, i);
  i += intDigits;
  let fracDigits = 0;
  if (s.charCodeAt(i) === 46) {
    i++;
    fracDigits = digitsFrom(s, i);
    i += fracDigits;
  }
  if (intDigits + fracDigits === 0) return undefined;
  let exponentAt = -1;
  const e = s.charCodeAt(i) | 0x20; // lower case
  if (i < s.length && (e === 101 || e === 100)) {
    exponentAt = i;
    i++;
    const sign = s.charCodeAt(i);
    if (sign === 43 || sign === 45) i++;
    const expDigits = digitsFrom(s, i);
    if (expDigits === 0) return undefined;
    i += expDigits;
  }
  if (i !== s.length) return undefined;
  const text = exponentAt < 0 ? s : `${s.slice(0, exponentAt)}e${s.slice(exponentAt + 1)}`;
  const v = Number(text);
  return Number.isFinite(v) ? v : undefined;
}

/**
 * The value of an integer token (`[+-]? digits`), or undefined when it does not follow the
 * grammar or is not a safe integer (|v| > 2^53 − 1 would be silently rounded).
 * @example
 * parseIntToken('-20'); // -20
 * parseIntToken('9007199254740993'); // undefined
 */
export function parseIntToken(s: string): number | undefined {
  let i = 0;
  const c0 = s.charCodeAt(0);
  if (c0 === 43 || c0 === 45) i++;
  const n = digitsFrom(s, i);
  if (n === 0 || i + n !== s.length) return undefined;
  const v = Number(s);
  return Number.isSafeInteger(v) ? v : undefined;
}

/** The value of an orbital index token (digits only, no sign), or undefined. */
export function parseIndexToken(s: string): number | undefined {
  const n = digitsFrom(s, 0);
  if (n === 0 || n !== s.length) return undefined;
  const v = Number(s);
  return Number.isSafeInteger(v) ? v : undefined;
}
