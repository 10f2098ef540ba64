/**
 * Exclusive segmented block scan with subgroup operations, for csr-merge's carries between the
 * invocations of a tile: the same result and segment rule as wgsl/scan.ts's
 * `segmentedBlockScan` (the Hillis–Steele one, 2·log2(wg) barriers), with two barriers instead.
 * Kept beside its one user until the H100 says whether it is worth sharing.
 * @module
 */

/**
 * Declares `fn <name>_excl(lid: u32, head: u32, v: f32) -> f32`: in each invocation, the sum of
 * the `v` of the invocations after the last one before it with `head ≠ 0` (that one included),
 * or of all before it when none has. Steps: a segmented Hillis–Steele scan of (flag, value) inside
 * each subgroup with `subgroupShuffleUp` (log2 of the subgroup size steps, no barrier); the
 * subgroups' totals in workgroup memory; each invocation adds the totals of the subgroups before
 * its own back to the nearest one holding a head, nearest first, when its own prefix holds none;
 * then shifts by one lane. Values never meet values of another segment. Needs the module-scope
 * privates `sgp_lane` and `sgp_size` set from the subgroup builtins at the entry point, subgroups
 * that are contiguous ranges of local_invocation_index with one size (scan.ts's
 * `blockScanUsesSubgroups`), and uniform control flow. Cost O(wg) workgroup memory, 2 barriers,
 * at most wg / subgroup size − 1 total reads per invocation.
 * @example subgroupSegmentedScan('sscan', 256)
 */
export function subgroupSegmentedScan(name: string, wg: number): string {
  return `var<private> sgp_lane: u32;
var<private> sgp_size: u32;
var<workgroup> ${name}_tv: array<f32, ${wg}>;
var<workgroup> ${name}_tf: array<u32, ${wg}>;
fn ${name}_excl(lid: u32, head: u32, v: f32) -> f32 {
  var s = v;
  var f = head;
  for (var off = 1u; off < sgp_size; off = off << 1u) {
    let t = subgroupShuffleUp(s, off);
    let tf = subgroupShuffleUp(f, off);
    if (sgp_lane >= off) {
      if (f == 0u) { s = t + s; }
      f = f | tf;
    }
  }
  let sg_id = lid / sgp_size;
  if (sgp_lane == sgp_size - 1u) { ${name}_tv[sg_id] = s; ${name}_tf[sg_id] = f; }
  workgroupBarrier();
  var c = 0.0;
  for (var j = sg_id; j > 0u; j--) {
    c = ${name}_tv[j - 1u] + c;
    if (${name}_tf[j - 1u] != 0u) { break; }
  }
  if (f == 0u) { s = c + s; }
  var r = subgroupShuffleUp(s, 1u);
  if (sgp_lane == 0u) { r = c; }
  workgroupBarrier();
  return r;
}`;
}
