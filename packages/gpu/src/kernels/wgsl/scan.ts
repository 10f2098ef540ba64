/**
 * Shared WGSL scans: the workgroup block scan of seed 004 §2.3.3 (Listing 9's five steps, after
 * Sengupta et al.) in a subgroup flavour and a workgroup-memory flavour, and a bit test for
 * non-finite floats that no fast-math assumption can fold away. Kernels import these strings;
 * nothing here is copied into kernel files.
 * @module
 */
import type { GpuCaps } from '../../device/context';

/**
 * Whether {@link blockScan} may use subgroup operations on a device with `caps`: the feature is
 * on, subgroups are contiguous ranges of local_invocation_index (probed) and all have one size.
 * @example blockScanUsesSubgroups(ctx.caps) // true on lavapipe (8 wide) and NVIDIA (32 wide)
 */
export function blockScanUsesSubgroups(caps: GpuCaps): boolean {
  return caps.subgroups && caps.subgroupContiguous && caps.subgroupSize > 0 && caps.subgroupMinSize === caps.subgroupMaxSize;
}

/**
 * `fn non_finite(v: f32) -> u32`: 1 when v is ±Inf or NaN, else 0, from the exponent bits.
 * WGSL lets an implementation assume no Inf/NaN in float arithmetic, so `v - v != 0.0` may be
 * folded to false; the integer test on `bitcast<u32>(v)` cannot be.
 */
export const NON_FINITE = `fn non_finite(v: f32) -> u32 {
  return select(0u, 1u, (bitcast<u32>(v) & 0x7f800000u) == 0x7f800000u);
}`;

/**
 * Exclusive block scan over one workgroup of `wg` invocations in local_invocation_index order:
 * declares `fn <name>_excl(lid: u32, sg_lane: u32, sg_size: u32, v: f32) -> f32` returning
 * Σ_{j < lid} v_j in every invocation. Call it in uniform control flow (it has barriers).
 *
 * With `subgroup` true (only where {@link blockScanUsesSubgroups} holds; pass the
 * `subgroup_invocation_id` / `subgroup_size` builtins) it follows Listing 9's steps:
 * 1. scan at subgroup level (`subgroupExclusiveAdd`), 2. collect the subgroup totals in
 * workgroup memory, 3. the first subgroup scans them, `sg_size` at a time with a carry (so any
 * subgroup size from 4 to `wg` works: 32 totals on lavapipe's 8-wide subgroups, 8 on NVIDIA's
 * 32), 4. accumulate the preceding subgroups' total, 5. return (the caller writes).
 * Otherwise (pass 0u for the subgroup arguments) a Hillis–Steele inclusive scan in workgroup
 * memory, log2(wg) barrier steps, read back shifted by one: exact shift, no subtraction.
 * Both orders are fixed, so results are deterministic for a given device. `wg` must be a power
 * of two. Cost O(wg) workgroup memory, O(log wg) (or O(sg + wg/sg²)) steps.
 * @example blockScan('bscan', 256, blockScanUsesSubgroups(caps))
 */
export function blockScan(name: string, wg: number, subgroup: boolean): string {
  if (subgroup) {
    return `var<workgroup> ${name}_tot: array<f32, ${wg}>;
fn ${name}_excl(lid: u32, sg_lane: u32, sg_size: u32, v: f32) -> f32 {
  // step 1: scan at subgroup (SIMD) level
  let e = subgroupExclusiveAdd(v);
  // step 2: collect the subgroup totals
  let sg_id = lid / sg_size;
  if (sg_lane == sg_size - 1u) { ${name}_tot[sg_id] = e + v; }
  workgroupBarrier();
  // step 3: the first subgroup scans the totals (inclusive), sg_size at a time
  let nsg = ${wg}u / sg_size;
  if (sg_id == 0u) {
    var carry = 0.0;
    for (var c = 0u; c < nsg; c += sg_size) {
      let i = c + sg_lane;
      var t = 0.0;
      if (i < nsg) { t = ${name}_tot[i]; }
      let ts = subgroupInclusiveAdd(t) + carry;
      if (i < nsg) { ${name}_tot[i] = ts; }
      carry = subgroupShuffle(ts, sg_size - 1u);
    }
  }
  workgroupBarrier();
  // step 4: accumulate the totals of the preceding subgroups
  var r = e;
  if (sg_id > 0u) { r = ${name}_tot[sg_id - 1u] + e; }
  workgroupBarrier();
  // step 5: the caller writes r
  return r;
}`;
  }
  return `var<workgroup> ${name}_buf: array<f32, ${wg}>;
fn ${name}_excl(lid: u32, sg_lane: u32, sg_size: u32, v: f32) -> f32 {
  var s = v;
  ${name}_buf[lid] = s;
  workgroupBarrier();
  for (var off = 1u; off < ${wg}u; off = off << 1u) {
    var t = 0.0;
    if (lid >= off) { t = ${name}_buf[lid - off]; }
    workgroupBarrier();
    s = s + t;
    ${name}_buf[lid] = s;
    workgroupBarrier();
  }
  var r = 0.0;
  if (lid > 0u) { r = ${name}_buf[lid - 1u]; }
  workgroupBarrier();
  return r;
}`;
}

/**
 * Exclusive segmented block scan over one workgroup of `wg` invocations (local_invocation_index
 * order): declares `fn <name>_excl(lid: u32, head: u32, v: f32) -> f32` returning, in each
 * invocation, the sum of the `v` of the invocations after the last one before it with
 * `head ≠ 0` (that one included), or of all before it when none has. Hillis–Steele on
 * (flag, value) pairs with the segmented-sum operator
 * (f₁, v₁) ⊕ (f₂, v₂) = (f₁ | f₂, f₂ ? v₂ : v₁ + v₂): a value never meets a value of another
 * segment, so a segment's rounding error grows with its own Σ|v| only (no cancellation
 * against earlier segments, unlike the difference of two prefix sums) and an Inf/NaN stays in
 * its segment. Call in uniform control flow (barriers). Cost O(wg) workgroup memory, log2(wg)
 * barrier steps. `wg` must be a power of two.
 * @example segmentedBlockScan('sscan', 256)
 */
export function segmentedBlockScan(name: string, wg: number): string {
  return `var<workgroup> ${name}_v: array<f32, ${wg}>;
var<workgroup> ${name}_f: array<u32, ${wg}>;
fn ${name}_excl(lid: u32, head: u32, v: f32) -> f32 {
  var s = v;
  var f = head;
  ${name}_v[lid] = s;
  ${name}_f[lid] = f;
  workgroupBarrier();
  for (var off = 1u; off < ${wg}u; off = off << 1u) {
    var t = 0.0;
    var tf = 0u;
    if (lid >= off) { t = ${name}_v[lid - off]; tf = ${name}_f[lid - off]; }
    workgroupBarrier();
    if (f == 0u) { s = t + s; }
    f = f | tf;
    ${name}_v[lid] = s;
    ${name}_f[lid] = f;
    workgroupBarrier();
  }
  var r = 0.0;
  if (lid > 0u) { r = ${name}_v[lid - 1u]; }
  workgroupBarrier();
  return r;
}`;
}
