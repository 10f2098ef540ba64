/**
 * FCIDUMP integrity (issue 13, points 1, 3 and 6): damaged files are typed errors naming file,
 * line (and column for a bad token), never a silent wrong energy; strict number grammar; caps
 * on header size, line length and line count; table memory checked before allocation.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { GpuSparseError, ResourceLimitError } from '@gpusparse/formats';
import { describe, expect, it } from 'vitest';
import { FcidumpError } from '../src/fcidump/errors';
import { readFcidump } from '../src/fcidump/node';
import { parseIntToken, parseRealToken } from '../src/fcidump/numbers';
import { parseFcidump } from '../src/fcidump/parse';
import { maxBodyLines } from '../src/fcidump/reader';
import { eriIndex } from '../src/fcidump/types';
import { dataDir } from '../../../testdata/index';
import { cpuMs } from '../../../scripts/test/cpu-time';

const h2oPath = new URL('../data/H2O_sto2g_hande.FCIDUMP', import.meta.url);
const h2o = readFileSync(h2oPath, 'utf8');
const h2oLines = h2o.split('\n'); // 495 lines and a final empty string


function fcidumpError(f: () => unknown): FcidumpError {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(FcidumpError);
    expect(e).toBeInstanceOf(GpuSparseError);
    return e as FcidumpError;
  }
  throw new Error('expected an FcidumpError');
}

/** A 2-orbital file with every diagonal, for small edits. */
const tiny = (body: string, header = ' &FCI NORB=2,NELEC=2,MS2=0, &END\n') => `${header}${body}`;
const TINY_BODY = ' 0.6 1 1 1 1\n 0.5 2 2 2 2\n 0.1 2 1 1 1\n -1.0 1 1 0 0\n -0.5 2 2 0 0\n 0.7 0 0 0 0\n';

describe('FCIDUMP integrity: the damaged files of issue 13', () => {
  it('the last 30 bytes cut (core line lost) is an error, not −81.79 Eh', () => {
    // 30 bytes leave 4 blanks of the 33-character core line: the constant is gone
    const e = fcidumpError(() => parseFcidump(h2o.slice(0, -30), { file: 'cut.FCIDUMP' }));
    expect(e.line).toBe(495);
    expect(e.message).toMatch(/^cut\.FCIDUMP:495: expected a core-energy line "value 0 0 0 0"/);
    // cut inside the constant's value, or inside the line before it
    for (const n of [10, 25, 40]) {
      const m = fcidumpError(() => parseFcidump(h2o.slice(0, -n), { file: 'cut' })).message;
      expect(m, String(n)).toMatch(/cut:49[45](:\d+)?: expected a (complete record on the last line|line end after the last record).*ends mid-line/);
    }
  });

  it('the first 247 of 495 lines is an error (no core line, diagonals missing), not +7.84 Eh', () => {
    const text = `${h2oLines.slice(0, 247).join('\n')}\n`;
    const e = fcidumpError(() => parseFcidump(text, { file: 'half' }));
    expect(e.message).toMatch(/half:247: expected a core-energy line "value 0 0 0 0"/);
    // accepting a missing constant explicitly still trips the missing diagonals
    const e2 = fcidumpError(() => parseFcidump(text, { file: 'half', allowMissingCoreEnergy: true }));
    expect(e2.message).toMatch(/half:247: expected \(ii\|ii\) for every orbital .*none for orbital 6, 7 /);
  });

  it('a header without integrals is an error, not 0 Eh', () => {
    const e = fcidumpError(() => parseFcidump(`${h2oLines.slice(0, 4).join('\n')}\n`, { file: 'hdr' }));
    expect(e.message).toBe('hdr:4: expected integral lines after the header, got none up to the end of the file (header only: a truncated file?)');
    expect(() => parseFcidump(`${h2oLines.slice(0, 4).join('\n')}\n`, { allowMissingCoreEnergy: true })).toThrow(FcidumpError);
  });

  it('two different values for one integral name both lines; equal duplicates are accepted', () => {
    const conflict = h2o.replace('\n     0.78581546037192  7  0  0  0', '\n    -0.25  2  1  2  1\n     0.78581546037192  7  0  0  0');
    const e = fcidumpError(() => parseFcidump(conflict, { file: 'dup' }));
    // the file lists (21|21) under two index orders: the first one is named
    const first = e.otherLine!;
    expect(h2oLines[first - 1]!.trim().split(/\s+/).slice(1).sort()).toEqual(['1', '1', '2', '2']);
    expect(e.message).toMatch(new RegExp(`dup:494: expected the same value as line ${first} for \\(2 1\\|2 1\\).*got -0.25 here`));
    const dupLine = h2oLines[first - 1]!;
    const same = h2o.replace('\n     0.78581546037192  7  0  0  0', `\n${dupLine}\n     0.78581546037192  7  0  0  0`);
    const a = parseFcidump(same);
    const b = parseFcidump(h2o);
    expect(a.eri).toEqual(b.eri);
  });

  it('a core line "0x9" is an error with line and column, not 9', () => {
    const text = h2o.replace(/\n\s*9\.009352032085\s+0\s+0\s+0\s+0\n$/, '\n 0x9 0 0 0 0\n');
    const e = fcidumpError(() => parseFcidump(text, { file: 'hex' }));
    expect([e.line, e.column]).toEqual([495, 2]);
    expect(e.message).toMatch(/hex:495:2: expected a finite number .*got "0x9"/);
  });
});

