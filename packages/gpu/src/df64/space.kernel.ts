/**
 * WGSL of the df64 vector space (space.ts): kernels whose scalar operands are either df64
 * immediates in the uniform block or slots of the space's device scalar buffer `sc` (so a
 * solver's α = ρ / (p·q) never leaves the device), plus df64 division and square root for the
 * scalar kernel. Every product and sum is in df64 (the functions of wgsl.ts).
 * @module
 */
import { preamble, type UniformField, type WgslBinding } from '../kernels/wgsl/index';
import { DF_DOT_CHUNK, DF_DOT_ITEMS, DF_WG, dfSegmentedSum } from './blas.kernel';
import { df64Lib, type TwoProdMode } from './wgsl';

const dfArr = (name: string, access: 'r' | 'w'): WgslBinding => ({ name, type: 'array<vec2<f32>>', access });
const range = (n: number): number[] => Array.from({ length: n }, (_, j) => j);

/** Uniform fields of operand `name`: slot (−1: immediate) and the immediate's (hi, lo). */
export function operandFields(name: string): UniformField[] {
  return [
    [`${name}_s`, 'i32'],
    [`${name}_h`, 'f32'],
    [`${name}_l`, 'f32'],
  ];
}

/** WGSL expression of operand `name` (reads `sc` when its slot is set). */
const opnd = (name: string): string => `opnd(u.${name}_s, u.${name}_h, u.${name}_l)`;

const OPND_FN = `fn opnd(s: i32, h: f32, l: f32) -> vec2<f32> {
  if (s < 0) { return vec2<f32>(h, l); }
  return sc[u32(s)];
}`;

/** df64 division (three quotient digits) and square root (two Newton steps), ≈ 2^-46 relative. */
export const DF_DIV_SQRT = `fn df_div(a: vec2<f32>, b: vec2<f32>) -> vec2<f32> {
  let q1 = df_pin(a.x / b.x);
  let r1 = df_sub(a, df_mul_f(b, q1));
  let q2 = df_pin(r1.x / b.x);
  let r2 = df_sub(r1, df_mul_f(b, q2));
  let q3 = df_pin(r2.x / b.x);
  return df_add(df_fast_two_sum(q1, q2), vec2<f32>(q3, 0.0));
}
fn df_sqrt(a: vec2<f32>) -> vec2<f32> {
  if (a.x < 0.0) { return vec2<f32>(bitcast<f32>(0x7fc00000u | u.zero), 0.0); }
  if (a.x == 0.0) { return vec2<f32>(0.0, 0.0); }
  var s = vec2<f32>(df_pin(sqrt(a.x)), 0.0);
  for (var it = 0; it < 2; it++) {
    let r = df_sub(a, df_mul(s, s));
    s = df_add(s, vec2<f32>(df_pin(r.x / df_pin(2.0 * s.x)), 0.0));
  }
  return s;
}`;

function elementwise(fields: readonly UniformField[], bindings: readonly WgslBinding[], mode: TwoProdMode, body: string, extra = ''): string {
  return `${preamble([['n', 'u32'], ['zero', 'u32'], ...fields], bindings)}
${df64Lib(mode, 'u.zero')}
${extra}
@compute @workgroup_size(${DF_WG})
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = wg_linear(wid, nwg) * ${DF_WG}u + lid;
  if (i >= u.n) { return; }
  ${body}
}`;
}

const SC: WgslBinding = dfArr('sc', 'r');

/** y = a·x + b·y (bz = 1: y's old content ignored). Bindings sc, x, y. */
export const AXPBY_BINDINGS: WgslBinding[] = [SC, dfArr('x', 'r'), dfArr('y', 'w')];
/** WGSL of the df64 kernel described above (bindings AXPBY_BINDINGS), TwoProd by `mode`. */
export function dfAxpbyWgsl(mode: TwoProdMode): string {
  const body = `var v = df_mul(${opnd('a')}, x[i]);
  if (u.bz == 0u) { v = df_add(v, df_mul(${opnd('b')}, y[i])); }
  y[i] = v;`;
  return elementwise([['bz', 'u32'], ...operandFields('a'), ...operandFields('b')], AXPBY_BINDINGS, mode, body, OPND_FN);
}

/** y = a·y (set = 0) or y = a (set = 1). Bindings sc, y. */
export const SCALE_BINDINGS: WgslBinding[] = [SC, dfArr('y', 'w')];
/** WGSL of the df64 kernel described above (bindings SCALE_BINDINGS), TwoProd by `mode`. */
export function dfScaleWgsl(mode: TwoProdMode): string {
  const body = `let a = ${opnd('a')};
  if (u.setv == 1u) { y[i] = a; } else { y[i] = df_mul(a, y[i]); }`;
  return elementwise([['setv', 'u32'], ...operandFields('a')], SCALE_BINDINGS, mode, body, OPND_FN);
}

/** y = β·y + Σ_{j<m} c_j·x_j, j ascending (bz = 1: y ignored). Bindings sc, x0 … x(g−1), y. */
export function combineBindings(g: number): WgslBinding[] {
  return [SC, ...range(g).map((j) => dfArr(`x${j}`, 'r')), dfArr('y', 'w')];
}
/** WGSL of the df64 kernel described above (bindings combineBindings(g)), TwoProd by `mode`. */
export function dfCombineWgsl(mode: TwoProdMode, g: number): string {
  const terms = range(g)
    .map((j) => `if (u.m > ${j}u) { v = df_add(v, df_mul(${opnd(`c${j}`)}, x${j}[i])); }`)
    .join('\n  ');
  const body = `var v = vec2<f32>(0.0, 0.0);
  if (u.bz == 0u) { v = df_mul(${opnd('beta')}, y[i]); }
  ${terms}
  y[i] = v;`;
  const fields = [['m', 'u32'] as const, ['bz', 'u32'] as const, ...operandFields('beta'), ...range(g).flatMap((j) => operandFields(`c${j}`))];
  return elementwise(fields, combineBindings(g), mode, body, OPND_FN);
}

