/**
 * C = A·B on the device with A, B and C in HM diagonal storage (seed 002 §3.1, §6.2,
 * Algorithm 2 — structured sparse × structured sparse).
 *
 * Algorithm 2 gives one thread per stored entry of A, loops it over B's diagonals and adds each
 * product a_ij·b_jl into c_il with an atomic add. WGSL has no float atomics, so the same work is
 * *grouped by the diagonal of C it feeds*: Algorithm 2's map (Ad, Bd) → Cd = Ad + Bd is inverted
 * on the host into, for each diagonal of C, the list of pairs (dA, dB) with dA + dB = dC whose
 * index ranges meet (C's diagonal set is fixed before any arithmetic, as in the reference). One
 * invocation owns one entry c_il of C and adds, pair by pair in A's HM order, a_{i,i+dA}·b_{i+dA,l}
 * — the products Algorithm 2's threads would have scattered into it. Every entry of C has exactly
 * one writer and a fixed summation order: no atomics, deterministic. Each workgroup covers
 * consecutive entries of one C diagonal (a host table maps workgroups to (diagonal, first
 * entry)), so the pair loop is uniform across the workgroup and consecutive invocations read
 * consecutive slots of A's and B's diagonals (HM's stride-1 layout, indexed by min(i, j)).
 *
 * Cost: Σ over C diagonals of |diag|·pairs multiply–adds (≈ dgA·dgB·n; fill included), one
 * dispatch; 16 bytes per pair and 8 per workgroup of tables.
 * @module
 */
import { DimensionMismatchError, type HmMatrix, hmAllocate, hmDiagonalSize, hmSpgemmDiagonals, InvalidParameterError } from '@gpusparse/formats';
import type { GpuContext } from '../device/context';
import { entryArgs, preamble, signature, type WgslBinding } from '../kernels/wgsl/index';
import { uploadF32, uploadU32 } from '../memory/upload';
import { checkBinding, type DeviceProduct, deviceProduct, nonZeroMask, uniformWords } from './common';

/** Options of {@link hmSpgemmGpu}. */
export interface HmSpgemmGpuOptions {
  /** Invocations per workgroup (entries of one C diagonal per workgroup). Default 256. */
  readonly workgroupSize?: number;
  /** Refuse when C would have more diagonals than this (as the CPU reference). Default 4096. */
  readonly maxDiagonals?: number;
}

const BINDINGS: readonly WgslBinding[] = [
  { name: 'wgt', type: 'array<u32>', access: 'r' },
  { name: 'cinfo', type: 'array<i32>', access: 'r' },
  { name: 'pairs', type: 'array<i32>', access: 'r' },
  { name: 'aval', type: 'array<f32>', access: 'r' },
  { name: 'bval', type: 'array<f32>', access: 'r' },
  { name: 'cval', type: 'array<f32>', access: 'w' },
];

/**
 * The HM product shader: workgroup w takes C diagonal wgt[2w] from entry wgt[2w + 1]; cinfo
 * holds per C diagonal (offset kC, start, length, first pair, end pair); pairs hold (kA, baseA,
 * kB, baseB) with A's slot of a_ij = baseA + i and B's slot of b_jl = baseB + j.
 * @example hmSpgemmWgsl(256)
 */
export function hmSpgemmWgsl(wg: number): string {
  return `${preamble([['count', 'u32'], ['inner', 'i32']], BINDINGS)}
@compute @workgroup_size(${wg})
fn main(${entryArgs()}) {
  let w = wg_linear(wid, nwg);
  if (w >= u.count) { return; }
  let dc = wgt[2u * w];
  let p = wgt[2u * w + 1u] + lid;
  let e = 5u * dc;
  if (p >= u32(cinfo[e + 2u])) { return; }
  let kc = cinfo[e];
  // entry p of diagonal kC is c_il with i = p (kC ≥ 0) or p − kC (kC < 0), l = i + kC
  let i = select(i32(p), i32(p) - kc, kc < 0);
  var s = 0.0;
  for (var q = u32(cinfo[e + 3u]); q < u32(cinfo[e + 4u]); q++) {
    let j = i + pairs[4u * q];
    // c_il += a_ij·b_jl when column j of A (row j of B) exists
    if (j >= 0 && j < u.inner) { s = s + aval[u32(pairs[4u * q + 1u] + i)] * bval[u32(pairs[4u * q + 3u] + j)]; }
  }
  cval[u32(cinfo[e + 1u]) + p] = s;
}`;
}

/** Rows [lo, hi) of an rows × cols matrix that diagonal k covers. O(1). */
function rowSpan(k: number, rows: number, cols: number): [number, number] {
  return [Math.max(0, -k), Math.min(rows, cols - k)];
}

