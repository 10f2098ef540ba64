/**
 * WGSL of the device split of float64 values into df64 pairs: the host uploads the raw IEEE-754
 * words (8 bytes per value, the same bytes as the pair it becomes) and each invocation rewrites
 * its element in place as (hi, lo) = (fl32(v·2^s), fl32(v·2^s − hi)) — the host's `splitF64`
 * of v·2^s bit for bit. Integer arithmetic only: the rounding to float32 (to nearest, ties to
 * even, float32 subnormals and overflow to ±Inf included) is done on the mantissa bits, so no
 * floating-point rule of WGSL (flush of subnormals, reassociation, contraction) can change it.
 * The host split took 10.4 ms of a 126.8 ms solve on the H100 (1.73 M values), the device
 * split is one pass over 14 MB.
 * @module
 */
import { preamble, type WgslBinding } from '../kernels/wgsl/index';

/** Invocations per workgroup of the split and join kernels. */
export const SPLIT_WG = 256;

/** The uniform block: n, and the power of two `shift` (i32) that every value is multiplied by. */
const SPLIT_UNIFORMS = [
  ['n', 'u32'],
  ['shift', 'i32'],
] as const;

/** One binding: the raw float64 words in, the (hi, lo) float32 bits out (in place). */
export const SPLIT_BINDINGS: WgslBinding[] = [{ name: 'w', type: 'array<vec2<u32>>', access: 'w' }];

/**
 * 64-bit unsigned helpers on (hi, lo) u32 pairs and the round-to-float32 of N·2^k. WGSL takes a
 * shift amount modulo 32, so every shift by 0 or ≥ 32 is split out explicitly.
 */
const U64_LIB = `
fn shl32(a: u32, d: u32) -> u32 { if (d >= 32u) { return 0u; } return a << d; }
fn shr32(a: u32, d: u32) -> u32 { if (d >= 32u) { return 0u; } return a >> d; }
// N >> d for d in 0…64
fn shr64(n: vec2<u32>, d: u32) -> vec2<u32> {
  if (d == 0u) { return n; }
  if (d >= 64u) { return vec2<u32>(0u, 0u); }
  if (d >= 32u) { return vec2<u32>(0u, shr32(n.x, d - 32u)); }
  return vec2<u32>(n.x >> d, (n.y >> d) | shl32(n.x, 32u - d));
}
// N mod 2^d for d in 0…64
fn low64(n: vec2<u32>, d: u32) -> vec2<u32> {
  if (d >= 64u) { return n; }
  if (d >= 32u) { return vec2<u32>(n.x & (shl32(1u, d - 32u) - 1u), n.y); }
  return vec2<u32>(0u, n.y & (shl32(1u, d) - 1u));
}
// 2^d for d in 0…63
fn pow64(d: u32) -> vec2<u32> {
  if (d >= 32u) { return vec2<u32>(1u << (d - 32u), 0u); }
  return vec2<u32>(0u, 1u << d);
}
// a < b, a == b
fn lt64(a: vec2<u32>, b: vec2<u32>) -> bool { return a.x < b.x || (a.x == b.x && a.y < b.y); }
fn eq64(a: vec2<u32>, b: vec2<u32>) -> bool { return a.x == b.x && a.y == b.y; }
// a − b for a ≥ b
fn sub64(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
  let borrow = select(0u, 1u, a.y < b.y);
  return vec2<u32>(a.x - b.x - borrow, a.y - b.y);
}
fn bitlen64(n: vec2<u32>) -> u32 {
  if (n.x != 0u) { return 64u - countLeadingZeros(n.x); }
  return 32u - countLeadingZeros(n.y);
}

// The float32 nearest N·2^k (ties to even) as bits without sign, N > 0; .y = the dropped
// low bits D (the result is q·2^(k+D)), .z = 1 when q was rounded up (0 when exact or down).
fn round_f32(n: vec2<u32>, k: i32) -> vec3<u32> {
  let len = i32(bitlen64(n));
  let e = len - 1 + k; // exponent of the leading bit
  if (e > 127) { return vec3<u32>(0x7f800000u, 0u, 0u); }
  let normal = e >= -126;
  let d = select(-149 - k, len - 24, normal); // low bits that do not fit
  if (d <= 0) {
    let q = n.y << u32(-d); // N < 2^24 here: exact
    return vec3<u32>(select(q, (u32(e + 126) << 23u) + q, normal), 0u, 0u);
  }
  if (d > 64) { return vec3<u32>(0u, u32(d), 0u); } // below half the smallest subnormal
  let ud = u32(d);
  let q = shr64(n, ud).y; // < 2^25
  let rem = low64(n, ud);
  let half = pow64(ud - 1u);
  let up = lt64(half, rem) || (eq64(rem, half) && (q & 1u) == 1u);
  let qr = q + select(0u, 1u, up);
  // a carry out of the mantissa adds one to the exponent field: 2^24 → next binade, 0x7f800000 = Inf
  let bits = min(select(qr, (u32(e + 126) << 23u) + qr, normal), 0x7f800000u);
  return vec3<u32>(bits, ud, select(0u, 1u, up));
}
`;

