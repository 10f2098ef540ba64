/**
 * The device direct σ kernel (float32): one invocation per determinant (α string I, β position
 * b) of the direct layout, each a pure gather — no float atomics exist in WGSL, so nothing is
 * scattered. A workgroup holds 64 consecutive β positions of one α row and stages that row's mA
 * α replacements (row start of J_t, pair offset and sign) in workgroup memory. Per determinant:
 *   σ(I,b) = Σ_J H_α(I,J) c(J,b) + Σ_b′ H_β(b,b′) c(I,b′)
 *          + Σ_{(rs, b′, s) ∈ β replacements of b} s · Σ_{t ∈ Γ(rs)} sign_t (p_t q_t|rs) c(J_t, b′)
 * (the same three parts as the host kernel, ../kernel.ts; the inner sum runs over the α
 * replacements whose pair irrep equals that of rs). Accumulation in float32.
 * @module
 */
import { preamble, type WgslBinding } from '@gpusparse/gpu';
import { ALPHA_WORDS, BETA_WORDS, SIGMA_WG, workgroupBaseBytes } from './tables';

/** Bindings of the σ kernel (./tables.ts for the layouts). */
export const SIGMA_BINDINGS: WgslBinding[] = [
  { name: 'work', type: 'array<u32>', access: 'r' },
  { name: 'info', type: 'array<u32>', access: 'r' },
  { name: 'rep', type: 'array<u32>', access: 'r' },
  { name: 'hrec', type: 'array<vec2<u32>>', access: 'r' },
  { name: 'eri', type: 'array<f32>', access: 'r' },
  { name: 'x', type: 'array<f32>', access: 'r' },
  { name: 'y', type: 'array<f32>', access: 'w' },
];

/** Uniform words of the σ kernel: workgroups, mA, mB, β offsets in info / rep, β = 0 flag, α, β. */
export const SIGMA_UNIFORMS = [
  ['groups', 'u32'],
  ['ma', 'u32'],
  ['mb', 'u32'],
  ['beta_info', 'u32'],
  ['beta_rep', 'u32'],
  ['bz', 'u32'],
  ['alpha', 'f32'],
  ['beta', 'f32'],
  ['pairs_at', 'u32'],
  ['pstart_at', 'u32'],
] as const;

/**
 * WGSL that stages the workgroup's integral block in `kblk` (f32, or vec2<f32> in the df64
 * kernel: `eri` and `kblk` share an element type) after the replacement records: for each pair irrep g, K[rs][t] = sign_t·(p_t q_t|rs)
 * for the pairs rs of irrep g (by position inside its list) and the replacements t of group g,
 * at koff[g] + rs_local·|group g| + (t − grp[g]). Uniform control flow (barriers inside).
 */
export function stageBlockWgsl(): string {
  return `  if (lid == 0u) {
    var o = 0u;
    for (var g = 0u; g < 8u; g++) {
      koff[g] = o;
      o += (info[u.pstart_at + g + 1u] - info[u.pstart_at + g]) * (grp[g + 1u] - grp[g]);
    }
    koff[8] = o;
  }
  workgroupBarrier();
  let ktot = koff[8];
  for (var i = lid; i < ktot; i += ${SIGMA_WG}u) {
    var g = 0u;
    while (g < 7u && i >= koff[g + 1u]) { g++; }
    let sz = grp[g + 1u] - grp[g];
    let loc = i - koff[g];
    let t = grp[g] + loc % sz;
    let rs = info[u.pairs_at + info[u.pstart_at + g] + loc / sz];
    let k = wkey[t];
    let v = eri[(k & ~SIGN) + rs];
    kblk[i] = select(v, -v, (k & SIGN) != 0u);
  }
  workgroupBarrier();`;
}

/**
 * WGSL of the σ kernels' entry point up to the sums, shared by the float32 and df64 kernels: the
 * workgroup's (α string, β block) from `work`, its α replacements into workgroup memory, the
 * staged integral block when `kmax` > 0, and the row start `r0` and β info `bi` of this
 * invocation's determinant (invocations past the block's β count return).
 */
export function sigmaMainHeadWgsl(kmax: number): string {
  return `@compute @workgroup_size(${SIGMA_WG})
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let w = wg_linear(wid, nwg);
  if (w >= u.groups) { return; }
  let ia = work[2u * w];
  let b = work[2u * w + 1u] + lid;
  let ai = ia * ${ALPHA_WORDS}u;
  let a0 = 2u * ia * u.ma;
  for (var t = lid; t < u.ma; t += ${SIGMA_WG}u) {
    wrow[t] = rep[a0 + 2u * t];
    wkey[t] = rep[a0 + 2u * t + 1u];
  }
  if (lid < 9u) { grp[lid] = info[ai + 5u + lid]; }
  workgroupBarrier();
${kmax > 0 ? stageBlockWgsl() : ''}
  if (b >= info[ai + 1u]) { return; }
  let r0 = info[ai];
  let bi = u.beta_info + ${BETA_WORDS}u * (info[ai + 2u] + b);
`;
}

