/**
 * FCIDUMP fuzz tier (issue 13): mutated copies of packages/chem/data/H2O_sto2g_hande.FCIDUMP.
 * Oracle: every mutated file either parses to exactly the original integrals and header numbers
 * (equal tables imply the reference energy −72.786196191345 Eh; a few are checked with the CI
 * driver too) or throws a typed FcidumpError / GpuSparseError. Crashes (any other exception),
 * hangs (a file over the time bound) and silent changes (parsed, but different) fail the test.
 *
 * Only damage that is detectable in principle is generated. Left out on purpose:
 * - deleting an arbitrary off-diagonal integral line: FCIDUMPs omit zero integrals, so the file
 *   that remains is a valid file of another Hamiltonian;
 * - flipping a digit, a sign, or an exponent letter in a value, or changing NELEC, MS2, ISYM or
 *   an ORBSYM entry to another legal value, or deleting ORBSYM (also by damaging its key name,
 *   which leaves an unknown key): each gives a legal file (the reader notes a missing ORBSYM
 *   and unknown keys);
 * - a cut after another mutation moved (or copied) the constant line up: it removes only
 *   omissible lines (so a cut comes only as the first of two mutations).
 * Deleting lines the rules require (the constant, any (ii|ii), any h_ii, the header's first or
 * last line), cutting the file anywhere, and duplicating lines with another value are included.
 *
 * Tiers: `pnpm vitest run packages/chem/test/fcidump-fuzz.test.ts` runs 2 000 files;
 * `GPUSPARSE_FUZZ=full` runs 20 000. Tallies are printed either way.
 */
import { readFileSync } from 'node:fs';
import { GpuSparseError } from '@gpusparse/formats';
import { expect, it } from 'vitest';
import { ciEnergies } from '../src/ci';
import { FcidumpError } from '../src/fcidump/errors';
import { parseFcidump } from '../src/fcidump/parse';
import { FcidumpReader } from '../src/fcidump/reader';
import { sameIntegral } from '../src/fcidump/tables';
import type { Fcidump } from '../src/fcidump/types';
import { cpuMs } from '../../../scripts/test/cpu-time';
import { generators } from '@gpusparse/formats';

const BASE = readFileSync(new URL('../data/H2O_sto2g_hande.FCIDUMP', import.meta.url), 'utf8');
const LINES = BASE.slice(0, -1).split('\n'); // 495 lines; the file ends with a line end
const HEADER = 4; // lines 1..4 are the namelist
const REFERENCE = -72.786196191345;
const FULL = process.env.GPUSPARSE_FUZZ === 'full';
const FILES = FULL ? 20_000 : 2_000;

/** Deterministic generator (mulberry32, the formats package's). */
const rng = generators.rng;
type Rand = () => number;
const int = (r: Rand, n: number) => Math.floor(r() * n);
const pick = <T>(r: Rand, a: readonly T[]): T => a[int(r, a.length)]!;

/** Tokens that are no number at all (header-only damage such as NORB=7.0 is in headerDamage). */
const BAD_NUMBERS = ['0x9', '1.0.0', 'nan', 'NaN', 'inf', '-Infinity', '', '--1', '1e', '1e+', '.', '+', '1.5x', '1e400', '0b1', '1_0', '１', '0x7', '1,0', '1d', 'D1'];
/** Never a digit, sign, dot or exponent letter: inserting one of these cannot form another number. */
const JUNK = ['x', '#', '!', ';', '*', '\0', 'q', '"', "'", '/', '&', '$', ' ', '\t', '\n', '\r', ',', '=', 'é', '\u00a0'];

const join = (ls: readonly string[]) => `${ls.join('\n')}\n`;
const fieldsOf = (l: string) => l.trim().split(/\s+/);

/** A copy of body line `k` with another value (beyond the duplicate tolerance) and permuted indices. */
function conflicting(r: Rand, k: number, sameValue: boolean): string {
  const [v, i, j, a, b] = fieldsOf(LINES[k]!) as [string, string, string, string, string];
  let value = v;
  if (!sameValue) {
    const x = Number(v);
    const deltas = [1e-9, x * 1e-6, -2 * x, 1, 1e-3];
    let nv = x + pick(r, deltas);
    if (Math.abs(nv - x) <= 1e-10) nv = x + 0.5;
    value = r() < 0.5 ? nv.toPrecision(17) : nv.toExponential(12).replace('e', 'D');
  }
  let idx = [i, j, a, b];
  if (a !== '0') {
    const images = [[i, j, a, b], [j, i, a, b], [i, j, b, a], [j, i, b, a], [a, b, i, j], [b, a, i, j], [a, b, j, i], [b, a, j, i]];
    idx = pick(r, images);
  } else if (j !== '0' && r() < 0.5) idx = [j, i, a, b];
  return `  ${value}  ${idx.join('  ')}`;
}

