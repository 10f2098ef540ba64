/** csrEntry: A(i, j) by binary search in a sorted row, undefined where nothing is stored. */
import { describe, expect, it } from 'vitest';
import { csrEntry, csrFromTriplets } from '../src/index';

describe('csrEntry', () => {
  const a = csrFromTriplets(4, 6, [0, 0, 0, 2, 3, 3], [0, 3, 5, 2, 1, 4], [1, 2, 3, 4, -0, 6]);

  it('finds the first, middle and last entry of a row and entries of one-entry rows', () => {
    expect([csrEntry(a, 0, 0), csrEntry(a, 0, 3), csrEntry(a, 0, 5), csrEntry(a, 2, 2), csrEntry(a, 3, 4)]).toEqual([1, 2, 3, 4, 6]);
    expect(Object.is(csrEntry(a, 3, 1), -0)).toBe(true);
  });

  it('answers undefined between, before and after the stored columns and on an empty row', () => {
    expect([csrEntry(a, 0, 1), csrEntry(a, 0, 4), csrEntry(a, 2, 0), csrEntry(a, 2, 5), csrEntry(a, 1, 0), csrEntry(a, 3, 2)]).toEqual([undefined, undefined, undefined, undefined, undefined, undefined]);
  });
});
