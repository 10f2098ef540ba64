/**
 * BCSR (blocked CSR), survey §2.2.1 and Im, Yelick & Vuduc 2004 (SPARSITY): the matrix is cut into
 * r×c blocks; every block holding at least one stored entry is kept whole (row-major inside the
 * block), with CSR over the blocks: `rowPtr` over block rows, `colIdx` the block column of each
 * block (ascending within a block row). Blocks on the right/bottom edge of a matrix whose shape is
 * not a multiple of r×c are padded past the matrix. Zero slots inside a stored block are fill; the
 * host-only bit mask `present` tells them from explicit stored zeros so that toCsr is exact.
 *
 * Storage: nnzb·r·c·sizeof(value) + nnzb·sizeof(index) + (⌈rows/r⌉ + 1)·sizeof(index)
 * (the survey's eq. 2.19 with r×c blocks); β = nnz / (nnzb·r·c).
 * @module
 */
import type { CsrMatrix, SparseMatrix, StorageInfo, StorageOptions } from '../core/types';
import { makeStorageInfo } from '../core/types';
import { InvalidMatrixError } from '../core/errors';
import { checkNnz, checkPresentMask, isVouched, requireShape, requireTyped, STRUCTURE, vouch } from '../core/validate';
import { csr, validateCsr } from '../csr/csr';
import { bitmaskCreate, bitmaskGet, bitmaskSet, checkSlots, checkSpmvArgs, requireInt } from '../dia/common';

/** A matrix in BCSR with r×c blocks. */
export interface BcsrMatrix extends SparseMatrix {
  readonly format: 'bcsr';
  /** Block height r. */
  readonly blockRows: number;
  /** Block width c. */
  readonly blockCols: number;
  /** ⌈rows / r⌉. */
  readonly numBlockRows: number;
  /** Number of stored blocks nnzb. */
  readonly numBlocks: number;
  /** Block row b holds blocks rowPtr[b] … rowPtr[b+1] − 1; length numBlockRows + 1. */
  readonly rowPtr: Int32Array;
  /** Block column of each block, ascending within a block row; length numBlocks. */
  readonly colIdx: Int32Array;
  /** values[blk·r·c + i·c + j] = A[b·r + i, colIdx[blk]·c + j]; length numBlocks·r·c. */
  readonly values: Float64Array;
  /** Host-only bit mask over values: set where the slot holds a stored CSR entry. */
  readonly present: Uint32Array;
}

/** BCSR parameters: square blocks of `blockSize`, or r×c through blockRows/blockCols. */
export interface BcsrParams {
  /** Block edge r = c (default 4; the survey's example uses 2). */
  readonly blockSize: number;
  /** Block height; overrides blockSize. */
  readonly blockRows?: number;
  /** Block width; overrides blockSize. */
  readonly blockCols?: number;
}

/** Default BCSR parameters. */
export const bcsrDefaultParams: BcsrParams = { blockSize: 4 };

/**
 * Resolve r and c from BCSR-style parameters (shared with streamed BCSR); each in [1, 1024].
 * Throws InvalidParameterError naming the parameter. O(1).
 * @example
 * bcsrBlockShape({ blockSize: 2, blockCols: 3 }, 4); // { r: 2, c: 3 }
 */
export function bcsrBlockShape(params: Partial<BcsrParams>, defaultSize: number): { r: number; c: number } {
  const size = requireInt('blockSize', params.blockSize ?? defaultSize, 1, 1024);
  const r = requireInt('blockRows', params.blockRows ?? size, 1, 1024);
  const c = requireInt('blockCols', params.blockCols ?? size, 1, 1024);
  return { r, c };
}

const bcsrFields = (m: BcsrMatrix): unknown[] => [m.rows, m.cols, m.nnz, m.blockRows, m.blockCols, m.numBlockRows, m.numBlocks, m.rowPtr, m.colIdx, m.values, m.present];

