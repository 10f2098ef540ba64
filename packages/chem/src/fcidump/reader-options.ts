/**
 * The FCIDUMP reader's options and size limits (header size, body line length and count, NORB),
 * shared by the chunked reader and the header checks.
 * @module
 */

/** Options of {@link parseFcidump} and of `readFcidump` (`@gpusparse/chem/node`). */
export interface ParseFcidumpOptions {
  /** Name used in error messages (default '<string>'). */
  file?: string;
  /**
   * Permutational symmetry of the two-electron integrals: 8 (real orbitals), 4 (complex Lz
   * orbitals: (ij|kl) = (kl|ij) = (ji|lk) only) or 'auto' (default): 4 when the header has
   * SYMLZ, else 8.
   */
  symmetry?: 8 | 4 | 'auto';
  /**
   * Accept a file without the core-energy line (`value 0 0 0 0`) and use 0 (default false: a
   * missing constant is what a truncated file looks like, so it is an error).
   */
  allowMissingCoreEnergy?: boolean;
  /** Largest header accepted, in characters (default 1 MiB); a longer one is an error. */
  maxHeaderChars?: number;
  /**
   * The spin projection 2·M_S the caller will use (CLI `--ms2`). When given, a header MS2 of the
   * other parity than NELEC is replaced by it with a note instead of refusing the file: PySCF's
   * `fcidump.from_integrals` writes MS2=0 unless told, also for an odd electron count.
   */
  ms2?: number;
  /**
   * Bytes available for the integral tables (default: what the node reader measures, else
   * 4 GiB); larger tables throw ResourceLimitError before allocation.
   */
  memoryBytes?: number;
}

/** Default header cap: far above any real header (NORB ≤ 128 needs a few kB). */
export const MAX_HEADER_CHARS = 1 << 20;
/** Longest body line accepted ("value i j k l" is under 100 characters in every known writer). */
export const MAX_BODY_LINE_CHARS = 1024;
/** NORB limit of the reader (dense norb⁴ tables). */
export const MAX_NORB = 128;

/**
 * Most body lines a file with `norb` orbitals may have: every (ij|kl) under 4-fold symmetry,
 * every h_ij and orbital energy, the constant, four times over (duplicates and blank lines
 * are legal), plus slack for small files.
 */
export function maxBodyLines(norb: number): number {
  const n2 = norb * norb;
  return 4 * (n2 * n2 / 4 + n2 + norb + 1) + 1024;
}