/** WGSL of the in-place split (see the module comment). */
export function splitF64Wgsl(): string {
  return `${preamble(SPLIT_UNIFORMS, SPLIT_BINDINGS)}
${U64_LIB}
@compute @workgroup_size(${SPLIT_WG})
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = wg_linear(wid, nwg) * ${SPLIT_WG}u + lid;
  if (i >= u.n) { return; }
  let word = w[i]; // .x low word, .y high word (little-endian float64)
  let sign = word.y & 0x80000000u;
  let ex = i32((word.y >> 20u) & 0x7ffu);
  let frac = vec2<u32>(word.y & 0xfffffu, word.x);
  if (ex == 0x7ff) {
    // ±Inf stays ±Inf, NaN becomes the quiet NaN; lo = +0 (the host split's rule for non-finite hi)
    let nan = frac.x != 0u || frac.y != 0u;
    w[i] = vec2<u32>(select(sign | 0x7f800000u, 0x7fc00000u, nan), 0u);
    return;
  }
  // v = M·2^k with M the integer significand (implicit bit for normal doubles)
  let m = select(frac, vec2<u32>(frac.x | 0x100000u, frac.y), ex != 0);
  let k = select(-1074, ex - 1075, ex != 0) + u.shift;
  if (m.x == 0u && m.y == 0u) { w[i] = vec2<u32>(sign, 0u); return; } // ±0: hi = ±0, lo = +0
  let h = round_f32(m, k);
  if (h.x >= 0x7f800000u) { w[i] = vec2<u32>(sign | 0x7f800000u, 0u); return; } // overflow: ±Inf, lo = +0
  // R = M − q·2^D exactly: the low bits, or 2^D minus them when q was rounded up
  var r = low64(m, h.y);
  if (h.z == 1u) { r = sub64(pow64(h.y), r); }
  var lo = 0u; // v − hi = 0 gives +0
  if (r.x != 0u || r.y != 0u) {
    let rsign = select(sign, sign ^ 0x80000000u, h.z == 1u);
    lo = rsign | round_f32(r, k).x;
  }
  w[i] = vec2<u32>(sign | h.x, lo);
}`;
}

/** Bindings of the join: the df64 pairs in, the float64 words out (another buffer: x stays df64). */
export const JOIN_BINDINGS: WgslBinding[] = [
  { name: 'x', type: 'array<vec2<u32>>', access: 'r' },
  { name: 'y', type: 'array<vec2<u32>>', access: 'w' },
];

/**
 * 64-bit add and the float64 nearest N·2^k (N ≥ 1, k such that the result is a normal double:
 * df64 values lie in float32's range) as (low word, high word) without sign; ties to even.
 */
const JOIN_LIB = `
fn add64(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
  let lo = a.y + b.y;
  return vec2<u32>(a.x + b.x + select(0u, 1u, lo < a.y), lo);
}
fn shl64(n: vec2<u32>, d: u32) -> vec2<u32> {
  if (d == 0u) { return n; }
  if (d >= 64u) { return vec2<u32>(0u, 0u); }
  if (d >= 32u) { return vec2<u32>(shl32(n.y, d - 32u), 0u); }
  return vec2<u32>((n.x << d) | shr32(n.y, 32u - d), n.y << d);
}
fn round_f64(n: vec2<u32>, k: i32) -> vec2<u32> {
  let len = bitlen64(n);
  var q = n; // the 53-bit significand (with its leading bit)
  var e = i32(len) - 1 + k;
  if (len > 53u) {
    let d = len - 53u;
    q = shr64(n, d);
    let rem = low64(n, d);
    let half = pow64(d - 1u);
    if (lt64(half, rem) || (eq64(rem, half) && (q.y & 1u) == 1u)) {
      q = add64(q, vec2<u32>(0u, 1u));
      if (q.x >= 0x200000u) { q = shr64(q, 1u); e = e + 1; } // carried into bit 53
    }
  } else {
    q = shl64(n, 53u - len);
  }
  return vec2<u32>(q.y, (u32(e + 1023) << 20u) | (q.x & 0xfffffu));
}
// |v| of an f32 as M·2^k (M < 2^24), .z = sign bit
fn f32_parts(b: u32) -> vec3<i32> {
  let ex = i32((b >> 23u) & 0xffu);
  let m = b & 0x7fffffu;
  return vec3<i32>(select(i32(m), i32(m | 0x800000u), ex != 0), select(-149, ex - 150, ex != 0), i32(b >> 31u));
}
`;

