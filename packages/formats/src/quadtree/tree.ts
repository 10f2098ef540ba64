/**
 * The quadtree shared by quad-tree CSR and the minimal quadtree: the square of side
 * leafSize·2^depth ≥ max(rows, cols) is split recursively into quadrants 0 (top-left), 1 (top-right),
 * 2 (bottom-left), 3 (bottom-right) down to leafSize × leafSize leaves; empty quadrants are dropped.
 * Each non-empty internal node is written as 4 bits (bit q set when quadrant q is non-empty) in
 * breadth-first order, node t at bits 4t … 4t + 3 of a Uint32Array (8 nodes per word, LSB first).
 * Breadth-first order of a Z-ordered quadtree lists the leaves in Z-Morton order.
 * @module
 */
import { InvalidMatrixError } from '../core/errors';
import type { CsrMatrix } from '../core/types';
import { csrRowIndices } from '../dia/common';

/** A built quadtree: the node bit stream and the leaves with their entries. */
export interface QuadTree {
  readonly depth: number;
  readonly side: number;
  /** Non-empty internal nodes (4 bits each in masks). */
  readonly numNodes: number;
  readonly masks: Uint32Array;
  /** Top-left row/column of each non-empty leaf, breadth-first (Z-Morton) order. */
  readonly leafRow: Int32Array;
  readonly leafCol: Int32Array;
  /** Leaf l owns perm[leafStart[l] … leafStart[l+1]). */
  readonly leafStart: Int32Array;
  /** CSR entry indices grouped by leaf, CSR (row-major) order inside a leaf. */
  readonly perm: Int32Array;
}

/**
 * Smallest depth with leafSize·2^depth ≥ max(rows, cols). O(depth).
 * @example
 * quadDepth(100, 60, 16); // 3 (16·8 = 128 ≥ 100)
 */
export function quadDepth(rows: number, cols: number, leafSize: number): number {
  let depth = 0;
  while (leafSize * 2 ** depth < Math.max(rows, cols)) depth++;
  return depth;
}

/** The 4-bit child mask of node t. O(1). */
export function quadMask(masks: Uint32Array, t: number): number {
  return (masks[t >>> 3] >>> ((t & 7) * 4)) & 15;
}

/**
 * Build the quadtree of a CSR matrix with leaves of leafSize. Cost: O(nnz·depth) time, O(nnz) memory
 * per level.
 * @example
 * const t = quadBuild(a, 1); // minimal quadtree: one leaf per non-zero
 */
export function quadBuild(a: CsrMatrix, leafSize: number): QuadTree {
  const { rows, cols, rowPtr, colIdx } = a;
  const nnz = rowPtr[rows] ?? 0;
  const depth = quadDepth(rows, cols, leafSize);
  const side = leafSize * 2 ** depth;
  const rowOf = csrRowIndices(rowPtr, rows);
  let perm = Int32Array.from({ length: nnz }, (_, k) => k);
  let starts = nnz > 0 ? [0, nnz] : [0];
  let r0s = nnz > 0 ? [0] : [];
  let c0s = nnz > 0 ? [0] : [];
  const nibbles: number[] = [];
  let size = side;
  for (let level = 0; level < depth; level++) {
    const half = size / 2;
    const next = new Int32Array(nnz);
    const nStarts = [0];
    const nr: number[] = [];
    const nc: number[] = [];
    for (let t = 0; t < r0s.length; t++) {
      const r0 = r0s[t];
      const c0 = c0s[t];
      const quad = (k: number) => (rowOf[k] >= r0 + half ? 2 : 0) + (colIdx[k] >= c0 + half ? 1 : 0);
      const count = [0, 0, 0, 0];
      for (let p = starts[t]; p < starts[t + 1]; p++) count[quad(perm[p])]++;
      const pos = [starts[t], 0, 0, 0];
      for (let q = 1; q < 4; q++) pos[q] = pos[q - 1] + count[q - 1];
      // stable scatter keeps CSR order inside every child
      for (let p = starts[t]; p < starts[t + 1]; p++) next[pos[quad(perm[p])]++] = perm[p];
      let mask = 0;
      for (let q = 0; q < 4; q++) {
        if (count[q] === 0) continue;
        mask |= 1 << q;
        nr.push(r0 + (q >> 1) * half);
        nc.push(c0 + (q & 1) * half);
        nStarts.push(pos[q]);
      }
      nibbles.push(mask);
    }
    perm = next;
    starts = nStarts;
    r0s = nr;
    c0s = nc;
    size = half;
  }
  const masks = new Uint32Array(Math.ceil(nibbles.length / 8));
  for (let t = 0; t < nibbles.length; t++) masks[t >>> 3] |= nibbles[t] << ((t & 7) * 4);
  return { depth, side, numNodes: nibbles.length, masks, leafRow: Int32Array.from(r0s), leafCol: Int32Array.from(c0s), leafStart: Int32Array.from(starts), perm };
}

/**
 * Walk a bit stream breadth first and return the top-left corners of the `expectedLeaves` leaves.
 * Throws InvalidMatrixError when the stream and the counts disagree. Cost: O(numNodes).
 * @example
 * const { leafRow, leafCol } = quadDecode(m.masks, m.numNodes, m.depth, m.side, m.nnz);
 */
export function quadDecode(masks: Uint32Array, numNodes: number, depth: number, side: number, expectedLeaves: number): { leafRow: Int32Array; leafCol: Int32Array } {
  let rs = new Int32Array(expectedLeaves);
  let cs = new Int32Array(expectedLeaves);
  let count = expectedLeaves > 0 ? 1 : 0;
  let t = 0;
  let size = side;
  for (let level = 0; level < depth && count > 0; level++) {
    const half = size / 2;
    const nrs = new Int32Array(expectedLeaves);
    const ncs = new Int32Array(expectedLeaves);
    let w = 0;
    for (let u = 0; u < count; u++) {
      if (t >= numNodes) throw new InvalidMatrixError('quadtree bit stream', `ran out of nodes at level ${level} (stream has ${numNodes})`);
      const mask = quadMask(masks, t++);
      for (let q = 0; q < 4; q++) {
        if (!(mask & (1 << q))) continue;
        if (w >= expectedLeaves) throw new InvalidMatrixError('quadtree bit stream', `more than ${expectedLeaves} non-empty nodes at level ${level + 1}`);
        nrs[w] = rs[u] + (q >> 1) * half;
        ncs[w++] = cs[u] + (q & 1) * half;
      }
    }
    rs = nrs;
    cs = ncs;
    count = w;
    size = half;
  }
  if (count !== expectedLeaves || t !== numNodes) {
    throw new InvalidMatrixError('quadtree bit stream', `expected ${expectedLeaves} leaves from ${numNodes} nodes, decoded ${count} leaves from ${t} nodes`);
  }
  return { leafRow: rs.subarray(0, count), leafCol: cs.subarray(0, count) };
}