/** Header damage that a reader can detect (see the file comment for what is left out). */
function headerDamage(r: Rand, ls: string[]): string[] {
  const out = ls.slice();
  const text = out.slice(0, HEADER).join('\n');
  const ops: (() => string)[] = [
    () => text.replace(pick(r, ['NORB', 'NELEC']), pick(r, ['NORBX', 'NROB', 'NELECT', 'N ORB', ''])),
    () => text.replace(/NORB=/, 'NORB '),
    () => text.replace(/NORB= 7/, `NORB=${pick(r, ['8', '6', '7.0', '0x7', '7e0', '-7', '99999999999999999999', '', '+', '7 7'])}`),
    () => text.replace(/ORBSYM=1,1,3,1,4,1,3,?/, pick(r, ['ORBSYM=1,1,3,1,4,1,', 'ORBSYM=1,1,3,1,4,1,3,1,', 'ORBSYM=1,1,3,1,4,1,9', 'ORBSYM=1,1,3,1,4,1,0', 'ORBSYM=1,1,3,1,4,1,3.5'])),
    () => text.replace(/MS2=\s*0/, `MS2=${pick(r, ['1', '-1', '11', 'x', '0.5'])}`),
    () => text.replace(/NELEC=\s*10/, `NELEC=${pick(r, ['15', '-2', '1.0D1', '10.', ''])}`),
    () => text.replace(/&FCI/, pick(r, ['', 'FCI', '&FC', '&FCIX', '&XYZ'])),
    () => text.replace(/&END/, pick(r, ['', 'END', '&EN', '&ENDX', '& END'])),
    () => text.replace(/UHF=\.FALSE\./, pick(r, ['UHF=.TRUE.', 'UHF=T', 'UHF=.FALSE', 'UHF=FALS'])),
  ];
  const damaged = pick(r, ops)().split('\n');
  out.splice(0, HEADER, ...damaged);
  return out;
}

/** One deterministic mutation; `kind` names it for the tallies. */
function mutate(r: Rand, depth = 0): { text: string; kind: string } {
  const ls = LINES.slice();
  // a second mutation is never a cut: a swap or a duplicate can move a copy of the constant line
  // up, and a cut after it then removes only omissible lines (undetectable in principle)
  const kind = depth === 0 ? int(r, 12) : 2 + int(r, 9);
  switch (kind) {
    case 0:
      return { text: BASE.slice(0, int(r, BASE.length + 1)), kind: 'cut at a byte' };
    case 1:
      return { text: join(ls.slice(0, int(r, ls.length + 1))), kind: 'cut at a line' };
    case 2: {
      const i = int(r, ls.length);
      const j = int(r, ls.length);
      [ls[i], ls[j]] = [ls[j]!, ls[i]!];
      return { text: join(ls), kind: 'line swap' };
    }
    case 3:
      ls.splice(int(r, ls.length + 1), 0, ls[int(r, ls.length)]!);
      return { text: join(ls), kind: 'duplicated line' };
    case 4:
    case 5: {
      const k = HEADER + int(r, ls.length - HEADER);
      ls.splice(HEADER + int(r, ls.length - HEADER + 1), 0, conflicting(r, k, kind === 5));
      return { text: join(ls), kind: kind === 4 ? 'conflicting duplicate' : 'equal permuted duplicate' };
    }
    case 6: {
      const k = int(r, HEADER);
      const at = int(r, ls[k]!.length + 1);
      const big = r() < 0.05;
      const pad = big ? ' '.repeat(1_100_000) : r() < 0.5 ? ' '.repeat(int(r, 20_000)) : ` EXTRA=${'1,'.repeat(int(r, 5_000))} `;
      ls[k] = ls[k]!.slice(0, at) + pad + ls[k]!.slice(at);
      return { text: join(ls), kind: big ? 'header over the cap' : 'long header line' };
    }
    case 7: {
      const k = int(r, ls.length);
      const f = ls[k]!.split(/(\s+|,|=)/);
      const slots = f.map((t, q) => (/^[-+.\dDE]+$/i.test(t) ? q : -1)).filter((q) => q >= 0);
      if (slots.length === 0) return mutate(r, depth);
      f[pick(r, slots)] = pick(r, BAD_NUMBERS);
      ls[k] = f.join('');
      return { text: join(ls), kind: 'bad number' };
    }
    case 8:
      return { text: join(headerDamage(r, ls)), kind: 'header damage' };
    case 9: {
      const required = ls.map((l, q) => (q === 0 || q === HEADER - 1 || /^\s*\S+\s+(\d)\s+\1\s+(0\s+0|\1\s+\1)\s*$/.test(l) || /\s0\s+0\s+0\s+0\s*$/.test(l) ? q : -1)).filter((q) => q >= 0);
      ls.splice(pick(r, required), 1);
      return { text: join(ls), kind: 'required line deleted' };
    }
    case 10: {
      const k = int(r, ls.length);
      const l = ls[k]!;
      const letter = (q: number) => /[A-Za-z_]/.test(l[q] ?? '');
      let at = int(r, l.length + 1);
      // not inside a header key name: "ORBSYxM" is an unknown key, leaving a legal file without
      // ORBSYM (undetectable; the reader notes both)
      for (let tries = 0; k < HEADER && (letter(at - 1) || letter(at)) && tries < 100; tries++) at = int(r, l.length + 1);
      if (k < HEADER && (letter(at - 1) || letter(at))) return mutate(r, depth);
      ls[k] = l.slice(0, at) + pick(r, JUNK) + l.slice(at);
      return { text: join(ls), kind: 'junk character' };
    }
    default: {
      const first = mutate(r, 1);
      const saved = LINES.slice();
      // apply a second mutation to the result of the first
      LINES.splice(0, LINES.length, ...first.text.replace(/\n$/, '').split('\n'));
      try {
        const second = mutate(r, 1);
        return { text: second.text, kind: 'two mutations' };
      } finally {
        LINES.splice(0, LINES.length, ...saved);
      }
    }
  }
}

