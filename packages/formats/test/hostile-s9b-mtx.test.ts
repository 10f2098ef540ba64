// Session 9 hardening: the Matrix Market writer's refusals named rows and columns 0-based
// ("row 2, column 2" for the file's entry 3 3), so a user looked at the wrong entry.
import { describe, expect, it } from 'vitest';
import { csrFromTriplets, formatMatrixMarket, InvalidMatrixError } from '../src/index';

describe('writer refusals name rows and columns as the file numbers them (1-based)', () => {
  it('a non-finite value at (3, 3), a non-integer with field integer, an asymmetric pair', () => {
    const inf = csrFromTriplets(3, 3, [0, 1, 2], [0, 1, 2], [1, 2, Number.POSITIVE_INFINITY]);
    expect(() => formatMatrixMarket(inf)).toThrow(InvalidMatrixError);
    expect(() => formatMatrixMarket(inf)).toThrow(/row 3, column 3: expected a finite value, got Infinity/);
    const frac = csrFromTriplets(2, 4, [1], [3], [2.5]);
    expect(() => formatMatrixMarket(frac, { field: 'integer' })).toThrow(/row 2, column 4: field 'integer' expects safe integers, got 2\.5/);
    const asym = csrFromTriplets(2, 2, [0, 1], [1, 0], [1, 2]);
    expect(() => formatMatrixMarket(asym, { symmetry: 'symmetric' })).toThrow(/row 1, column 2: 1 but row 2, column 1 is 2/);
  });
});
