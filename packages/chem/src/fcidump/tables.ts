/**
 * Integral tables of the FCIDUMP reader: dense expanded values plus, per symmetry-distinct
 * integral, the line that gave it (to find missing diagonals and name both lines of a
 * conflict), and the memory estimate checked before anything is allocated.
 * @module
 */
import { ResourceLimitError } from '@gpusparse/formats';

/**
 * Tolerance under which two copies of one integral count as equal: relative to the larger
 * value, with a floor of 1 Eh. The floor matters: Dice's H10 C1 file lists (42|31) and its
 * permutation (31|42) as 2.672747041650682e-5 and 2.672747041646374e-5 (4e-17 Eh apart,
 * rounding noise of the integral code, 1.6e-9 relative), and must stay readable.
 */
export const DUPLICATE_RTOL = 1e-12;

/** Whether two values given for one integral agree (equal duplicates are allowed). */
export function sameIntegral(a: number, b: number): boolean {
  return a === b || Math.abs(a - b) <= DUPLICATE_RTOL * Math.max(Math.abs(a), Math.abs(b), 1);
}

/** Number of symmetry-distinct (ij|kl) slots tracked for conflicts: 8-fold packs pairs. */
function distinctSlots(norb: number, checkSymmetry: 8 | 4): number {
  if (checkSymmetry === 4) return norb ** 4;
  const pairs = (norb * (norb + 1)) / 2;
  return (pairs * (pairs + 1)) / 2;
}

/**
 * Bytes the reader allocates for NORB orbitals: h1 and eri (float64, dense), and the line
 * tables (uint32) used for integrity checks.
 * @example
 * fcidumpTableBytes(42, 8); // ≈ 26 MB
 */
export function fcidumpTableBytes(norb: number, checkSymmetry: 8 | 4): number {
  const n2 = norb * norb;
  return 8 * n2 * n2 + 12 * n2 + 4 * distinctSlots(norb, checkSymmetry) + 12 * norb;
}

/** The dense tables being filled while the body is read. */
export interface IntegralTables {
  h1: Float64Array;
  h1Line: Uint32Array;
  eri: Float64Array;
  eriLine: Uint32Array;
}

/**
 * Allocate the tables after checking their size against `bytesAvailable`.
 * Throws ResourceLimitError (bytes needed vs available) before allocating when they do not fit,
 * and also when the engine refuses the allocation.
 */
export function allocateTables(norb: number, checkSymmetry: 8 | 4, bytesAvailable: number): IntegralTables {
  const needed = fcidumpTableBytes(norb, checkSymmetry);
  const what = `FCIDUMP integral tables for NORB=${norb} (dense norb⁴ float64)`;
  const advice = 'check NORB in the header; a smaller active space needs a smaller FCIDUMP';
  if (needed > bytesAvailable) throw new ResourceLimitError(what, needed, bytesAvailable, advice);
  const n2 = norb * norb;
  try {
    return {
      h1: new Float64Array(n2),
      h1Line: new Uint32Array(n2),
      eri: new Float64Array(n2 * n2),
      eriLine: new Uint32Array(distinctSlots(norb, checkSymmetry)),
    };
  } catch (e) {
    if (e instanceof RangeError) throw new ResourceLimitError(what, needed, bytesAvailable, `the JavaScript engine refused the allocation (${e.message}); ${advice}`);
    throw e;
  }
}

/** Slot of (ij|kl) (0-based) among the symmetry-distinct integrals. */
export function distinctSlot(norb: number, checkSymmetry: 8 | 4, i: number, j: number, k: number, l: number): number {
  if (checkSymmetry === 8) {
    const ij = i >= j ? (i * (i + 1)) / 2 + j : (j * (j + 1)) / 2 + i;
    const kl = k >= l ? (k * (k + 1)) / 2 + l : (l * (l + 1)) / 2 + k;
    return ij >= kl ? (ij * (ij + 1)) / 2 + kl : (kl * (kl + 1)) / 2 + ij;
  }
  // 4-fold: (ij|kl) = (kl|ij) = (ji|lk) = (lk|ji); the smallest flat index names the class
  const f = (a: number, b: number, c: number, d: number) => ((a * norb + b) * norb + c) * norb + d;
  return Math.min(f(i, j, k, l), f(k, l, i, j), f(j, i, l, k), f(l, k, j, i));
}