/**
 * WGSL of the device join: y = fl64(hi + lo) for every df64 pair of x (the host's `joinF64`
 * bit for bit), integer arithmetic only. The exact sum is formed in a 64-bit frame: with the
 * exponents ≤ 40 apart exactly, else the smaller part shifted in with a sticky bit (it lies ≥ 16
 * bits below the larger's last bit, so one cancellation bit at most and ≥ 10 guard bits remain).
 */
export function joinF64Wgsl(): string {
  return `${preamble(SPLIT_UNIFORMS, JOIN_BINDINGS)}
${U64_LIB}
${JOIN_LIB}
fn join(hb: u32, lb: u32) -> vec2<u32> {
  let hn = (hb & 0x7f800000u) == 0x7f800000u;
  let ln = (lb & 0x7f800000u) == 0x7f800000u;
  if (hn || ln) {
    let hnan = hn && (hb & 0x7fffffu) != 0u;
    let lnan = ln && (lb & 0x7fffffu) != 0u;
    if (hnan || lnan || (hn && ln && hb != lb)) { return vec2<u32>(0u, 0x7ff80000u); }
    let s = select(lb, hb, hn) & 0x80000000u;
    return vec2<u32>(0u, s | 0x7ff00000u);
  }
  var a = f32_parts(hb);
  var b = f32_parts(lb);
  if (b.x == 0) {
    if (a.x == 0) { return vec2<u32>(0u, select(0u, 0x80000000u, a.z == 1 && b.z == 1)); } // +0 unless both −0
    b = a; a = vec3<i32>(0, 0, 0); // one term: convert it
  }
  if (a.x == 0) { let r = round_f64(vec2<u32>(0u, u32(b.x)), b.y); return vec2<u32>(r.x, r.y | (u32(b.z) << 31u)); }
  // big = the term whose leading bit is higher (the larger magnitude when equal)
  let la = i32(bitlen64(vec2<u32>(0u, u32(a.x)))) + a.y;
  let lb2 = i32(bitlen64(vec2<u32>(0u, u32(b.x)))) + b.y;
  var big = a;
  var small = b;
  // same leading position: the exponents differ by < 24, so the aligned magnitudes fit 48 bits
  let ab = shl64(vec2<u32>(0u, u32(a.x)), u32(max(0, a.y - b.y)));
  let bb = shl64(vec2<u32>(0u, u32(b.x)), u32(max(0, b.y - a.y)));
  if (lb2 > la || (lb2 == la && lt64(ab, bb))) { big = b; small = a; }
  let d = big.y - small.y;
  var nb: vec2<u32>;
  var ns: vec2<u32>;
  var k: i32;
  var sticky = false;
  if (d <= 40) {
    if (d >= 0) { nb = shl64(vec2<u32>(0u, u32(big.x)), u32(d)); ns = vec2<u32>(0u, u32(small.x)); k = small.y; }
    else { nb = vec2<u32>(0u, u32(big.x)); ns = shl64(vec2<u32>(0u, u32(small.x)), u32(-d)); k = big.y; }
  } else {
    nb = shl64(vec2<u32>(0u, u32(big.x)), 40u);
    let sh = u32(d - 40);
    ns = shr64(vec2<u32>(0u, u32(small.x)), sh);
    sticky = !eq64(low64(vec2<u32>(0u, u32(small.x)), sh), vec2<u32>(0u, 0u));
    k = big.y - 40;
  }
  var n: vec2<u32>;
  if (big.z == small.z) {
    n = add64(nb, ns);
    if (sticky) { n.y = n.y | 1u; }
  } else {
    n = sub64(nb, ns);
    if (sticky) { n = sub64(n, vec2<u32>(0u, 1u)); n.y = n.y | 1u; }
    if (n.x == 0u && n.y == 0u) { return vec2<u32>(0u, 0u); } // exact cancellation: +0
  }
  let r = round_f64(n, k);
  return vec2<u32>(r.x, r.y | (u32(big.z) << 31u));
}
@compute @workgroup_size(${SPLIT_WG})
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = wg_linear(wid, nwg) * ${SPLIT_WG}u + lid;
  if (i >= u.n) { return; }
  let p = x[i];
  y[i] = join(p.x, p.y);
}`;
}