/**
 * Check a BCSR matrix given as arrays: integer shape; block sizes in [1, 1024]; numBlockRows =
 * ⌈rows / r⌉; rowPtr (Int32Array, length numBlockRows + 1) from 0, never decreasing, ending at
 * numBlocks = colIdx.length; block columns in [0, ⌈cols / c⌉), strictly ascending within a block
 * row; values a Float64Array of numBlocks·r·c slots; a presence mask covering them; nnz in
 * [0, slots]. O(numBlockRows + numBlocks) the first time, O(1) for the same object afterwards.
 * Throws InvalidMatrixError naming the first bad index.
 * @example
 * validateBcsr(bcsrFromCsr(a)); // passes
 */
export function validateBcsr(m: BcsrMatrix, where = 'BCSR'): void {
  if (isVouched(m, bcsrFields(m), STRUCTURE)) return;
  requireShape(where, 'BCSR', m.rows, m.cols);
  const r = m.blockRows;
  const c = m.blockCols;
  const okBlock = (v: number) => Number.isInteger(v) && v >= 1 && v <= 1024;
  if (!okBlock(r) || !okBlock(c)) throw new InvalidMatrixError(where, `BCSR block ${r}x${c}: expected integer block sizes in [1, 1024]`);
  const nbr = Math.ceil(m.rows / r);
  if (m.numBlockRows !== nbr) throw new InvalidMatrixError(where, `BCSR numBlockRows = ${m.numBlockRows}: expected ⌈${m.rows} / ${r}⌉ = ${nbr}`);
  requireTyped(where, 'BCSR rowPtr', m.rowPtr, 'Int32Array');
  requireTyped(where, 'BCSR colIdx', m.colIdx, 'Int32Array');
  requireTyped(where, 'BCSR values', m.values, 'Float64Array');
  const { rowPtr, colIdx } = m;
  if (rowPtr.length !== nbr + 1 || rowPtr[0] !== 0) throw new InvalidMatrixError(where, `BCSR rowPtr: expected length ${nbr + 1} starting at 0, got length ${rowPtr.length} starting at ${rowPtr[0]}`);
  if (rowPtr[nbr] !== m.numBlocks || colIdx.length !== m.numBlocks) {
    throw new InvalidMatrixError(where, `BCSR rowPtr[${nbr}] = ${rowPtr[nbr]}, numBlocks = ${m.numBlocks}, colIdx has ${colIdx.length}: expected all equal`);
  }
  const nbc = Math.ceil(m.cols / c);
  for (let b = 0; b < nbr; b++) {
    if (rowPtr[b + 1] < rowPtr[b]) throw new InvalidMatrixError(where, `BCSR rowPtr[${b + 1}] = ${rowPtr[b + 1]} < rowPtr[${b}] = ${rowPtr[b]}: block-row pointers must not decrease`);
    for (let k = rowPtr[b]; k < rowPtr[b + 1]; k++) {
      const j = colIdx[k];
      if (!(j >= 0 && j < nbc)) throw new InvalidMatrixError(where, `BCSR colIdx[${k}] = ${j} in block row ${b}: expected a block column in [0, ${nbc})`);
      if (k > rowPtr[b] && j <= colIdx[k - 1]) throw new InvalidMatrixError(where, `BCSR colIdx[${k}] = ${j} in block row ${b} after ${colIdx[k - 1]}: block columns must be sorted and unique`);
    }
  }
  const slots = m.numBlocks * r * c;
  if (m.values.length !== slots) throw new InvalidMatrixError(where, `BCSR values has ${m.values.length} slots: expected numBlocks·r·c = ${slots}`);
  checkPresentMask(where, 'BCSR', m.present, slots);
  checkNnz(where, 'BCSR', m.nnz, slots);
  vouch(m, bcsrFields(m), STRUCTURE);
}

/**
 * Convert canonical CSR to BCSR. Cost: O(nnz + nnzb·r·c) time, O(cols / c) scratch.
 * @example
 * const b = bcsrFromCsr(a, { blockSize: 2 }); // 2×2 blocks
 */