describe('FCIDUMP integrity rules', () => {
  it('conflicts are found across permutation-equivalent index orders (8-fold), not across 4-fold-distinct ones in an Lz file', () => {
    const e = fcidumpError(() => parseFcidump(tiny(`${TINY_BODY} 0.2 1 1 1 2\n`), { file: 't' }));
    expect(e.message).toMatch(/t:8: expected the same value as line 4 for \(1 1\|1 2\) under 8-fold symmetry/);
    expect(() => parseFcidump(tiny(`${TINY_BODY} 0.1 1 1 2 1\n 0.1 1 2 1 1\n`))).not.toThrow();
    // within 1e-12·max(|v|, 1): the same integral
    expect(parseFcidump(tiny(`${TINY_BODY} 0.1000000000000004 1 1 1 2\n`)).eri[eriIndex(2, 1, 0, 0, 0)]).toBe(0.1);
    // (12|12) and (21|12) are one integral for real orbitals, two for complex ones
    expect(fcidumpError(() => parseFcidump(tiny(`${TINY_BODY} 0.2 1 2 1 2\n 0.3 2 1 1 2\n`))).message).toMatch(/:9: .*line 8 for \(2 1\|1 2\) under 8-fold/);
    const lz = tiny(`${TINY_BODY} 0.2 1 2 1 2\n 0.3 2 1 1 2\n`, ' &FCI NORB=2,NELEC=2,MS2=0, SYMLZ=0,1, &END\n');
    const fd = parseFcidump(lz);
    expect([fd.eri[eriIndex(2, 0, 1, 0, 1)], fd.eri[eriIndex(2, 1, 0, 0, 1)], fd.eri[eriIndex(2, 0, 1, 1, 0)]]).toEqual([0.2, 0.3, 0.3]);
    expect(fcidumpError(() => parseFcidump(`${lz} 0.4 2 1 2 1\n`)).message).toMatch(/:10: .*line 8 for \(2 1\|2 1\) under 4-fold symmetry/);
    // h_ij vs h_ji, the core line, orbital energies
    expect(fcidumpError(() => parseFcidump(tiny(`${TINY_BODY} 0.1 1 2 0 0\n 0.2 2 1 0 0\n`))).message).toMatch(/:9: .*line 8 for h\(2,1\)/);
    expect(fcidumpError(() => parseFcidump(tiny(`${TINY_BODY} 0.8 0 0 0 0\n`))).message).toMatch(/:8: .*line 7 for the core energy/);
    expect(fcidumpError(() => parseFcidump(tiny(`${TINY_BODY} 0.1 1 0 0 0\n 0.2 1 0 0 0\n`))).message).toMatch(/orbital energy of orbital 1/);
  });

  it('an equal duplicate of the core line is not summed', () => {
    expect(parseFcidump(tiny(`${TINY_BODY} 0.7 0 0 0 0\n`)).ecore).toBe(0.7);
  });

  it('a missing core line is an error unless allowMissingCoreEnergy', () => {
    const body = TINY_BODY.replace(' 0.7 0 0 0 0\n', '');
    expect(fcidumpError(() => parseFcidump(tiny(body), { file: 'nc' })).message).toMatch(/nc:6: expected a core-energy line.*--allow-missing-core/);
    expect(parseFcidump(tiny(body), { allowMissingCoreEnergy: true }).ecore).toBe(0);
  });

  it('(ii|ii) is required for every orbital when there are 2-e integrals; h_ii for every orbital when any is given', () => {
    expect(fcidumpError(() => parseFcidump(tiny(TINY_BODY.replace(' 0.5 2 2 2 2\n', '')), { file: 'm' })).message).toMatch(/m:6: expected \(ii\|ii\) for every orbital.*none for orbital 2 /);
    expect(fcidumpError(() => parseFcidump(tiny(TINY_BODY.replace(' -0.5 2 2 0 0\n', '')), { file: 'm' })).message).toMatch(/m:6: expected h_ii for every orbital.*none for orbital 2 /);
    // a lattice model: no h_ii at all (zero on-site energy), hopping only; no 2-e integrals at all
    const hubbard = parseFcidump(tiny(' 2.0 1 1 1 1\n 2.0 2 2 2 2\n -1.0 2 1 0 0\n 0.0 0 0 0 0\n'));
    expect(Array.from(hubbard.h1)).toEqual([0, -1, -1, 0]);
    expect(parseFcidump(tiny(' -1.0 1 1 0 0\n -0.5 2 2 0 0\n 0.0 0 0 0 0\n')).eri.every((x) => x === 0)).toBe(true);
  });

  it('a file ending mid-line is an error; a final core line without a line end (CheMPS2) is not', () => {
    const cut = tiny(TINY_BODY.replace(' 0.7 0 0 0 0\n', ' 0.7 0 0 0'));
    expect(fcidumpError(() => parseFcidump(cut, { file: 'c' })).message).toMatch(/c:7: expected a complete record on the last line.*ends mid-line: "0\.7 0 0 0"/);
    expect(parseFcidump(tiny(TINY_BODY.trimEnd())).ecore).toBe(0.7);
    const noEol = tiny(`${TINY_BODY} 0.1 1 2 0 0`);
    expect(fcidumpError(() => parseFcidump(noEol, { file: 'c' })).message).toMatch(/c:8: expected a line end after the last record .*ends mid-line: "0\.1 1 2 0 0"/);
  });

  it('every FCIDUMP in shared/data and packages/chem/data still parses', async () => {
    const shared = `${dataDir('fcidump')}/`;
    const files = [...readdirSync(shared).filter((f) => f.includes('FCIDUMP')).map((f) => shared + f), h2oPath.pathname];
    expect(files.length).toBeGreaterThanOrEqual(31);
    for (const f of files) {
      const fd = await readFcidump(f);
      expect(fd.norb, f).toBeGreaterThan(0);
    }
    // forcing 8-fold on the Lz file (to show the wrong energy) judges duplicates 4-fold: no conflict
    expect((await readFcidump(`${shared}H2_ccpvtz_Lz_hande.FCIDUMP`, { symmetry: 8 })).symmetry).toBe(8);
  }, 60_000);
});

