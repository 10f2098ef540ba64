/**
 * C = op(A)·op(B) on the device with square A, B and C in CDM compact diagonal storage (seed 002
 * §3.2, §4, §6.1, Algorithm 1 — banded × banded).
 *
 * Algorithm 1: C's compact diagonals are fixed on the host ({(kA + kB) mod n}); a T×T workgroup
 * computes a T×T tile of C's CDM array — T compact diagonals × T consecutive positions t — one
 * invocation per entry. Block iteration j stages a T×T tile of A in workgroup memory: A's
 * compact diagonals jT … jT + T − 1 at the tile's positions t (the element of A that entry t of
 * any C diagonal needs is A_kA[t], at the same t). After a barrier every invocation makes T
 * multiply–adds C_kC[t] += A_kA[t]·B_kB[(t + kA) mod n] with kB = (kC − kA) mod n, reading B
 * from global memory through a dense diagonal lookup (the paper's BdiagDense) when B has kB.
 * Each entry of C has one owner that sums in ascending kA — the reference's order: no atomics,
 * deterministic. Transposed operands are read through reverse compact diagonals
 * ((Xᵀ)_k[t] = X_{(n−k) mod n}[(t + k) mod n]) with no copy, as in the reference.
 *
 * Cost: dgC·n·dgA multiply-add slots (a B lookup per slot, a product when B has the diagonal),
 * ⌈dgA / T⌉ barriers per tile; A read once per C-diagonal tile, reused T times from workgroup memory.
 * @module
 */
import { type CdmMatrix, type CdmSpgemmOptions, cdmAllocate, cdmSpgemmDiagonals, InvalidParameterError } from '@gpusparse/formats';
import type { GpuContext } from '../device/context';
import { entryArgs, preamble, signature, type WgslBinding } from '../kernels/wgsl/index';
import { uploadF32, uploadU32 } from '../memory/upload';
import { checkBinding, type DeviceProduct, deviceProduct, nonZeroMask, uniformWords } from './common';

/** Options of {@link cdmSpgemmGpu}: the reference's options plus the tile edge T. */
export interface CdmSpgemmGpuOptions extends CdmSpgemmOptions {
  /** Tile edge T (T² invocations per workgroup; the paper uses 16). One of 4, 8, 16. Default 16. */
  readonly tile?: number;
}

const BINDINGS: readonly WgslBinding[] = [
  { name: 'adiag', type: 'array<i32>', access: 'r' },
  { name: 'aval', type: 'array<f32>', access: 'r' },
  { name: 'bdense', type: 'array<i32>', access: 'r' },
  { name: 'bval', type: 'array<f32>', access: 'r' },
  { name: 'cdiag', type: 'array<u32>', access: 'r' },
  { name: 'cval', type: 'array<f32>', access: 'w' },
];

/**
 * Algorithm 1's shader for tile edge T: adiag holds (kA, stored row of A) per compact diagonal of
 * op(A), ascending kA; bdense[kB] the stored row of op(B)'s diagonal kB or −1; cdiag C's indices.
 * @example cdmSpgemmWgsl(16)
 */
export function cdmSpgemmWgsl(T: number): string {
  const uniforms = [['n', 'u32'], ['dgc', 'u32'], ['dga', 'u32'], ['tiles_t', 'u32'], ['trans_a', 'u32'], ['trans_b', 'u32']] as const;
  return `${preamble(uniforms, BINDINGS)}
var<workgroup> daS: array<f32, ${T * T}>;
var<workgroup> kaS: array<i32, ${T}>;
@compute @workgroup_size(${T * T})
fn main(${entryArgs()}) {
  let w = wg_linear(wid, nwg);
  if (w >= u.tiles_t * ((u.dgc + ${T - 1}u) / ${T}u)) { return; } // uniform: whole workgroup
  let tx = lid % ${T}u;
  let ty = lid / ${T}u;
  let t = (w % u.tiles_t) * ${T}u + tx;
  let dc = (w / u.tiles_t) * ${T}u + ty;
  let mine = dc < u.dgc && t < u.n;
  var kc = 0u;
  if (mine) { kc = cdiag[dc]; }
  var result = 0.0;
  for (var j = 0u; j * ${T}u < u.dga; j++) {
    // stage A's tile: invocation (ty, tx) loads op(A)_{k(jT + ty)}[t]
    let q = j * ${T}u + ty;
    var v = 0.0;
    var ka = -1;
    if (q < u.dga) {
      ka = adiag[2u * q];
      if (t < u.n) {
        let s = select(t, (t + u32(ka)) % u.n, u.trans_a != 0u);
        v = aval[u32(adiag[2u * q + 1u]) * u.n + s];
      }
    }
    daS[lid] = v;
    if (tx == 0u) { kaS[ty] = ka; }
    workgroupBarrier();
    if (mine) {
      for (var r = 0u; r < ${T}u; r++) {
        let kar = kaS[r];
        if (kar < 0) { break; }
        let kb = (kc + u.n - u32(kar)) % u.n;
        let db = bdense[kb];
        if (db >= 0) {
          // C_kC[t] += A_kA[t]·B_kB[(t + kA) mod n]
          let jj = (t + u32(kar)) % u.n;
          let sb = select(jj, (jj + kb) % u.n, u.trans_b != 0u);
          result = result + daS[r * ${T}u + tx] * bval[u32(db) * u.n + sb];
        }
      }
    }
    workgroupBarrier();
  }
  if (mine) { cval[dc * u.n + t] = result; }
}`;
}

