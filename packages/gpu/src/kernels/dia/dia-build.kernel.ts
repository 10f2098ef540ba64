/**
 * WGSL of the DIA conversion on the device (`dia-build.ts`), reading the CSR arrays already on
 * the device (one binding block per dispatch). Diagonal offset k = j − i is stored at slot
 * o = k + all_rows − 1 of a window of rows + cols − 1 words, never negative:
 *
 * - `mark`: one invocation per row sets flag[o] = 1 for each of its entries (a plain load
 *   first: a banded matrix writes each flag a few times, not once per entry);
 * - `compact`: one invocation per window slot appends each set flag's offset to a list
 *   (atomicAdd on a counter; past `cap` only the count grows, so the host learns how many there
 *   are and refuses before allocating anything). The list is unordered; the host sorts it
 *   (O(ndiag log ndiag));
 * - `index`: one invocation per diagonal d of the sorted offsets writes map[o] = d, into the same
 *   window buffer (every slot an entry looks up is an occupied offset, so the flags left in the
 *   other slots are never read);
 * - `scatter`: one invocation per row of a piece writes each entry's float32 value to
 *   vals[bases[d − d0] + i − r0] when its diagonal d lies in the piece's range [d0, d1): the slot
 *   the host layout (`diagonalPlan`) gives that entry. Canonical CSR has one entry per slot, so
 *   no two invocations write one slot; fill slots keep the zeros the buffer was cleared to.
 *
 * Integer atomics only, on u32 flags and one counter: the results do not depend on the order
 * of execution (the list is sorted on the host).
 * @module
 */
import { entryArgs, preamble, type WgslBinding } from '../wgsl/index';

/** Invocations per workgroup of the build kernels. */
export const DIA_BUILD_WG = 256;

/** Uniforms of every build kernel (unused fields 0). */
export const DIA_BUILD_UNIFORMS = [
  ['rows', 'u32'], // rows of this dispatch (block rows, window slots or diagonals)
  ['row_start', 'u32'], // global row of the CSR block's first row
  ['all_rows', 'u32'], // rows of the matrix (the window shift)
  ['first', 'u32'], // first block-local row of this dispatch
  ['cap', 'u32'], // compact: list capacity
  ['r0', 'u32'], // scatter: the piece's first global row
  ['d0', 'u32'], // scatter: the piece's diagonal range [d0, d1)
  ['d1', 'u32'],
] as const;

const ROW_PTR: WgslBinding = { name: 'row_ptr', type: 'array<u32>', access: 'r' };
const COL_IDX: WgslBinding = { name: 'col_idx', type: 'array<u32>', access: 'r' };

/** Bindings of `mark`: row_ptr, col_idx, flags. */
export const MARK_BINDINGS: readonly WgslBinding[] = [ROW_PTR, COL_IDX, { name: 'flags', type: 'array<atomic<u32>>', access: 'w' }];
/** Bindings of `compact`: flags, list ([0] count, then up to cap offsets). */
export const COMPACT_BINDINGS: readonly WgslBinding[] = [
  { name: 'flags', type: 'array<u32>', access: 'r' },
  { name: 'list', type: 'array<atomic<i32>>', access: 'w' },
];
/** Bindings of `index`: sorted offsets, map. */
export const INDEX_BINDINGS: readonly WgslBinding[] = [
  { name: 'offsets', type: 'array<i32>', access: 'r' },
  { name: 'map', type: 'array<u32>', access: 'w' },
];
/** Bindings of `scatter`: row_ptr, col_idx, values, map, bases, vals. */
export const SCATTER_BINDINGS: readonly WgslBinding[] = [
  ROW_PTR,
  COL_IDX,
  { name: 'values', type: 'array<f32>', access: 'r' },
  { name: 'map', type: 'array<u32>', access: 'r' },
  { name: 'bases', type: 'array<i32>', access: 'r' },
  { name: 'vals', type: 'array<f32>', access: 'w' },
];

/** Index of this invocation in the dispatch (past `u.rows`: return). */
const INDEX = `let t = wg_linear(wid, nwg) * ${DIA_BUILD_WG}u + lid;
  if (t >= u.rows) { return; }`;

/** Block-local row r of this invocation and the window slot shift of its global row (o = col + shift). */
const ROW = `${INDEX}
  let r = u.first + t;
  let shift = u.all_rows - 1u - (u.row_start + r);`;

/** flag[o] = 1 for every entry of the row. */
export function markWgsl(): string {
  return `${preamble(DIA_BUILD_UNIFORMS, MARK_BINDINGS)}
@compute @workgroup_size(${DIA_BUILD_WG})
fn main(${entryArgs()}) {
  ${ROW}
  for (var k = row_ptr[r]; k < row_ptr[r + 1u]; k++) {
    let o = col_idx[k] + shift;
    if (atomicLoad(&flags[o]) == 0u) { atomicStore(&flags[o], 1u); }
  }
}`;
}

/** Append the offset of every set flag to the list (count in list[0]). */
export function compactWgsl(): string {
  return `${preamble(DIA_BUILD_UNIFORMS, COMPACT_BINDINGS)}
@compute @workgroup_size(${DIA_BUILD_WG})
fn main(${entryArgs()}) {
  ${INDEX}
  if (flags[t] == 0u) { return; }
  let at = u32(atomicAdd(&list[0], 1));
  if (at < u.cap) { atomicStore(&list[1u + at], i32(t) - i32(u.all_rows - 1u)); }
}`;
}

/** map[offsets[d] + all_rows − 1] = d. */
export function indexWgsl(): string {
  return `${preamble(DIA_BUILD_UNIFORMS, INDEX_BINDINGS)}
@compute @workgroup_size(${DIA_BUILD_WG})
fn main(${entryArgs()}) {
  ${INDEX}
  map[u32(offsets[t] + i32(u.all_rows - 1u))] = t;
}`;
}

/** Each entry of the row whose diagonal is in [d0, d1) to its slot of the piece's values. */
export function scatterWgsl(): string {
  return `${preamble(DIA_BUILD_UNIFORMS, SCATTER_BINDINGS)}
@compute @workgroup_size(${DIA_BUILD_WG})
fn main(${entryArgs()}) {
  ${ROW}
  let local = i32(u.row_start + r - u.r0);
  for (var k = row_ptr[r]; k < row_ptr[r + 1u]; k++) {
    let d = map[col_idx[k] + shift];
    if (d >= u.d0 && d < u.d1) { vals[u32(bases[d - u.d0] + local)] = values[k]; }
  }
}`;
}
