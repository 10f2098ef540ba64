/**
 * Occupation strings as two 32-bit words (lo: orbitals 0..31, hi: 32..63): at most 64 spatial
 * orbitals per spin. Bit p set ⇔ orbital p occupied.
 * @module
 */

/** Largest number of spatial orbitals a string can hold. */
export const MAX_ORBITALS = 64;

/**
 * Number of set bits of a 32-bit word. O(1).
 * @example
 * popcount32(0b1011); // 3
 */
export function popcount32(x: number): number {
  let v = x >>> 0;
  v -= (v >>> 1) & 0x55555555;
  v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
  return (Math.imul((v + (v >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24) & 0xff;
}

/**
 * Whether orbital p is set in (lo, hi). O(1).
 * @example
 * testBit(0, 1, 32); // true
 */
export function testBit(lo: number, hi: number, p: number): boolean {
  return p < 32 ? ((lo >>> p) & 1) === 1 : ((hi >>> (p - 32)) & 1) === 1;
}

/**
 * Occupied orbitals of (lo, hi), ascending. O(64).
 * @example
 * occupiedOrbitals(0b101, 1); // [0, 2, 32]
 */
export function occupiedOrbitals(lo: number, hi: number): number[] {
  const out: number[] = [];
  for (let p = 0; p < 32; p++) if ((lo >>> p) & 1) out.push(p);
  for (let p = 0; p < 32; p++) if ((hi >>> p) & 1) out.push(p + 32);
  return out;
}

/**
 * (lo, hi) of an orbital list. Throws RangeError for an orbital outside 0..63.
 * @example
 * stringFromOrbitals([0, 2, 32]); // [5, 1]
 */
export function stringFromOrbitals(orbs: Iterable<number>): [number, number] {
  let lo = 0;
  let hi = 0;
  for (const p of orbs) {
    if (!Number.isInteger(p) || p < 0 || p >= MAX_ORBITALS) throw new RangeError(`orbital ${p} outside 0..${MAX_ORBITALS - 1}`);
    if (p < 32) lo = (lo | (1 << p)) >>> 0;
    else hi = (hi | (1 << (p - 32))) >>> 0;
  }
  return [lo, hi];
}

/**
 * Number of occupied orbitals strictly below p (the fermionic sign exponent). O(1).
 * @example
 * countBelow(0b111, 0, 2); // 2
 */
export function countBelow(lo: number, hi: number, p: number): number {
  if (p < 32) return popcount32(p === 0 ? 0 : lo & ((2 ** p - 1) >>> 0));
  return popcount32(lo) + popcount32(p === 32 ? 0 : hi & ((2 ** (p - 32) - 1) >>> 0));
}

/**
 * Binomial coefficient C(n, k) as a float (exact below 2^53). O(k).
 * @example
 * binomial(8, 4); // 70
 */
export function binomial(n: number, k: number): number {
  if (k < 0 || k > n) return 0;
  let r = 1;
  for (let i = 1; i <= k; i++) r = (r * (n - k + i)) / i;
  return Math.round(r);
}
