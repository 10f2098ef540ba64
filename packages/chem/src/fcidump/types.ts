/**
 * The in-memory form of an FCIDUMP file.
 * @module
 */

/**
 * Index of (ij|kl) (0-based orbitals) in the dense `eri` array of an {@link Fcidump}.
 * @example
 * fd.eri[eriIndex(fd.norb, 0, 0, 1, 1)]; // (00|11)
 */
export function eriIndex(norb: number, i: number, j: number, k: number, l: number): number {
  return ((i * norb + j) * norb + k) * norb + l;
}

/**
 * Integrals and header of an FCIDUMP file, in chemists' notation, 0-based orbitals.
 *
 * - `h1[p·norb + q]` = h_pq (symmetric).
 * - `eri[((i·norb + j)·norb + k)·norb + l]` = (ij|kl), expanded to every permutation the file's
 *   symmetry allows (8-fold for real orbitals, 4-fold (ij|kl) = (kl|ij) = (ji|lk) for complex
 *   Lz orbitals). Dense: norb⁴ float64 (norb = 42 → 25 MB).
 */
export interface Fcidump {
  /** Where it came from, for messages ('<string>' when parsed from text). */
  readonly file: string;
  readonly norb: number;
  readonly nelec: number;
  /** 2·S_z of the sector the file was written for (n_alpha − n_beta). */
  readonly ms2: number;
  /** Irrep of each orbital, Molpro numbering 1..8 (all 1 when ORBSYM is absent). */
  readonly orbsym: Int32Array;
  /** Target irrep, Molpro numbering (1 when ISYM is absent). */
  readonly isym: number;
  /** One-electron integrals h_pq, norb² row-major, symmetric. */
  readonly h1: Float64Array;
  /** Two-electron integrals (ij|kl), norb⁴ row-major. */
  readonly eri: Float64Array;
  /** The constant (`0 0 0 0` line): nuclear repulsion plus any frozen-core energy. */
  readonly ecore: number;
  /** Orbital energies from Molpro `e i 0 0 0` lines (NaN where absent); undefined when none. */
  readonly orbitalEnergies: Float64Array | undefined;
  /** Permutational symmetry used to expand the integrals. */
  readonly symmetry: 8 | 4;
  /** Every header key as written (upper-case), e.g. SYML, SYMLZ, UHF. */
  readonly header: Readonly<Record<string, readonly (number | boolean)[]>>;
  /** Human-readable notes on choices made while reading (e.g. 4-fold symmetry for SYMLZ). */
  readonly notes: readonly string[];
}
