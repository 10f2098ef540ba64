/**
 * AXT storage (seed 004 §2.3, §3.2, Tables 2–3): ax[] holds two values per slot (entry and x
 * value); rwp[] holds NT indices (AXTUH1) or NT·THW (AXTUH); hdr[] one 32-bit word per slot
 * (compacted variants). β = NNZ / SE (Eq. (2)) with SE the stored matrix slots (padding
 * included). This library also stores xIdx (one index per slot, the gather index that loads x
 * into ax[] and tells padding from explicit zeros), listed as its own array: `bytes − arrays.xIdx`
 * is the paper's figure.
 * @module
 */
import type { StorageInfo, StorageOptions } from '../core/types';
import { makeStorageInfo } from '../core/types';
import type { AxtMatrix } from './types';

/**
 * Storage accounting of an AXT matrix: ax 2·slots·valueBytes, rwp (NT or NT·THW)·indexBytes or
 * hdr 4·slots (packed 32-bit words), xIdx slots·indexBytes. Cost O(1).
 * @example
 * axtStorageBytes(axtFromCsr(a, { mode: 'COM', th: 8 })).beta; // nnz / slots, 1 up to the last tile
 */
export function axtStorageBytes(m: AxtMatrix, opts: StorageOptions = {}): StorageInfo {
  const vb = opts.valueBytes ?? 8;
  const ib = opts.indexBytes ?? 4;
  const slots = m.xIdx.length;
  const arrays: Record<string, number> = { ax: 2 * slots * vb };
  if (m.mode === 'UNC') arrays.rwp = m.rwp.length * ib;
  else arrays.hdr = m.hdr.length * 4;
  arrays.xIdx = slots * ib;
  return makeStorageInfo(m.nnz, slots, arrays);
}
