/**
 * Streamed BCSR, survey §2.3.3.2: BCSR with r×c blocks whose rows are split into r streams: stream t
 * holds row t of every block, block after block ("first the first row of all blocks, then the second
 * row, …"). `ind` holds the block column of each block and `ptr` the first block of each block row,
 * exactly as in BCSR. Zero slots of a stored block are fill; the host-only bit mask `present`
 * (indexed like `values`) tells them from explicit stored zeros.
 *
 * Layout: values[t·(nnzb·c) + blk·c + j] = A[b·r + t, ind[blk]·c + j].
 * Storage (survey eq. 2.55): r·nnzb·c values + nnzb block columns + (⌈rows/r⌉ + 1) pointers.
 * @module
 */
import type { CsrMatrix, SparseMatrix, StorageInfo, StorageOptions } from '../core/types';
import { makeStorageInfo } from '../core/types';
import { type BcsrMatrix, type BcsrParams, bcsrBlockShape, bcsrFromCsr, bcsrToCsr } from '../bcsr/bcsr';
import { bitmaskCreate, bitmaskGet, bitmaskSet, checkSpmvArgs } from '../dia/common';

/** A matrix in streamed BCSR. */
export interface SbcsrMatrix extends SparseMatrix {
  readonly format: 'sbcsr';
  /** Block height r = number of streams. */
  readonly blockRows: number;
  /** Block width c. */
  readonly blockCols: number;
  readonly numBlockRows: number;
  /** nnzb. */
  readonly numBlocks: number;
  /** First block of each block row; length numBlockRows + 1 (the survey's Ptr). */
  readonly ptr: Int32Array;
  /** Block column of each block (the survey's Ind). */
  readonly ind: Int32Array;
  /** Streams back to back: stream t at t·nnzb·c; length r·nnzb·c. */
  readonly values: Float64Array;
  /** Host-only bit mask over values: set where the slot holds a stored CSR entry. */
  readonly present: Uint32Array;
}

/** Streamed BCSR parameters (as BCSR; the survey's example uses 4×4 blocks, the default). */
export type SbcsrParams = BcsrParams;

/** Default streamed BCSR parameters. */
export const sbcsrDefaultParams: SbcsrParams = { blockSize: 4 };

/**
 * Convert canonical CSR to streamed BCSR (via BCSR, then one permutation of the block values).
 * Cost: O(nnz + nnzb·r·c).
 * @example
 * const s = sbcsrFromCsr(a, { blockSize: 4 });
 */
export function sbcsrFromCsr(a: CsrMatrix, params: Partial<SbcsrParams> = {}): SbcsrMatrix {
  const { r, c } = bcsrBlockShape(params, sbcsrDefaultParams.blockSize);
  const b = bcsrFromCsr(a, { blockSize: r, blockRows: r, blockCols: c });
  const nb = b.numBlocks;
  const values = new Float64Array(b.values.length);
  const present = bitmaskCreate(b.values.length);
  for (let blk = 0; blk < nb; blk++) {
    for (let t = 0; t < r; t++) {
      for (let j = 0; j < c; j++) {
        const from = blk * r * c + t * c + j;
        const to = t * nb * c + blk * c + j;
        values[to] = b.values[from];
        if (bitmaskGet(b.present, from)) bitmaskSet(present, to);
      }
    }
  }
  return { format: 'sbcsr', rows: a.rows, cols: a.cols, nnz: b.nnz, blockRows: r, blockCols: c, numBlockRows: b.numBlockRows, numBlocks: nb, ptr: b.rowPtr, ind: b.colIdx, values, present };
}

/**
 * Convert streamed BCSR back to canonical CSR (bit-exact). Cost: O(nnzb·r·c).
 * @example
 * csrEquals(sbcsrToCsr(sbcsrFromCsr(a)), a); // true
 */
export function sbcsrToCsr(m: SbcsrMatrix): CsrMatrix {
  const { blockRows: r, blockCols: c, numBlocks: nb } = m;
  const values = new Float64Array(m.values.length);
  const present = bitmaskCreate(m.values.length);
  for (let blk = 0; blk < nb; blk++) {
    for (let t = 0; t < r; t++) {
      for (let j = 0; j < c; j++) {
        const from = t * nb * c + blk * c + j;
        const to = blk * r * c + t * c + j;
        values[to] = m.values[from];
        if (bitmaskGet(m.present, from)) bitmaskSet(present, to);
      }
    }
  }
  const b: BcsrMatrix = { format: 'bcsr', rows: m.rows, cols: m.cols, nnz: m.nnz, blockRows: r, blockCols: c, numBlockRows: m.numBlockRows, numBlocks: nb, rowPtr: m.ptr, colIdx: m.ind, values, present };
  return bcsrToCsr(b);
}

/**
 * y = A·x in float64 stream by stream: stream t updates row t of every block row. Slots past the
 * matrix edge are skipped; fill slots hold +0. Cost: O(r·nnzb·c).
 * @example
 * sbcsrSpmv(sbcsrFromCsr(a), x); // equals csrSpmv(a, x) up to rounding
 */
export function sbcsrSpmv(m: SbcsrMatrix, x: Float64Array, y?: Float64Array): Float64Array {
  const { rows, cols, blockRows: r, blockCols: c, numBlocks: nb, ptr, ind, values } = m;
  const out = checkSpmvArgs('sbcsrSpmv', rows, cols, x, y);
  for (let t = 0; t < r; t++) {
    const stream = t * nb * c;
    for (let b = 0; b < m.numBlockRows; b++) {
      const i = b * r + t;
      if (i >= rows) break;
      let acc = 0;
      for (let blk = ptr[b]; blk < ptr[b + 1]; blk++) {
        const j0 = ind[blk] * c;
        const jw = Math.min(c, cols - j0);
        // y_i += Σ_j stream_t[blk, j]·x_{j0+j}
        for (let j = 0; j < jw; j++) acc += values[stream + blk * c + j] * x[j0 + j];
      }
      out[i] = acc;
    }
  }
  return out;
}

/**
 * Streamed BCSR storage (survey eq. 2.55): r·nnzb·c values, nnzb block columns, ⌈rows/r⌉ + 1
 * pointers (mask not counted). β = nnz / (r·nnzb·c). O(1).
 * @example
 * sbcsrStorageBytes(s, { valueBytes: 4 }).bytes;
 */
export function sbcsrStorageBytes(m: SbcsrMatrix, opts: StorageOptions = {}): StorageInfo {
  const vb = opts.valueBytes ?? 8;
  const ib = opts.indexBytes ?? 4;
  const stored = m.numBlocks * m.blockRows * m.blockCols;
  return makeStorageInfo(m.nnz, stored, { values: stored * vb, ind: m.numBlocks * ib, ptr: (m.numBlockRows + 1) * ib });
}
