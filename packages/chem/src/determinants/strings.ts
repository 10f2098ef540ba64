/**
 * Lists of alpha or beta occupation strings: generation (all k-of-m, or by excitation level
 * from a reference string), irreps, and a hash from string to index.
 * @module
 */
import { GpuSparseError } from '@gpusparse/formats';
import { binomial, MAX_ORBITALS, popcount32 } from './bits';
import { buildPairHash, type PairHash, pairHashGet } from './pair-hash';

/** A list of distinct occupation strings of one spin, with a lookup hash. */
export interface StringList {
  readonly count: number;
  /** Electrons per string. */
  readonly electrons: number;
  readonly lo: Uint32Array;
  readonly hi: Uint32Array;
  readonly hash: PairHash;
}

/** Too many determinants or orbitals for this implementation. */
export class SpaceTooLargeError extends GpuSparseError {}

/** Strings longer than this are refused (memory: 8 bytes + ~24 bytes of hash per string). */
const MAX_STRINGS = 2 ** 28;

/**
 * Wrap (lo, hi) arrays as a {@link StringList} (strings must be distinct). Cost O(count).
 * @example
 * const list = makeStringList(Uint32Array.of(3, 5), Uint32Array.of(0, 0), 2);
 */
export function makeStringList(lo: Uint32Array, hi: Uint32Array, electrons: number): StringList {
  return { count: lo.length, electrons, lo, hi, hash: buildPairHash(lo, hi, lo.length) };
}

/**
 * Index of a string in the list, or −1. Expected O(1).
 * @example
 * stringIndex(list, 0b101, 0); // 1
 */
export function stringIndex(list: StringList, lo: number, hi: number): number {
  return pairHashGet(list.hash, lo, hi);
}

/**
 * All strings with `k` electrons among the orbitals `orbs` (ascending lexicographic order of
 * the orbital lists), each OR-ed with the fixed bits (fixLo, fixHi). Cost O(C(m,k)).
 * @example
 * allStrings([0, 1, 2], 2).lo; // [0b011, 0b101, 0b110]
 */
export function allStrings(orbs: readonly number[], k: number, fixLo = 0, fixHi = 0): { lo: Uint32Array; hi: Uint32Array } {
  const m = orbs.length;
  const count = binomial(m, k);
  if (count > MAX_STRINGS) throw new SpaceTooLargeError(`strings: expected at most ${MAX_STRINGS} strings, got C(${m},${k}) = ${count}`);
  for (const p of orbs) if (p >= MAX_ORBITALS) throw new SpaceTooLargeError(`strings: expected orbitals < ${MAX_ORBITALS}, got ${p}`);
  const lo = new Uint32Array(count);
  const hi = new Uint32Array(count);
  const pick = new Int32Array(k).map((_, i) => i);
  for (let n = 0; n < count; n++) {
    let a = fixLo;
    let b = fixHi;
    for (let t = 0; t < k; t++) {
      const p = orbs[pick[t]!]!;
      if (p < 32) a |= 1 << p;
      else b |= 1 << (p - 32);
    }
    lo[n] = a >>> 0;
    hi[n] = b >>> 0;
    // next combination
    let t = k - 1;
    while (t >= 0 && pick[t] === m - k + t) t--;
    if (t < 0) break;
    pick[t]!++;
    for (let u = t + 1; u < k; u++) pick[u] = pick[u - 1]! + 1;
  }
  return { lo, hi };
}

/**
 * Strings reachable from a reference string by at most `maxLevel` excitations (holes in the
 * reference's occupied orbitals, particles in `virtuals`), ordered by level. Cost O(count).
 */
export function stringsUpToLevel(
  refOcc: readonly number[],
  virtuals: readonly number[],
  maxLevel: number,
): { lo: Uint32Array; hi: Uint32Array; level: Int32Array } {
  const lo: number[] = [];
  const hi: number[] = [];
  const level: number[] = [];
  const maxE = Math.min(maxLevel, refOcc.length, virtuals.length);
  for (let e = 0; e <= maxE; e++) {
    const kept = allStrings(refOcc, refOcc.length - e);
    const parts = allStrings(virtuals, e);
    if (kept.lo.length * parts.lo.length > MAX_STRINGS) throw new SpaceTooLargeError(`strings: too many at excitation level ${e}`);
    for (let i = 0; i < kept.lo.length; i++) {
      for (let j = 0; j < parts.lo.length; j++) {
        lo.push((kept.lo[i]! | parts.lo[j]!) >>> 0);
        hi.push((kept.hi[i]! | parts.hi[j]!) >>> 0);
        level.push(e);
      }
    }
  }
  return { lo: Uint32Array.from(lo), hi: Uint32Array.from(hi), level: Int32Array.from(level) };
}

/**
 * Irrep (0-based, D2h XOR numbering: Molpro irrep − 1) of each string: XOR of its orbitals'.
 * Cost O(count · norb).
 * @example
 * stringIrreps(Uint32Array.of(0b11), Uint32Array.of(0), Int32Array.of(2, 3)); // [1 ^ 2] = [3]
 */
export function stringIrreps(lo: Uint32Array, hi: Uint32Array, orbsym: Int32Array): Int32Array {
  const out = new Int32Array(lo.length);
  const n = orbsym.length;
  for (let s = 0; s < lo.length; s++) {
    let x = 0;
    for (let p = 0; p < n; p++) {
      const bit = p < 32 ? (lo[s]! >>> p) & 1 : (hi[s]! >>> (p - 32)) & 1;
      if (bit) x ^= orbsym[p]! - 1;
    }
    out[s] = x;
  }
  return out;
}

/**
 * Number of orbitals of (lo, hi) not occupied in (refLo, refHi): the excitation level. O(1).
 * @example
 * excitationLevel(0b1010, 0, 0b0011, 0); // 1
 */
export function excitationLevel(lo: number, hi: number, refLo: number, refHi: number): number {
  return popcount32(lo & ~refLo) + popcount32(hi & ~refHi);
}
