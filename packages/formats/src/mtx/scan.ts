/**
 * Byte-level number scanning for the Matrix Market reader: integers and decimal reals are read
 * straight from a Uint8Array token, never from a string, except for the rare real that needs
 * more than 15 significant digits or a large exponent (then the validated token is handed to
 * `Number`, which rounds correctly). No node imports: usable in browsers.
 * @module
 */

/** True for the bytes that separate fields on a line: space, tab, CR, VT, FF. */
export function isSpace(c: number): boolean {
  return c === 32 || c === 9 || c === 13 || c === 11 || c === 12;
}

/** Exact powers of ten 10^0 … 10^22 (every one is a double without rounding). */
const POW10 = Array.from({ length: 23 }, (_, k) => Number(`1e${k}`));

/**
 * Parse a decimal integer token `buf[s..e)`: optional sign, then digits only.
 * Returns NaN when the token is not of that form. Magnitudes past 2^53 come back rounded at
 * every digit: index callers compare them with a 2^31 bound, and the integer-value caller re-reads
 * such a token with `Number` and warns (parser.ts integerValue). O(e − s).
 * @example
 * parseIntToken(new TextEncoder().encode('-42'), 0, 3); // -42
 */
export function parseIntToken(buf: Uint8Array, s: number, e: number): number {
  let p = s;
  let neg = false;
  const c0 = buf[p];
  if (c0 === 45 || c0 === 43) {
    neg = c0 === 45;
    p++;
  }
  if (p >= e) return Number.NaN;
  let v = 0;
  for (; p < e; p++) {
    const d = buf[p]! - 48;
    if (d < 0 || d > 9) return Number.NaN;
    v = v * 10 + d;
  }
  return neg ? -v : v;
}

/**
 * Parse a real token `buf[s..e)` with the grammar of C's strtod restricted to decimal:
 * `[+-]? (digits [. digits?] | . digits) ([eEdD] [+-]? digits)?` (Fortran `d` exponents are
 * accepted). Returns NaN when the token does not match (so "nan", "inf", hex, "1.2.3" give NaN)
 * and ±Infinity when the value overflows a double. The result is correctly rounded: a fast path
 * (Clinger) when the significand has ≤ 15 digits and |exponent| ≤ 22, `Number` otherwise.
 * O(e − s).
 * @example
 * parseRealToken(new TextEncoder().encode('-.5e1'), 0, 5); // -5
 */
export function parseRealToken(buf: Uint8Array, s: number, e: number): number {
  let p = s;
  let neg = false;
  const c0 = buf[p];
  if (c0 === 45 || c0 === 43) {
    neg = c0 === 45;
    p++;
  }
  let mant = 0;
  let digits = 0;
  let exp10 = 0;
  let sawDigit = false;
  let slow = false;
  // integer part
  for (; p < e; p++) {
    const d = buf[p]! - 48;
    if (d < 0 || d > 9) break;
    sawDigit = true;
    if (mant === 0 && d === 0) continue;
    if (digits < 15) {
      mant = mant * 10 + d;
      digits++;
    } else slow = true;
  }
  // fraction
  if (p < e && buf[p] === 46) {
    p++;
    for (; p < e; p++) {
      const d = buf[p]! - 48;
      if (d < 0 || d > 9) break;
      sawDigit = true;
      if (mant === 0 && d === 0) {
        exp10--;
        continue;
      }
      if (digits < 15) {
        mant = mant * 10 + d;
        digits++;
        exp10--;
      } else slow = true;
    }
  }
  if (!sawDigit) return Number.NaN;
  // exponent
  if (p < e) {
    const c = buf[p]!;
    if (c !== 101 && c !== 69 && c !== 100 && c !== 68) return Number.NaN;
    p++;
    let eneg = false;
    if (p < e && (buf[p] === 45 || buf[p] === 43)) {
      eneg = buf[p] === 45;
      p++;
    }
    if (p >= e) return Number.NaN;
    let ev = 0;
    for (; p < e; p++) {
      const d = buf[p]! - 48;
      if (d < 0 || d > 9) return Number.NaN;
      if (ev < 1e6) ev = ev * 10 + d;
    }
    exp10 += eneg ? -ev : ev;
  }
  if (mant === 0 && !slow) return neg ? -0 : 0;
  if (!slow && exp10 >= -22 && exp10 <= 22) {
    // one correctly rounded operation on two exact doubles
    const v = exp10 >= 0 ? mant * POW10[exp10]! : mant / POW10[-exp10]!;
    return neg ? -v : v;
  }
  return Number(tokenText(buf, s, e).replace(/[dD]/, 'e'));
}

/**
 * The token `buf[s..e)` as a string, one char per byte (latin-1). For error messages and the
 * slow number path; O(e − s).
 */
export function tokenText(buf: Uint8Array, s: number, e: number): string {
  let out = '';
  for (let k = s; k < e; k += 4096) {
    out += String.fromCharCode.apply(null, buf.subarray(k, Math.min(e, k + 4096)) as unknown as number[]);
  }
  return out;
}

/**
 * Split `buf[s..e)` into whitespace-separated tokens as [start, end) pairs. Cold path (banner,
 * size line, error messages); O(e − s).
 */
export function tokenRanges(buf: Uint8Array, s: number, e: number): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  let p = s;
  while (p < e) {
    while (p < e && isSpace(buf[p]!)) p++;
    if (p >= e) break;
    const q0 = p;
    while (p < e && !isSpace(buf[p]!)) p++;
    out.push([q0, p]);
  }
  return out;
}

/** True when a decimal token has a non-zero digit before its exponent (so 0 means underflow). */
export function nonZeroSignificand(buf: Uint8Array, s: number, e: number): boolean {
  for (let p = s; p < e; p++) {
    const c = buf[p]!;
    if (c === 101 || c === 69 || c === 100 || c === 68) return false; // e E d D
    if (c >= 49 && c <= 57) return true;
  }
  return false;
}