/** Workgroup bytes of the float32 kernel for `mA` α replacements per string and a staged block of `kmax` entries. */
export function sigmaWorkgroupBytes(mA: number, kmax = 0): number {
  return workgroupBaseBytes(mA) + 4 * kmax;
}

/** The α–β sum over β replacements: from the staged block (kmax > 0) or from the integrals' buffer. */
function alphaBetaWgsl(kmax: number): string {
  if (kmax === 0) {
    return `fn alpha_beta(e0: u32) -> f32 {
  var s = 0.0;
  for (var e = 0u; e < u.mb; e++) {
    let bp = rep[e0 + 2u * e];
    let w = rep[e0 + 2u * e + 1u];
    let rs = w & 0xffffu;
    let g = (w >> 16u) & 7u;
    var d = 0.0;
    for (var t = grp[g]; t < grp[g + 1u]; t++) {
      let k = wkey[t];
      let v = eri[(k & ~SIGN) + rs] * x[wrow[t] + bp];
      d += select(v, -v, (k & SIGN) != 0u);
    }
    s += select(d, -d, (w & SIGN) != 0u);
  }
  return s;
}`;
  }
  return `fn alpha_beta(e0: u32) -> f32 {
  var s = 0.0;
  for (var e = 0u; e < u.mb; e++) {
    let bp = rep[e0 + 2u * e];
    let w = rep[e0 + 2u * e + 1u];
    let g = (w >> 16u) & 7u;
    let t0 = grp[g];
    let sz = grp[g + 1u] - t0;
    let kb = koff[g] + (w & 0xffffu) * sz;
    var d = 0.0;
    for (var j = 0u; j < sz; j++) { d += kblk[kb + j] * x[wrow[t0 + j] + bp]; }
    s += select(d, -d, (w & SIGN) != 0u);
  }
  return s;
}`;
}

/**
 * WGSL of the σ kernel for `mA` α replacements per string (the workgroup arrays' size) and, when
 * `kmax` > 0, a staged integral block of at most `kmax` entries (./tables.ts `kmax`).
 */
export function sigmaWgsl(mA: number, kmax = 0): string {
  const ma = Math.max(1, mA);
  return `${preamble(SIGMA_UNIFORMS, SIGMA_BINDINGS)}
var<workgroup> wrow: array<u32, ${ma}>;
var<workgroup> wkey: array<u32, ${ma}>;
var<workgroup> grp: array<u32, 9>;
var<workgroup> koff: array<u32, 9>;
${kmax > 0 ? `var<workgroup> kblk: array<f32, ${kmax}>;` : ''}
const SIGN: u32 = 0x80000000u;

fn same_spin(ai: u32, bi: u32, r0: u32, b: u32) -> f32 {
  var s = 0.0;
  for (var e = info[ai + 3u]; e < info[ai + 4u]; e++) {
    let h = hrec[e];
    s += bitcast<f32>(h.y) * x[h.x + b];
  }
  for (var e = info[bi]; e < info[bi + 1u]; e++) {
    let h = hrec[e];
    s += bitcast<f32>(h.y) * x[r0 + h.x];
  }
  return s;
}

${alphaBetaWgsl(kmax)}

${sigmaMainHeadWgsl(kmax)}  let s = same_spin(ai, bi, r0, b) + alpha_beta(info[bi + 2u]);
  let k = r0 + b;
  if (u.bz == 1u) { y[k] = u.alpha * s; } else { y[k] = u.alpha * s + u.beta * y[k]; }
}`;
}

/** Bindings of the permutation gather: index, source, destination. */
export const GATHER_BINDINGS: WgslBinding[] = [
  { name: 'idx', type: 'array<u32>', access: 'r' },
  { name: 'src', type: 'array<f32>', access: 'r' },
  { name: 'dst', type: 'array<f32>', access: 'w' },
];

/** WGSL of dst[i] = α·src[idx[i]] + β·dst[i] (β = 0 flag: dst not read), i < n. */
export function gatherWgsl(): string {
  return `${preamble(
    [
      ['n', 'u32'],
      ['bz', 'u32'],
      ['alpha', 'f32'],
      ['beta', 'f32'],
    ],
    GATHER_BINDINGS,
  )}
@compute @workgroup_size(256)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = wg_linear(wid, nwg) * 256u + lid;
  if (i >= u.n) { return; }
  let v = u.alpha * src[idx[i]];
  if (u.bz == 1u) { dst[i] = v; } else { dst[i] = v + u.beta * dst[i]; }
}`;
}
