/**
 * FCIDUMP text parser (no file system: usable in a browser). Node file reading, with `.gz`,
 * is in ./node.ts.
 *
 * Format: a Fortran namelist header `&FCI NORB=…, NELEC=…, MS2=…, ORBSYM=…, ISYM=…, &END`
 * (or `/` as terminator, one key per line allowed), then lines `value i j k l`:
 * all four > 0 → (ij|kl); k = l = 0 → h_ij; j = k = l = 0 → Molpro orbital energy (kept
 * aside, not part of H); all zero → the constant.
 * @module
 */
import { FcidumpError } from './errors';
import type { Fcidump } from './types';

/** Options of {@link parseFcidump}. */
export interface ParseFcidumpOptions {
  /** Name used in error messages (default '<string>'). */
  file?: string;
  /**
   * Permutational symmetry of the two-electron integrals: 8 (real orbitals), 4 (complex Lz
   * orbitals: (ij|kl) = (kl|ij) = (ji|lk) only) or 'auto' (default): 4 when the header has
   * SYMLZ, else 8.
   */
  symmetry?: 8 | 4 | 'auto';
}

type HeaderValue = (number | boolean)[];

interface ParsedHeader {
  values: Record<string, HeaderValue>;
  lines: Record<string, number>;
  /** 0-based index of the first line after the header. */
  bodyStart: number;
}

const TERMINATOR = /(&END|\$END|\/)\s*$/i;

function parseHeader(lines: string[], file: string): ParsedHeader {
  let i = 0;
  while (i < lines.length && lines[i]!.trim() === '') i++;
  const first = lines[i]?.trim() ?? '';
  if (!/^[&$]FCI\b/i.test(first)) {
    throw new FcidumpError(file, i + 1, "a namelist header starting with '&FCI'", JSON.stringify(first.slice(0, 60)));
  }
  // Collect header text with, for each character offset, its line number.
  let text = '';
  const lineAt: number[] = [];
  let end = -1;
  for (let j = i; j < lines.length; j++) {
    let s = lines[j]!;
    if (j === i) s = s.replace(/^\s*[&$]FCI/i, ' ');
    const t = s.trim();
    let done = false;
    if (TERMINATOR.test(t)) {
      s = t.replace(TERMINATOR, '');
      done = true;
    }
    lineAt.push(...new Array<number>(s.length + 1).fill(j + 1));
    text += `${s}\n`;
    if (done) {
      end = j;
      break;
    }
  }
  if (end < 0) {
    let last = lines.length;
    while (last > 1 && lines[last - 1]!.trim() === '') last--;
    throw new FcidumpError(file, last, "the end of the namelist header ('&END' or '/')", 'end of file');
  }
  const values: Record<string, HeaderValue> = {};
  const where: Record<string, number> = {};
  const keyRe = /([A-Za-z][A-Za-z0-9_]*)\s*=/g;
  const keys: { name: string; start: number; valueStart: number }[] = [];
  for (let m = keyRe.exec(text); m; m = keyRe.exec(text)) {
    keys.push({ name: m[1]!.toUpperCase(), start: m.index, valueStart: m.index + m[0].length });
  }
  for (let k = 0; k < keys.length; k++) {
    const key = keys[k]!;
    const raw = text.slice(key.valueStart, k + 1 < keys.length ? keys[k + 1]!.start : text.length);
    const line = lineAt[key.start] ?? i + 1;
    const tokens = raw.split(/[\s,]+/).filter((t) => t !== '');
    const vals: HeaderValue = [];
    for (const tok of tokens) {
      const up = tok.toUpperCase();
      if (/^\.?T(RUE)?\.?$/.test(up)) vals.push(true);
      else if (/^\.?F(ALSE)?\.?$/.test(up)) vals.push(false);
      else {
        const v = Number(up.replace(/D/, 'E'));
        if (!Number.isFinite(v)) throw new FcidumpError(file, line, `a number or logical in header key ${key.name}`, JSON.stringify(tok));
        vals.push(v);
      }
    }
    values[key.name] = vals;
    where[key.name] = line;
  }
  return { values, lines: where, bodyStart: end + 1 };
}

function intKey(h: ParsedHeader, key: string, file: string, fallback?: number): number {
  const v = h.values[key];
  if (v === undefined) {
    if (fallback !== undefined) return fallback;
    throw new FcidumpError(file, undefined, `header key ${key}`, 'no such key in the namelist');
  }
  const x = v[0];
  if (v.length !== 1 || typeof x !== 'number' || !Number.isInteger(x)) {
    throw new FcidumpError(file, h.lines[key], `one integer for ${key}`, JSON.stringify(v));
  }
  return x;
}

/**
 * Parse FCIDUMP text into dense integrals. Cost: O(lines + norb⁴) time, 8·norb⁴ bytes.
 * Throws {@link FcidumpError} naming the file and line on malformed input, and for UHF files
 * (not supported).
 * @example
 * const fd = parseFcidump(text, { file: 'h2.FCIDUMP' });
 * fd.h1[0]; // h_00
 */
