/**
 * CSB (compressed sparse blocks), seed 001 §3.6 (hybrid-ell-csr-ci-spmv.md) and Buluç, Fineman,
 * Frigo, Gilbert & Leiserson 2009: the matrix is cut into z×z blocks; `blockPtr` (one entry per
 * block, empty blocks included, blocks in row-major block order, plus a final total) gives each
 * block's first non-zero; `rowIdx`/`colIdx` are the positions inside the block (0 … z − 1).
 *
 * Choices where seed 001 is silent, following Buluç et al.: non-zeros inside a block are in
 * Z-Morton order of (row, column) (row bit above column bit at each level); a rows × cols matrix
 * has ⌈rows/z⌉ × ⌈cols/z⌉ blocks. Buluç packs row and column into one word of 2·lg z bits; here they
 * are two Int32Array (the GPU reads u32), and storageBytes counts them at `indexBytes` each.
 * Since blockPtr is dense over the blocks, fromCsr refuses (InvalidParameterError) when the block
 * count exceeds `maxBlocks`.
 *
 * Storage: nnz·(sizeof(value) + 2·sizeof(index)) + (nblocks + 1)·sizeof(index); β = 1.
 * @module
 */
import { InvalidParameterError } from '../core/errors';
import type { CsrMatrix, SparseMatrix, StorageInfo, StorageOptions } from '../core/types';
import { makeStorageInfo } from '../core/types';
import { csrFromTriplets, validateCsr } from '../csr/csr';
import { checkSpmvArgs, requireInt } from '../dia/common';

/** A matrix in CSB. */
export interface CsbMatrix extends SparseMatrix {
  readonly format: 'csb';
  /** Block edge z. */
  readonly blockSize: number;
  /** ⌈rows / z⌉. */
  readonly numBlockRows: number;
  /** ⌈cols / z⌉. */
  readonly numBlockCols: number;
  /** First non-zero of block (bi, bj) at blockPtr[bi·numBlockCols + bj]; length nblocks + 1. */
  readonly blockPtr: Int32Array;
  /** Row of each non-zero inside its block. */
  readonly rowIdx: Int32Array;
  /** Column of each non-zero inside its block. */
  readonly colIdx: Int32Array;
  /** Non-zeros, block by block, Z-Morton order inside a block. */
  readonly values: Float64Array;
}

/** CSB parameters. */
export interface CsbParams {
  /** Block edge z, in [1, 32768]. Default 64. */
  readonly blockSize: number;
  /** Refuse when ⌈rows/z⌉·⌈cols/z⌉ exceeds this. Default 2²⁴. */
  readonly maxBlocks: number;
}

/** Default CSB parameters. */
export const csbDefaultParams: CsbParams = { blockSize: 64, maxBlocks: 1 << 24 };

/**
 * Z-Morton key of (row, column) inside a block, 15 bits each: row bits at odd positions. O(1).
 * @example
 * csbMortonKey(1, 0); // 2
 */
export function csbMortonKey(r: number, c: number): number {
  let key = 0;
  for (let b = 0; b < 15; b++) key |= (((c >>> b) & 1) << (2 * b)) | (((r >>> b) & 1) << (2 * b + 1));
  return key >>> 0;
}

/**
 * Convert canonical CSR to CSB. Cost: O(nnz log(nnz per block) + nblocks).
 * Throws InvalidParameterError for z outside [1, 32768] or too many blocks.
 * @example
 * const b = csbFromCsr(a, { blockSize: 32 });
 */
