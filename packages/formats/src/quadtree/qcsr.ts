/**
 * Quad-tree CSR (QCSR), survey §2.2.3 and Zhang et al. 2013: the matrix is split recursively into
 * quadrants until a node is leafSize × leafSize (the survey's "density size"); empty nodes are
 * dropped, and every non-empty leaf — mixed (zeros and non-zeros) or full — is stored as its own small
 * CSR. The tree is kept as the breadth-first 4-bit child masks of the non-empty internal nodes
 * (see tree.ts); the leaves follow in breadth-first (Z-Morton) order.
 *
 * Layout, per leaf l (what a workgroup-per-leaf kernel reads): top-left corner leafRow[l], leafCol[l];
 * local row pointer leafRowPtr[l·(d+1) … l·(d+1) + d] holding absolute offsets into colIdx/values;
 * colIdx local to the leaf (0 … d − 1). Full and mixed leaves share the CSR layout, as in the survey.
 *
 * Storage (survey eq. 2.27, Na × CSR_storage, plus the tree and the leaf corners):
 * nnz·(sizeof(value) + sizeof(index)) + Na·(d + 1 + 2)·sizeof(index) + 4 bits per internal node
 * (rounded up to 32-bit words); β = 1.
 * @module
 */
import type { CsrMatrix, SparseMatrix, StorageInfo, StorageOptions } from '../core/types';
import { makeStorageInfo } from '../core/types';
import { csrFromTriplets, validateCsr } from '../csr/csr';
import { checkSlots, checkSpmvArgs, requireInt } from '../dia/common';
import { quadBuild, quadDecode } from './tree';

/** A matrix in quad-tree CSR. */
export interface QcsrMatrix extends SparseMatrix {
  readonly format: 'qcsr';
  /** Leaf edge d. */
  readonly leafSize: number;
  /** Tree depth: leaves are at level depth, side = d·2^depth. */
  readonly depth: number;
  readonly side: number;
  /** Non-empty internal nodes; their 4-bit child masks, breadth first, in `tree`. */
  readonly numNodes: number;
  readonly tree: Uint32Array;
  /** Non-empty leaves Na. */
  readonly numLeaves: number;
  readonly leafRow: Int32Array;
  readonly leafCol: Int32Array;
  /** Local row pointers, d + 1 per leaf, absolute offsets into colIdx/values. */
  readonly leafRowPtr: Int32Array;
  /** Column inside the leaf. */
  readonly colIdx: Int32Array;
  readonly values: Float64Array;
}

/** QCSR parameters. */
export interface QcsrParams {
  /** Leaf edge d ("density size"), in [1, 65536]. Default 32. */
  readonly leafSize: number;
}

/** Default QCSR parameters. */
export const qcsrDefaultParams: QcsrParams = { leafSize: 32 };

/**
 * Convert canonical CSR to QCSR. Cost: O(nnz·depth + Na·d).
 * @example
 * const q = qcsrFromCsr(a, { leafSize: 16 });
 */
export function qcsrFromCsr(a: CsrMatrix, params: Partial<QcsrParams> = {}): QcsrMatrix {
  validateCsr(a, 'qcsrFromCsr');
  const d = requireInt('leafSize', params.leafSize ?? qcsrDefaultParams.leafSize, 1, 65536);
  const t = quadBuild(a, d);
  const na = t.leafRow.length;
  const nnz = t.perm.length;
  const colIdx = new Int32Array(nnz);
  const values = new Float64Array(nnz);
  checkSlots('qcsrFromCsr', na * (d + 1), `${na} leaves with ${d + 1} row pointers each: use a smaller leafSize`);
  const leafRowPtr = new Int32Array(na * (d + 1));
  const rowOfLeafEntry = new Int32Array(nnz);
  for (let i = 0; i < a.rows; i++) rowOfLeafEntry.fill(i, a.rowPtr[i], a.rowPtr[i + 1]);
  for (let l = 0; l < na; l++) {
    const base = l * (d + 1);
    const s = t.leafStart[l];
    const e = t.leafStart[l + 1];
    // count entries per local row, then prefix into absolute offsets
    for (let p = s; p < e; p++) leafRowPtr[base + rowOfLeafEntry[t.perm[p]] - t.leafRow[l] + 1]++;
    leafRowPtr[base] = s;
    for (let r = 0; r < d; r++) leafRowPtr[base + r + 1] += leafRowPtr[base + r];
    for (let p = s; p < e; p++) {
      colIdx[p] = a.colIdx[t.perm[p]] - t.leafCol[l];
      values[p] = a.values[t.perm[p]];
    }
  }
  return {
    format: 'qcsr',
    rows: a.rows,
    cols: a.cols,
    nnz,
    leafSize: d,
    depth: t.depth,
    side: t.side,
    numNodes: t.numNodes,
    tree: t.masks,
    numLeaves: na,
    leafRow: t.leafRow,
    leafCol: t.leafCol,
    leafRowPtr,
    colIdx,
    values,
  };
}

