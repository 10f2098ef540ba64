/**
 * The device direct σ in df64 (hi + lo float32 pairs, ≈ 48 bits) for the CI driver's float64
 * polish: the same gather as ./sigma.kernel.ts over the same tables, with the integrals and
 * the same-spin values as (hi, lo) pairs and every product and sum in df64 (the error-free
 * transformations of @gpusparse/gpu's df64 library, pinned against compiler reassociation).
 * @module
 */
import { df64Lib, preamble, type TwoProdMode, type WgslBinding } from '@gpusparse/gpu';
import { SIGMA_BINDINGS, SIGMA_UNIFORMS, sigmaMainHeadWgsl } from './sigma.kernel';

/** Bindings: the float32 kernel's tables, the lo parts of the same-spin values, (hi, lo) integrals, df64 x and y. */
export const SIGMA_DF64_BINDINGS: WgslBinding[] = [
  ...SIGMA_BINDINGS.slice(0, 4), // work, info, rep, hrec: the float32 kernel's tables
  { name: 'hlo', type: 'array<f32>', access: 'r' },
  { name: 'eri', type: 'array<vec2<f32>>', access: 'r' },
  { name: 'x', type: 'array<vec2<f32>>', access: 'r' },
  { name: 'y', type: 'array<vec2<f32>>', access: 'w' },
];

/** Uniform words: as the float32 kernel's, with the df64 run-time zero and α, β as (hi, lo) in place of α, β. */
export const SIGMA_DF64_UNIFORMS = [
  ...SIGMA_UNIFORMS.slice(0, 6), // groups, mA, mB, β offsets in info / rep, β = 0 flag
  ['zero', 'u32'],
  ['al_h', 'f32'],
  ['al_l', 'f32'],
  ['be_h', 'f32'],
  ['be_l', 'f32'],
  ...SIGMA_UNIFORMS.slice(8), // pairs_at, pstart_at
] as const;

/** The df64 α–β sum: from the staged block (kmax > 0) or from the integrals' buffer. */
function alphaBetaDf64Wgsl(kmax: number): string {
  if (kmax === 0) {
    return `fn alpha_beta(e0: u32) -> vec2<f32> {
  var s = vec2<f32>(0.0, 0.0);
  for (var e = 0u; e < u.mb; e++) {
    let bp = rep[e0 + 2u * e];
    let w = rep[e0 + 2u * e + 1u];
    let rs = w & 0xffffu;
    let g = (w >> 16u) & 7u;
    var d = vec2<f32>(0.0, 0.0);
    for (var t = grp[g]; t < grp[g + 1u]; t++) {
      let k = wkey[t];
      let v = df_mul(eri[(k & ~SIGN) + rs], x[wrow[t] + bp]);
      d = df_add(d, select(v, -v, (k & SIGN) != 0u));
    }
    s = df_add(s, select(d, -d, (w & SIGN) != 0u));
  }
  return s;
}`;
  }
  return `fn alpha_beta(e0: u32) -> vec2<f32> {
  var s = vec2<f32>(0.0, 0.0);
  for (var e = 0u; e < u.mb; e++) {
    let bp = rep[e0 + 2u * e];
    let w = rep[e0 + 2u * e + 1u];
    let g = (w >> 16u) & 7u;
    let t0 = grp[g];
    let sz = grp[g + 1u] - t0;
    let kb = koff[g] + (w & 0xffffu) * sz;
    var d = vec2<f32>(0.0, 0.0);
    for (var j = 0u; j < sz; j++) { d = df_add(d, df_mul(kblk[kb + j], x[wrow[t0 + j] + bp])); }
    s = df_add(s, select(d, -d, (w & SIGN) != 0u));
  }
  return s;
}`;
}

/** WGSL of the df64 σ kernel for `mA` α replacements per string. */
export function sigmaDf64Wgsl(mA: number, mode: TwoProdMode, kmax = 0): string {
  const ma = Math.max(1, mA);
  return `${preamble(SIGMA_DF64_UNIFORMS, SIGMA_DF64_BINDINGS)}
${df64Lib(mode, 'u.zero')}
var<workgroup> wrow: array<u32, ${ma}>;
var<workgroup> wkey: array<u32, ${ma}>;
var<workgroup> grp: array<u32, 9>;
var<workgroup> koff: array<u32, 9>;
${kmax > 0 ? `var<workgroup> kblk: array<vec2<f32>, ${kmax}>;` : ''}
const SIGN: u32 = 0x80000000u;

fn same_spin(ai: u32, bi: u32, r0: u32, b: u32) -> vec2<f32> {
  var s = vec2<f32>(0.0, 0.0);
  for (var e = info[ai + 3u]; e < info[ai + 4u]; e++) {
    let h = hrec[e];
    s = df_add(s, df_mul(vec2<f32>(bitcast<f32>(h.y), hlo[e]), x[h.x + b]));
  }
  for (var e = info[bi]; e < info[bi + 1u]; e++) {
    let h = hrec[e];
    s = df_add(s, df_mul(vec2<f32>(bitcast<f32>(h.y), hlo[e]), x[r0 + h.x]));
  }
  return s;
}

${alphaBetaDf64Wgsl(kmax)}

${sigmaMainHeadWgsl(kmax)}  let s = df_add(same_spin(ai, bi, r0, b), alpha_beta(info[bi + 2u]));
  let k = r0 + b;
  var v = df_mul(vec2<f32>(u.al_h, u.al_l), s);
  if (u.bz == 0u) { v = df_add(v, df_mul(vec2<f32>(u.be_h, u.be_l), y[k])); }
  y[k] = v;
}`;
}

/** Bindings of the df64 permutation gather: index, source, destination. */
export const GATHER_DF64_BINDINGS: WgslBinding[] = [
  { name: 'idx', type: 'array<u32>', access: 'r' },
  { name: 'src', type: 'array<vec2<f32>>', access: 'r' },
  { name: 'dst', type: 'array<vec2<f32>>', access: 'w' },
];

/** WGSL of dst[i] = α·src[idx[i]] + β·dst[i] in df64 (β = 0 flag: dst not read), i < n. */
export function gatherDf64Wgsl(mode: TwoProdMode): string {
  return `${preamble(
    [
      ['n', 'u32'],
      ['bz', 'u32'],
      ['zero', 'u32'],
      ['al_h', 'f32'],
      ['al_l', 'f32'],
      ['be_h', 'f32'],
      ['be_l', 'f32'],
    ],
    GATHER_DF64_BINDINGS,
  )}
${df64Lib(mode, 'u.zero')}
@compute @workgroup_size(256)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = wg_linear(wid, nwg) * 256u + lid;
  if (i >= u.n) { return; }
  var v = df_mul(vec2<f32>(u.al_h, u.al_l), src[idx[i]]);
  if (u.bz == 0u) { v = df_add(v, df_mul(vec2<f32>(u.be_h, u.be_l), dst[i])); }
  dst[i] = v;
}`;
}
