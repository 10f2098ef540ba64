/**
 * The streaming Matrix Market parser: bytes go in with {@link MatrixMarketParser.push} in chunks
 * of any size, the CSR matrix comes out of {@link MatrixMarketParser.finish}. Lines are cut at
 * '\n' inside each chunk and parsed in place from the bytes; only a line that straddles two
 * chunks is copied. Memory: the triplets (16 bytes per stored entry) plus one line, never the
 * text. No node imports: usable in browsers.
 * @module
 */
import type { CsrMatrix } from '../core/types';
import { assembleCsr, TripletBuffer } from './assemble';
import { CommentLog } from './comments';
import { checkDeclaredSize, structuralCells } from './counts';
import { describeFields, describeFieldsGot, describeIndex, describeValue } from './describe';
import { distinctPositions, roundedDuplicateSums } from './duplicate-sums';
import { MatrixMarketError } from './errors';
import { parseBanner, parseSizeLine } from './header';
import { isSpace, nonZeroSignificand, parseIntToken, parseRealToken, tokenText } from './scan';
import type {
  MatrixMarketField,
  MatrixMarketFormat,
  MatrixMarketHeader,
  MatrixMarketReadOptions,
  MatrixMarketReadResult,
  MatrixMarketSymmetry,
  MatrixMarketWarning,
} from './types';

const PHASE_BANNER = 0;
const PHASE_SIZE = 1;
const PHASE_ENTRIES = 2;
const PHASE_DONE = 3;

/** Largest index / count representable in the Int32Array-based CSR. */
export const MAX_INT32 = 2147483647;

/**
 * Incremental Matrix Market reader. Cost: O(bytes) time; memory O(stored entries + longest line).
 * @example
 * const p = new MatrixMarketParser({ name: 'a.mtx' });
 * for await (const chunk of stream) p.push(chunk);
 * const { matrix, header } = p.finish();
 */
export class MatrixMarketParser {
  /** Lines consumed so far (the 1-based number of the last complete line). */
  line = 0;
  private readonly name: string;
  private readonly strict: boolean;
  private readonly keepZeros: boolean;
  private readonly maxLine: number;
  private readonly maxDim: number | undefined;
  private readonly onWarning: ((w: MatrixMarketWarning) => void) | undefined;
  private readonly warnings: MatrixMarketWarning[] = [];
  private readonly comments: CommentLog;
  private readonly maxBytes: number;
  private carry: Uint8Array | null = null;
  private phase = PHASE_BANNER;
  private format: MatrixMarketFormat = 'coordinate';
  private field: MatrixMarketField = 'real';
  private symmetry: MatrixMarketSymmetry = 'general';
  private rows = 0;
  private cols = 0;
  private declared = 0;
  private sizeLine = 0;
  private count = 0;
  private firstExtraLine = 0;
  /** Array files: position of the next value (row ai, column aj, 0-based). */
  private ai = 0;
  private aj = 0;
  /** Integer-field values that float64 cannot hold exactly: how many, and the first line. */
  private roundedInts = 0;
  private firstRoundedLine = 0;
  /** Real values whose decimal is not zero but below float64's range (read as 0): how many, the first line. */
  private underflows = 0;
  private firstUnderflowLine = 0;
  private readonly triplets = new TripletBuffer();

  constructor(opts: MatrixMarketReadOptions = {}) {
    this.name = opts.name ?? '<input>';
    this.strict = opts.strictCount ?? true;
    this.keepZeros = opts.arrayZeros === 'keep';
    this.maxLine = opts.maxLineBytes ?? 1 << 20;
    this.onWarning = opts.onWarning;
    this.maxDim = opts.maxDimension;
    this.comments = new CommentLog(opts.maxCommentLines ?? 1000, opts.maxCommentBytes ?? 1 << 16);
    this.maxBytes = opts.maxBytes ?? Number.POSITIVE_INFINITY;
  }

  /** Feed the next chunk of bytes. Throws MatrixMarketError at the first malformed line. */
  push(chunk: Uint8Array): void {
    if (this.phase === PHASE_DONE) throw this.error(this.line, 'no input after finish()', 'more bytes');
    if (chunk.length === 0) return;
    let pos = 0;
    if (this.carry !== null) {
      const nl = chunk.indexOf(10);
      const carry = this.carry;
      const tail = nl < 0 ? chunk.length : nl;
      this.checkLength(carry.length + tail);
      const joined = new Uint8Array(carry.length + tail);
      joined.set(carry, 0);
      joined.set(chunk.subarray(0, tail), carry.length);
      if (nl < 0) {
        this.carry = joined;
        return;
      }
      this.carry = null;
      this.processLine(joined, 0, joined.length);
      pos = nl + 1;
    }
    const n = chunk.length;
    while (pos < n) {
      const nl = chunk.indexOf(10, pos);
      if (nl < 0) break;
      this.processLine(chunk, pos, nl);
      pos = nl + 1;
    }
    if (pos < n) {
      this.checkLength(n - pos);
      this.carry = chunk.slice(pos);
    }
  }

