/**
 * WGSL of the BLAS-1 kernels (pure functions of their text parameters). Workgroup size 256;
 * one invocation per element for element-wise kernels; dot / norm2 are a deterministic
 * two-stage reduction: stage 1 sums 8 strided elements per invocation sequentially, then a
 * workgroup tree (workgroup memory; no subgroup size assumed) into one partial per workgroup;
 * stage 2 is one workgroup summing the partials with a fixed stride and a final tree.
 * Accumulation is float32 throughout (pairwise/tree order; error ≲ (8 + ⌈p/256⌉ + 16)·ε·Σ|x_i y_i|
 * for p partials).
 * @module
 */
import { preamble, SCALAR_OPERAND, type WgslBinding, workgroupSum } from '../kernels/wgsl/index';

/** Invocations per workgroup of every BLAS-1 kernel. */
export const WG = 256;
/** Elements per workgroup of dot stage 1. */
export const DOT_ITEMS = 8;
export const DOT_CHUNK = WG * DOT_ITEMS;

/** A float32 array storage binding ('r' read-only, 'w' read-write). */
export const f32arr = (name: string, access: 'r' | 'w'): WgslBinding => ({ name, type: 'array<f32>', access });

/** Uniform fields shared by element-wise kernels: length and two scalar operands. */
export const EW_UNIFORMS = [
  ['n', 'u32'],
  ['a_num', 'i32'],
  ['a_den', 'i32'],
  ['a_k', 'f32'],
  ['b_num', 'i32'],
  ['b_den', 'i32'],
  ['b_k', 'f32'],
] as const;

/** The element-wise kernels, by name: bindings and the body computing element `i`. */
export const ELEMENTWISE: Record<string, { bindings: WgslBinding[]; body: string }> = {
  // y = a (fill)
  fill: { bindings: [f32arr('sc', 'r'), f32arr('y', 'w')], body: 'y[i] = operand(u.a_num, u.a_den, u.a_k);' },
  // y = x (copy)
  copy: { bindings: [f32arr('sc', 'r'), f32arr('x', 'r'), f32arr('y', 'w')], body: 'y[i] = x[i];' },
  // y = a·x + b·y; b = 0 ignores y (even NaN)
  axpby: {
    bindings: [f32arr('sc', 'r'), f32arr('x', 'r'), f32arr('y', 'w')],
    body: `let a = operand(u.a_num, u.a_den, u.a_k);
  let b = operand(u.b_num, u.b_den, u.b_k);
  if (b == 0.0) { y[i] = a * x[i]; } else { y[i] = a * x[i] + b * y[i]; }`,
  },
  // y = (a + b)·y when x aliases y; y = a·y (scale) with b = 0
  axpbySelf: {
    bindings: [f32arr('sc', 'r'), f32arr('y', 'w')],
    body: `let a = operand(u.a_num, u.a_den, u.a_k);
  let b = operand(u.b_num, u.b_den, u.b_k);
  if (b == 0.0) { y[i] = a * y[i]; } else { y[i] = a * y[i] + b * y[i]; }`,
  },
  // z = x ∘ y (z distinct from x and y; x may equal y)
  mul: { bindings: [f32arr('sc', 'r'), f32arr('x', 'r'), f32arr('y', 'r'), f32arr('z', 'w')], body: 'z[i] = x[i] * y[i];' },
  // z = z ∘ x (z aliases one factor)
  mulInto: { bindings: [f32arr('sc', 'r'), f32arr('x', 'r'), f32arr('z', 'w')], body: 'z[i] = z[i] * x[i];' },
  // z = z ∘ z
  square: { bindings: [f32arr('sc', 'r'), f32arr('z', 'w')], body: 'z[i] = z[i] * z[i];' },
  // t = r / (d − σ), |d − σ| clamped below at c with its sign (σ = a, c = b): Davidson's preconditioner
  shiftDiv: {
    bindings: [f32arr('sc', 'r'), f32arr('r', 'r'), f32arr('d', 'r'), f32arr('t', 'w')],
    body: `let sigma = operand(u.a_num, u.a_den, u.a_k);
  let c = operand(u.b_num, u.b_den, u.b_k);
  var den = d[i] - sigma;
  if (abs(den) < c) { den = select(c, -c, den < 0.0); }
  t[i] = r[i] / den;`,
  },
};

/**
 * WGSL of a one-invocation-per-element kernel: `body` computes element `i < u.n` (the uniforms
 * must start with `n`; `operand()` is available and needs a binding named `sc`).
 */
export function elementKernelWgsl(uniforms: readonly (readonly [string, 'u32' | 'i32' | 'f32'])[], bindings: readonly WgslBinding[], body: string): string {
  return `${preamble(uniforms, bindings)}
${SCALAR_OPERAND}
@compute @workgroup_size(${WG})
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = wg_linear(wid, nwg) * ${WG}u + lid;
  if (i >= u.n) { return; }
  ${body}
}`;
}

