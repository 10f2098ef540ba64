/**
 * Incremental FCIDUMP reader: text is pushed in chunks of any size (a whole string, or a stream
 * of inflated gzip), lines are cut as they come and only the current partial line is kept. The
 * header is capped in size, the body in line length and line count (from NORB), and the integral
 * tables are sized and checked against the memory available before they are allocated.
 * Integrity rules (what a damaged file trips): see {@link FcidumpReader.end}.
 * @module
 */
import { FcidumpError } from './errors';
import { HeaderParser } from './header';
import { headerMeta } from './header-meta';
import { fields } from './line-fields';
import { parseIndexToken, parseRealToken } from './numbers';
import { MAX_HEADER_CHARS, MAX_BODY_LINE_CHARS, MAX_NORB, maxBodyLines, type ParseFcidumpOptions } from './reader-options';
import { allocateTables, DUPLICATE_RTOL, distinctSlot, fcidumpTableBytes, type IntegralTables, sameIntegral } from './tables';
import type { Fcidump } from './types';

export { MAX_BODY_LINE_CHARS, MAX_HEADER_CHARS, MAX_NORB, maxBodyLines, type ParseFcidumpOptions } from './reader-options';

interface Body {
  norb: number;
  expandSymmetry: 8 | 4;
  checkSymmetry: 8 | 4;
  t: IntegralTables;
  eps: Float64Array | undefined;
  epsLine: Uint32Array | undefined;
  ecore: number;
  coreLine: number;
  counts: { twoE: number; oneE: number; diagH: number };
  maxLines: number;
}

/** Chunked FCIDUMP reader; `parseFcidump` and `readFcidump` are thin wrappers around it. */
export class FcidumpReader {
  private readonly file: string;
  private readonly header: HeaderParser;
  private headerChars = 0;
  private pending = '';
  private lineNo = 0;
  private bodyStartLine = 0;
  private body: Body | undefined;
  private meta: Omit<Fcidump, 'h1' | 'eri' | 'ecore' | 'orbitalEnergies'> | undefined;

  constructor(private readonly options: ParseFcidumpOptions = {}) {
    this.file = options.file ?? '<string>';
    this.header = new HeaderParser(this.file);
  }

  private fail(line: number | undefined, expected: string, got: string, column?: number, otherLine?: number): never {
    throw new FcidumpError(this.file, line, expected, got, column, otherLine);
  }

  /** Feed the next chunk of text (any size; lines may span chunks). */
  push(chunk: string): void {
    let start = 0;
    for (let nl = chunk.indexOf('\n'); nl >= 0; nl = chunk.indexOf('\n', start)) {
      let s = chunk.slice(start, nl);
      if (this.pending !== '') {
        s = this.pending + s;
        this.pending = '';
      }
      this.onLine(s);
      start = nl + 1;
    }
    if (start < chunk.length) {
      this.checkLength(this.pending.length + chunk.length - start, this.lineNo + 1);
      this.pending += chunk.slice(start);
    }
  }

  /** Refuse a line (or the header) past its cap before it is kept or scanned. */
  private checkLength(len: number, line: number): void {
    if (!this.meta) {
      const cap = this.options.maxHeaderChars ?? MAX_HEADER_CHARS;
      if (this.headerChars + len > cap) this.fail(line, `the end of the namelist header ('&END' or '/') within its first ${cap} characters`, 'a longer header (not an FCIDUMP, or a damaged one)');
    } else if (len > MAX_BODY_LINE_CHARS) {
      this.fail(line, `an integral line "value i j k l" of at most ${MAX_BODY_LINE_CHARS} characters`, `a line of ${len} or more characters`);
    }
  }

  private onLine(raw: string): void {
    this.lineNo++;
    const s = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    this.checkLength(s.length, this.lineNo);
    if (!this.meta) {
      this.headerChars += s.length + 1;
      if (this.header.feed(s, this.lineNo)) this.startBody();
      return;
    }
    const b = this.body!;
    if (this.lineNo - this.bodyStartLine > b.maxLines) {
      this.fail(this.lineNo, `at most ${b.maxLines} lines after the header for NORB=${b.norb} (every integral four times over)`, 'more (a damaged file or a decompression bomb)');
    }
    this.record(s, false);
  }