  /** End of input: parse a last unterminated line, check the counts, build the CSR matrix. */
  finish(): MatrixMarketReadResult {
    if (this.phase === PHASE_DONE) throw this.error(this.line, 'finish() called once', 'a second call');
    if (this.carry !== null) {
      const last = this.carry;
      this.carry = null;
      this.processLine(last, 0, last.length);
    }
    const eof = this.line + 1;
    if (this.phase === PHASE_BANNER) {
      throw this.error(eof, "banner '%%MatrixMarket matrix <format> <field> <symmetry>'", 'end of file (empty input)');
    }
    if (this.phase === PHASE_SIZE) {
      throw this.error(eof, `size line ('${this.format === 'coordinate' ? 'rows cols entries' : 'rows cols'}')`, 'end of file');
    }
    this.phase = PHASE_DONE;
    if (this.count < this.declared) {
      throw this.error(
        eof,
        `${this.declared} entries (declared on line ${this.sizeLine})`,
        `end of file after ${this.count} entries (file truncated or entries missing)`,
      );
    }
    if (this.count > this.declared) {
      this.warn(
        this.firstExtraLine,
        `size line (line ${this.sizeLine}) declares ${this.declared} entries but the file has ${this.count}; ` +
          (this.count - this.declared === 1
            ? `the extra entry on line ${this.firstExtraLine} was kept (strictCount: false)`
            : `the ${this.count - this.declared} extra entries from line ${this.firstExtraLine} on were kept (strictCount: false)`),
      );
    }
    if (this.roundedInts > 1) {
      this.warn(
        this.firstRoundedLine,
        `${this.roundedInts} integer values above 2^53 in magnitude were rounded to the nearest float64 (the first on line ${this.firstRoundedLine}); the matrix is not exactly the file's`,
      );
    }
    const limit = this.maxDim ?? Math.max(1 << 22, 16 * this.count);
    if (this.rows > limit || this.cols > limit) {
      throw this.error(
        this.sizeLine,
        `rows and columns of at most ${limit} for a file with ${this.count} entries (pass maxDimension to allow more)`,
        `${this.rows}x${this.cols}`,
      );
    }
    let matrix: CsrMatrix;
    try {
      matrix = assembleCsr(this.rows, this.cols, this.triplets, this.symmetry);
    } catch (e) {
      throw this.error(this.sizeLine, `at most ${MAX_INT32} stored entries after symmetric expansion`, String((e as Error).message));
    }
    if (this.field === 'integer') this.warnRoundedSums(matrix);
    if (this.format === 'coordinate') this.warnDuplicates(matrix);
    if (this.underflows > 1) {
      this.warn(this.firstUnderflowLine, `${this.underflows} non-zero values below float64's range (≈ 4.9e-324) were read as 0 (the first on line ${this.firstUnderflowLine}); the matrix is not exactly the file's`);
    }
    const header: MatrixMarketHeader = {
      object: 'matrix',
      format: this.format,
      field: this.field,
      symmetry: this.symmetry,
      rows: this.rows,
      cols: this.cols,
      declaredEntries: this.declared,
      actualEntries: this.count,
      comments: this.comments.kept,
      omittedComments: this.comments.omitted,
    };
    return { matrix, header, warnings: this.warnings };
  }

  /**
   * Positions given more than once are summed (as SciPy's and MATLAB's readers do), but a file
   * with repeats is often a damaged or wrongly concatenated one: say how many, not a silent sum.
   * Counted in the file's terms: entries read minus the distinct positions they fill.
   */
  private warnDuplicates(matrix: CsrMatrix): void {
    const distinct = distinctPositions(matrix, this.symmetry);
    const repeats = this.count - distinct;
    if (repeats <= 0) return;
    this.warn(
      this.sizeLine,
      `${repeats} ${repeats === 1 ? 'entry repeats a position' : 'entries repeat positions'} given earlier in the file and ${repeats === 1 ? 'was' : 'were'} summed into ${this.field === 'pattern' ? 'it (a pattern entry then holds the count, not 1)' : 'it'} (${this.count} entries read, ${distinct} distinct position${distinct === 1 ? '' : 's'})`,
    );
  }