/** WGSL of element-wise kernel `name`. */
export function elementwiseWgsl(name: string): string {
  const k = ELEMENTWISE[name]!;
  return elementKernelWgsl(EW_UNIFORMS, k.bindings, k.body);
}

/** Dot stage 1: partial[g] = Σ over chunk g of x_i·y_i (x may equal y). */
export const DOT_STAGE1_BINDINGS: WgslBinding[] = [f32arr('x', 'r'), f32arr('y', 'r'), f32arr('partial', 'w')];
export function dotStage1Wgsl(): string {
  return `${preamble([['n', 'u32'], ['groups', 'u32'], ['out', 'u32']], DOT_STAGE1_BINDINGS)}
${workgroupSum('red', WG)}
@compute @workgroup_size(${WG})
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let g = wg_linear(wid, nwg);
  if (g >= u.groups) { return; } // whole workgroup exits together: uniform
  var s = 0.0;
  let base = g * ${DOT_CHUNK}u + lid;
  for (var k = 0u; k < ${DOT_ITEMS}u; k++) {
    let i = base + k * ${WG}u;
    if (i < u.n) { s = s + x[i] * y[i]; }
  }
  let t = red_sum(lid, s);
  if (lid == 0u) { partial[u.out + g] = t; }
}`;
}

/**
 * WGSL lines: `var <acc>` = this workgroup's strided share of Σ partial[<start> + k], k < u.count —
 * the first half of dot stage 2's order (the caller finishes it with `red_sum`). Every kernel
 * that finishes a reduction uses this loop, so they all give the bits of the stage-2 dispatch.
 */
export function partialShare(acc: string, start: string): string {
  return `  var ${acc} = 0.0;
  for (var k = lid; k < u.count; k += ${WG}u) { ${acc} = ${acc} + partial[${start} + k]; }`;
}

/**
 * WGSL lines: workgroup j < u.m sums partial[u.first + j·u.count + k], k < u.count, into `t` in
 * dot stage 2's order (one finished reduction per workgroup: multi-dot stage 2, Lanczos reduce).
 */
export function groupRowSum(): string {
  return `  let j = wg_linear(wid, nwg);
  if (j >= u.m) { return; } // whole workgroup exits together: uniform
  let first = u.first + j * u.count;
${partialShare('s', 'first')}
  let t = red_sum(lid, s);`;
}

/**
 * WGSL lines: every workgroup g < u.groups takes its share of the one reduction in
 * partial[u.first …] into `ps` (the caller finishes it with `red_sum`), so that a following
 * element-wise pass can use the reduced value without a separate stage-2 dispatch.
 */
export function everyGroupShare(): string {
  return `  let g = wg_linear(wid, nwg);
  if (g >= u.groups) { return; } // whole workgroup exits together: uniform
${partialShare('ps', 'u.first')}`;
}

/** Dot stage 2: sc[slot] = Σ partial[0..count) (mode 1: sqrt of it). One workgroup. */
export const DOT_STAGE2_BINDINGS: WgslBinding[] = [f32arr('partial', 'r'), f32arr('sc', 'w')];
export function dotStage2Wgsl(): string {
  return `${preamble([['count', 'u32'], ['slot', 'u32'], ['mode', 'u32'], ['first', 'u32']], DOT_STAGE2_BINDINGS)}
${workgroupSum('red', WG)}
@compute @workgroup_size(${WG})
fn main(@builtin(local_invocation_index) lid: u32) {
${partialShare('s', 'u.first')}
  let t = red_sum(lid, s);
  if (lid == 0u) { sc[u.slot] = select(t, sqrt(t), u.mode == 1u); }
}`;
}

/** Scalar op codes of {@link scalarWgsl}. */
export const SCALAR_OPS = { set: 0, add: 1, sub: 2, mul: 3, div: 4, sqrt: 5, neg: 6 } as const;

/** sc[out] = op(A, B) on device scalar operands (one invocation). */
export const SCALAR_BINDINGS: WgslBinding[] = [f32arr('sc', 'w')];
export function scalarWgsl(): string {
  return `${preamble([['op', 'u32'], ['a_num', 'i32'], ['a_den', 'i32'], ['a_k', 'f32'], ['b_num', 'i32'], ['b_den', 'i32'], ['b_k', 'f32'], ['out', 'u32']], SCALAR_BINDINGS)}
${SCALAR_OPERAND}
@compute @workgroup_size(1)
fn main() {
  let a = operand(u.a_num, u.a_den, u.a_k);
  let b = operand(u.b_num, u.b_den, u.b_k);
  var r = a;
  switch u.op {
    case 1u: { r = a + b; }
    case 2u: { r = a - b; }
    case 3u: { r = a * b; }
    case 4u: { r = a / b; }
    case 5u: { r = sqrt(a); }
    case 6u: { r = -a; }
    default: { r = a; }
  }
  sc[u.out] = r;
}`;
}
