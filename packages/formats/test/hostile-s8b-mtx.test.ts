// Session 8b: repeated (duplicate) integer entries are summed in float64; each value can be
// exact while the sum passes 2^53 and is rounded. That is warned about like a single such value
// (the matrix is not the file's), and only when the sum really was rounded.
import { describe, expect, it } from 'vitest';
import { parseMatrixMarket, type MatrixMarketWarning } from '../src/mtx/index';

/** The warnings about rounding past 2^53 (since session 10 a repeat is also warned about on its own). */
const rounding = (ws: readonly MatrixMarketWarning[]) => ws.filter((w) => w.message.includes('2^53'));

const INT = '%%MatrixMarket matrix coordinate integer general\n';

describe('duplicate integer entries summed past 2^53', () => {
  it('two exact values whose sum float64 cannot hold: a warning with row, column and the exact sum', () => {
    const r = parseMatrixMarket(`${INT}2 2 3\n1 1 9007199254740991\n1 1 2\n2 2 1\n`, { name: 'dup.mtx' });
    expect(r.matrix.values[0]).toBe(9007199254740992); // 2^53 + 1 rounded
    expect(rounding(r.warnings)).toHaveLength(1);
    expect(rounding(r.warnings)[0]!.line).toBe(2);
    expect(rounding(r.warnings)[0]!.message).toMatch(/an entry of repeated \(duplicate\) integer values summed past 2\^53 .*row 1, column 1: 9007199254740993 stored as 9007199254740992/);
  });

  it('an exact sum above 2^53, and big values without repeats: no warning', () => {
    const r = parseMatrixMarket(`${INT}2 2 4\n1 1 4503599627370496\n1 1 4503599627370496\n2 2 1152921504606846976\n2 1 3\n`);
    expect(Array.from(r.matrix.values)).toEqual([2 ** 53, 3, 2 ** 60]);
    expect(rounding(r.warnings)).toEqual([]);
    expect(r.warnings.map((w) => w.message)).toEqual([expect.stringMatching(/^1 entry repeats a position given earlier in the file and was summed/)]);
  });

  it('symmetric storage: the mirrored entry sums with a stored one; the count covers every rounded entry', () => {
    const r = parseMatrixMarket('%%MatrixMarket matrix coordinate integer symmetric\n2 2 3\n2 1 9007199254740991\n2 1 2\n1 1 1\n');
    // (2,1) and its mirror (1,2) are both 2^53 + 1 rounded
    expect(rounding(r.warnings)).toHaveLength(1);
    expect(rounding(r.warnings)[0]!.message).toMatch(/^2 entries of repeated .*the first at row 1, column 2: 9007199254740993/);
  });
});