/**
 * Prepare C = A·B on the device for HM operands: C's diagonals (as the CPU reference), the pair
 * lists per C diagonal, the workgroup table; upload A, B (float32) and allocate C. Throws
 * DimensionMismatchError when columns of A ≠ rows of B, InvalidParameterError past maxDiagonals,
 * NotSupportedError when an array exceeds one binding.
 * Cost: O(dgA·dgB + Σ|diag C| / workgroupSize) host work plus the uploads.
 * @example
 * const prod = hmSpgemmGpu(ctx, hmFromCsr(a), hmFromCsr(b));
 * prod.encode(); const c = await prod.result(); prod.dispose(); // hmToCsr(c) ≈ A·B
 */
export function hmSpgemmGpu(ctx: GpuContext, a: HmMatrix, b: HmMatrix, opts: HmSpgemmGpuOptions = {}): DeviceProduct<HmMatrix> {
  if (a.cols !== b.rows) throw new DimensionMismatchError('hmSpgemmGpu: rows of B (= columns of A)', a.cols, b.rows);
  const wg = opts.workgroupSize ?? 256;
  const maxDiagonals = opts.maxDiagonals ?? 4096;
  const m = a.rows;
  const inner = a.cols;
  const n = b.cols;
  const offsets = hmSpgemmDiagonals(a, b);
  if (offsets.length > maxDiagonals) throw new InvalidParameterError('maxDiagonals', `at least ${offsets.length} (C = A·B has ${offsets.length} diagonals)`, maxDiagonals);
  const c = hmAllocate(m, n, offsets);
  // B's diagonal number of each offset, for the pair lists
  const bOf = new Map<number, number>();
  for (let v = 0; v < b.numDiagonals; v++) bOf.set(b.offsets[v]!, v);
  const cinfo = new Int32Array(5 * c.numDiagonals);
  const pairs: number[] = [];
  const wgt: number[] = [];
  let multiplyAdds = 0;
  for (let dc = 0; dc < c.numDiagonals; dc++) {
    const kc = c.offsets[dc]!;
    const len = hmDiagonalSize(c, dc);
    const [ci0, ci1] = rowSpan(kc, m, n);
    const first = pairs.length / 4;
    for (let u = 0; u < a.numDiagonals; u++) {
      const ka = a.offsets[u]!;
      const v = bOf.get(kc - ka);
      if (v === undefined) continue;
      const kb = kc - ka;
      // rows i of C's diagonal with a_{i,i+kA} and b_{i+kA,l} inside A and B
      const [ai0, ai1] = rowSpan(ka, m, inner);
      const [bj0, bj1] = rowSpan(kb, inner, n);
      const lo = Math.max(ci0, ai0, bj0 - ka);
      const hi = Math.min(ci1, ai1, bj1 - ka);
      if (lo >= hi) continue;
      pairs.push(ka, a.starts[u]! + Math.min(ka, 0), kb, b.starts[v]! + Math.min(kb, 0));
      multiplyAdds += hi - lo;
    }
    cinfo.set([kc, c.starts[dc]!, len, first, pairs.length / 4], 5 * dc);
    for (let p = 0; p < len; p += wg) wgt.push(dc, p);
  }
  checkBinding(ctx, 'hmSpgemmGpu C values', c.values.length);
  checkBinding(ctx, 'hmSpgemmGpu A values', a.values.length);
  checkBinding(ctx, 'hmSpgemmGpu B values', b.values.length);
  checkBinding(ctx, 'hmSpgemmGpu pair lists', pairs.length);
  const text = hmSpgemmWgsl(wg);
  const pipeline = ctx.pipelines.get({ key: text, label: `hm-spgemm(wg=${wg})`, bindings: signature(BINDINGS), wgsl: () => text });
  const out = ctx.buffers.acquire(Math.max(1, c.values.length) * 4, undefined, 'hm-spgemm-c');
  const buffers = [
    uploadU32(ctx, Uint32Array.from(wgt), 'hm-spgemm-wgt'),
    uploadU32(ctx, cinfo, 'hm-spgemm-cinfo'),
    uploadU32(ctx, Int32Array.from(pairs), 'hm-spgemm-pairs'),
    uploadF32(ctx, a.values, 'hm-spgemm-a'),
    uploadF32(ctx, b.values, 'hm-spgemm-b'),
    out,
  ];
  return deviceProduct({
    ctx,
    template: c,
    pipeline,
    buffers,
    out,
    outElems: c.values.length,
    uniforms: uniformWords([wgt.length / 2, inner]),
    groups: wgt.length / 2,
    multiplyAdds,
    withValues: (values) => ({ ...c, values, ...nonZeroMask(values) }),
  });
}
