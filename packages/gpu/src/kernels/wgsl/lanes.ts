/**
 * WGSL helpers for SpMV kernels that give each row (or row position) a group of `lanes`
 * consecutive invocations, and the common head of such a kernel (preamble, `store_y`, the
 * segmented reduction, the entry point). Used by the ELL-family and hybrid kernels.
 * @module
 */
import { entryArgs, preamble, SPMV_STORE, SPMV_UNIFORMS, segmentedSum, type WgslBinding } from './index';

/**
 * WGSL statements declaring `lane` (0 … lanes − 1) and `row` (the linear workgroup id times
 * workgroupSize / lanes plus the group within the workgroup). Needs `wg_linear` (from the
 * preamble) and the entry arguments of `entryArgs()`. `lanes` must divide `workgroupSize`.
 * Rows past the kernel's count must be ignored by the caller (after any reduction).
 * @example `fn main(${entryArgs()}) {\n  ${laneRow(8, 256)}\n  ...`
 */
export function laneRow(lanes: number, workgroupSize: number): string {
  if (!(lanes >= 1 && workgroupSize % lanes === 0)) throw new RangeError(`laneRow: expected lanes dividing ${workgroupSize}, got ${lanes}`);
  return `let lane = lid % ${lanes}u;
  let row = wg_linear(wid, nwg) * ${workgroupSize / lanes}u + lid / ${lanes}u;`;
}

/** Options of {@link spmvLanesHead}. */
export interface LanesHeadOptions {
  readonly workgroupSize: number;
  /** Invocations per row; 1 declares `lane` = 0 and a no-op `red_seg`. */
  readonly lanes: number;
  /** Reduce with subgroup shuffles (caller checked `useSubgroupPath`), else workgroup memory. */
  readonly subgroups: boolean;
}

/**
 * The head of a lanes-per-row SpMV kernel, up to and including the opening of `main` and the
 * `lane` / `row` declarations: preamble with {@link SPMV_UNIFORMS} and `bindings`,
 * `store_y`, `red_seg` (a segmented sum over the lane group) and the entry point. The caller
 * appends the body and the closing brace. Pure; O(length of the text).
 * @example `${spmvLanesHead(bindings, { workgroupSize: 256, lanes: 8, subgroups: false })}\n  var s = 0.0; ... }`
 */
export function spmvLanesHead(bindings: readonly WgslBinding[], o: LanesHeadOptions): string {
  const sg = o.subgroups && o.lanes > 1;
  return `${preamble(SPMV_UNIFORMS, bindings, { subgroups: sg })}
${SPMV_STORE}
${segmentedSum('red', o.lanes, o.workgroupSize, sg)}
@compute @workgroup_size(${o.workgroupSize})
fn main(${entryArgs()}) {
  ${laneRow(o.lanes, o.workgroupSize)}`;
}

/**
 * Gather of partial sums spread with stride `workgroupSize / lanes` over the workgroup (the
 * coalesced lane maps: invocation lid works for row lid % R, R = workgroupSize / lanes):
 * declares `var<workgroup> <name>` and `fn <name>_sum(lid, v, first) -> f32`, which stores v at
 * lid and returns Σ_l <name>[first + R·l], l = 0 … lanes − 1, in that fixed order. Two
 * barriers; call in uniform control flow with `first` < R.
 * @example stridedSum('ell_part', 8, 256) // row r's 8 partials at r, r + 32, …, r + 224
 */
export function stridedSum(name: string, lanes: number, workgroupSize: number): string {
  const R = workgroupSize / lanes;
  if (!Number.isInteger(R)) throw new RangeError(`stridedSum: expected lanes dividing ${workgroupSize}, got ${lanes}`);
  return `var<workgroup> ${name}: array<f32, ${workgroupSize}>;
fn ${name}_sum(lid: u32, v: f32, first: u32) -> f32 {
  ${name}[lid] = v;
  workgroupBarrier();
  var t = 0.0;
  for (var l = 0u; l < ${lanes}u; l++) { t = t + ${name}[first + ${R}u * l]; }
  workgroupBarrier();
  return t;
}`;
}

/**
 * WGSL expression summing `terms` (WGSL expressions, e.g. accumulator names) pairwise:
 * ((a0 + a1) + (a2 + a3)) …, a fixed order so results repeat on one device. Pure.
 * @example pairwiseSum(['a0', 'a1', 'a2']) // '((a0 + a1) + a2)'
 */
export function pairwiseSum(terms: readonly string[]): string {
  if (terms.length === 0) throw new RangeError('pairwiseSum: expected at least one term');
  let tree = [...terms];
  while (tree.length > 1) tree = Array.from({ length: Math.ceil(tree.length / 2) }, (_, i) => (tree[2 * i + 1] ? `(${tree[2 * i]} + ${tree[2 * i + 1]})` : tree[2 * i]!));
  return tree[0]!;
}