export function csbFromCsr(a: CsrMatrix, params: Partial<CsbParams> = {}): CsbMatrix {
  validateCsr(a, 'csbFromCsr');
  const z = requireInt('blockSize', params.blockSize ?? csbDefaultParams.blockSize, 1, 32768);
  const maxBlocks = requireInt('maxBlocks', params.maxBlocks ?? csbDefaultParams.maxBlocks, 1);
  const { rows, cols, rowPtr, colIdx: aci, values: av } = a;
  const nbr = Math.ceil(rows / z);
  const nbc = Math.ceil(cols / z);
  const nblocks = nbr * nbc;
  if (nblocks > maxBlocks) {
    throw new InvalidParameterError('blockSize', `a block size giving at most maxBlocks = ${maxBlocks} blocks (${rows}x${cols} in ${z}x${z} blocks gives ${nblocks})`, z);
  }
  const nnz = rowPtr[rows] ?? 0;
  const blockPtr = new Int32Array(nblocks + 1);
  const blockOf = new Int32Array(nnz);
  for (let i = 0; i < rows; i++) {
    for (let k = rowPtr[i]; k < rowPtr[i + 1]; k++) {
      const blk = Math.floor(i / z) * nbc + Math.floor(aci[k] / z);
      blockOf[k] = blk;
      blockPtr[blk + 1]++;
    }
  }
  for (let b = 0; b < nblocks; b++) blockPtr[b + 1] += blockPtr[b];
  const next = blockPtr.slice(0, nblocks);
  const order = new Int32Array(nnz); // CSR entry index, grouped by block
  const keys = new Uint32Array(nnz);
  for (let i = 0; i < rows; i++) {
    for (let k = rowPtr[i]; k < rowPtr[i + 1]; k++) {
      const p = next[blockOf[k]]++;
      order[p] = k;
      keys[k] = csbMortonKey(i % z, aci[k] % z);
    }
  }
  for (let b = 0; b < nblocks; b++) {
    if (blockPtr[b + 1] - blockPtr[b] > 1) order.subarray(blockPtr[b], blockPtr[b + 1]).sort((p, q) => keys[p] - keys[q]);
  }
  const rowOf = new Int32Array(nnz);
  for (let i = 0; i < rows; i++) rowOf.fill(i, rowPtr[i], rowPtr[i + 1]);
  const rowIdx = new Int32Array(nnz);
  const colIdx = new Int32Array(nnz);
  const values = new Float64Array(nnz);
  for (let p = 0; p < nnz; p++) {
    const k = order[p];
    rowIdx[p] = rowOf[k] % z;
    colIdx[p] = aci[k] % z;
    values[p] = av[k];
  }
  return { format: 'csb', rows, cols, nnz, blockSize: z, numBlockRows: nbr, numBlockCols: nbc, blockPtr, rowIdx, colIdx, values };
}

/**
 * Convert CSB back to canonical CSR (bit-exact). Cost: O(nnz + rows + cols + nblocks).
 * @example
 * csrEquals(csbToCsr(csbFromCsr(a)), a); // true
 */
export function csbToCsr(m: CsbMatrix): CsrMatrix {
  const z = m.blockSize;
  const ri = new Int32Array(m.nnz);
  const ci = new Int32Array(m.nnz);
  for (let b = 0; b < m.numBlockRows * m.numBlockCols; b++) {
    const r0 = Math.floor(b / m.numBlockCols) * z;
    const c0 = (b % m.numBlockCols) * z;
    for (let p = m.blockPtr[b]; p < m.blockPtr[b + 1]; p++) {
      ri[p] = r0 + m.rowIdx[p];
      ci[p] = c0 + m.colIdx[p];
    }
  }
  return csrFromTriplets(m.rows, m.cols, ri, ci, m.values);
}

/**
 * y = A·x in float64 block by block (the block-row traversal of Buluç et al.). Cost: O(nnz + nblocks).
 * @example
 * csbSpmv(csbFromCsr(a), x); // equals csrSpmv(a, x) up to rounding
 */
export function csbSpmv(m: CsbMatrix, x: Float64Array, y?: Float64Array): Float64Array {
  const out = checkSpmvArgs('csbSpmv', m.rows, m.cols, x, y);
  const z = m.blockSize;
  const { blockPtr, rowIdx, colIdx, values } = m;
  for (let bi = 0; bi < m.numBlockRows; bi++) {
    const r0 = bi * z;
    for (let bj = 0; bj < m.numBlockCols; bj++) {
      const b = bi * m.numBlockCols + bj;
      const c0 = bj * z;
      // y_{r0+r} += v·x_{c0+c} for each (r, c, v) of block (bi, bj)
      for (let p = blockPtr[b]; p < blockPtr[b + 1]; p++) out[r0 + rowIdx[p]] += values[p] * x[c0 + colIdx[p]];
    }
  }
  return out;
}

/**
 * CSB storage: values, in-block row and column per non-zero, blockPtr over all blocks. β = 1. O(1).
 * @example
 * csbStorageBytes(csbFromCsr(a, { blockSize: 2 })).bytes;
 */
export function csbStorageBytes(m: CsbMatrix, opts: StorageOptions = {}): StorageInfo {
  const vb = opts.valueBytes ?? 8;
  const ib = opts.indexBytes ?? 4;
  return makeStorageInfo(m.nnz, m.nnz, { values: m.nnz * vb, rowIdx: m.nnz * ib, colIdx: m.nnz * ib, blockPtr: m.blockPtr.length * ib });
}
