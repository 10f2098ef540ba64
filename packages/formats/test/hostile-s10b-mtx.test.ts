// Session 10 hardening: two ways a Matrix Market file became a different matrix without a word.
// Repeated positions were summed silently (a file concatenated twice reads as 2·A; a pattern
// entry given twice holds 2); a non-zero real below float64's range (1e-400) was stored as 0 —
// in an array file, dropped as a zero. Both are now warnings naming the count and the line.
import { describe, expect, it } from 'vitest';
import { parseMatrixMarket } from '../src/mtx/index';

const MM = '%%MatrixMarket matrix';
const messages = (text: string) => parseMatrixMarket(text, { name: 'a.mtx' }).warnings.map((w) => `${w.file}:${w.line}: ${w.message}`);

describe('repeated positions are summed and said so', () => {
  it('a general file given twice (each entry repeated): 2·A, one warning at the size line with the count', () => {
    const once = '1 1 4\n2 1 -1\n2 2 4\n';
    const r = parseMatrixMarket(`${MM} coordinate real general\n3 3 6\n${once}${once}`, { name: 'twice.mtx' });
    expect(Array.from(r.matrix.values)).toEqual([8, -2, 8]);
    expect(r.warnings).toEqual([{ file: 'twice.mtx', line: 2, message: '3 entries repeat positions given earlier in the file and were summed into it (6 entries read, 3 distinct positions)' }]);
  });

  it('symmetric and skew-symmetric files count positions of the stored triangle (a repeated off-diagonal is one repeat, not two)', () => {
    expect(messages(`${MM} coordinate real symmetric\n2 2 3\n2 1 1\n2 1 2\n1 1 1\n`)).toEqual(['a.mtx:2: 1 entry repeats a position given earlier in the file and was summed into it (3 entries read, 2 distinct positions)']);
    expect(messages(`${MM} coordinate real skew-symmetric\n3 3 3\n2 1 1\n3 1 2\n2 1 5\n`)).toEqual(['a.mtx:2: 1 entry repeats a position given earlier in the file and was summed into it (3 entries read, 2 distinct positions)']);
    expect(messages(`${MM} coordinate real general\n3 1 2\n1 1 1\n1 1 2\n`)).toEqual(['a.mtx:2: 1 entry repeats a position given earlier in the file and was summed into it (2 entries read, 1 distinct position)']);
    const r = parseMatrixMarket(`${MM} coordinate real skew-symmetric\n3 3 3\n2 1 1\n3 1 2\n2 1 5\n`);
    expect(Array.from(r.matrix.values)).toEqual([-6, -2, 6, 2]);
  });

  it('pattern files: the summed entry holds the count, and the warning says so', () => {
    const r = parseMatrixMarket(`${MM} coordinate pattern general\n2 2 3\n1 1\n1 1\n2 2\n`);
    expect(Array.from(r.matrix.values)).toEqual([2, 1]);
    expect(r.warnings[0]!.message).toMatch(/^1 entry repeats a position .*summed into it \(a pattern entry then holds the count, not 1\)/);
  });

  it('no repeats, entries summing to zero kept as such, and array files: no warning', () => {
    expect(messages(`${MM} coordinate real symmetric\n3 3 5\n1 1 4\n2 1 -1\n2 2 4\n3 2 -1\n3 3 4\n`)).toEqual([]);
    expect(messages(`${MM} array real general\n2 2\n4\n1\n1\n4\n`)).toEqual([]);
    expect(messages(`${MM} coordinate real general\n2 2 2\n1 2 1\n2 1 1\n`)).toEqual([]);
  });
});

describe('non-zero values below float64 read as 0 are said so', () => {
  it('1e-400 in a coordinate file: stored 0 with a warning naming the line and the token', () => {
    const r = parseMatrixMarket(`${MM} coordinate real general\n2 2 2\n1 1 1e-400\n2 2 1\n`, { name: 'tiny.mtx' });
    expect(Array.from(r.matrix.values)).toEqual([0, 1]);
    expect(r.warnings).toEqual([{ file: 'tiny.mtx', line: 3, message: "value 1e-400 is below float64's range (≈ 4.9e-324) and was read as 0" }]);
  });

  it('in an array file the value would be dropped as a zero: warned; several give one summary with the count', () => {
    const w = messages(`${MM} array real general\n2 2\n4\n-2.5D-999\n1e-500\n4\n`);
    expect(w).toEqual([
      "a.mtx:4: value -2.5D-999 is below float64's range (≈ 4.9e-324) and was read as 0",
      "a.mtx:4: 2 non-zero values below float64's range (≈ 4.9e-324) were read as 0 (the first on line 4); the matrix is not exactly the file's",
    ]);
  });

  it('zeros written in any form (0, -0.0, 0e-999, 0.000D+00) and subnormals (5e-324, kept) give no warning', () => {
    expect(messages(`${MM} coordinate real general\n5 5 5\n1 1 0\n2 2 -0.0\n3 3 0e-999\n4 4 0.000D+00\n5 5 5e-324\n`)).toEqual([]);
    expect(parseMatrixMarket(`${MM} coordinate real general\n1 1 1\n1 1 5e-324\n`).matrix.values[0]).toBe(5e-324);
  });
});