export function bcsrFromCsr(a: CsrMatrix, params: Partial<BcsrParams> = {}): BcsrMatrix {
  validateCsr(a, 'bcsrFromCsr');
  const { r, c } = bcsrBlockShape(params, bcsrDefaultParams.blockSize);
  const { rows, cols, rowPtr: arp, colIdx: aci, values: av } = a;
  const nbr = Math.ceil(rows / r);
  const nbc = Math.ceil(cols / c);
  // pass 1: distinct block columns per block row (stamp = block row + 1)
  const stamp = new Int32Array(nbc);
  const rowPtr = new Int32Array(nbr + 1);
  for (let b = 0; b < nbr; b++) {
    let count = 0;
    for (let i = b * r; i < Math.min(rows, (b + 1) * r); i++) {
      for (let k = arp[i]; k < arp[i + 1]; k++) {
        const bc = Math.floor(aci[k] / c);
        if (stamp[bc] !== b + 1) {
          stamp[bc] = b + 1;
          count++;
        }
      }
    }
    rowPtr[b + 1] = rowPtr[b] + count;
  }
  const numBlocks = rowPtr[nbr];
  checkSlots('bcsrFromCsr', numBlocks * r * c, `${numBlocks} blocks of ${r}x${c}: use smaller blocks`);
  const colIdx = new Int32Array(numBlocks);
  const slotOf = new Int32Array(nbc).fill(-1); // block column -> block index, for the current block row
  stamp.fill(0);
  for (let b = 0; b < nbr; b++) {
    let w = rowPtr[b];
    for (let i = b * r; i < Math.min(rows, (b + 1) * r); i++) {
      for (let k = arp[i]; k < arp[i + 1]; k++) {
        const bc = Math.floor(aci[k] / c);
        if (stamp[bc] !== b + 1) {
          stamp[bc] = b + 1;
          colIdx[w++] = bc;
        }
      }
    }
    // block columns ascending: insertion sort for the usual few per block row (no call per row)
    const b0 = rowPtr[b];
    const b1 = rowPtr[b + 1];
    if (b1 - b0 > 32) colIdx.subarray(b0, b1).sort();
    else {
      for (let p = b0 + 1; p < b1; p++) {
        const v = colIdx[p];
        let q = p - 1;
        while (q >= b0 && colIdx[q] > v) {
          colIdx[q + 1] = colIdx[q];
          q--;
        }
        colIdx[q + 1] = v;
      }
    }
  }
  const bs = r * c;
  const values = new Float64Array(numBlocks * bs);
  const present = bitmaskCreate(numBlocks * bs);
  for (let b = 0; b < nbr; b++) {
    for (let blk = rowPtr[b]; blk < rowPtr[b + 1]; blk++) slotOf[colIdx[blk]] = blk;
    for (let i = b * r; i < Math.min(rows, (b + 1) * r); i++) {
      for (let k = arp[i]; k < arp[i + 1]; k++) {
        const j = aci[k];
        const blk = slotOf[Math.floor(j / c)];
        const s = blk * bs + (i - b * r) * c + (j % c);
        values[s] = av[k];
        bitmaskSet(present, s);
      }
    }
  }
  const m: BcsrMatrix = { format: 'bcsr', rows, cols, nnz: arp[rows] ?? 0, blockRows: r, blockCols: c, numBlockRows: nbr, numBlocks, rowPtr, colIdx, values, present };
  return vouch(m, bcsrFields(m), STRUCTURE); // valid by construction
}

/**
 * Convert BCSR back to canonical CSR (stored entries only, bit-exact). Cost: O(nnzb·r·c).
 * @example
 * csrEquals(bcsrToCsr(bcsrFromCsr(a)), a); // true
 */