  /** A real value; a non-zero decimal that underflows float64 to 0 is warned about (it loses an entry's value). */
  private realValue(buf: Uint8Array, s: number, e: number, line: number): number {
    const v = parseRealToken(buf, s, e);
    if (v !== 0 || !nonZeroSignificand(buf, s, e)) return v;
    if (this.underflows++ === 0) {
      this.firstUnderflowLine = line;
      this.warn(line, `value ${tokenText(buf, s, Math.min(e, s + 40))} is below float64's range (≈ 4.9e-324) and was read as 0`);
    }
    return v;
  }

  /** Duplicate integer entries whose float64 sum passed 2^53 and was rounded: warned like a single such value. */
  private warnRoundedSums(matrix: CsrMatrix): void {
    const { count, first } = roundedDuplicateSums(matrix, this.triplets, this.symmetry);
    if (!first) return;
    this.warn(
      this.sizeLine,
      `${count === 1 ? 'an entry' : `${count} entries`} of repeated (duplicate) integer values summed past 2^53 in magnitude and rounded to the nearest float64 (the first at row ${first.row}, column ${first.col}: ${first.exact} stored as ${first.stored}); the matrix is not exactly the file's`,
    );
  }

  private checkLength(len: number): void {
    if (len > this.maxLine) {
      throw this.error(this.line + 1, `a line of at most ${this.maxLine} bytes`, `${len} bytes without a line break (binary data?)`);
    }
  }

  private error(line: number, expected: string, got: string): MatrixMarketError {
    return new MatrixMarketError(this.name, line, expected, got);
  }

  private warn(line: number, message: string): void {
    const w: MatrixMarketWarning = { file: this.name, line, message };
    this.warnings.push(w);
    this.onWarning?.(w);
  }

  private processLine(buf: Uint8Array, s: number, e: number): void {
    if (e - s > this.maxLine) this.checkLength(e - s);
    const line = ++this.line;
    if (this.phase === PHASE_ENTRIES) {
      if (this.format === 'coordinate') this.coordinateLine(buf, s, e, line);
      else this.arrayLine(buf, s, e, line);
      return;
    }
    let p = s;
    // a UTF-8 byte order mark at the start of the file is tolerated
    if (line === 1 && e - s >= 3 && buf[s] === 0xef && buf[s + 1] === 0xbb && buf[s + 2] === 0xbf) p += 3;
    while (p < e && isSpace(buf[p]!)) p++;
    if (p === e) return; // blank line
    if (this.phase === PHASE_BANNER) {
      const b = parseBanner(buf, p, e, this.name, line);
      this.format = b.format;
      this.field = b.field;
      this.symmetry = b.symmetry;
      this.phase = PHASE_SIZE;
      return;
    }
    // PHASE_SIZE: comments, then the size line
    if (buf[p] === 37) {
      this.comments.add(buf, p + 1, e);
      return;
    }
    const size = parseSizeLine(buf, p, e, this.name, line, this.format, this.symmetry);
    this.rows = size.rows;
    this.cols = size.cols;
    this.declared = size.declared;
    this.sizeLine = line;
    checkDeclaredSize({ name: this.name, rows: this.rows, cols: this.cols, declared: this.declared, sizeLine: this.sizeLine, format: this.format, symmetry: this.symmetry, maxDim: this.maxDim, maxBytes: this.maxBytes });
    this.triplets.reserve(Math.min(this.declared, 1 << 16));
    if (this.symmetry === 'skew-symmetric') this.ai = 1;
    this.phase = PHASE_ENTRIES;
  }

