/**
 * Session 12 sweep of FCIDUMP files. Fixed: `NORB=2.0` said "expected one integer for NORB, got
 * [2]" — the value, not what was wrong with it. Found fine (kept so): the namelist over several
 * lines and `/` as its end, `$FCI … $END`, lower-case keys, `2*1` repeats in ORBSYM, Fortran D
 * exponents, CRLF, duplicate integrals that agree (and a disagreeing one refused), a missing
 * (ii|ii), indices beyond NORB or negative, four-index records, a file cut mid-record.
 */
import { describe, expect, it } from 'vitest';
import { parseFcidump } from '../src/fcidump/parse';

const body = ['  0.6744931   1  1  1  1', '  0.1809312   2  1  2  1', '  0.6634420   2  2  1  1', '  0.6973740   2  2  2  2', ' -1.2563390   1  1  0  0', ' -0.4718960   2  2  0  0', '  0.7137540   0  0  0  0', ''].join('\n');
const h2 = ` &FCI NORB=2,NELEC=2,MS2=0,\n  ORBSYM=1,1,\n  ISYM=1,\n &END\n${body}`;
const parse = (text: string) => parseFcidump(text, { file: 'h2.FCIDUMP' });

describe('FCIDUMP', () => {
  it("NORB=2.0 names how it was written (was 'got [2]')", () => {
    expect(() => parse(h2.replace('NORB=2', 'NORB=2.0'))).toThrow(/h2\.FCIDUMP:1: expected one integer for NORB, got 2 written as a real number/);
  });
  it('header variants read the same integrals: several lines with /, $FCI … $END, lower case, 2*1, D exponents, CRLF', () => {
    const ref = parse(h2);
    const variants = [
      ` &FCI\n NORB=2,\n NELEC=2,\n MS2=0,\n ORBSYM=1,\n 1,\n ISYM=1\n /\n${body}`,
      h2.replace(' &FCI', ' $FCI').replace(' &END', ' $END'),
      h2.replace('NORB=2', 'norb=2').replace('NELEC=2', 'nelec=2'),
      h2.replace('ORBSYM=1,1,', 'ORBSYM=2*1,'),
      h2.replace('0.6744931', '0.6744931D+00').replace('-1.2563390', '-1.2563390d0'),
      h2.replace(/\n/g, '\r\n'),
    ];
    for (const v of variants) {
      const f = parse(v);
      expect(f.norb).toBe(2);
      expect(f.nelec).toBe(2);
      expect(Array.from(f.h1)).toEqual(Array.from(ref.h1));
      expect(Array.from(f.eri)).toEqual(Array.from(ref.eri));
      expect(f.ecore).toBe(ref.ecore);
    }
  });
  it('damaged records are errors at their line', () => {
    expect(() => parse(h2.replace('2  2  2  2', '3  2  2  2'))).toThrow(/:8:\d+: expected orbital indices in 0\.\.2, got "3"/);
    expect(() => parse(h2.replace('2  2  2  2', '2  2  -1  2'))).toThrow(/expected orbital indices in 0\.\.2, got "-1"/);
    expect(() => parse(h2.replace('0.6973740   2  2  2  2', '0.6973740   2  2  2'))).toThrow(/:8: expected five fields/);
    expect(() => parse(h2.replace('  0.6973740   2  2  2  2\n', ''))).toThrow(/expected \(ii\|ii\) for every orbital/);
    expect(() => parse(h2.replace('  0.1809312   2  1  2  1\n', '  0.1809312   2  1  2  1\n  0.2809312   1  2  1  2\n'))).toThrow(/expected the same value as line 6 for \(1 2\|1 2\)/);
    expect(() => parse(h2.slice(0, 150))).toThrow(/the file ends mid-line/);
  });
});
