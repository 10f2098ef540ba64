/**
 * A sum over aligned groups of `lanes` consecutive invocations that uses the widest hardware
 * reduction the device offers for that group size: `subgroupAdd` when the group is exactly one
 * subgroup, an xor butterfly of shuffles inside a subgroup, `subgroupAdd` per subgroup plus a
 * short serial sum in workgroup memory when a group spans several subgroups, and a tree in
 * workgroup memory without usable subgroups. The subgroup size is read from the device's
 * capabilities (8 on lavapipe, 32 on NVIDIA), never assumed.
 * @module
 */
import type { GpuCaps } from '../../device/context';
import { blockScanUsesSubgroups } from './scan';
import { segmentedSum } from './index';

/** Which reduction {@link groupSum} emits for `lanes` on a device with `caps`. */
export type GroupSumMode = 'none' | 'subgroup-add' | 'shuffle' | 'subgroups+wgmem' | 'wgmem';

/**
 * The reduction {@link groupSum} uses for groups of `lanes` invocations (a power of two) on a
 * device with `caps`. Pure, O(1).
 * @example groupSumMode(32, caps) // 'subgroup-add' on NVIDIA, 'subgroups+wgmem' on lavapipe
 */
export function groupSumMode(lanes: number, caps: GpuCaps): GroupSumMode {
  if (lanes === 1) return 'none';
  if (!blockScanUsesSubgroups(caps)) return 'wgmem';
  const sg = caps.subgroupSize;
  if (lanes === sg) return 'subgroup-add';
  if (lanes < sg && sg % lanes === 0) return 'shuffle';
  if (lanes > sg && lanes % sg === 0) return 'subgroups+wgmem';
  return 'wgmem';
}

/** Whether the text of {@link groupSum} for this mode needs `enable subgroups;`. */
export const groupSumNeedsSubgroups = (m: GroupSumMode): boolean => m === 'subgroup-add' || m === 'shuffle' || m === 'subgroups+wgmem';

/**
 * WGSL `fn <name>_group(lid: u32, v: f32) -> f32`: the sum of `v` over the aligned group of
 * `lanes` consecutive invocations (local_invocation_index order) containing `lid`. The result
 * is valid in the group's first invocation (lid % lanes == 0); other lanes may get partial
 * sums. `workgroupSize` must be a multiple of `lanes`, both powers of two. Call in uniform
 * control flow (subgroup operations and barriers). Each mode sums in a fixed order per
 * device, so results are reproducible on one device.
 * @example `${groupSum('red', 32, 256, ctx.caps)}` then `let t = red_group(lid, s);`
 */
export function groupSum(name: string, lanes: number, workgroupSize: number, caps: GpuCaps): string {
  const mode = groupSumMode(lanes, caps);
  switch (mode) {
    case 'none':
      return `fn ${name}_group(lid: u32, v: f32) -> f32 { return v; }`;
    case 'subgroup-add':
      return `fn ${name}_group(lid: u32, v: f32) -> f32 { return subgroupAdd(v); }`;
    case 'shuffle':
      return segmentedSum(name, lanes, workgroupSize, true).replace(`fn ${name}_seg(`, `fn ${name}_group(`);
    case 'subgroups+wgmem': {
      const per = lanes / caps.subgroupSize;
      return `var<workgroup> ${name}_part: array<f32, ${workgroupSize / caps.subgroupSize}>;
fn ${name}_group(lid: u32, v: f32) -> f32 {
  // one partial per subgroup, then the group's first invocation adds its ${per} partials in order
  let s = subgroupAdd(v);
  if (lid % ${caps.subgroupSize}u == 0u) { ${name}_part[lid / ${caps.subgroupSize}u] = s; }
  workgroupBarrier();
  var t = 0.0;
  if (lid % ${lanes}u == 0u) {
    let first = lid / ${caps.subgroupSize}u;
    for (var i = 0u; i < ${per}u; i++) { t = t + ${name}_part[first + i]; }
  }
  workgroupBarrier();
  return t;
}`;
    }
    default:
      return segmentedSum(name, lanes, workgroupSize, false).replace(`fn ${name}_seg(`, `fn ${name}_group(`);
  }
}
