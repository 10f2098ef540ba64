/**
 * The one home of WGSL boilerplate shared by kernels: binding preamble, the 2-D dispatch
 * index, and sum reductions in workgroup memory or subgroups. Kernels import these strings;
 * nothing here is copied into kernel files.
 * @module
 */

/** One storage binding of a kernel (bindings are numbered 1…k in the order given). */
export interface WgslBinding {
  readonly name: string;
  /** WGSL store type, e.g. 'array<f32>'. */
  readonly type: string;
  /** 'r' read-only storage, 'w' read-write storage. */
  readonly access: 'r' | 'w';
}

/** The binding signature string used by the pipeline cache ('r'/'w' per binding). */
export function signature(bindings: readonly WgslBinding[]): string {
  return bindings.map((b) => b.access).join('');
}

/** One field of a kernel's uniform struct `U`: its name and 4-byte scalar type. */
export type UniformField = readonly [string, 'u32' | 'i32' | 'f32'];

/**
 * The preamble of a kernel: optional `enable subgroups;`, the uniform struct `U` at binding 0
 * (fields are 4-byte scalars, read as `u.name`), and the storage bindings 1…k.
 * @example preamble([['n', 'u32'], ['alpha', 'f32']], [{ name: 'x', type: 'array<f32>', access: 'r' }])
 */
export function preamble(
  uniforms: readonly UniformField[],
  bindings: readonly WgslBinding[],
  opts: { subgroups?: boolean } = {},
): string {
  const lines: string[] = [];
  if (opts.subgroups) lines.push('enable subgroups;', 'diagnostic(off, subgroup_uniformity);');
  const fields = uniforms.length > 0 ? uniforms : [['_pad', 'u32'] as const];
  lines.push(`struct U {\n${fields.map(([n, t]) => `  ${n}: ${t},`).join('\n')}\n}`);
  lines.push('@group(0) @binding(0) var<uniform> u: U;');
  bindings.forEach((b, i) => {
    const space = b.access === 'w' ? 'storage, read_write' : 'storage, read';
    lines.push(`@group(0) @binding(${i + 1}) var<${space}> ${b.name}: ${b.type};`);
  });
  lines.push(WG_LINEAR);
  return lines.join('\n');
}

/**
 * `wg_linear(wid, nwg)`: the linear workgroup id of a dispatch folded to 2-D by `fold2d`.
 * Kernels must ignore ids past their real workgroup count.
 */
export const WG_LINEAR = `fn wg_linear(wid: vec3<u32>, nwg: vec3<u32>) -> u32 { return wid.x + wid.y * nwg.x; }`;

/** Entry-point builtins every kernel receives (`lid`, `wid`, `nwg`, plus subgroup ids when asked). */
export function entryArgs(opts: { subgroups?: boolean } = {}): string {
  const a = [
    '@builtin(local_invocation_index) lid: u32',
    '@builtin(workgroup_id) wid: vec3<u32>',
    '@builtin(num_workgroups) nwg: vec3<u32>',
  ];
  if (opts.subgroups) a.push('@builtin(subgroup_invocation_id) sg_lane: u32', '@builtin(subgroup_size) sg_size: u32');
  return a.join(', ');
}

/**
 * Workgroup tree sum: declares `var<workgroup> <name>: array<f32, size>` and
 * `fn <name>_sum(lid, v) -> f32` returning the sum of `v` over the workgroup in every
 * invocation. Pairwise (tree) order, deterministic, any subgroup size; must be called in
 * uniform control flow. `size` must be a power of two.
 */
export function workgroupSum(name: string, size: number): string {
  return `var<workgroup> ${name}: array<f32, ${size}>;
fn ${name}_sum(lid: u32, v: f32) -> f32 {
  ${name}[lid] = v;
  workgroupBarrier();
  for (var off = ${size / 2}u; off > 0u; off = off >> 1u) {
    if (lid < off) { ${name}[lid] = ${name}[lid] + ${name}[lid + off]; }
    workgroupBarrier();
  }
  let r = ${name}[0];
  workgroupBarrier();
  return r;
}`;
}

/**
 * Segmented sum over aligned groups of `lanes` consecutive invocations
 * (`fn <name>_seg(lid, v) -> f32`, result valid in every lane of the group).
 * With `subgroup` true it is an xor butterfly of `subgroupShuffleXor` (valid only when `lanes`
 * divides the subgroup size and subgroups are contiguous in local_invocation_index — the
 * context probes this); otherwise a tree in workgroup memory (`size` = workgroup size).
 * Both orders are fixed, so results are deterministic. Call in uniform control flow.
 */
export function segmentedSum(name: string, lanes: number, size: number, subgroup: boolean): string {
  if (lanes === 1) return `fn ${name}_seg(lid: u32, v: f32) -> f32 { return v; }`;
  if (subgroup) {
    return `fn ${name}_seg(lid: u32, v: f32) -> f32 {
  var s = v;
  for (var off = ${lanes / 2}u; off > 0u; off = off >> 1u) { s = s + subgroupShuffleXor(s, off); }
  return s;
}`;
  }
  return `var<workgroup> ${name}: array<f32, ${size}>;
fn ${name}_seg(lid: u32, v: f32) -> f32 {
  ${name}[lid] = v;
  workgroupBarrier();
  for (var off = ${lanes / 2}u; off > 0u; off = off >> 1u) {
    if ((lid % ${lanes}u) < off) { ${name}[lid] = ${name}[lid] + ${name}[lid + off]; }
    workgroupBarrier();
  }
  let r = ${name}[lid - (lid % ${lanes}u)];
  workgroupBarrier();
  return r;
}`;
}

/**
 * Scalar operand of a fused kernel: value = k · (num ≥ 0 ? s[num] : 1) / (den ≥ 0 ? s[den] : 1),
 * read from the device scalar buffer `s` (three uniform words per operand: num, den, k).
 */
export const SCALAR_OPERAND = `fn operand(num: i32, den: i32, k: f32) -> f32 {
  var v = k;
  if (num >= 0) { v = v * sc[num]; }
  if (den >= 0) { v = v / sc[den]; }
  return v;
}`;

/**
 * Uniform fields of every SpMV kernel, in this order (kernels may append their own):
 * rows of this block, first global row, `cont` (block's first row continues a row split over
 * blocks: accumulate into y), alpha, beta, and a kernel-defined count.
 */
export const SPMV_UNIFORMS = [
  ['rows', 'u32'],
  ['row_base', 'u32'],
  ['cont', 'u32'],
  ['alpha', 'f32'],
  ['beta', 'f32'],
  ['count', 'u32'],
] as const;

/**
 * `store_y(local, s)`: y[row_base + local] = alpha·s + beta·y (beta = 0 ignores y, even NaN;
 * beta = 1 for the continued first row of a split block). Needs a binding named `y`.
 * Each row is stored by exactly one invocation per dispatch: no atomics.
 */
export const SPMV_STORE = `fn store_y(local: u32, s: f32) {
  let row = u.row_base + local;
  var b = u.beta;
  if (local == 0u && u.cont != 0u) { b = 1.0; }
  if (b == 0.0) { y[row] = u.alpha * s; } else { y[row] = u.alpha * s + b * y[row]; }
}`;