/** op(X)'s compact indices, ascending, each with the stored row of X it reads. O(dg log dg). */
function effective(x: CdmMatrix, transpose: boolean): [number, number][] {
  const n = x.rows;
  const out: [number, number][] = Array.from(x.offsets, (k, d) => [transpose ? (n - k) % n : k, d]);
  return out.sort((p, q) => p[0] - q[0]);
}

/**
 * Prepare C = op(A)·op(B) on the device for CDM operands (Algorithm 1): C's compact diagonals
 * (as the CPU reference), A's effective diagonal table, B's dense lookup; upload A, B (float32)
 * and allocate C. Throws as the reference (orders differ, too many diagonals) and
 * NotSupportedError when an array exceeds one binding. Cost: O(dgA·dgB + n) host work plus uploads.
 * @example
 * const prod = cdmSpgemmGpu(ctx, cdmFromCsr(a), cdmFromCsr(b), { transposeB: true });
 * prod.encode(); const c = await prod.result(); // cdmToCsr(c) ≈ A·Bᵀ
 */
export function cdmSpgemmGpu(ctx: GpuContext, a: CdmMatrix, b: CdmMatrix, opts: CdmSpgemmGpuOptions = {}): DeviceProduct<CdmMatrix> {
  const T = opts.tile ?? 16;
  if (![4, 8, 16].includes(T)) throw new InvalidParameterError('tile', 'one of 4, 8, 16', T);
  const ks = cdmSpgemmDiagonals(a, b, opts); // throws DimensionMismatchError on different orders
  const maxDiagonals = opts.maxDiagonals ?? 4096;
  if (ks.length > maxDiagonals) throw new InvalidParameterError('maxDiagonals', `at least ${ks.length} (C = A·B has ${ks.length} compact diagonals)`, maxDiagonals);
  const n = a.rows;
  const c = cdmAllocate(n, ks);
  const ea = effective(a, opts.transposeA ?? false);
  const bdense = new Int32Array(n).fill(-1);
  for (const [k, d] of effective(b, opts.transposeB ?? false)) bdense[k] = d;
  let pairsPerC = 0;
  for (const kc of ks) for (const [ka] of ea) if (bdense[(kc - ka + n) % n]! >= 0) pairsPerC++;
  checkBinding(ctx, 'cdmSpgemmGpu C values', c.values.length);
  checkBinding(ctx, 'cdmSpgemmGpu A values', a.values.length);
  checkBinding(ctx, 'cdmSpgemmGpu B values', b.values.length);
  const text = cdmSpgemmWgsl(T);
  const pipeline = ctx.pipelines.get({ key: text, label: `cdm-spgemm(T=${T})`, bindings: signature(BINDINGS), wgsl: () => text });
  const out = ctx.buffers.acquire(Math.max(1, c.values.length) * 4, undefined, 'cdm-spgemm-c');
  const buffers = [
    uploadU32(ctx, Int32Array.from(ea.flat()), 'cdm-spgemm-adiag'),
    uploadF32(ctx, a.values, 'cdm-spgemm-a'),
    uploadU32(ctx, bdense, 'cdm-spgemm-bdense'),
    uploadF32(ctx, b.values, 'cdm-spgemm-b'),
    uploadU32(ctx, c.offsets, 'cdm-spgemm-cdiag'),
    out,
  ];
  const tilesT = Math.ceil(n / T);
  const tr = (f?: boolean) => (f ? 1 : 0);
  return deviceProduct({
    ctx,
    template: c,
    pipeline,
    buffers,
    out,
    outElems: c.values.length,
    uniforms: uniformWords([n, ks.length, ea.length, tilesT, tr(opts.transposeA), tr(opts.transposeB)]),
    groups: tilesT * Math.ceil(ks.length / T),
    multiplyAdds: pairsPerC * n,
    withValues: (values) => ({ ...c, values, ...nonZeroMask(values) }),
  });
}