describe('FCIDUMP strict number grammar', () => {
  it('values: decimal and exponent forms (E or Fortran D) only, with line and column', () => {
    for (const [tok, v] of [['1', 1], ['-.5', -0.5], ['+3.', 3], ['1D-02', 0.01], ['2.5d+1', 25], ['-0.1E-01', -0.01], ['7e0', 7]] as const) {
      expect(parseRealToken(tok), tok).toBe(v);
      expect(parseFcidump(tiny(TINY_BODY.replace(' 0.7 0 0 0 0', ` ${tok} 0 0 0 0`))).ecore, tok).toBe(v);
    }
    for (const bad of ['0x9', '1.0.0', 'nan', 'NaN', 'inf', '-Infinity', '--1', '1e', '1e+', '.', '+', '-', '1.5x', '1e400', '1_0', '0b1', '1,5', 'e5', '１']) {
      expect(parseRealToken(bad), bad).toBeUndefined();
      const e = fcidumpError(() => parseFcidump(tiny(TINY_BODY.replace(' 0.7 0 0 0 0', `   ${bad} 0 0 0 0`)), { file: 'n' }));
      expect([e.line, e.column], bad).toEqual([7, 4]);
    }
    expect(fcidumpError(() => parseFcidump(tiny(TINY_BODY.replace(' 0.7 0 0 0 0', ' 0 0 0 0')))).message).toMatch(/:7: expected five fields/);
    expect(fcidumpError(() => parseFcidump(tiny(TINY_BODY.replace(' 0.7 0 0 0 0', ' 0.7 0 0 0 0 junk')))).column).toBe(14);
    expect(fcidumpError(() => parseFcidump(tiny(TINY_BODY.replace(' 0.6 1 1 1 1', ' 0.6 1 +1 1 1')))).message).toMatch(/:2:8: expected orbital indices in 0\.\.2, got "\+1"/);
  });

  it('header integers: strict, within 2^53', () => {
    expect(parseIntToken('9007199254740991')).toBe(2 ** 53 - 1);
    expect(parseIntToken('9007199254740993')).toBeUndefined();
    for (const [hdr, pattern] of [
      [' &FCI NORB=2.0,NELEC=2, &END\n', /one integer for NORB/],
      [' &FCI NORB=0x2,NELEC=2, &END\n', /1:12: expected a number .* in header key NORB, got "0x2"/],
      [' &FCI NORB=2,NELEC=9007199254740993, &END\n', /1:20: expected a number .*integers within ±2\^53.* got "9007199254740993"/],
      [' &FCI NORB=2,NELEC=2,ORBSYM=1,1.0, &END\n', /ORBSYM entries in 1\.\.8 .*at position 2/],
      [' &FCI NORB=2,NELEC=2,ISYM=, &END\n', /one integer for ISYM, got \[\]/],
      [' &FCI NORB=2,NELEC=2 NELEC=2, &END\n', /1:22: expected each header key once \(NELEC is already on line 1\)/],
      [' &FCI 2, NORB=2,NELEC=2, &END\n', /1:7: expected a key 'NAME=' before the first value/],
      [' &FCI NORB=2,NELEC=2, &END junk\n', /1:28: expected nothing after the end of the header/],
      [' &FCI NORB=2,NELEC=2, &ENDX\n', /expected '&END' or '\/' to close the header/],
      [' &FCIX NORB=2\n', /1:2: expected a namelist header starting with '&FCI'/],
    ] as const) {
      expect(fcidumpError(() => parseFcidump(tiny(TINY_BODY, hdr))).message, hdr).toMatch(pattern);
    }
    expect(parseFcidump(tiny(TINY_BODY, ' &FCI NORB=+2,NELEC=2,MS2=-0, UHF=F, FLAG=.T., X=1.5D0 &END\n')).header).toMatchObject({ NORB: [2], UHF: [false], FLAG: [true], X: [1.5] });
  });
});

