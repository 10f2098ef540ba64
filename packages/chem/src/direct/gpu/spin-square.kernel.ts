/**
 * ⟨S²⟩ on the device from the direct σ's own tables (./tables.ts), for K vectors in one pass.
 * With S₊ = Σ_p a†_pα a_pβ, S² = S_z² + S_z + S₋S₊ and
 *
 *   S₋S₊ = Σ_p n_pβ (1 − n_pα) − Σ_{r≠s} E^α_sr E^β_rs,
 *
 * (the host's ../spin-square.ts in gather form): per determinant (α string I, β position b) the
 * exchange term runs over b's β replacements (r s, b′, sign) and takes the α replacement of I
 * with the pair (s r) — found through a per-workgroup map pair → replacement built from the
 * row's α list, which the workgroup stages anyway — and c(J_t, b′). Each invocation forms, per
 * root, c² and c·(S₋S₊ c) in df64 (exact products of float32 values by TwoProd, sums by TwoSum,
 * pinned against reassociation: @gpusparse/gpu df64/wgsl.ts): for a spin eigenstate the two parts
 * of (S₋S₊ c) cancel at every determinant, so float32 sums there left errors of ε₃₂·S(S+1)
 * (1.8e-7 measured on N2/STO-3G). The workgroup adds its 64 determinants' values in df64 and
 * writes one (hi, lo) pair per root and quantity; the host adds the workgroups' pairs in float64.
 * The vector is read in float32 (a df64 vector's hi part): as a Rayleigh quotient, ⟨S²⟩ of a spin
 * eigenstate moves only to second order in that rounding.
 * @module
 */
import { df64Lib, preamble, type TwoProdMode, type WgslBinding } from '@gpusparse/gpu';
import { ALPHA_WORDS, BETA_WORDS, SIGMA_WG } from './tables';

/** Bindings: the σ's work list, records and replacement lists, string occupations, the K vectors, the layout index, the partial sums. */
export function spinSquareBindings(df: boolean): WgslBinding[] {
  return [
    { name: 'work', type: 'array<u32>', access: 'r' },
    { name: 'info', type: 'array<u32>', access: 'r' },
    { name: 'rep', type: 'array<u32>', access: 'r' },
    { name: 'occ', type: 'array<u32>', access: 'r' },
    { name: 'x', type: df ? 'array<vec2<f32>>' : 'array<f32>', access: 'r' },
    { name: 'pidx', type: 'array<u32>', access: 'r' },
    { name: 'part', type: 'array<vec2<f32>>', access: 'w' },
  ];
}

/** Uniform words: workgroups, mB, β offsets in info / rep / occ, vector length, layout-index flag, staged-pair flag, pair lists, the df64 pin's zero, mA, first pair of `part` written, vectors in this pass. */
export const SPIN_SQUARE_UNIFORMS = [
  ['groups', 'u32'],
  ['mb', 'u32'],
  ['beta_info', 'u32'],
  ['beta_rep', 'u32'],
  ['occ_b', 'u32'],
  ['n', 'u32'],
  ['permuted', 'u32'],
  ['staged', 'u32'],
  ['pairs_at', 'u32'],
  ['pstart_at', 'u32'],
  ['zero', 'u32'],
  ['ma', 'u32'],
  ['part_at', 'u32'],
  ['k', 'u32'],
] as const;

/** Vectors per pass at most (the kernel's private arrays; more vectors: several passes, still one readback). */
export const SPIN_SQUARE_MAX_ROOTS = 8;

/** Workgroup bytes of the kernel: the α row (2 words per replacement), the pair map (norb² words), the df64 reduction. */
export function spinSquareWorkgroupBytes(mA: number, norb: number): number {
  return 8 * Math.max(1, mA) + 4 * norb * norb + 8 * SIGMA_WG;
}

/**
 * WGSL of the ⟨S²⟩ kernel for `mA` α replacements per string, `norb` orbitals, float32 (`df`
 * false) or df64 (`df` true, hi part read) vectors packed one after another (n each, `u.k` of them,
 * at most {@link SPIN_SQUARE_MAX_ROOTS}); `mode`: the device's TwoProd (../../../gpu df64 self-test). Writes part[part_at + (w·k + r)·2] = Σ c², part[part_at + (w·k + r)·2 + 1] = Σ c·(S₋S₊ c) of workgroup w.
 */