  /** One line of a coordinate file: `i j [value]`, or a blank / comment line. */
  private coordinateLine(buf: Uint8Array, s: number, e: number, line: number): void {
    let p = s;
    while (p < e && isSpace(buf[p]!)) p++;
    if (p === e || buf[p] === 37) return; // blank or comment
    const nf = this.field === 'pattern' ? 2 : 3;
    // row
    let q = p;
    while (q < e && !isSpace(buf[q]!)) q++;
    const row = parseIntToken(buf, p, q);
    p = q;
    while (p < e && isSpace(buf[p]!)) p++;
    if (p === e) throw this.fieldsError(buf, s, e, line, nf);
    if (!(row >= 1 && row <= this.rows)) throw this.error(line, describeIndex('row', this.rows), describeValue(buf, s, q, row));
    // column
    q = p;
    while (q < e && !isSpace(buf[q]!)) q++;
    const col = parseIntToken(buf, p, q);
    if (!(col >= 1 && col <= this.cols)) throw this.error(line, describeIndex('column', this.cols), describeValue(buf, p, q, col));
    p = q;
    while (p < e && isSpace(buf[p]!)) p++;
    let v = 1;
    if (nf === 3) {
      if (p === e) throw this.fieldsError(buf, s, e, line, nf);
      q = p;
      while (q < e && !isSpace(buf[q]!)) q++;
      v = this.field === 'real' ? this.realValue(buf, p, q, line) : this.integerValue(buf, p, q, line);
      if (!Number.isFinite(v)) throw this.error(line, describeFieldValue(this.field), describeValue(buf, p, q, v));
      p = q;
      while (p < e && isSpace(buf[p]!)) p++;
    }
    if (p !== e) throw this.fieldsError(buf, s, e, line, nf);
    if (this.symmetry !== 'general') {
      if (this.symmetry === 'skew-symmetric' ? row <= col : row < col) {
        throw this.error(
          line,
          this.symmetry === 'skew-symmetric'
            ? 'an entry strictly below the diagonal (row > column) in a skew-symmetric file'
            : `an entry in the lower triangle (row >= column) in a ${this.symmetry} file`,
          `row ${row}, column ${col}`,
        );
      }
    }
    if (this.count === this.declared) {
      if (this.strict) {
        throw this.error(
          line,
          `${this.declared} entries (declared on line ${this.sizeLine})`,
          `entry number ${this.declared + 1} (pass strictCount: false to accept extra entries)`,
        );
      }
      if (this.firstExtraLine === 0) this.firstExtraLine = line;
    }
    this.count++;
    if (this.count > this.declared && this.count > structuralCells(this.rows, this.cols, this.symmetry)) {
      throw this.error(line, `at most ${structuralCells(this.rows, this.cols, this.symmetry)} entries for a ${this.rows}x${this.cols} ${this.symmetry} matrix`, `entry number ${this.count} (more entries than cells: duplicates)`);
    }
    this.triplets.push(row - 1, col - 1, v, this.maxBytes);
  }

  /** One line of an array file: a single value, stored column by column. */
  private arrayLine(buf: Uint8Array, s: number, e: number, line: number): void {
    let p = s;
    while (p < e && isSpace(buf[p]!)) p++;
    if (p === e || buf[p] === 37) return;
    let q = p;
    while (q < e && !isSpace(buf[q]!)) q++;
    const v = this.field === 'real' ? this.realValue(buf, p, q, line) : this.integerValue(buf, p, q, line);
    let r = q;
    while (r < e && isSpace(buf[r]!)) r++;
    if (r !== e) throw this.fieldsError(buf, s, e, line, 1);
    if (!Number.isFinite(v)) throw this.error(line, describeFieldValue(this.field), describeValue(buf, p, q, v));
    if (this.count === this.declared) {
      throw this.error(line, `${this.declared} values (size line ${this.sizeLine}: ${this.rows}x${this.cols}, ${this.symmetry})`, `value number ${this.declared + 1}`);
    }
    this.count++;
    if (v !== 0 || this.keepZeros) this.triplets.push(this.ai, this.aj, v, this.maxBytes);
    // advance column-major; symmetric kinds store the lower triangle only
    if (++this.ai === this.rows) {
      this.aj++;
      const sym = this.symmetry;
      this.ai = sym === 'general' ? 0 : sym === 'skew-symmetric' ? this.aj + 1 : this.aj;
    }
  }

  /**
   * An integer-field value. Past 2^53 − 1 in magnitude the digit loop of parseIntToken rounds at
   * every step, so the token is re-read with `Number` (one correct rounding) and, when that is
   * not the file's integer, a warning names the line: the float64 CSR cannot hold it exactly.
   * Cold unless the file has such values.
   */
  private integerValue(buf: Uint8Array, s: number, e: number, line: number): number {
    const v = parseIntToken(buf, s, e);
    if (!(Math.abs(v) > Number.MAX_SAFE_INTEGER)) return v;
    const text = tokenText(buf, s, e);
    const rounded = Number(text);
    if (!Number.isFinite(rounded) || BigInt(text) === BigInt(rounded)) return rounded;
    if (this.roundedInts++ === 0) {
      this.firstRoundedLine = line;
      this.warn(
        line,
        `integer value ${text.length > 40 ? `${text.slice(0, 40)}…` : text} is above 2^53 in magnitude and was rounded to ${rounded} (float64 cannot hold it exactly)`,
      );
    }
    return rounded;
  }

  private fieldsError(buf: Uint8Array, s: number, e: number, line: number, nf: number): MatrixMarketError {
    return this.error(line, describeFields(nf, this.format, this.field), describeFieldsGot(buf, s, e));
  }
}

function describeFieldValue(field: MatrixMarketField): string {
  return field === 'real' ? 'a finite real number' : 'an integer value';
}

