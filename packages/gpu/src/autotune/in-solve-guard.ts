/**
 * The product check of in-solve tuning. A candidate was verified against the float64
 * reference before the solve, on one vector; during the solve it could still give NaN, ±Inf or
 * wrong finite values (a kernel bug that one input does not show, a driver fault). Reading its
 * product back would stall the solve, so the check is done on the device: each tuning product
 * of a candidate other than the first (the operator's own, verified kernel) is also computed on
 * the first into scratch, and one kernel then compares the two, counts what disagrees into a
 * small flag buffer and writes the verified product into y. The solve therefore only ever uses
 * verified products while tuning; the flags come back with the timestamps, and a candidate
 * whose products disagreed is retired before the decision, so it can never win.
 * Cost: one more product and one O(n) pass per guarded tuning product (rounds × (candidates − 1)
 * of them in a solve), plus one scratch vector until the decision.
 * @module
 */
import type { GpuContext } from '../device/context';
import { signature, type WgslBinding } from '../kernels/wgsl/index';
import type { GpuBuf } from '../memory/buffers';
import { Uniforms } from '../memory/recorder';

/** u32 words per tuning product in the flag buffer: non-finite rows, max |y − s| bits, max |s| bits. */
export const GUARD_WORDS = 3;
/** A candidate's product is wrong when max |y − s| passes this share of max |s| (float32 summation order changes results by ~1e-7 of that). */
export const GUARD_REL = 1e-3;
const WG = 256;

const BINDINGS: WgslBinding[] = [
  { name: 's', type: 'array<f32>', access: 'r' },
  { name: 'y', type: 'array<f32>', access: 'w' },
  { name: 'flags', type: 'array<atomic<u32>>', access: 'w' },
];

/** WGSL of the check: per row compare, workgroup-reduce the counts, one atomic per workgroup. */
export function guardWgsl(): string {
  // finiteness by the exponent bits: a comparison with NaN may be folded away by a compiler
  return `struct U { n: u32, slot: u32, }
@group(0) @binding(0) var<uniform> u: U;
@group(0) @binding(1) var<storage, read> s: array<f32>;
@group(0) @binding(2) var<storage, read_write> y: array<f32>;
@group(0) @binding(3) var<storage, read_write> flags: array<atomic<u32>>;
fn wg_linear(wid: vec3<u32>, nwg: vec3<u32>) -> u32 { return wid.x + wid.y * nwg.x; }
fn finite(v: f32) -> bool { return (bitcast<u32>(v) & 0x7f800000u) != 0x7f800000u; }
var<workgroup> bad: atomic<u32>;
var<workgroup> dmax: atomic<u32>;
var<workgroup> smax: atomic<u32>;
@compute @workgroup_size(${WG})
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = wg_linear(wid, nwg) * ${WG}u + lid;
  if (i < u.n) {
    let si = s[i];
    let yi = y[i];
    // a non-finite verified value comes from the input (x or y), not from the candidate
    if (finite(si)) {
      let d = abs(yi - si);
      if (!finite(yi) || !finite(d)) { atomicAdd(&bad, 1u); } else { atomicMax(&dmax, bitcast<u32>(d)); }
      atomicMax(&smax, bitcast<u32>(abs(si)));
    }
    y[i] = si;
  }
  workgroupBarrier();
  if (lid == 0u) {
    let b = atomicLoad(&bad);
    if (b > 0u) { atomicAdd(&flags[u.slot], b); }
    atomicMax(&flags[u.slot + 1u], atomicLoad(&dmax));
    atomicMax(&flags[u.slot + 2u], atomicLoad(&smax));
  }
}`;
}

/**
 * Record: compare y (the candidate's product) with s (the verified one) over n rows, add the
 * counts to flags[slot … slot+2], and set y = s. O(n), one dispatch, no wait.
 */
export function recordGuard(ctx: GpuContext, s: GpuBuf, y: GpuBuf, flags: GpuBuf, slot: number, n: number): void {
  // the context caches pipelines by key (and recompiles after an eviction)
  const p = ctx.pipelines.get({ key: 'autotune:in-solve-guard', label: 'in-solve-guard', bindings: signature(BINDINGS), wgsl: guardWgsl });
  const u = Uniforms.take();
  u.u[0] = n;
  u.u[1] = slot;
  ctx.recorder.dispatch(p, [s, y, flags], u, Math.ceil(n / WG));
}

/** What the flags say about one tuning product: undefined when it agreed with the verified product. */
export function guardVerdict(words: Uint32Array, slot: number): string | undefined {
  const f = new Float32Array(words.buffer, words.byteOffset, words.length);
  const bad = words[slot]!;
  const d = f[slot + 1]!;
  const s = f[slot + 2]!;
  if (bad > 0) return `${bad} non-finite row(s) where the verified kernel's product is finite`;
  if (d > GUARD_REL * s) return `max |difference| ${d.toPrecision(3)} from the verified kernel's product, expected at most ${GUARD_REL} × max |y| = ${(GUARD_REL * s).toPrecision(3)}`;
  return undefined;
}