export function bcsrToCsr(m: BcsrMatrix): CsrMatrix {
  validateBcsr(m, 'bcsrToCsr');
  const { rows, cols, blockRows: r, blockCols: c, rowPtr: bp, colIdx: bci, values: bv, present } = m;
  const bs = r * c;
  const rowPtr = new Int32Array(rows + 1);
  const colIdx = new Int32Array(m.nnz);
  const values = new Float64Array(m.nnz);
  let w = 0;
  for (let i = 0; i < rows; i++) {
    const b = Math.floor(i / r);
    const li = i - b * r;
    // blocks ascend by block column, slots by column: the row comes out sorted
    for (let blk = bp[b]; blk < bp[b + 1]; blk++) {
      const base = blk * bs + li * c;
      for (let lj = 0; lj < c; lj++) {
        if (!bitmaskGet(present, base + lj)) continue;
        const j = bci[blk] * c + lj;
        if (j >= cols || w >= m.nnz) throw new InvalidMatrixError('bcsrToCsr', badPresent(m, i, j));
        colIdx[w] = j;
        values[w++] = bv[base + lj];
      }
    }
    rowPtr[i + 1] = w;
  }
  if (w !== m.nnz) throw new InvalidMatrixError('bcsrToCsr', `BCSR nnz = ${m.nnz} but the presence mask marks ${w} entries inside the matrix`);
  // blocks ascend by block column and slots by column: sorted, unique, in range
  return csr(rows, cols, rowPtr, colIdx, values, { unchecked: true });
}

/** Message for a presence bit that cannot stand for a stored entry. */
function badPresent(m: BcsrMatrix, i: number, j: number): string {
  return j >= m.cols
    ? `BCSR presence mask marks (${i}, ${j}), past the last column ${m.cols - 1}: edge padding cannot hold an entry`
    : `BCSR presence mask marks more than nnz = ${m.nnz} entries (at (${i}, ${j}))`;
}

/**
 * y = A·x in float64 block by block (slots past the matrix edge skipped; fill slots hold +0).
 * Cost: O(nnzb·r·c).
 * @example
 * bcsrSpmv(bcsrFromCsr(a, { blockSize: 2 }), x); // equals csrSpmv(a, x) up to rounding
 */
export function bcsrSpmv(m: BcsrMatrix, x: Float64Array, y?: Float64Array): Float64Array {
  validateBcsr(m, 'bcsrSpmv');
  const { rows, cols, blockRows: r, blockCols: c, rowPtr, colIdx, values } = m;
  const out = checkSpmvArgs('bcsrSpmv', rows, cols, x, y);
  const bs = r * c;
  for (let b = 0; b < m.numBlockRows; b++) {
    const i0 = b * r;
    const ih = Math.min(r, rows - i0);
    for (let blk = rowPtr[b]; blk < rowPtr[b + 1]; blk++) {
      const j0 = colIdx[blk] * c;
      const jw = Math.min(c, cols - j0);
      for (let li = 0; li < ih; li++) {
        const base = blk * bs + li * c;
        let s = 0;
        // y_{i0+li} += Σ_lj B[li, lj]·x_{j0+lj}
        for (let lj = 0; lj < jw; lj++) s += values[base + lj] * x[j0 + lj];
        out[i0 + li] += s;
      }
    }
  }
  return out;
}

/**
 * BCSR storage: nnzb·r·c values, nnzb block columns, ⌈rows/r⌉ + 1 block-row pointers (mask not
 * counted). β = nnz / (nnzb·r·c). O(1).
 * @example
 * bcsrStorageBytes(b, { valueBytes: 4 }).beta; // fraction of block slots that are non-zeros
 */
export function bcsrStorageBytes(m: BcsrMatrix, opts: StorageOptions = {}): StorageInfo {
  const vb = opts.valueBytes ?? 8;
  const ib = opts.indexBytes ?? 4;
  const stored = m.numBlocks * m.blockRows * m.blockCols;
  return makeStorageInfo(m.nnz, stored, { values: stored * vb, colIdx: m.numBlocks * ib, rowPtr: (m.numBlockRows + 1) * ib });
}