  /** Header done: validate it, check memory, allocate the tables. */
  private startBody(): void {
    const h = this.header.header;
    const meta = headerMeta(h, this.file, this.options.symmetry, this.options.ms2);
    const checkSymmetry = meta.symmetry === 4 || meta.fileSymmetry === 4 ? 4 : 8;
    const available = this.options.memoryBytes ?? 2 ** 32;
    // a NORB too large for memory is a ResourceLimitError (bytes needed vs available) whatever
    // the cap; one that fits memory but exceeds the reader's limit is an input error
    if (meta.norb > MAX_NORB && fcidumpTableBytes(meta.norb, checkSymmetry) <= available) this.fail(h.lines.NORB, `NORB in 1..${MAX_NORB}`, String(meta.norb));
    const t = allocateTables(meta.norb, checkSymmetry, available);
    const { fileSymmetry: _f, ...rest } = meta;
    this.meta = { file: this.file, ...rest };
    this.bodyStartLine = this.lineNo;
    this.body = {
      norb: meta.norb,
      expandSymmetry: meta.symmetry,
      checkSymmetry,
      t,
      eps: undefined,
      epsLine: undefined,
      ecore: 0,
      coreLine: 0,
      counts: { twoE: 0, oneE: 0, diagH: 0 },
      maxLines: maxBodyLines(meta.norb),
    };
  }

  /** One body line. `last`: the file's final line, with no line end after it. */
  private record(s: string, last: boolean): void {
    const f = fields(s);
    if (f.length === 0) return;
    const line = this.lineNo;
    if (f.length !== 5) this.fail(line, 'five fields "value i j k l"', JSON.stringify(s.trim().slice(0, 80)), f.length > 5 ? f[5]!.col : undefined);
    const v = parseRealToken(f[0]!.text);
    if (v === undefined) this.fail(line, 'a finite number (decimal or exponent form, E or D) as the integral value', JSON.stringify(f[0]!.text.slice(0, 40)), f[0]!.col);
    const b = this.body!;
    const ix = [0, 0, 0, 0];
    for (let q = 0; q < 4; q++) {
      const n = parseIndexToken(f[q + 1]!.text);
      if (n === undefined || n > b.norb) this.fail(line, `orbital indices in 0..${b.norb}`, JSON.stringify(f[q + 1]!.text.slice(0, 40)), f[q + 1]!.col);
      ix[q] = n;
    }
    const [i, j, k, l] = ix as [number, number, number, number];
    if (last && !(i === 0 && j === 0 && k === 0 && l === 0)) {
      this.fail(line, 'a line end after the last record (only a final core-energy line "value 0 0 0 0" may lack one)', `the file ends mid-line: ${JSON.stringify(s.trim().slice(0, 80))} (truncated?)`);
    }
    if (i > 0 && j > 0 && k > 0 && l > 0) this.twoElectron(v, i - 1, j - 1, k - 1, l - 1, line);
    else if (i > 0 && j > 0 && k === 0 && l === 0) this.oneElectron(v, i - 1, j - 1, line);
    else if (i > 0 && j === 0 && k === 0 && l === 0) this.orbitalEnergy(v, i - 1, line);
    else if (i === 0 && j === 0 && k === 0 && l === 0) {
      if (b.coreLine !== 0) this.checkSame(b.ecore, v, b.coreLine, 'the core energy');
      else {
        b.ecore = v;
        b.coreLine = line;
      }
    } else {
      this.fail(line, 'index pattern "i j k l" (2-e), "i j 0 0" (1-e), "i 0 0 0" (orbital energy) or "0 0 0 0" (constant)', JSON.stringify(`${i} ${j} ${k} ${l}`), f[1]!.col);
    }
  }

  /** The final line when it has no line end: any error there is reported as a cut file. */
  private lastRecord(s: string): void {
    try {
      this.record(s, true);
    } catch (e) {
      if (!(e instanceof FcidumpError) || e.otherLine !== undefined || e.got.startsWith('the file ends mid-line')) throw e;
      this.fail(this.lineNo, `a complete record on the last line (${e.expected})`, `the file ends mid-line: ${JSON.stringify(s.trim().slice(0, 80))} (truncated?)`, e.column);
    }
  }

  /** A second copy of an integral: equal within DUPLICATE_RTOL is fine, else a conflict. */
  private checkSame(old: number, v: number, oldLine: number, what: string): void {
    if (!sameIntegral(old, v)) {
      this.fail(this.lineNo, `the same value as line ${oldLine} for ${what} (duplicates must agree to ${DUPLICATE_RTOL}·max(|value|, 1 Eh))`, `${v} here and ${old} on line ${oldLine}`, undefined, oldLine);
    }
  }

  private twoElectron(v: number, a: number, b: number, c: number, d: number, line: number): void {
    const body = this.body!;
    const { norb, t } = body;
    const slot = distinctSlot(norb, body.checkSymmetry, a, b, c, d);
    const idx = (i: number, j: number, k: number, l: number) => ((i * norb + j) * norb + k) * norb + l;
    if (t.eriLine[slot] !== 0) {
      this.checkSame(t.eri[idx(a, b, c, d)]!, v, t.eriLine[slot]!, `(${a + 1} ${b + 1}|${c + 1} ${d + 1}) under ${body.checkSymmetry}-fold symmetry`);
      return;
    }
    t.eriLine[slot] = line;
    body.counts.twoE++;
    // (ij|kl) = (kl|ij) = (ji|lk) = (lk|ji), plus (ji|kl) etc. for real orbitals
    const eri = t.eri;
    eri[idx(a, b, c, d)] = v;
    eri[idx(c, d, a, b)] = v;
    eri[idx(b, a, d, c)] = v;
    eri[idx(d, c, b, a)] = v;
    if (body.expandSymmetry === 8) {
      eri[idx(b, a, c, d)] = v;
      eri[idx(a, b, d, c)] = v;
      eri[idx(c, d, b, a)] = v;
      eri[idx(d, c, a, b)] = v;
    }
  }