export function parseFcidump(text: string, options: ParseFcidumpOptions = {}): Fcidump {
  const file = options.file ?? '<string>';
  const lines = text.split(/\r?\n/);
  const h = parseHeader(lines, file);
  const norb = intKey(h, 'NORB', file);
  const nelec = intKey(h, 'NELEC', file);
  const ms2 = intKey(h, 'MS2', file, 0);
  const isym = intKey(h, 'ISYM', file, 1);
  if (norb < 1 || norb > 128) throw new FcidumpError(file, h.lines.NORB, 'NORB in 1..128', String(norb));
  if (nelec < 0 || nelec > 2 * norb) throw new FcidumpError(file, h.lines.NELEC, `NELEC in 0..${2 * norb}`, String(nelec));
  if (Math.abs(ms2) > nelec || (nelec + ms2) % 2 !== 0) {
    throw new FcidumpError(file, h.lines.MS2, `MS2 with |MS2| ≤ NELEC and the same parity as NELEC=${nelec}`, String(ms2));
  }
  if (isym < 1 || isym > 8) throw new FcidumpError(file, h.lines.ISYM, 'ISYM in 1..8', String(isym));
  const uhf = h.values.UHF;
  if (uhf && uhf[0] === true) {
    throw new FcidumpError(file, h.lines.UHF, 'a restricted (UHF=.FALSE.) FCIDUMP', 'UHF=.TRUE., which is not supported (spin-unrestricted integrals)');
  }
  const orbsym = new Int32Array(norb).fill(1);
  const os = h.values.ORBSYM;
  if (os) {
    if (os.length !== norb) throw new FcidumpError(file, h.lines.ORBSYM, `ORBSYM with NORB=${norb} entries`, `${os.length} entries`);
    for (let p = 0; p < norb; p++) {
      const s = os[p];
      if (typeof s !== 'number' || !Number.isInteger(s) || s < 1 || s > 8) {
        throw new FcidumpError(file, h.lines.ORBSYM, 'ORBSYM entries in 1..8 (Molpro irrep numbers)', `${String(s)} at position ${p + 1}`);
      }
      orbsym[p] = s;
    }
  }
  const notes: string[] = [];
  const hasLz = h.values.SYMLZ !== undefined;
  let symmetry: 8 | 4;
  if (options.symmetry === undefined || options.symmetry === 'auto') {
    symmetry = hasLz ? 4 : 8;
    if (hasLz) notes.push('SYMLZ in the header: complex Lz orbitals, integrals expanded with 4-fold symmetry (ij|kl)=(kl|ij)=(ji|lk) only');
  } else symmetry = options.symmetry;

  const n2 = norb * norb;
  const h1 = new Float64Array(n2);
  const eri = new Float64Array(n2 * n2);
  let ecore = 0;
  let eps: Float64Array | undefined;
  const idx = (i: number, j: number, k: number, l: number) => ((i * norb + j) * norb + k) * norb + l;
  for (let ln = h.bodyStart; ln < lines.length; ln++) {
    const t = lines[ln]!.trim();
    if (t === '') continue;
    const f = t.split(/\s+/);
    if (f.length !== 5) throw new FcidumpError(file, ln + 1, 'five fields "value i j k l"', JSON.stringify(t.slice(0, 80)));
    const v = Number(f[0]!.replace(/[dD]/, 'E'));
    if (!Number.isFinite(v)) throw new FcidumpError(file, ln + 1, 'a finite number as the integral value', JSON.stringify(f[0]));
    const ix = [0, 0, 0, 0];
    for (let q = 0; q < 4; q++) {
      const s = f[q + 1]!;
      const n = Number(s);
      if (!/^\d+$/.test(s) || n > norb) throw new FcidumpError(file, ln + 1, `orbital indices in 0..${norb}`, JSON.stringify(s));
      ix[q] = n;
    }
    const [i, j, k, l] = ix as [number, number, number, number];
    if (i > 0 && j > 0 && k > 0 && l > 0) {
      const a = i - 1;
      const b = j - 1;
      const c = k - 1;
      const d = l - 1;
      // (ij|kl) = (kl|ij) = (ji|lk) = (lk|ji), plus (ji|kl) etc. for real orbitals
      eri[idx(a, b, c, d)] = v;
      eri[idx(c, d, a, b)] = v;
      eri[idx(b, a, d, c)] = v;
      eri[idx(d, c, b, a)] = v;
      if (symmetry === 8) {
        eri[idx(b, a, c, d)] = v;
        eri[idx(a, b, d, c)] = v;
        eri[idx(c, d, b, a)] = v;
        eri[idx(d, c, a, b)] = v;
      }
    } else if (i > 0 && j > 0 && k === 0 && l === 0) {
      h1[(i - 1) * norb + (j - 1)] = v;
      h1[(j - 1) * norb + (i - 1)] = v;
    } else if (i > 0 && j === 0 && k === 0 && l === 0) {
      if (!eps) eps = new Float64Array(norb).fill(Number.NaN);
      eps[i - 1] = v;
    } else if (i === 0 && j === 0 && k === 0 && l === 0) {
      ecore += v;
    } else {
      throw new FcidumpError(
        file,
        ln + 1,
        'index pattern "i j k l" (2-e), "i j 0 0" (1-e), "i 0 0 0" (orbital energy) or "0 0 0 0" (constant)',
        JSON.stringify(`${i} ${j} ${k} ${l}`),
      );
    }
  }
  return { file, norb, nelec, ms2, orbsym, isym, h1, eri, ecore, orbitalEnergies: eps, symmetry, header: h.values, notes };
}
