// Session 11 (lead): fciSpace/ciSpace with an ORBSYM entry outside Molpro's 1..8 crashed with a
// TypeError inside the irrep tables (found by s11-style); it is now an InvalidParameterError naming
// the entry.
import { describe, expect, it } from 'vitest';
import { InvalidParameterError } from '@gpusparse/formats';
import { fciSpace } from '../src/determinants/space';

describe('fciSpace with irrep filtering and a bad ORBSYM entry', () => {
  for (const bad of [0, 9, -1]) {
    it(`orbsym entry ${bad} is refused, naming orbsym[2]`, () => {
      const orbsym = Int32Array.from([1, 2, bad, 1]);
      expect(() => fciSpace(4, 2, 2, { irrep: 1, orbsym })).toThrow(InvalidParameterError);
      expect(() => fciSpace(4, 2, 2, { irrep: 1, orbsym })).toThrow(/orbsym\[2\]/);
    });
  }
  it('valid entries still build the irrep space', () => {
    const space = fciSpace(4, 2, 2, { irrep: 1, orbsym: Int32Array.from([1, 2, 3, 1]) });
    expect(space.size).toBeGreaterThan(0);
  });
});