  private oneElectron(v: number, i: number, j: number, line: number): void {
    const body = this.body!;
    const { norb, t } = body;
    const slot = i >= j ? i * norb + j : j * norb + i;
    if (t.h1Line[slot] !== 0) {
      this.checkSame(t.h1[i * norb + j]!, v, t.h1Line[slot]!, `h(${i + 1},${j + 1})`);
      return;
    }
    t.h1Line[slot] = line;
    body.counts.oneE++;
    if (i === j) body.counts.diagH++;
    t.h1[i * norb + j] = v;
    t.h1[j * norb + i] = v;
  }

  private orbitalEnergy(v: number, i: number, line: number): void {
    const body = this.body!;
    if (!body.eps) {
      body.eps = new Float64Array(body.norb).fill(Number.NaN);
      body.epsLine = new Uint32Array(body.norb);
    }
    if (body.epsLine![i] !== 0) this.checkSame(body.eps[i]!, v, body.epsLine![i]!, `the orbital energy of orbital ${i + 1}`);
    else {
      body.eps[i] = v;
      body.epsLine![i] = line;
    }
  }

  /**
   * The end of the text: check what must be there and return the integrals. Rules:
   * - a final line without a line end must be a complete core-energy record (a file cut
   *   mid-line is an error; CheMPS2 writes its last line, the constant, with no line end);
   * - at least one integral line;
   * - the core-energy line, unless `allowMissingCoreEnergy`;
   * - (ii|ii) for every orbital when the file has any two-electron integral (a self-repulsion
   *   is never zero for a normalized orbital, and model Hamiltonians give U on every site);
   * - h_ii for every orbital when the file gives any h_ii (lattice models with zero on-site
   *   energy give none, molecular files give all).
   */
  end(): Fcidump {
    if (this.pending !== '') {
      const s = this.pending;
      this.pending = '';
      this.lineNo++;
      const line = s.endsWith('\r') ? s.slice(0, -1) : s;
      if (!this.meta) {
        this.headerChars += line.length;
        if (this.header.feed(line, this.lineNo)) this.startBody();
      } else this.lastRecord(line);
    }
    if (!this.meta) {
      this.fail(Math.max(this.lineNo, 1), "the end of the namelist header ('&END' or '/')", this.header.started ? 'end of file' : 'an empty file');
    }
    const b = this.body!;
    const last = this.lineNo;
    if (b.counts.twoE + b.counts.oneE === 0) this.fail(last, 'integral lines after the header', 'none up to the end of the file (header only: a truncated file?)');
    if (b.coreLine === 0 && !this.options.allowMissingCoreEnergy) {
      this.fail(last, 'a core-energy line "value 0 0 0 0" (writers put it last)', 'none up to the end of the file (a truncated file? if the file really has no constant, pass allowMissingCoreEnergy / --allow-missing-core)');
    }
    this.checkDiagonals(last);
    return { ...this.meta, h1: b.t.h1, eri: b.t.eri, ecore: b.ecore, orbitalEnergies: b.eps };
  }

  private checkDiagonals(last: number): void {
    const b = this.body!;
    const { norb, t } = b;
    const missing = (has: (p: number) => boolean) => {
      const out: number[] = [];
      for (let p = 0; p < norb; p++) if (!has(p)) out.push(p + 1);
      return out;
    };
    const list = (m: number[]) => `${m.slice(0, 10).join(', ')}${m.length > 10 ? `, … (${m.length} in all)` : ''}`;
    if (b.counts.twoE > 0) {
      const m = missing((p) => t.eriLine[distinctSlot(norb, b.checkSymmetry, p, p, p, p)] !== 0);
      if (m.length > 0) this.fail(last, `(ii|ii) for every orbital ("value i i i i"), since the file has two-electron integrals`, `none for orbital ${list(m)} up to the end of the file (a truncated or damaged file?)`);
    }
    if (b.counts.diagH > 0) {
      const m = missing((p) => t.h1Line[p * norb + p] !== 0);
      if (m.length > 0) this.fail(last, `h_ii for every orbital ("value i i 0 0"), since the file gives some`, `none for orbital ${list(m)} up to the end of the file (a truncated or damaged file?)`);
    }
  }
}
