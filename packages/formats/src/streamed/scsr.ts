/**
 * Streamed CSR, survey §2.3.3.1 (prefetch-stream formats for IBM POWER): rows are dealt to S
 * streams, row i to stream i mod S, so block row b holds rows b·S … b·S + S − 1, one per stream.
 * Inside block row b every stream's row is zero-padded to the longest row of the block row; `ptr[b]`
 * is where block row b starts in every stream (all streams have the same length L = ptr[Sr]).
 * A padded slot keeps the column of its row's last non-zero (so a streaming kernel reads a valid,
 * already-fetched x entry) and holds +0; a row with no non-zero (empty, or past the last row) pads
 * with column −1 (the survey's "*"), which a kernel must skip or clamp.
 *
 * Layout: stream-major as in the survey (one array per stream R, G, B, P, …, concatenated):
 * stream s occupies colIdx/values[s·L … (s+1)·L). Padding is recognisable without a mask: canonical
 * CSR columns strictly increase within a row, so a repeated column or −1 is padding.
 *
 * Storage (survey eq. 2.47): 2·(S·L) + Sr + 1 → S·L values and column indices, Sr + 1 pointers.
 * @module
 */
import type { CsrMatrix, SparseMatrix, StorageInfo, StorageOptions } from '../core/types';
import { makeStorageInfo } from '../core/types';
import { validateCsr } from '../csr/csr';
import { checkSlots, checkSpmvArgs, requireInt } from '../dia/common';

/** A matrix in streamed CSR. */
export interface ScsrMatrix extends SparseMatrix {
  readonly format: 'scsr';
  /** Number of streams S. */
  readonly numStreams: number;
  /** Number of block rows Sr = ⌈rows / S⌉. */
  readonly numBlockRows: number;
  /** Slot offset of each block row inside every stream; length Sr + 1; L = ptr[Sr]. */
  readonly ptr: Int32Array;
  /** Length L of every stream. */
  readonly streamLength: number;
  /** Column indices, stream-major (stream s at s·L); padding repeats the row's last column or is −1. */
  readonly colIdx: Int32Array;
  /** Values, stream-major; padding +0. */
  readonly values: Float64Array;
}

/** Streamed CSR parameters. */
export interface ScsrParams {
  /** Number of streams S (the survey's example uses 4). Default 4. */
  readonly numStreams: number;
}

/** Default streamed CSR parameters. */
export const scsrDefaultParams: ScsrParams = { numStreams: 4 };

/**
 * Convert canonical CSR to streamed CSR. Cost: O(S·L + rows).
 * @example
 * const s = scsrFromCsr(a, { numStreams: 4 }); // row i in stream i % 4
 */
export function scsrFromCsr(a: CsrMatrix, params: Partial<ScsrParams> = {}): ScsrMatrix {
  validateCsr(a, 'scsrFromCsr');
  const S = requireInt('numStreams', params.numStreams ?? scsrDefaultParams.numStreams, 1, 65536);
  const { rows, cols, rowPtr, colIdx: aci, values: av } = a;
  const nbr = Math.ceil(rows / S);
  const ptr = new Int32Array(nbr + 1);
  for (let b = 0; b < nbr; b++) {
    let w = 0;
    for (let i = b * S; i < Math.min(rows, (b + 1) * S); i++) w = Math.max(w, rowPtr[i + 1] - rowPtr[i]);
    ptr[b + 1] = ptr[b] + w;
  }
  const L = ptr[nbr];
  checkSlots('scsrFromCsr', S * L, 'a long row pads every stream: use fewer streams');
  const colIdx = new Int32Array(S * L).fill(-1);
  const values = new Float64Array(S * L);
  for (let b = 0; b < nbr; b++) {
    for (let s = 0; s < S; s++) {
      const i = b * S + s;
      if (i >= rows) break;
      const base = s * L + ptr[b];
      const len = rowPtr[i + 1] - rowPtr[i];
      for (let t = 0; t < len; t++) {
        colIdx[base + t] = aci[rowPtr[i] + t];
        values[base + t] = av[rowPtr[i] + t];
      }
      // padding keeps the row's last column (−1 stays for an empty row)
      if (len > 0) colIdx.fill(aci[rowPtr[i + 1] - 1], base + len, s * L + ptr[b + 1]);
    }
  }
  return { format: 'scsr', rows, cols, nnz: rowPtr[rows] ?? 0, numStreams: S, numBlockRows: nbr, ptr, streamLength: L, colIdx, values };
}