/**
 * Equal integral sets. Values are compared with the reader's duplicate tolerance, not bitwise:
 * the HANDE file itself lists permutations of one integral with last-digit differences
 * (line 18 −0.0074383024025919, line 22 −0.007438302402592), and the reader keeps the first
 * copy, so moving lines changes which copy is kept (by ≤ 1e-16 Eh here).
 */
function sameIntegrals(a: Fcidump, b: Fcidump): boolean {
  const eq = (x: ArrayLike<number>, y: ArrayLike<number>) => x.length === y.length && Array.prototype.every.call(x, (v: number, q: number) => sameIntegral(v, y[q]!));
  return (
    a.norb === b.norb &&
    a.nelec === b.nelec &&
    a.ms2 === b.ms2 &&
    a.isym === b.isym &&
    a.ecore === b.ecore &&
    eq(a.orbsym, b.orbsym) &&
    eq(a.h1, b.h1) &&
    eq(a.eri, b.eri) &&
    (a.orbitalEnergies === undefined) === (b.orbitalEnergies === undefined) &&
    (a.orbitalEnergies === undefined || eq(a.orbitalEnergies, b.orbitalEnergies!))
  );
}

/** Tally key of a typed error: what the message says was expected. */
function errorKind(e: GpuSparseError): string {
  if (!(e instanceof FcidumpError)) return e.name;
  const x = e.expected;
  const table: [RegExp, string][] = [
    [/mid-line|line end after the last/, 'ends mid-line'],
    [/core-energy line/, 'core line missing'],
    [/\(ii\|ii\) for every|h_ii for every/, 'diagonal missing'],
    [/integral lines after the header/, 'no integrals'],
    [/same value as line/, 'conflicting duplicate'],
    [/within its first|at most \d+ (lines|characters)|integral line .* of at most/, 'size cap'],
    [/a finite number|a number \(decimal/, 'bad number'],
    [/five fields/, 'field count'],
    [/orbital indices|index pattern/, 'bad index'],
  ];
  for (const [re, k] of table) if (re.test(x) || re.test(e.got)) return k;
  return 'header';
}

function outcome(text: string, label: string): { ok: true; fd: Fcidump } | { ok: false; e: GpuSparseError } {
  try {
    return { ok: true, fd: parseFcidump(text, { file: 'fuzz.FCIDUMP' }) };
  } catch (e) {
    if (!(e instanceof GpuSparseError)) throw new Error(`${label}: crash, ${(e as Error)?.constructor?.name}: ${(e as Error)?.message}`);
    if (e instanceof FcidumpError && e.line !== undefined) expect(Number.isInteger(e.line) && e.line >= 1, label).toBe(true);
    return { ok: false, e };
  }
}

it(`FCIDUMP fuzz: ${FILES} mutated H2O/STO-2G files, every one equal or a typed error`, async () => {
  const reference = parseFcidump(BASE);
  const r = rng(20261125);
  const tally = { files: 0, typed: 0, equal: 0, crashes: 0, hangs: 0, silent: 0, energies: 0 };
  const byError = new Map<string, number>();
  const byMutation = new Map<string, [number, number]>();
  const energyChecks: Fcidump[] = [];
  let slowest = 0;
  const start = performance.now();
  for (let t = 0; t < FILES; t++) {
    const { text, kind } = mutate(r);
    const label = `case ${t} (${kind})`;
    const t0 = cpuMs(); // a hang is CPU spent, not a loaded machine's wait
    let res: ReturnType<typeof outcome>;
    try {
      res = outcome(text, label);
    } catch (e) {
      tally.crashes++;
      throw e;
    }
    const dt = cpuMs() - t0;
    slowest = Math.max(slowest, dt);
    if (dt > 2000) tally.hangs++;
    tally.files++;
    const m = byMutation.get(kind) ?? [0, 0];
    if (res.ok) {
      if (!sameIntegrals(res.fd, reference)) {
        tally.silent++;
        const diff = ['norb', 'nelec', 'ms2', 'isym', 'ecore', 'orbsym', 'orbitalEnergies'].filter((k) => JSON.stringify(res.fd[k as 'nelec']) !== JSON.stringify(reference[k as 'nelec']));
        const e = res.fd.eri.findIndex((v, q) => !sameIntegral(v, reference.eri[q]!));
        const h = res.fd.h1.findIndex((v, q) => !sameIntegral(v, reference.h1[q]!));
        const changed = text.split('\n').filter((l) => !LINES.includes(l)).slice(0, 10);
        throw new Error(`${label}: parsed to different integrals (a silent change): ${diff.join(' ')} eri@${e} h1@${h}; lines not in the original: ${JSON.stringify(changed).slice(0, 2000)}`);
      }
      tally.equal++;
      m[0]++;
      if (kind !== 'cut at a byte' && kind !== 'cut at a line' && energyChecks.length < 3 && !energyChecks.some((f) => f === res.fd)) energyChecks.push(res.fd);
    } else {
      tally.typed++;
      m[1]++;
      const k = errorKind(res.e);
      byError.set(k, (byError.get(k) ?? 0) + 1);
    }
    byMutation.set(kind, m);
    if (t % 8 === 0) {
      // the chunked path (random chunk sizes, lines split across chunks) must agree exactly
      const reader = new FcidumpReader({ file: 'fuzz.FCIDUMP' });
      let streamed: ReturnType<typeof outcome>;
      try {
        for (let s = 0; s < text.length; ) {
          const n = 1 + int(r, 97);
          reader.push(text.slice(s, s + n));
          s += n;
        }
        streamed = { ok: true, fd: reader.end() };
      } catch (e) {
        if (!(e instanceof GpuSparseError)) throw new Error(`${label} (chunked): crash ${(e as Error).message}`);
        streamed = { ok: false, e };
      }
      expect(streamed.ok, label).toBe(res.ok);
      if (!res.ok && !streamed.ok) expect(streamed.e.message, label).toBe(res.e.message);
    }
  }
  const elapsed = performance.now() - start;
  for (const fd of energyChecks) {
    const e = await ciEnergies(fd, { solver: 'dense', irrep: 1 });
    expect(Math.abs(e.energies[0]! - REFERENCE)).toBeLessThan(1e-8);
    tally.energies++;
  }
  const lines = [
    `FCIDUMP fuzz (${FULL ? 'full' : 'default'} tier): ${tally.files} files in ${(elapsed / 1000).toFixed(1)} s, slowest ${slowest.toFixed(0)} ms of CPU`,
    `  parsed and equal to the original: ${tally.equal} (CI energy checked on ${tally.energies}: ${REFERENCE} Eh)`,
    `  typed errors: ${tally.typed} — ${[...byError].sort((a, b) => b[1] - a[1]).map(([k, n]) => `${k} ${n}`).join(', ')}`,
    `  crashes ${tally.crashes}, hangs ${tally.hangs}, silent changes ${tally.silent}`,
    `  by mutation (equal / error): ${[...byMutation].map(([k, [a, b]]) => `${k} ${a}/${b}`).join(', ')}`,
  ];
  console.log(lines.join('\n'));
  expect(tally.crashes + tally.hangs + tally.silent).toBe(0);
  expect(tally.equal).toBeGreaterThan(FILES / 20);
  expect(tally.typed).toBeGreaterThan(FILES / 2);
  expect(energyChecks.length).toBe(3);
}, FULL ? 900_000 : 120_000);
