/**
 * WGSL of the df64 BLAS-1 kernels. Vectors are `array<vec2<f32>>` (hi, lo interleaved: one
 * 8-byte load per element, and a gathered x[col] in the residual product costs one memory
 * transaction instead of two). Every kernel's uniform block starts with `n: u32, zero: u32`;
 * `zero` is the run-time 0 of `df_pin` (left 0 by the zeroed uniform block).
 * Reductions are two-stage and deterministic like the float32 dot (`blas1/shaders.ts`), with
 * df64 accumulation in every step.
 * @module
 */
import { preamble, type WgslBinding } from '../kernels/wgsl/index';
import { df64Lib, type TwoProdMode } from './wgsl';

/** Invocations per workgroup of every df64 kernel. */
export const DF_WG = 256;
/** Elements per invocation in dot stage 1. */
export const DF_DOT_ITEMS = 8;
export const DF_DOT_CHUNK = DF_WG * DF_DOT_ITEMS;

const dfArr = (name: string, access: 'r' | 'w'): WgslBinding => ({ name, type: 'array<vec2<f32>>', access });
const f32Arr = (name: string, access: 'r' | 'w'): WgslBinding => ({ name, type: 'array<f32>', access });

/**
 * Uniform fields of the element-wise kernels: n, the pin, a df64 scalar alpha, and a power of two
 * `p2` (toF32 only: x is multiplied by it exactly before the df64 product; see {@link Df64Blas.toF32}).
 */
const EW_UNIFORMS = [
  ['n', 'u32'],
  ['zero', 'u32'],
  ['a_hi', 'f32'],
  ['a_lo', 'f32'],
  ['p2', 'f32'],
] as const;

/** The element-wise df64 kernels: bindings and the body computing element `i` (alpha = `al`). */
export const DF_ELEMENTWISE: Record<string, { bindings: WgslBinding[]; body: string }> = {
  // x = x + alpha·d, d float32 (the refinement update)
  axpyF32: { bindings: [f32Arr('d', 'r'), dfArr('x', 'w')], body: 'x[i] = df_add(x[i], df_mul_f(al, d[i]));' },
  // y = y + alpha·x
  axpy: { bindings: [dfArr('x', 'r'), dfArr('y', 'w')], body: 'y[i] = df_add(y[i], df_mul(al, x[i]));' },
  // y = alpha·y
  scale: { bindings: [dfArr('y', 'w')], body: 'y[i] = df_mul(al, y[i]);' },
  // out = fl32(alpha·x) as fl32((alpha/p2)·(p2·x)): the float32 right-hand side of a correction solve
  toF32: { bindings: [dfArr('x', 'r'), f32Arr('out', 'w')], body: 'out[i] = df_mul(al, x[i] * u.p2).x;' },
  // y = d (float32 → df64, exact)
  fromF32: { bindings: [f32Arr('d', 'r'), dfArr('y', 'w')], body: 'y[i] = vec2<f32>(d[i], 0.0);' },
};

/** WGSL of element-wise kernel `name` with TwoProd form `mode`. */
export function dfElementwiseWgsl(name: string, mode: TwoProdMode): string {
  const k = DF_ELEMENTWISE[name]!;
  return `${preamble(EW_UNIFORMS, k.bindings)}
${df64Lib(mode, 'u.zero')}
@compute @workgroup_size(${DF_WG})
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = wg_linear(wid, nwg) * ${DF_WG}u + lid;
  if (i >= u.n) { return; }
  let al = vec2<f32>(u.a_hi, u.a_lo);
  ${k.body}
}`;
}

/**
 * Segmented df64 sum over aligned groups of `lanes` invocations in workgroup memory
 * (`fn red_seg(lid, v)`; lanes = workgroup size gives the full workgroup sum). Fixed tree
 * order: deterministic. Call in uniform control flow.
 */
export function dfSegmentedSum(lanes: number): string {
  const tree =
    lanes > 1
      ? `for (var off = ${lanes / 2}u; off > 0u; off = off >> 1u) {
    if ((lid % ${lanes}u) < off) { red[lid] = df_add(red[lid], red[lid + off]); }
    workgroupBarrier();
  }`
      : '';
  return `var<workgroup> red: array<vec2<f32>, ${DF_WG}>;
fn red_seg(lid: u32, v: vec2<f32>) -> vec2<f32> {
  red[lid] = v;
  workgroupBarrier();
  ${tree}
  let r = red[lid - (lid % ${lanes}u)];
  workgroupBarrier();
  return r;
}`;
}

/** Dot stage 1: partial[out + g] = Σ over chunk g of x_i·y_i in df64. */
export const DF_DOT1_BINDINGS: WgslBinding[] = [dfArr('x', 'r'), dfArr('y', 'r'), dfArr('partial', 'w')];
/** WGSL of the df64 kernel described above (bindings DF_DOT1_BINDINGS), TwoProd by `mode`. */
export function dfDot1Wgsl(mode: TwoProdMode): string {
  return `${preamble([['n', 'u32'], ['zero', 'u32'], ['groups', 'u32'], ['out', 'u32']], DF_DOT1_BINDINGS)}
${df64Lib(mode, 'u.zero')}
${dfSegmentedSum(DF_WG)}
@compute @workgroup_size(${DF_WG})
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let g = wg_linear(wid, nwg);
  if (g >= u.groups) { return; } // the whole workgroup exits together: uniform
  var s = vec2<f32>(0.0, 0.0);
  let base = g * ${DF_DOT_CHUNK}u + lid;
  for (var k = 0u; k < ${DF_DOT_ITEMS}u; k++) {
    let i = base + k * ${DF_WG}u;
    if (i < u.n) { s = df_add(s, df_mul(x[i], y[i])); }
  }
  let t = red_seg(lid, s);
  if (lid == 0u) { partial[u.out + g] = t; }
}`;
}

/** Dot stage 2: sc[slot] = Σ partial[first .. first + count) in df64 (one workgroup). */
export const DF_DOT2_BINDINGS: WgslBinding[] = [dfArr('partial', 'r'), dfArr('sc', 'w')];
/** WGSL of the df64 kernel described above (bindings DF_DOT2_BINDINGS), TwoProd by `mode`. */
export function dfDot2Wgsl(mode: TwoProdMode): string {
  return `${preamble([['count', 'u32'], ['zero', 'u32'], ['slot', 'u32'], ['first', 'u32']], DF_DOT2_BINDINGS)}
${df64Lib(mode, 'u.zero')}
${dfSegmentedSum(DF_WG)}
@compute @workgroup_size(${DF_WG})
fn main(@builtin(local_invocation_index) lid: u32) {
  var s = vec2<f32>(0.0, 0.0);
  for (var k = lid; k < u.count; k += ${DF_WG}u) { s = df_add(s, partial[u.first + k]); }
  let t = red_seg(lid, s);
  if (lid == 0u) { sc[u.slot] = t; }
}`;
}
