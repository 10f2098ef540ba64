// Session 8 hostile Matrix Market input: integer-field values beyond 2^53 cannot be held exactly
// by the float64 CSR. They are read with one correct rounding and reported by a warning naming
// the line (the digit loop rounded at every digit and nothing was said).
import { describe, expect, it } from 'vitest';
import { MatrixMarketError, parseMatrixMarket } from '../src/mtx/index';

const INT = '%%MatrixMarket matrix coordinate integer general\n';

describe('integer values above 2^53', () => {
  it('a value float64 cannot hold is rounded once and warned about with its line', () => {
    const seen: string[] = [];
    const r = parseMatrixMarket(`${INT}2 2 2\n1 1 5\n2 2 99999999999999999999\n`, {
      name: 'big.mtx',
      onWarning: (w) => seen.push(`${w.file}:${w.line}: ${w.message}`),
    });
    // Number('99999999999999999999') is 1e20; the per-digit loop gave 100000000000000020000
    expect(Array.from(r.matrix.values)).toEqual([5, 1e20]);
    expect(r.warnings).toHaveLength(1);
    expect(r.warnings[0]!.line).toBe(4);
    expect(seen[0]).toMatch(/^big\.mtx:4: integer value 99999999999999999999 is above 2\^53/);
  });
  it('several such values: one warning at the first, one summary with the count', () => {
    const r = parseMatrixMarket(`${INT}3 3 3\n1 1 9007199254740993\n2 2 -12345678901234567891\n3 3 1\n`);
    expect(Array.from(r.matrix.values)).toEqual([9007199254740992, Number('-12345678901234567891'), 1]);
    expect(r.warnings.map((w) => w.line)).toEqual([3, 3]);
    expect(r.warnings[1]!.message).toMatch(/^2 integer values above 2\^53/);
  });
  it('an exactly representable large integer (2^60) and 2^53 − 1 give no warning', () => {
    const r = parseMatrixMarket(`${INT}2 2 2\n1 1 1152921504606846976\n2 2 9007199254740991\n`);
    expect(Array.from(r.matrix.values)).toEqual([2 ** 60, 9007199254740991]);
    expect(r.warnings).toEqual([]);
  });
  it('array files are checked the same way', () => {
    const r = parseMatrixMarket('%%MatrixMarket matrix array integer general\n1 2\n3\n+9007199254740993\n');
    expect(Array.from(r.matrix.values)).toEqual([3, 9007199254740992]);
    expect(r.warnings).toHaveLength(1);
    expect(r.warnings[0]!.line).toBe(4);
  });
  it('a value of 400 digits is still an error naming the line (not Infinity in the matrix)', () => {
    expect(() => parseMatrixMarket(`${INT}1 1 1\n1 1 ${'9'.repeat(400)}\n`)).toThrow(MatrixMarketError);
    try {
      parseMatrixMarket(`${INT}1 1 1\n1 1 ${'9'.repeat(400)}\n`, { name: 'huge.mtx' });
    } catch (e) {
      expect((e as Error).message).toMatch(/^huge\.mtx:3: expected an integer value/);
    }
  });
});
