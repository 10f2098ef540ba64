/**
 * AXT conversions from and to CSR, dispatching on the variant chosen by (MODE, TH).
 * @module
 */
import type { CsrMatrix } from '../core/types';
import { validateCsr } from '../csr/csr';
import { axtComFromCsr, axtComToCsr } from './layout-com';
import { axtUncFromCsr, axtUncToCsr } from './layout-unc';
import { type AxtMatrix, type AxtParams, axtResolveParams } from './types';

/**
 * Convert canonical CSR to AXT with the given parameters (defaults: {@link axtDefaultParams});
 * the variant follows from (mode, th). Cost O(rows + slots) time and memory.
 * Throws InvalidParameterError for bad parameters (e.g. a BS leaving too few bits for the row
 * index, with the BS that would fit), InvalidMatrixError for a non-canonical CSR (O(nnz) check).
 * @example
 * const m = axtFromCsr(a, { thw: 32, th: 1, mode: 'COM', bs: 1024 }); // m.variant === 'AXTCH1'
 */
export function axtFromCsr(a: CsrMatrix, params: Partial<AxtParams> = {}): AxtMatrix {
  const p = axtResolveParams(a.rows, params);
  validateCsr(a, 'axtFromCsr', true);
  return p.mode === 'UNC' ? axtUncFromCsr(a, p.thw, p.th) : axtComFromCsr(a, p);
}

/**
 * Convert any AXT variant back to canonical CSR; values bit-exact, explicit zeros kept (padding
 * is recognised by xIdx = −1). Cost O(slots).
 * @example
 * csrEquals(axtToCsr(axtFromCsr(a, { mode: 'COM', th: 8 })), a); // true
 */
export function axtToCsr(m: AxtMatrix): CsrMatrix {
  return m.mode === 'UNC' ? axtUncToCsr(m) : axtComToCsr(m);
}