export function spinSquareWgsl(mA: number, norb: number, df: boolean, mode: TwoProdMode): string {
  const ma = Math.max(1, mA);
  const n2 = norb * norb;
  return `${preamble(SPIN_SQUARE_UNIFORMS, spinSquareBindings(df))}
${df64Lib(mode, 'u.zero')}
var<workgroup> wrow: array<u32, ${ma}>;
var<workgroup> wkey: array<u32, ${ma}>;
var<workgroup> amap: array<u32, ${n2}>;
var<workgroup> red: array<vec2<f32>, ${SIGMA_WG}>;
const SIGN: u32 = 0x80000000u;
const NONE: u32 = 0xffffffffu;

fn cv(r: u32, pos: u32) -> f32 {
  var i = pos;
  if (u.permuted == 1u) { i = pidx[pos]; }
  return x[r * u.n + i]${df ? '.x' : ''};
}

// the workgroup's sum of v as df64 (every invocation calls it: uniform control flow)
fn wg_sum(lid: u32, v: vec2<f32>) -> vec2<f32> {
  red[lid] = v;
  workgroupBarrier();
  for (var s = ${SIGMA_WG / 2}u; s > 0u; s >>= 1u) {
    if (lid < s) { red[lid] = df_add(red[lid], red[lid + s]); }
    workgroupBarrier();
  }
  let out = red[0];
  workgroupBarrier();
  return out;
}

@compute @workgroup_size(${SIGMA_WG})
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let w = wg_linear(wid, nwg);
  if (w >= u.groups) { return; }
  let ia = work[2u * w];
  let b = work[2u * w + 1u] + lid;
  let ai = ia * ${ALPHA_WORDS}u;
  let a0 = 2u * ia * u.ma;
  for (var p = lid; p < ${n2}u; p += ${SIGMA_WG}u) { amap[p] = NONE; }
  for (var t = lid; t < u.ma; t += ${SIGMA_WG}u) {
    wrow[t] = rep[a0 + 2u * t];
    wkey[t] = rep[a0 + 2u * t + 1u];
  }
  workgroupBarrier();
  for (var t = lid; t < u.ma; t += ${SIGMA_WG}u) { amap[(wkey[t] & ~SIGN) / ${n2}u] = t; }
  workgroupBarrier();
  var c: array<f32, ${SPIN_SQUARE_MAX_ROOTS}>;
  // (S₋S₊ c) at this determinant per root, df64: the sum of ±c(J_t, b′) and d·c cancel for a spin state
  var m: array<vec2<f32>, ${SPIN_SQUARE_MAX_ROOTS}>;
  let valid = b < info[ai + 1u];
  if (valid) {
    let r0 = info[ai];
    let q = info[ai + 2u] + b;
    let e0 = info[u.beta_info + ${BETA_WORDS}u * q + 2u];
    let ob = u.occ_b + 2u * q;
    let d = f32(countOneBits(occ[ob] & ~occ[2u * ia]) + countOneBits(occ[ob + 1u] & ~occ[2u * ia + 1u]));
    for (var r = 0u; r < u.k; r++) {
      c[r] = cv(r, r0 + b);
      m[r] = df_two_prod(d, c[r]);
    }
    for (var e = 0u; e < u.mb; e++) {
      let bp = rep[e0 + 2u * e];
      let wb = rep[e0 + 2u * e + 1u];
      var rs = wb & 0xffffu;
      if (u.staged == 1u) { rs = info[u.pairs_at + info[u.pstart_at + ((wb >> 16u) & 7u)] + rs]; }
      let rr = rs / ${norb}u;
      let ss = rs % ${norb}u;
      if (rr == ss) { continue; }
      let t = amap[ss * ${norb}u + rr];
      if (t == NONE) { continue; }
      // − sign_t·sign_e·c(J_t, b′): the exchange part enters S₋S₊ with a minus
      let pos_sign = ((wkey[t] ^ wb) & SIGN) != 0u;
      let pos = wrow[t] + bp;
      for (var r = 0u; r < u.k; r++) {
        let v = cv(r, pos);
        m[r] = df_add(m[r], vec2<f32>(select(-v, v, pos_sign), 0.0));
      }
    }
  }
  for (var r = 0u; r < u.k; r++) {
    let nrm = wg_sum(lid, df_two_prod(c[r], c[r]));
    let s2 = wg_sum(lid, df_mul_f(m[r], c[r]));
    if (lid == 0u) {
      part[u.part_at + 2u * (w * u.k + r)] = nrm;
      part[u.part_at + 2u * (w * u.k + r) + 1u] = s2;
    }
  }
}`;
}
