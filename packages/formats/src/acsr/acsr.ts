/**
 * Adaptive CSR row blocks, survey §2.3.2 and Greathouse & Daga (SC 2014, "CSR-Adaptive"): the CSR
 * arrays unchanged plus `rowBlocks`, row boundaries such that each block's non-zeros fit one
 * workgroup's local memory (`blockNnz`). A block of several short rows is run by CSR-Stream (stream
 * the block's non-zeros into local memory, then reduce per row); a row with blockNnz non-zeros or
 * more gets a block of its own and is run by CSR-Vector.
 *
 * Block construction (the paper's greedy pass): rows are added to the current block while its
 * non-zero count stays ≤ blockNnz; a row that would overflow a non-empty block starts the next one;
 * a block is closed as soon as it reaches blockNnz non-zeros or `maxRowsPerBlock` rows (the latter
 * bounds runs of empty rows). Storage (survey eq. 2.36 plus the row blocks):
 * 2·nnz + m + 1 + (nblocks + 1) indices; β = 1.
 * @module
 */
import type { CsrMatrix, SparseMatrix, StorageInfo, StorageOptions } from '../core/types';
import { makeStorageInfo } from '../core/types';
import { validateCsr } from '../csr/csr';
import { checkSpmvArgs, requireInt } from '../dia/common';

/** CSR with adaptive row blocks. */
export interface AcsrMatrix extends SparseMatrix {
  readonly format: 'acsr';
  readonly rowPtr: Int32Array;
  readonly colIdx: Int32Array;
  readonly values: Float64Array;
  /** Block b covers rows rowBlocks[b] … rowBlocks[b+1] − 1; length nblocks + 1. */
  readonly rowBlocks: Int32Array;
  /** Non-zeros one workgroup holds (the parameter the blocks were built with). */
  readonly blockNnz: number;
}

/** Adaptive CSR parameters. */
export interface AcsrParams {
  /** Non-zeros per workgroup (local memory entries). Default 1024. */
  readonly blockNnz: number;
  /** Most rows in one block. Default 1024. */
  readonly maxRowsPerBlock: number;
}

/** Default adaptive CSR parameters. */
export const acsrDefaultParams: AcsrParams = { blockNnz: 1024, maxRowsPerBlock: 1024 };

/**
 * Row-block boundaries for CSR-Adaptive. Cost: O(rows).
 * @example
 * acsrRowBlocks(Int32Array.from([0, 3, 5, 8, 9, 11]), 5, 4, 1024); // [0, 1, 2, 4, 5]
 */
export function acsrRowBlocks(rowPtr: Int32Array, rows: number, blockNnz: number, maxRowsPerBlock: number): Int32Array {
  const blocks: number[] = [0];
  let start = 0;
  let sum = 0;
  for (let i = 0; i < rows; i++) {
    const len = rowPtr[i + 1] - rowPtr[i];
    if (sum + len > blockNnz && i > start) {
      // row i would overflow the current block: close it before row i
      blocks.push(i);
      start = i;
      sum = 0;
    }
    sum += len;
    if (sum >= blockNnz || i + 1 - start >= maxRowsPerBlock) {
      // full (or a long row alone): close after row i
      blocks.push(i + 1);
      start = i + 1;
      sum = 0;
    }
  }
  if (start < rows) blocks.push(rows);
  return Int32Array.from(blocks);
}

/**
 * Kernel of block b: 'vector' for a single-row block (CSR-Vector), 'stream' otherwise. O(1).
 * @example
 * acsrBlockKind(m, 0); // 'stream'
 */
export function acsrBlockKind(m: AcsrMatrix, b: number): 'stream' | 'vector' {
  return m.rowBlocks[b + 1] - m.rowBlocks[b] === 1 ? 'vector' : 'stream';
}

/**
 * Convert canonical CSR to adaptive CSR (copies the arrays, computes the row blocks).
 * Cost: O(nnz + rows).
 * @example
 * const m = acsrFromCsr(a, { blockNnz: 256 });
 */
