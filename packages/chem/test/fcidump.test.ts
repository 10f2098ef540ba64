/**
 * FCIDUMP reader: header variants, integral expansion, constants, orbital-energy lines,
 * gzip, and malformed input naming the file and line.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { GpuSparseError } from '@gpusparse/formats';
import { describe, expect, it } from 'vitest';
import { FcidumpError } from '../src/fcidump/errors';
import { readFcidump } from '../src/fcidump/node';
import { parseFcidump } from '../src/fcidump/parse';
import { eriIndex } from '../src/fcidump/types';
import { dataFile } from '../../../testdata/index';

const data = (f: string) => dataFile('fcidump', f);

const small = ` &FCI NORB=2,NELEC=2,MS2=0,
  ORBSYM=1,5,
  ISYM=1,
 &END
  0.5 1 1 1 1
  0.25 2 1 1 1
  0.125 2 1 2 1
  0.4 2 2 1 1
  0.45 2 2 2 2
 -1.25 1 1 0 0
  0.1D-01 2 1 0 0
 -0.5 2 2 0 0
 -0.9 1 0 0 0
  0.7 0 0 0 0
`;

function expectError(f: () => unknown, line: number | undefined, pattern: RegExp): void {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(FcidumpError);
    expect(e).toBeInstanceOf(GpuSparseError);
    expect((e as FcidumpError).line).toBe(line);
    expect((e as Error).message).toMatch(pattern);
    return;
  }
  throw new Error('expected an FcidumpError');
}

describe('parseFcidump', () => {
  it('reads the header, 8-fold expands (ij|kl), symmetric h, constant, orbital energies', () => {
    const fd = parseFcidump(small, { file: 'small' });
    expect([fd.norb, fd.nelec, fd.ms2, fd.isym]).toEqual([2, 2, 0, 1]);
    expect(Array.from(fd.orbsym)).toEqual([1, 5]);
    expect(fd.symmetry).toBe(8);
    const g = (i: number, j: number, k: number, l: number) => fd.eri[eriIndex(2, i, j, k, l)];
    for (const [i, j, k, l] of [
      [1, 0, 0, 0],
      [0, 1, 0, 0],
      [0, 0, 1, 0],
      [0, 0, 0, 1],
    ]) expect(g(i!, j!, k!, l!)).toBe(0.25);
    expect(g(1, 0, 1, 0)).toBe(0.125);
    expect(g(0, 1, 1, 0)).toBe(0.125);
    expect(g(0, 1, 0, 1)).toBe(0.125);
    expect(g(1, 1, 0, 0)).toBe(0.4);
    expect(g(0, 0, 1, 1)).toBe(0.4);
    expect(Array.from(fd.h1)).toEqual([-1.25, 0.01, 0.01, -0.5]);
    expect(fd.ecore).toBe(0.7);
    expect(fd.orbitalEnergies?.[0]).toBe(-0.9);
    expect(Number.isNaN(fd.orbitalEnergies?.[1])).toBe(true);
  });

  it('reads ISYM=0 (as OpenMolcas 22.10 writes it) as not given, with a note; refuses ISYM=9', () => {
    const a = parseFcidump(' &FCI NORB= 2,NELEC= 2,MS2=  0,\n  ORBSYM= 1, 1,\n  ISYM=0\n &END\n 1.0 1 1 1 1\n 1.0 2 2 2 2\n -1.0 1 1 0 0\n -0.5 2 2 0 0\n 0.0 0 0 0 0\n');
    expect(a.isym).toBe(1);
    expect(a.notes.some((n) => /ISYM=0/.test(n))).toBe(true);
    expect(() => parseFcidump(' &FCI NORB= 2,NELEC= 2,MS2=  0,\n  ORBSYM= 1, 1,\n  ISYM=9\n &END\n 1.0 1 1 1 1\n 1.0 2 2 2 2\n 0.0 0 0 0 0\n')).toThrow(/ISYM in 1\.\.8/);
  });

  it('accepts "/" terminators, one key per line, missing ISYM, whitespace separators, extra keys', () => {
    const a = parseFcidump('&FCI\nNORB=2,\nNELEC=2,\nMS2=0,\nUHF=.FALSE.,\nORBSYM=1,1,\n/\n 1.0 1 1 1 1\n 1.0 2 2 2 2\n 0.0 0 0 0 0\n');
    expect([a.norb, a.isym]).toEqual([2, 1]);
    expect(a.header.UHF).toEqual([false]);
    const b = parseFcidump(' &FCI  NORB= 2 NELEC=  2,MS2= 0,\n  ORBSYM=1,2,\n  ISYM=2 UHF=.FALSE.\n  SYML=-20,-20,\n  SYMLZ= 0, 1,\n &END\n 1.0 1 1 1 1\n 1.0 2 2 2 2\n 0.0 0 0 0 0\n');
    expect([b.norb, b.nelec, b.isym]).toEqual([2, 2, 2]);
    expect(b.header.SYML).toEqual([-20, -20]);
    expect(b.symmetry).toBe(4);
    expect(b.notes[0]).toMatch(/4-fold/);
    // 4-fold: (12|11) does not imply (21|11)
    const lz = ' &FCI NORB=2,NELEC=2,MS2=0, SYMLZ=0,1, &END\n 0.3 1 2 1 1\n 1.0 1 1 1 1\n 1.0 2 2 2 2\n 0.0 0 0 0 0\n';
    const c = parseFcidump(lz);
    expect(c.eri[eriIndex(2, 0, 1, 0, 0)]).toBe(0.3);
    expect(c.eri[eriIndex(2, 0, 0, 0, 1)]).toBe(0.3); // (kl|ij)
    expect(c.eri[eriIndex(2, 1, 0, 0, 0)]).toBe(0.3); // (ji|lk)
    expect(c.eri[eriIndex(2, 0, 0, 1, 0)]).toBe(0.3); // (lk|ji)
    const d = parseFcidump(lz, { symmetry: 8 });
    expect(d.eri[eriIndex(2, 0, 0, 1, 0)]).toBe(0.3);
    expect(d.eri[eriIndex(2, 1, 0, 0, 0)]).toBe(0.3);
  });

  it('names the file and line of malformed input', () => {
    expectError(() => parseFcidump('NORB=2\n', { file: 'x.fcidump' }), 1, /x\.fcidump:1:1: expected a namelist header/);
    expectError(() => parseFcidump(' &FCI NORB=2,NELEC=2,\n 1.0 1 1 1 1\n', { file: 'f' }), 2, /'&END' or '\/'/);
    expectError(() => parseFcidump(' &FCI NELEC=2, &END\n', { file: 'f' }), undefined, /header key NORB/);
    expectError(() => parseFcidump(' &FCI NORB=2,NELEC=2,\n ORBSYM=1, &END\n', { file: 'f' }), 2, /ORBSYM with NORB=2 entries, got 1/);
    expectError(() => parseFcidump(' &FCI NORB=2,NELEC=2, &END\n 1.0 1 1 1 1\n 0.5 1 1\n', { file: 'f' }), 3, /f:3: expected five fields/);
    expectError(() => parseFcidump(' &FCI NORB=2,NELEC=2, &END\n 1.0 1 1 1 1\n 0.5 1 3 1 1\n', { file: 'f' }), 3, /orbital indices in 0\.\.2, got "3"/);
    expectError(() => parseFcidump(' &FCI NORB=2,NELEC=2, &END\n abc 1 1 1 1\n', { file: 'f' }), 2, /finite number/);
    expectError(() => parseFcidump(' &FCI NORB=2,NELEC=2, &END\n 1.0 1 0 1 0\n', { file: 'f' }), 2, /index pattern/);
    expectError(() => parseFcidump(' &FCI NORB=2,NELEC=3,MS2=0, &END\n', { file: 'f' }), 1, /MS2/);
    expectError(() => parseFcidump(' &FCI NORB=2,NELEC=2,MS2=0,\n UHF=.TRUE.\n &END\n', { file: 'u' }), 2, /UHF=\.TRUE\., which is not supported/);
  });

  it('reads plain and gzip files; a missing file is an FcidumpError', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'fcidump-'));
    const gz = join(dir, 'small.FCIDUMP.gz');
    await writeFile(gz, gzipSync(small));
    const fd = await readFcidump(gz);
    expect(fd.file).toBe(gz);
    expect(fd.ecore).toBe(0.7);
    await expect(readFcidump(join(dir, 'none'))).rejects.toBeInstanceOf(FcidumpError);
    const bad = join(dir, 'bad.FCIDUMP');
    await writeFile(bad, `${small} 1.0 1 1\n`);
    await expect(readFcidump(bad)).rejects.toThrow(/bad\.FCIDUMP:15: expected five fields/);
  });

  it('reads every shared file whose header is unusual (HANDE Ne, Lz, Dice He2 with orbital energies)', async () => {
    const ne = await readFcidump(data('Ne_ccpvdz_hande.FCIDUMP'));
    expect([ne.norb, ne.nelec, ne.isym, ne.ecore]).toEqual([14, 10, 1, 0]);
    expect(ne.orbitalEnergies?.every(Number.isFinite)).toBe(true);
    const he = await readFcidump(data('He2_dice.FCIDUMP'));
    expect(he.orbitalEnergies?.length).toBe(10);
    const h2o = await readFcidump(data('H2O_tzvp_block2.FCIDUMP.gz'));
    expect([h2o.norb, h2o.nelec]).toEqual([41, 10]);
  });
});
