/**
 * Incremental parser of the FCIDUMP namelist header (`&FCI KEY=v,v,… &END` or `/`), fed one
 * line at a time. A hand-written scanner: no recursion, no regular expressions on whole lines,
 * O(length) per line, so a 10^7-character header line costs one pass (the reader caps the
 * header's total size before it gets here).
 * @module
 */
import { FcidumpError } from './errors';
import { parseIntToken, parseRealToken } from './numbers';

/** Values of one header key as written: numbers and Fortran logicals. */
export type HeaderValue = (number | boolean)[];

/** The parsed header: values per key (upper-case), and the line of each key. */
export interface ParsedHeader {
  values: Record<string, HeaderValue>;
  lines: Record<string, number>;
  /** Which values were written as integers (for strict integer keys). */
  integral: Record<string, boolean[]>;
}

const isSpace = (c: number) => c === 32 || c === 9 || c === 13 || c === 11 || c === 12;
const isLetter = (c: number) => (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
const isIdent = (c: number) => isLetter(c) || (c >= 48 && c <= 57) || c === 95;
/** Characters that end a value token (`!` starts a comment). */
const isValueEnd = (c: number) => isSpace(c) || c === 44 || c === 47 || c === 38 || c === 36 || c === 33;
/** Most values one `r*value` repeat may stand for (ORBSYM has NORB ≤ 128 entries; a bomb is refused). */
export const MAX_REPEAT = 1 << 16;

const LOGICALS: Record<string, boolean> = { T: true, F: false, TRUE: true, FALSE: false, '.T.': true, '.F.': false, '.TRUE.': true, '.FALSE.': false };

/** Line-by-line namelist reader; `feed` returns true once the terminator was read. */
export class HeaderParser {
  readonly header: ParsedHeader = { values: {}, lines: {}, integral: {} };
  /** Whether the `&FCI` opening was seen. */
  started = false;
  private key: string | undefined;
  /** A key name that ended its line without '=': Fortran lets the '=' follow on the next line. */
  private pendingName: { name: string; line: number; col: number } | undefined;

  constructor(private readonly file: string) {}

  private fail(line: number, col: number, expected: string, got: string): never {
    throw new FcidumpError(this.file, line, expected, got, col);
  }

  /** Feed one line (without its line end). Returns true when the header ended on this line. */
  feed(s: string, line: number): boolean {
    let i = 0;
    // a UTF-8 byte order mark (files saved by Windows editors): invisible in the error it caused
    if (line === 1 && s.charCodeAt(0) === 0xfeff) i = 1;
    while (i < s.length && isSpace(s.charCodeAt(i))) i++;
    if (!this.started) {
      if (i === s.length) return false; // blank lines before the header
      const head = s.slice(i, i + 4).toUpperCase();
      if ((head !== '&FCI' && head !== '$FCI') || isIdent(s.charCodeAt(i + 4))) {
        this.fail(line, i + 1, "a namelist header starting with '&FCI'", JSON.stringify(s.slice(i, i + 60)));
      }
      this.started = true;
      i += 4;
    }
    while (i < s.length) {
      const c = s.charCodeAt(i);
      if (isSpace(c)) i++;
      else if (c === 33) return false; // '!': a namelist comment to the end of the line
      else if (this.pendingName) i = this.pendingEquals(s, i, line);
      else if (c === 44) i++;
      else if (c === 47) return this.terminated(s, i + 1, line); // '/'
      else if (c === 38 || c === 36) {
        // '&END' or '$END'
        if (s.slice(i + 1, i + 4).toUpperCase() !== 'END' || isIdent(s.charCodeAt(i + 4))) this.fail(line, i + 1, "'&END' or '/' to close the header", JSON.stringify(s.slice(i, i + 20)));
        return this.terminated(s, i + 4, line);
      } else if (isLetter(c)) i = this.identifier(s, i, line);
      else i = this.value(s, i, line);
    }
    return false;
  }

  private terminated(s: string, from: number, line: number): true {
    for (let k = from; k < s.length; k++) {
      if (s.charCodeAt(k) === 33) break; // a comment after the terminator
      if (!isSpace(s.charCodeAt(k))) this.fail(line, k + 1, 'nothing after the end of the header on its line', JSON.stringify(s.slice(k, k + 40)));
    }
    return true;
  }

  /** A key (`NAME =`) or a bare logical value (`T`, `FALSE`). Returns the next position. */
  private identifier(s: string, i: number, line: number): number {
    let k = i;
    while (k < s.length && isIdent(s.charCodeAt(k))) k++;
    const name = s.slice(i, k).toUpperCase();
    let j = k;
    while (j < s.length && isSpace(s.charCodeAt(j))) j++;
    if (s.charCodeAt(j) === 61) {
      this.startKey(name, line, i);
      return j + 1;
    }
    if (LOGICALS[name] === undefined) {
      if (j === s.length || s.charCodeAt(j) === 33) {
        this.pendingName = { name, line, col: i + 1 };
        return s.length;
      }
      this.fail(line, i + 1, "a key 'NAME=' or a value", JSON.stringify(s.slice(i, Math.min(k, i + 40))));
    }
    this.push(LOGICALS[name]!, false, line, i);
    return k;
  }

  private startKey(name: string, line: number, i: number): void {
    const h = this.header;
    if (h.values[name] !== undefined) this.fail(line, i + 1, `each header key once (${name} is already on line ${h.lines[name]})`, `${name} again`);
    h.values[name] = [];
    h.integral[name] = [];
    h.lines[name] = line;
    this.key = name;
  }

  /** The first character after a key name that ended its line: its '=' or an error there. */
  private pendingEquals(s: string, i: number, line: number): number {
    const p = this.pendingName!;
    this.pendingName = undefined;
    if (s.charCodeAt(i) !== 61) this.fail(p.line, p.col, "a key 'NAME=' or a value", `${JSON.stringify(p.name)} followed by ${JSON.stringify(s.slice(i, i + 20))} on line ${line}`);
    this.startKey(p.name, p.line, p.col - 1);
    return i + 1;
  }

  /** `r*value` (Fortran's repeat count, as gfortran's namelist output writes ORBSYM= 4*1): r copies. */
  private repeated(tok: string, line: number, i: number): boolean {
    const star = tok.indexOf('*');
    if (star <= 0 || !/^\d+$/.test(tok.slice(0, star))) return false;
    const r = Number(tok.slice(0, star));
    const rest = tok.slice(star + 1);
    const where = this.key ? ` in header key ${this.key}` : '';
    if (r < 1 || r > MAX_REPEAT) this.fail(line, i + 1, `a repeat count r in 1..${MAX_REPEAT} in 'r*value'${where}`, JSON.stringify(tok.slice(0, 40)));
    if (rest === '') this.fail(line, i + 1, `a value after the repeat count in 'r*value'${where} (null values 'r*' are not supported)`, JSON.stringify(tok.slice(0, 40)));
    const logical = LOGICALS[rest.toUpperCase()];
    const asInt = parseIntToken(rest);
    const v = logical ?? asInt ?? (/^[+-]?\d+$/.test(rest) ? undefined : parseRealToken(rest));
    if (v === undefined) this.fail(line, i + star + 2, `a number or a logical after 'r*'${where}`, JSON.stringify(rest.slice(0, 40)));
    for (let q = 0; q < r; q++) this.push(v, logical === undefined && asInt !== undefined, line, i);
    return true;
  }

  /** A number or a dotted logical (`.TRUE.`). Returns the next position. */
  private value(s: string, i: number, line: number): number {
    let k = i;
    while (k < s.length && !isValueEnd(s.charCodeAt(k))) k++;
    const tok = s.slice(i, k);
    const logical = LOGICALS[tok.toUpperCase()];
    if (logical !== undefined && tok.startsWith('.')) {
      this.push(logical, false, line, i);
      return k;
    }
    if (this.repeated(tok, line, i)) return k;
    const asInt = parseIntToken(tok);
    // an integer beyond 2^53 would be rounded by the real scanner: refuse it instead
    const v = asInt ?? (/^[+-]?\d+$/.test(tok) ? undefined : parseRealToken(tok));
    if (v === undefined) {
      const shown = JSON.stringify(tok.slice(0, 40));
      this.fail(line, i + 1, `a number (decimal or exponent form; integers within ±2^53) or a logical${this.key ? ` in header key ${this.key}` : ''}`, shown);
    }
    this.push(v, asInt !== undefined, line, i);
    return k;
  }

  private push(v: number | boolean, integral: boolean, line: number, col: number): void {
    if (this.key === undefined) this.fail(line, col + 1, "a key 'NAME=' before the first value", String(v));
    this.header.values[this.key]!.push(v);
    this.header.integral[this.key]!.push(integral);
  }
}