/**
 * Decode the tree bit stream into leaf corners (a check of `tree` against leafRow/leafCol).
 * Cost: O(numNodes).
 * @example
 * const { leafRow } = qcsrDecodeTree(q); // equals q.leafRow
 */
export function qcsrDecodeTree(m: QcsrMatrix): { leafRow: Int32Array; leafCol: Int32Array } {
  return quadDecode(m.tree, m.numNodes, m.depth, m.side, m.numLeaves);
}

/**
 * 'full' when leaf l holds d·d non-zeros (every slot, or every slot inside the matrix), else 'mixed'. O(1).
 * @example
 * qcsrLeafKind(q, 0); // 'mixed'
 */
export function qcsrLeafKind(m: QcsrMatrix, l: number): 'full' | 'mixed' {
  const d = m.leafSize;
  const h = Math.min(d, m.rows - m.leafRow[l]);
  const w = Math.min(d, m.cols - m.leafCol[l]);
  const count = m.leafRowPtr[l * (d + 1) + d] - m.leafRowPtr[l * (d + 1)];
  return count === h * w ? 'full' : 'mixed';
}

/**
 * Convert QCSR back to canonical CSR (bit-exact). Cost: O(nnz + rows + cols + Na·d).
 * @example
 * csrEquals(qcsrToCsr(qcsrFromCsr(a)), a); // true
 */
export function qcsrToCsr(m: QcsrMatrix): CsrMatrix {
  const d = m.leafSize;
  const ri = new Int32Array(m.nnz);
  const ci = new Int32Array(m.nnz);
  for (let l = 0; l < m.numLeaves; l++) {
    for (let r = 0; r < d; r++) {
      for (let p = m.leafRowPtr[l * (d + 1) + r]; p < m.leafRowPtr[l * (d + 1) + r + 1]; p++) {
        ri[p] = m.leafRow[l] + r;
        ci[p] = m.leafCol[l] + m.colIdx[p];
      }
    }
  }
  return csrFromTriplets(m.rows, m.cols, ri, ci, m.values);
}

/**
 * y = A·x in float64 leaf by leaf, each leaf a small CSR product. Cost: O(nnz + Na·d).
 * @example
 * qcsrSpmv(qcsrFromCsr(a), x); // equals csrSpmv(a, x) up to rounding
 */
export function qcsrSpmv(m: QcsrMatrix, x: Float64Array, y?: Float64Array): Float64Array {
  const out = checkSpmvArgs('qcsrSpmv', m.rows, m.cols, x, y);
  const d = m.leafSize;
  const { leafRowPtr, colIdx, values } = m;
  for (let l = 0; l < m.numLeaves; l++) {
    const r0 = m.leafRow[l];
    const c0 = m.leafCol[l];
    for (let r = 0; r < d; r++) {
      const s = leafRowPtr[l * (d + 1) + r];
      const e = leafRowPtr[l * (d + 1) + r + 1];
      if (s === e) continue;
      let acc = 0;
      // y_{r0+r} += Σ v_p·x_{c0+col_p}
      for (let p = s; p < e; p++) acc += values[p] * x[c0 + colIdx[p]];
      out[r0 + r] += acc;
    }
  }
  return out;
}

/**
 * QCSR storage: leaf CSRs (values, local columns, d + 1 row pointers each), leaf corners, tree words.
 * β = 1. O(1).
 * @example
 * qcsrStorageBytes(qcsrFromCsr(a, { leafSize: 4 })).arrays.leafRowPtr;
 */
export function qcsrStorageBytes(m: QcsrMatrix, opts: StorageOptions = {}): StorageInfo {
  const vb = opts.valueBytes ?? 8;
  const ib = opts.indexBytes ?? 4;
  return makeStorageInfo(m.nnz, m.nnz, {
    values: m.nnz * vb,
    colIdx: m.nnz * ib,
    leafRowPtr: m.numLeaves * (m.leafSize + 1) * ib,
    leafCorners: 2 * m.numLeaves * ib,
    tree: m.tree.byteLength,
  });
}
