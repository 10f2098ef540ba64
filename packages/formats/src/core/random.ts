/**
 * The one seeded pseudo-random generator of the packages (mulberry32: 32-bit state, floats in
 * [0, 1) on a 2^-32 grid), shared by the matrix generators, the eigensolvers' start vectors, the
 * autotuner's test vector and the tests, so a seed means the same numbers everywhere.
 * @module
 */

/**
 * A seeded generator of floats in [0, 1) (mulberry32). Same seed, same sequence, on every engine.
 * @example
 * const r = mulberry32(7); r(); // 0.011704753153026104 (always)
 */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
