/**
 * Shared test inputs of the direct-σ tests: a reproducible random vector (a 32-bit LCG, so every
 * test file sees the same numbers for the same seed) and the FCIDUMP data folder.
 */
import { dataFile } from '../../../../testdata/index';

/** n values in [−0.5, 0.5) from the LCG s ← 1664525·s + 1013904223 (mod 2^32), seeded. */
export function randomVector(n: number, seed: number): Float64Array {
  let s = seed >>> 0;
  const v = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    v[i] = s / 2 ** 32 - 0.5;
  }
  return v;
}

/** Path of an FCIDUMP of testdata/fcidump (or the shared data folder, see testdata/index). */
export const data = (f: string): string => dataFile('fcidump', f);