export function acsrFromCsr(a: CsrMatrix, params: Partial<AcsrParams> = {}): AcsrMatrix {
  validateCsr(a, 'acsrFromCsr');
  const blockNnz = requireInt('blockNnz', params.blockNnz ?? acsrDefaultParams.blockNnz, 1);
  const maxRows = requireInt('maxRowsPerBlock', params.maxRowsPerBlock ?? acsrDefaultParams.maxRowsPerBlock, 1);
  return {
    format: 'acsr',
    rows: a.rows,
    cols: a.cols,
    nnz: a.rowPtr[a.rows] ?? 0,
    rowPtr: a.rowPtr.slice(),
    colIdx: a.colIdx.slice(),
    values: a.values.slice(),
    rowBlocks: acsrRowBlocks(a.rowPtr, a.rows, blockNnz, maxRows),
    blockNnz,
  };
}

/**
 * Convert adaptive CSR back to CSR (drops the row blocks). O(nnz + rows).
 * @example
 * csrEquals(acsrToCsr(acsrFromCsr(a)), a); // true
 */
export function acsrToCsr(m: AcsrMatrix): CsrMatrix {
  return { format: 'csr', rows: m.rows, cols: m.cols, rowPtr: m.rowPtr.slice(), colIdx: m.colIdx.slice(), values: m.values.slice() };
}

/**
 * y = A·x in float64 block by block: a stream block forms the products of all its non-zeros first
 * (the local-memory stage) and then reduces them per row; a vector block reduces its one row.
 * Cost: O(nnz + rows), O(blockNnz) scratch.
 * @example
 * acsrSpmv(acsrFromCsr(a), x); // equals csrSpmv(a, x) up to rounding
 */
export function acsrSpmv(m: AcsrMatrix, x: Float64Array, y?: Float64Array): Float64Array {
  const { rows, cols, rowPtr, colIdx, values, rowBlocks } = m;
  const out = checkSpmvArgs('acsrSpmv', rows, cols, x, y);
  const local = new Float64Array(Math.max(1, m.blockNnz));
  for (let b = 0; b + 1 < rowBlocks.length; b++) {
    const r0 = rowBlocks[b];
    const r1 = rowBlocks[b + 1];
    if (r1 - r0 === 1) {
      let acc = 0;
      // CSR-Vector: y_i = Σ_k v_k·x_{col_k}
      for (let k = rowPtr[r0]; k < rowPtr[r1]; k++) acc += values[k] * x[colIdx[k]];
      out[r0] = acc;
      continue;
    }
    const k0 = rowPtr[r0];
    // CSR-Stream stage 1: local_t = v_{k0+t}·x_{col_{k0+t}}
    for (let k = k0; k < rowPtr[r1]; k++) local[k - k0] = values[k] * x[colIdx[k]];
    // stage 2: y_i = Σ local over row i's range
    for (let i = r0; i < r1; i++) {
      let acc = 0;
      for (let k = rowPtr[i]; k < rowPtr[i + 1]; k++) acc += local[k - k0];
      out[i] = acc;
    }
  }
  return out;
}

/**
 * Adaptive CSR storage: CSR (eq. 2.36) plus nblocks + 1 row-block boundaries. β = 1. O(1).
 * @example
 * acsrStorageBytes(acsrFromCsr(a)).arrays.rowBlocks;
 */
export function acsrStorageBytes(m: AcsrMatrix, opts: StorageOptions = {}): StorageInfo {
  const vb = opts.valueBytes ?? 8;
  const ib = opts.indexBytes ?? 4;
  return makeStorageInfo(m.nnz, m.nnz, { values: m.nnz * vb, colIdx: m.nnz * ib, rowPtr: (m.rows + 1) * ib, rowBlocks: m.rowBlocks.length * ib });
}