describe('FCIDUMP size caps and memory', () => {
  it('a 200 000-character header line is parsed in one pass (no recursion)', () => {
    const pad = ' '.repeat(200_000);
    const text = h2o.replace('ORBSYM=1,1,3,1,4,1,3,', `ORBSYM=1,1,3,1,4,1,3,${pad}`);
    expect(text.split('\n')[1]!.length).toBeGreaterThan(200_000);
    expect(parseFcidump(text).eri).toEqual(parseFcidump(h2o).eri);
    const many = h2o.replace('ORBSYM=1,1,3,1,4,1,3,', `ORBSYM=${'1,'.repeat(100_000)}`);
    expect(fcidumpError(() => parseFcidump(many)).message).toMatch(/ORBSYM with NORB=7 entries, got 100000 entries/);
  });

  it('a header over the cap is refused without reading on: a 10^7-character line, no &END', () => {
    const t0 = cpuMs(); // CPU time: a loaded machine's wait is not work
    const long = `&FCI NORB=2, X=${'1 '.repeat(5_000_000)}\n&END\n${TINY_BODY}`;
    expect(fcidumpError(() => parseFcidump(long, { file: 'l' })).message).toMatch(/l:1: expected the end of the namelist header .* within its first 1048576 characters/);
    const noEnd = `&FCI NORB=2,NELEC=2,\n${' 0.5 1 1 1 1\n'.repeat(400_000)}`;
    expect(fcidumpError(() => parseFcidump(noEnd)).line).toBeLessThan(100_000);
    expect(fcidumpError(() => parseFcidump(tiny(TINY_BODY, ' &FCI NORB=2,NELEC=2,\n'), { maxHeaderChars: 30 })).message).toMatch(/within its first 30 characters/);
    expect(cpuMs() - t0).toBeLessThan(5000);
  });

  it('body lines are capped in length and in number (from NORB)', () => {
    expect(fcidumpError(() => parseFcidump(tiny(` 0.5${' '.repeat(2000)}1 1 1 1\n${TINY_BODY}`), { file: 'w' })).message).toMatch(/w:2: expected an integral line "value i j k l" of at most 1024 characters/);
    const cap = maxBodyLines(2);
    const e = fcidumpError(() => parseFcidump(tiny(`${' 0.6 1 1 1 1\n'.repeat(cap + 10)}${TINY_BODY}`), { file: 'b' }));
    expect(e.line).toBe(cap + 2);
    expect(e.message).toMatch(new RegExp(`expected at most ${cap} lines after the header for NORB=2`));
  });

  it('integral tables too large for memory: ResourceLimitError (bytes needed vs available) before allocation', () => {
    try {
      parseFcidump(tiny(TINY_BODY, ' &FCI NORB=100000,NELEC=2, &END\n'));
      throw new Error('expected a ResourceLimitError');
    } catch (e) {
      expect(e).toBeInstanceOf(ResourceLimitError);
      const r = e as ResourceLimitError;
      expect(r.bytesNeeded).toBeGreaterThan(8e20);
      expect(r.bytesAvailable).toBe(2 ** 32);
      expect(r.message).toMatch(/FCIDUMP integral tables for NORB=100000 .*needs .* available/);
    }
    expect(() => parseFcidump(h2o, { memoryBytes: 10_000 })).toThrow(ResourceLimitError);
    expect(fcidumpError(() => parseFcidump(tiny(TINY_BODY, ' &FCI NORB=129,NELEC=2, &END\n'), { memoryBytes: 1e11 })).message).toMatch(/NORB in 1\.\.128, got 129/);
  });

  it('readFcidump streams gzip; damaged gzip and a gzip bomb are FcidumpErrors', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'fcidump-integrity-'));
    const ok = join(dir, 'h2o.FCIDUMP.gz');
    await writeFile(ok, gzipSync(h2o));
    expect((await readFcidump(ok)).eri).toEqual(parseFcidump(h2o).eri);
    const broken = join(dir, 'broken.gz');
    await writeFile(broken, gzipSync(h2o).subarray(0, 2000));
    await expect(readFcidump(broken)).rejects.toThrow(/broken\.gz: expected valid gzip data/);
    // 100 MB of equal duplicate lines in 200 concatenated gzip members (a few hundred kB on disk)
    const member = gzipSync(' 0.5 1 1 1 1\n'.repeat(40_000));
    const bomb = join(dir, 'bomb.gz');
    await writeFile(bomb, Buffer.concat([gzipSync(h2oLines.slice(0, 4).join('\n') + '\n'), ...Array.from({ length: 200 }, () => member)]));
    const t0 = cpuMs(); // CPU time (the inflation on libuv's threads counts too): a loaded machine's wait is not work
    await expect(readFcidump(bomb)).rejects.toThrow(/bomb\.gz:\d+: expected at most \d+ lines after the header for NORB=7/);
    expect(cpuMs() - t0).toBeLessThan(5000);
  });
});
