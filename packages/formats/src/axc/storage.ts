/**
 * AXC storage (seed 004 §2.2, §3.2): ax[] holds two values per slot (entry and x value), brp[]
 * rows + 1 indices; β = NNZ / SE with SE the number of stored matrix slots (Eq. (2)).
 * The paper's tables count ax + brp; this library also stores xIdx (one index per slot), listed
 * as its own array so `bytes − arrays.xIdx` is the paper's figure.
 * @module
 */
import type { StorageInfo, StorageOptions } from '../core/types';
import { makeStorageInfo } from '../core/types';
import type { AxcMatrix } from './layout';

/**
 * Storage accounting of an AXC matrix: ax 2·slots·valueBytes, brp (rows + 1)·indexBytes,
 * xIdx slots·indexBytes. Cost O(1).
 * @example
 * axcStorageBytes(m, { valueBytes: 8 }).beta; // nnz / (HBRs · bricks)
 */
export function axcStorageBytes(m: AxcMatrix, opts: StorageOptions = {}): StorageInfo {
  const vb = opts.valueBytes ?? 8;
  const ib = opts.indexBytes ?? 4;
  const slots = m.xIdx.length;
  return makeStorageInfo(m.nnz, slots, { ax: 2 * slots * vb, brp: (m.rows + 1) * ib, xIdx: slots * ib });
}
