/**
 * The FCIDUMP namelist header checked and converted into the reader's metadata (NORB, NELEC, MS2,
 * ISYM, ORBSYM, the integral symmetry, notes on ignored or odd keys).
 * @module
 */
import { InvalidParameterError } from '@gpusparse/formats';
import { FcidumpError } from './errors';
import type { ParsedHeader } from './header';
import { MAX_NORB, type ParseFcidumpOptions } from './reader-options';

/** Header keys known from FCIDUMP writers (Molpro, PySCF, HANDE, NECI, Dice, block2). */
const KNOWN_KEYS = new Set(['NORB', 'NELEC', 'MS2', 'ORBSYM', 'ISYM', 'UHF', 'IUHF', 'SYML', 'SYMLZ', 'PNTGRP', 'NPROP', 'PROPBITLEN', 'ST', 'III', 'OCC', 'CLOSED', 'TREL']);

/** Header values checked and converted; `fileSymmetry` is what SYMLZ implies. */
export function headerMeta(h: ParsedHeader, file: string, symmetryOption: ParseFcidumpOptions['symmetry'], ms2Given?: number) {
  const intKey = (key: string, fallback?: number): number => {
    const v = h.values[key];
    if (v === undefined) {
      if (fallback !== undefined) return fallback;
      throw new FcidumpError(file, undefined, `header key ${key}`, 'no such key in the namelist');
    }
    // 'NORB=2.0' said "got [2]": the value, not how it was written, was shown
    if (v.length === 1 && typeof v[0] === 'number' && h.integral[key]![0] !== true) throw new FcidumpError(file, h.lines[key], `one integer for ${key}`, `${v[0]} written as a real number (with a decimal point or an exponent)`);
    if (v.length !== 1 || h.integral[key]![0] !== true) throw new FcidumpError(file, h.lines[key], `one integer for ${key}`, JSON.stringify(v));
    return v[0] as number;
  };
  const norb = intKey('NORB');
  const nelec = intKey('NELEC');
  const headerMs2 = intKey('MS2', 0);
  // OpenMolcas 22.10 (RASSCF DMPOnly) writes ISYM=0: read as "not given", i.e. irrep 1, with a note
  const isymRaw = intKey('ISYM', 1);
  const isym = isymRaw === 0 ? 1 : isymRaw;
  if (norb < 1) throw new FcidumpError(file, h.lines.NORB, `NORB in 1..${MAX_NORB}`, String(norb));
  if (nelec < 0 || nelec > 2 * norb) throw new FcidumpError(file, h.lines.NELEC, `NELEC in 0..${2 * norb}`, String(nelec));
  const parityOnly = Math.abs(headerMs2) <= nelec && (nelec + headerMs2) % 2 !== 0;
  // a given ms2 replaces a header MS2 of the wrong parity (PySCF writes MS2=0 unless told); it is
  // checked against NELEC by the CI driver, as --ms2 always was
  const ms2 = parityOnly && ms2Given !== undefined ? ms2Given : headerMs2;
  if (ms2 !== headerMs2 && (!Number.isInteger(ms2) || Math.abs(ms2) > nelec || (nelec + ms2) % 2 !== 0)) {
    throw new InvalidParameterError('ms2', `an integer with |ms2| ≤ ${nelec} and the parity of NELEC=${nelec} (it replaces the header's MS2=${headerMs2}, of the wrong parity)`, ms2);
  }
  if (Math.abs(ms2) > nelec || (nelec + ms2) % 2 !== 0) {
    const hint = parityOnly ? ` (PySCF's writer puts MS2=0 unless told, whatever the spin: give the spin yourself with ms2 / --ms2, e.g. ${nelec % 2})` : '';
    throw new FcidumpError(file, h.lines.MS2, `MS2 with |MS2| ≤ NELEC and the same parity as NELEC=${nelec}`, `${headerMs2}${hint}`);
  }
  if (isym < 1 || isym > 8) throw new FcidumpError(file, h.lines.ISYM, 'ISYM in 1..8 (0 read as not given)', String(isymRaw));
  const uhf = h.values.UHF;
  if (uhf && uhf[0] === true) {
    throw new FcidumpError(file, h.lines.UHF, 'a restricted (UHF=.FALSE.) FCIDUMP', 'UHF=.TRUE., which is not supported (spin-unrestricted integrals)');
  }
  // Molpro writes IUHF=1 for spin-unrestricted integrals (αα, ββ, αβ blocks after one another):
  // read as restricted they met as "core energy 0 here, 2.4 there", a message about the wrong thing
  const iuhf = h.values.IUHF;
  if (iuhf && iuhf[0] !== 0 && iuhf[0] !== false) {
    throw new FcidumpError(file, h.lines.IUHF, 'a restricted FCIDUMP (IUHF=0 or absent)', `IUHF=${String(iuhf[0])}, which is not supported (spin-unrestricted integrals)`);
  }
  // NECI and M7 read TREL=.TRUE. as a relativistic file (Kramers spinors: NORB counts spin
  // orbitals, integrals complex): read as spatial orbitals it gave an energy without a word
  const trel = h.values.TREL;
  if (trel && trel[0] !== 0 && trel[0] !== false) {
    throw new FcidumpError(file, h.lines.TREL, 'a non-relativistic FCIDUMP (TREL=.FALSE. or absent)', `TREL=${String(trel[0])}, which is not supported (relativistic spinor integrals)`);
  }
  const orbsym = orbsymOf(h, file, norb);
  const notes: string[] = [];
  if (ms2 !== headerMs2) notes.push(`MS2=${headerMs2} in the header does not match NELEC=${nelec} (odd/even): the given ms2 = ${ms2} is used`);
  if (isymRaw === 0) notes.push('ISYM=0 in the header (as OpenMolcas writes it): read as not given, target irrep 1 unless --irrep says otherwise');
  if (!h.values.ORBSYM) notes.push('no ORBSYM in the header: every orbital taken as irrep 1 (no point-group symmetry)');
  const unknown = Object.keys(h.values).filter((k) => !KNOWN_KEYS.has(k));
  // accepted (writers add their own keys) but named with their line: a misspelt key (NLEC=) shows here
  const shown = unknown.slice(0, 10).map((k) => `${k} (${file}:${h.lines[k]})`);
  if (unknown.length > 0) notes.push(`header keys not used by this reader, ignored: ${shown.join(', ')}${unknown.length > 10 ? `, … (${unknown.length} in all)` : ''}`);
  const hasLz = h.values.SYMLZ !== undefined;
  const fileSymmetry: 8 | 4 = hasLz ? 4 : 8;
  let symmetry: 8 | 4;
  if (symmetryOption === undefined || symmetryOption === 'auto') {
    symmetry = fileSymmetry;
    if (hasLz) notes.push('SYMLZ in the header: complex Lz orbitals, integrals expanded with 4-fold symmetry (ij|kl)=(kl|ij)=(ji|lk) only');
  } else symmetry = symmetryOption;
  return { norb, nelec, ms2, orbsym, isym, symmetry, fileSymmetry, header: h.values, notes };
}

function orbsymOf(h: ParsedHeader, file: string, norb: number): Int32Array {
  const orbsym = new Int32Array(Math.min(norb, MAX_NORB)).fill(1);
  const os = h.values.ORBSYM;
  if (!os) return orbsym;
  if (os.length !== norb) throw new FcidumpError(file, h.lines.ORBSYM, `ORBSYM with NORB=${norb} entries`, `${os.length} entries`);
  for (let p = 0; p < norb; p++) {
    const s = os[p];
    if (typeof s !== 'number' || h.integral.ORBSYM![p] !== true || s < 1 || s > 8) {
      throw new FcidumpError(file, h.lines.ORBSYM, 'ORBSYM entries in 1..8 (Molpro irrep numbers)', `${String(s)} at position ${p + 1}`);
    }
    orbsym[p] = s;
  }
  return orbsym;
}
