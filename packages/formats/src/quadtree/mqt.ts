/**
 * Minimal quadtree (MQT), survey §2.2.4 and Šimeček, Langr & Tvrdík: the quadtree is taken down to
 * single elements and only its structure is kept, as a bit stream of 4 bits per non-empty internal
 * node (bit q set when quadrant q is non-empty), no pointers. The survey's MQT stores structure only
 * (values implicit, e.g. unweighted graphs); to be a matrix format with a product here, the values
 * follow as one array in leaf order. Choice where the survey is silent: nodes are written breadth
 * first (level by level), so the values are in Z-Morton order of their positions.
 *
 * Storage: ⌈4·numNodes / 32⌉ words of structure + nnz values; the survey's bound (eq. 2.29) on the
 * structure of an n×n matrix with N non-zeros is 4N(1/3 + log₄(n²/N)) bits
 * ({@link mqtMaxStructureBits}). β = 1.
 * @module
 */
import type { CsrMatrix, SparseMatrix, StorageInfo, StorageOptions } from '../core/types';
import { makeStorageInfo } from '../core/types';
import { csrFromTriplets, validateCsr } from '../csr/csr';
import { checkSpmvArgs } from '../dia/common';
import { quadBuild, quadDecode } from './tree';

/** A matrix in minimal quadtree form. */
export interface MqtMatrix extends SparseMatrix {
  readonly format: 'mqt';
  /** side = 2^depth ≥ max(rows, cols). */
  readonly depth: number;
  readonly side: number;
  /** Non-empty internal nodes (4 bits each). */
  readonly numNodes: number;
  /** The structure bit stream: node t at bits 4t … 4t + 3, 8 nodes per word, LSB first. */
  readonly bits: Uint32Array;
  /** The non-zeros in leaf (Z-Morton) order. */
  readonly values: Float64Array;
}

/** MQT has no parameters. */
export type MqtParams = Record<string, never>;

/**
 * Convert canonical CSR to MQT. Cost: O(nnz·depth).
 * @example
 * const q = mqtFromCsr(a); // q.numNodes·4 structure bits
 */
export function mqtFromCsr(a: CsrMatrix, _params: Partial<MqtParams> = {}): MqtMatrix {
  validateCsr(a, 'mqtFromCsr');
  const t = quadBuild(a, 1);
  const values = new Float64Array(t.perm.length);
  for (let p = 0; p < values.length; p++) values[p] = a.values[t.perm[p]];
  return { format: 'mqt', rows: a.rows, cols: a.cols, nnz: values.length, depth: t.depth, side: t.side, numNodes: t.numNodes, bits: t.masks, values };
}

/**
 * Positions of the non-zeros, decoded from the bit stream (leaf order). Throws InvalidMatrixError for
 * an inconsistent stream. Cost: O(numNodes).
 * @example
 * const { leafRow, leafCol } = mqtDecode(q); // row and column of q.values[p]
 */
export function mqtDecode(m: MqtMatrix): { leafRow: Int32Array; leafCol: Int32Array } {
  return quadDecode(m.bits, m.numNodes, m.depth, m.side, m.nnz);
}

/**
 * Convert MQT back to canonical CSR (bit-exact). Cost: O(numNodes + nnz + rows + cols).
 * @example
 * csrEquals(mqtToCsr(mqtFromCsr(a)), a); // true
 */
export function mqtToCsr(m: MqtMatrix): CsrMatrix {
  const { leafRow, leafCol } = mqtDecode(m);
  return csrFromTriplets(m.rows, m.cols, leafRow, leafCol, m.values);
}

/**
 * y = A·x in float64 while walking the bit stream. Cost: O(numNodes + nnz).
 * @example
 * mqtSpmv(mqtFromCsr(a), x); // equals csrSpmv(a, x) up to rounding
 */
export function mqtSpmv(m: MqtMatrix, x: Float64Array, y?: Float64Array): Float64Array {
  const out = checkSpmvArgs('mqtSpmv', m.rows, m.cols, x, y);
  const { leafRow, leafCol } = mqtDecode(m);
  // y_r += v_p·x_c over the decoded leaves
  for (let p = 0; p < m.nnz; p++) out[leafRow[p]] += m.values[p] * x[leafCol[p]];
  return out;
}

/**
 * Bits of structure actually used: 4 per non-empty internal node. O(1).
 * @example
 * mqtStructureBits(mqtFromCsr(a)) <= mqtMaxStructureBits(64, nnz); // true for 64×64
 */
export function mqtStructureBits(m: MqtMatrix): number {
  return 4 * m.numNodes;
}

/**
 * The survey's bound (eq. 2.29) on MQT structure bits for an n×n matrix (n a power of two) with N
 * non-zeros: 4N(1/3 + log₄(n²/N)). O(1).
 * @example
 * mqtMaxStructureBits(64, 64); // 4·64·(1/3 + 3)
 */
export function mqtMaxStructureBits(n: number, nnz: number): number {
  if (nnz === 0) return 0;
  return 4 * nnz * (1 / 3 + Math.log((n * n) / nnz) / Math.log(4));
}

/**
 * MQT storage: structure words plus values. β = 1. O(1).
 * @example
 * mqtStorageBytes(mqtFromCsr(a)).arrays.bits;
 */
export function mqtStorageBytes(m: MqtMatrix, opts: StorageOptions = {}): StorageInfo {
  const vb = opts.valueBytes ?? 8;
  return makeStorageInfo(m.nnz, m.nnz, { values: m.nnz * vb, bits: m.bits.byteLength });
}
