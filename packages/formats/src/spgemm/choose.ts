/**
 * Which diagonal storage a product C = A·B runs in, from the operands' diagonal structure:
 * CDM (compact diagonals, seed 002 §6.1) for square operands of one order whose compact
 * diagonals add at most 2 % padding over HM's in-matrix slots — narrow bands and periodic
 * (wrapped) bands, where the paper uses it — and HM (§6.2) otherwise: structured matrices with
 * far-apart diagonals and rectangular ones. Refuses (InvalidParameterError) operands with more
 * diagonals than `maxDiagonals`: diagonal storage would hold mostly fill. O(nnz) (one pass over
 * each CSR's diagonals).
 * @module
 */
import { InvalidParameterError } from '../core/errors';
import type { CsrMatrix } from '../core/types';
import { diagonalStats } from '../dia/stats';

/** Slots of CDM over slots of HM past which HM is chosen. */
export const CDM_PADDING_LIMIT = 1.02;

/** The diagonal structure of one operand: HM slots, CDM slots, occupied diagonals. */
export interface DiagonalFootprint {
  readonly diagonals: number;
  readonly hmSlots: number;
  /** Compact diagonals × n (Infinity for a non-square matrix). */
  readonly cdmSlots: number;
}

/** The footprint of `a` in HM and CDM. O(nnz + rows). */
export function diagonalFootprint(a: CsrMatrix): DiagonalFootprint {
  const st = diagonalStats(a);
  if (a.rows !== a.cols) return { diagonals: st.count, hmSlots: st.inMatrixSlots, cdmSlots: Number.POSITIVE_INFINITY };
  const compact = new Set<number>();
  for (const k of st.offsets) compact.add((k + a.rows) % a.rows);
  return { diagonals: st.count, hmSlots: st.inMatrixSlots, cdmSlots: compact.size * a.rows };
}

/**
 * 'cdm' or 'hm' for C = A·B (see the module comment). Throws InvalidParameterError when an
 * operand has more than `maxDiagonals` occupied diagonals.
 * @example chooseSpgemmFormat(laplacian1d(100), laplacian1d(100)) // 'cdm'
 */
export function chooseSpgemmFormat(a: CsrMatrix, b: CsrMatrix, maxDiagonals = 4096): 'hm' | 'cdm' {
  const fa = diagonalFootprint(a);
  const fb = diagonalFootprint(b);
  for (const [name, f] of [['A', fa], ['B', fb]] as const) {
    if (f.diagonals > maxDiagonals) throw new InvalidParameterError(`${name}: occupied diagonals`, `at most ${maxDiagonals} for diagonal storage (use a CSR SpGEMM for this matrix)`, f.diagonals);
  }
  const square = a.rows === a.cols && b.rows === b.cols && a.rows === b.rows;
  const narrow = fa.cdmSlots <= CDM_PADDING_LIMIT * fa.hmSlots && fb.cdmSlots <= CDM_PADDING_LIMIT * fb.hmSlots;
  return square && narrow ? 'cdm' : 'hm';
}