/**
 * Length of row i's real entries in a streamed CSR matrix (slots up to the first −1 or repeated column).
 * O(row width).
 * @example
 * scsrRowLength(s, 1); // 2 for the survey example (row 1 = 7, 8)
 */
export function scsrRowLength(m: ScsrMatrix, i: number): number {
  const S = m.numStreams;
  const b = Math.floor(i / S);
  const base = (i - b * S) * m.streamLength + m.ptr[b];
  const w = m.ptr[b + 1] - m.ptr[b];
  let t = 0;
  while (t < w && m.colIdx[base + t] >= 0 && (t === 0 || m.colIdx[base + t] !== m.colIdx[base + t - 1])) t++;
  return t;
}

/**
 * Convert streamed CSR back to canonical CSR (padding dropped, explicit zeros kept). Cost: O(S·L).
 * @example
 * csrEquals(scsrToCsr(scsrFromCsr(a)), a); // true
 */
export function scsrToCsr(m: ScsrMatrix): CsrMatrix {
  const { rows, cols, numStreams: S, streamLength: L } = m;
  const rowPtr = new Int32Array(rows + 1);
  for (let i = 0; i < rows; i++) rowPtr[i + 1] = rowPtr[i] + scsrRowLength(m, i);
  const colIdx = new Int32Array(rowPtr[rows]);
  const values = new Float64Array(rowPtr[rows]);
  for (let i = 0; i < rows; i++) {
    const b = Math.floor(i / S);
    const base = (i - b * S) * L + m.ptr[b];
    const len = rowPtr[i + 1] - rowPtr[i];
    colIdx.set(m.colIdx.subarray(base, base + len), rowPtr[i]);
    values.set(m.values.subarray(base, base + len), rowPtr[i]);
  }
  return { format: 'csr', rows, cols, rowPtr, colIdx, values };
}

/**
 * y = A·x in float64 stream by stream, every slot of a row's segment read as a kernel would (padding
 * is +0 times a valid x entry; −1 slots skipped). Cost: O(S·L).
 * @example
 * scsrSpmv(scsrFromCsr(a), x); // equals csrSpmv(a, x) for finite x
 */
export function scsrSpmv(m: ScsrMatrix, x: Float64Array, y?: Float64Array): Float64Array {
  const { rows, cols, numStreams: S, streamLength: L, ptr, colIdx, values } = m;
  const out = checkSpmvArgs('scsrSpmv', rows, cols, x, y);
  for (let s = 0; s < S; s++) {
    for (let b = 0; b < m.numBlockRows; b++) {
      const i = b * S + s;
      if (i >= rows) break;
      let acc = 0;
      // y_i = Σ_t v[s, t]·x[col[s, t]] over block row b's segment of stream s
      for (let t = s * L + ptr[b]; t < s * L + ptr[b + 1]; t++) {
        const j = colIdx[t];
        if (j >= 0) acc += values[t] * x[j];
      }
      out[i] = acc;
    }
  }
  return out;
}

/**
 * Streamed CSR storage (survey eq. 2.47): S·L values and column indices plus Sr + 1 pointers.
 * β = nnz / (S·L). O(1).
 * @example
 * scsrStorageBytes(scsrFromCsr(a)).bytes;
 */
export function scsrStorageBytes(m: ScsrMatrix, opts: StorageOptions = {}): StorageInfo {
  const vb = opts.valueBytes ?? 8;
  const ib = opts.indexBytes ?? 4;
  const stored = m.numStreams * m.streamLength;
  return makeStorageInfo(m.nnz, stored, { values: stored * vb, colIdx: stored * ib, ptr: (m.numBlockRows + 1) * ib });
}
