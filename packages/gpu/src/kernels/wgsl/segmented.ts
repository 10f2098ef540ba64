/**
 * WGSL segmented scan over one workgroup, for kernels that reduce runs of equal keys (COO's
 * row-sorted triplets, run-owned outputs). Kernels import these strings; nothing here is
 * copied into kernel files.
 * @module
 */

/**
 * Inclusive segmented sum over the `wg` invocations of a workgroup in local_invocation_index
 * order, segments being runs of equal u32 keys (equal keys must be consecutive, e.g. sorted).
 * Declares `var<workgroup> <name>_k: array<u32, wg>`, `<name>_v` and
 * `fn <name>_scan(lid: u32, k: u32, v: f32) -> f32`: the sum of v over the invocations up to
 * `lid` that share its key. After the call `<name>_k` holds every invocation's key, so
 * `fn <name>_ends(lid: u32, n: u32) -> bool` tells the last invocation of a run among the first n.
 * Hillis–Steele steps (log2 wg), a fixed pairwise order: deterministic; the summation depth of a
 * run of length L is ⌈log2 L⌉. Call in uniform control flow. `wg` must be a power of two.
 * @example `${segmentedScan('seg', 256)}` then `let s = seg_scan(lid, row, prod);`
 */
export function segmentedScan(name: string, wg: number): string {
  if (!(wg >= 1 && (wg & (wg - 1)) === 0)) throw new RangeError(`segmentedScan: expected a power-of-two workgroup size, got ${wg}`);
  return `var<workgroup> ${name}_k: array<u32, ${wg}>;
var<workgroup> ${name}_v: array<f32, ${wg}>;
fn ${name}_scan(lid: u32, k: u32, v: f32) -> f32 {
  ${name}_k[lid] = k;
  ${name}_v[lid] = v;
  workgroupBarrier();
  var s = v;
  for (var off = 1u; off < ${wg}u; off = off << 1u) {
    if (lid >= off) {
      if (${name}_k[lid - off] == k) { s = s + ${name}_v[lid - off]; }
    }
    workgroupBarrier();
    ${name}_v[lid] = s;
    workgroupBarrier();
  }
  return s;
}
fn ${name}_ends(lid: u32, n: u32) -> bool {
  return lid < n && (lid + 1u == n || ${name}_k[lid + 1u] != ${name}_k[lid]);
}`;
}