/** z = x ∘ y. Bindings x, y, z (distinct). */
export const MULTIPLY_BINDINGS: WgslBinding[] = [dfArr('x', 'r'), dfArr('y', 'r'), dfArr('z', 'w')];
/** WGSL of the df64 kernel described above (bindings MULTIPLY_BINDINGS), TwoProd by `mode`. */
export function dfMultiplyWgsl(mode: TwoProdMode): string {
  return elementwise([], MULTIPLY_BINDINGS, mode, 'z[i] = df_mul(x[i], y[i]);');
}

/** t = r / (d − σ), |d − σ| clamped below at `clamp` (sign kept). Bindings r, d, t. */
export const SHIFTED_DIVIDE_BINDINGS: WgslBinding[] = [dfArr('r', 'r'), dfArr('d', 'r'), dfArr('t', 'w')];
/** WGSL of the df64 kernel described above (bindings SHIFTED_DIVIDE_BINDINGS), TwoProd by `mode`. */
export function dfShiftedDivideWgsl(mode: TwoProdMode): string {
  const body = `var den = df_sub(d[i], vec2<f32>(u.s_h, u.s_l));
  if (abs(den.x) < u.clamp) { den = vec2<f32>(select(u.clamp, -u.clamp, den.x < 0.0), 0.0); }
  t[i] = df_div(r[i], den);`;
  return elementwise(
    [
      ['s_h', 'f32'],
      ['s_l', 'f32'],
      ['clamp', 'f32'],
    ],
    SHIFTED_DIVIDE_BINDINGS,
    mode,
    body,
    DF_DIV_SQRT,
  );
}

/** Scalar operation codes of {@link dfScalarWgsl}. */
export const DF_SCALAR_OPS = { set: 0, add: 1, sub: 2, mul: 3, div: 4, sqrt: 5 } as const;

/** sc[out] = op(a, b) (one invocation). Binding sc (read-write). */
export const SCALAR_BINDINGS: WgslBinding[] = [dfArr('sc', 'w')];
/** WGSL of the df64 kernel described above (bindings SCALAR_BINDINGS), TwoProd by `mode`. */
export function dfScalarWgsl(mode: TwoProdMode): string {
  return `${preamble([['zero', 'u32'], ['op', 'u32'], ['out', 'u32'], ...operandFields('a'), ...operandFields('b')], SCALAR_BINDINGS)}
${df64Lib(mode, 'u.zero')}
${DF_DIV_SQRT}
${OPND_FN}
@compute @workgroup_size(1)
fn main() {
  let a = ${opnd('a')};
  let b = ${opnd('b')};
  var v = a;
  switch (u.op) {
    case 1u: { v = df_add(a, b); }
    case 2u: { v = df_sub(a, b); }
    case 3u: { v = df_mul(a, b); }
    case 4u: { v = df_div(a, b); }
    case 5u: { v = df_sqrt(a); }
    default: { v = a; }
  }
  sc[u.out] = v;
}`;
}

/**
 * Multi-dot stage 1: partial[j·groups + g] = Σ over chunk g of x_j,i·y_i for j < m (one read of
 * y for g vectors). Stage 2 is blas.kernel's dot2 per j. Bindings x0 … x(g−1), y, partial.
 */
export function multiDotBindings(g: number): WgslBinding[] {
  return [...range(g).map((j) => dfArr(`x${j}`, 'r')), dfArr('y', 'r'), dfArr('partial', 'w')];
}
/** WGSL of the df64 kernel described above (bindings multiDotBindings(g)), TwoProd by `mode`. */
export function dfMultiDot1Wgsl(mode: TwoProdMode, g: number): string {
  const acc = range(g)
    .map((j) => `if (u.m > ${j}u) { s${j} = df_add(s${j}, df_mul(x${j}[i], yi)); }`)
    .join('\n      ');
  const out = range(g)
    .map((j) => `let t${j} = red_seg(lid, s${j});\n  if (lid == 0u && u.m > ${j}u) { partial[${j}u * u.groups + wg] = t${j}; }`)
    .join('\n  ');
  return `${preamble([['n', 'u32'], ['zero', 'u32'], ['groups', 'u32'], ['m', 'u32']], multiDotBindings(g))}
${df64Lib(mode, 'u.zero')}
${dfSegmentedSum(DF_WG)}
@compute @workgroup_size(${DF_WG})
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let wg = wg_linear(wid, nwg);
  if (wg >= u.groups) { return; } // the whole workgroup exits together: uniform
  ${range(g)
    .map((j) => `var s${j} = vec2<f32>(0.0, 0.0);`)
    .join('\n  ')}
  let base = wg * ${DF_DOT_CHUNK}u + lid;
  for (var k = 0u; k < ${DF_DOT_ITEMS}u; k++) {
    let i = base + k * ${DF_WG}u;
    if (i < u.n) {
      let yi = y[i];
      ${acc}
    }
  }
  ${out}
}`;
}
