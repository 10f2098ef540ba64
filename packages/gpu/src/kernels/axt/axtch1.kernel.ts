/**
 * AXTCH1 kernel (seed 004 §2.3.3, Listing 9): MODE = COM, TH = 1. Rows are packed back to back
 * in slots; one workgroup takes one block of BS slots (the last block may be shorter: padded to
 * whole tiles only, so it is guarded) over min(BS, 256) invocations: s1 products and head flags
 * into workgroup memory, s2 a scan of the block, s3 at each partition head i the partition's sum
 * os[i]. THW only sets where a slot sits in ax[]: the scan does not depend on it.
 *
 * Departure from the paper, for float32: Listing 9 runs Liu et al.'s fast segmented sum, a plain
 * block scan then os[i] = scan[i + off] − scan[i] + tmp[i] (Eq. (1)). In float32 the difference
 * of two prefix sums cancels: a short row after a heavy one in the same block came out with
 * relative errors of 10⁻³ (measured on a 10⁶-row power-law matrix, BS = 1024: 5000× the per-row
 * bound), which is what issue 14 reported as WRONG. Here s2 is a *segmented* scan restarting at
 * every head (wgsl/scan.ts `segmentedBlockScan`; each invocation first scans its BS/256
 * consecutive products the same way), and os[i] = sscan[i + off]: every partial sum holds only
 * its own partition's products, so each row meets the plain per-row bound and an Inf/NaN stays
 * in the rows that meet it — no fallback path needed. Cost: log2(256) barrier steps on (value,
 * flag) pairs instead of the subgroup scan.
 *
 * Heads: hdr ≠ 0 or the first slot of the block (hdr = 0 is also row 0's head with offset 0,
 * which Listing 9's `if (ro)` would drop). Offsets are masked with 2^log2(BS) − 1 and validated
 * on upload to stay inside the block.
 *
 * No float atomics (Listing 9 atomicAdds os[i] into y[row]): os[i] goes to part[k] at the head's
 * slot k (keyed by block and position); the combine pass (axt-partials.ts) adds a row's first
 * partition and its continuations at later block starts, part[k0] + Σ part[j·BS], and stores y.
 * @module
 */
import type { AxtComMatrix, AxtParams } from '@gpusparse/formats';
import type { GpuCaps, GpuLimits } from '../../device/context';
import type { SpmvKernel } from '../types';
import { entryArgs, preamble } from '../wgsl/index';
import { segmentedBlockScan } from '../wgsl/scan';
import { AX_PARAMS, axSlotWgsl, axVectorsFit, checkGather, matchLayoutParam } from './ax-device';
import { AXT_PRODUCT_UNIFORMS, type AxtDeviceMatrix, axPipelines, axtProductBindings, encodeAxt, uploadAxt } from './axt-device';
import { comRowPointer } from './axt-partials';

/** Parameters of {@link axtch1Kernel}. */
export type Axtch1Params = { thw: number; bs: number; gather: number; workgroupSize: number };

const BINDINGS = axtProductBindings(true);

/** Workgroup memory of the kernel in bytes: tmp and hd (BS each) + the scan's (value, flag) pairs. */
const wgBytes = (p: Axtch1Params): number => 8 * p.bs + 8 * Math.min(p.bs, p.workgroupSize);

/**
 * AXTCH1 SpMV. Cost per apply: gather (12 B/slot), product (12 B/slot + 4 B per head, one block
 * scan of BS per workgroup), combine (8 B/row + 4 B per row-block pair).
 * @example const h = axtch1Kernel.upload(ctx, axtch1Format.fromCsr(a, { thw: 32, bs: 512 }), { bs: 512 });
 */
export const axtch1Kernel: SpmvKernel<AxtComMatrix, Axtch1Params, AxtDeviceMatrix> = {
  id: 'axtch1',
  format: 'axtch1',
  title: 'AXTCH1: block scan + fast segmented sum (Eq. (1)) per block of BS slots, per-head partials + ordered per-row combine (seed 004 §2.3.3, Listing 9)',
  params: {
    thw: AX_PARAMS.thw('layout only'),
    bs: { description: 'block size BS (slots per block scan; any power of two 32..1024)', values: [1024, 256, 512] },
    gather: AX_PARAMS.gather,
    workgroupSize: { description: 'invocations per workgroup (min with BS)', values: [256] },
  },
  defaults: { thw: 32, bs: 1024, gather: 1, workgroupSize: 256 },
  formatParams: (p): Partial<AxtParams> => ({ thw: p.thw, th: 1, mode: 'COM', bs: p.bs }),
  supports(m, limits: GpuLimits, params) {
    const p = { ...this.defaults, ...params };
    if (m.bs !== undefined && m.bs < 32) return `BS = ${m.bs} is below the kernel's smallest block of 32 slots (convert with bs ≥ 32)`;
    if (wgBytes(p) > limits.maxComputeWorkgroupStorageSize) return `BS = ${p.bs} needs ${wgBytes(p)} bytes of workgroup memory, the device has ${limits.maxComputeWorkgroupStorageSize}`;
    if (Math.min(p.bs, p.workgroupSize) > limits.maxComputeInvocationsPerWorkgroup) return `workgroup of ${Math.min(p.bs, p.workgroupSize)} exceeds ${limits.maxComputeInvocationsPerWorkgroup} invocations`;
    return axVectorsFit(m, limits.maxStorageBufferBindingSize);
  },
  wgsl(p, _caps: GpuCaps) {
    const { thw, bs } = p;
    checkGather(this.id, p.gather);
    if (!(bs >= 32 && bs <= 1024 && (bs & (bs - 1)) === 0)) throw new RangeError(`axtch1: bs expected a power of two in 32..1024, got ${bs}`);
    const wg = Math.min(bs, p.workgroupSize);
    const ipt = bs / wg;
    return `${preamble(AXT_PRODUCT_UNIFORMS, BINDINGS)}
${axSlotWgsl(thw, p.gather)}
${segmentedBlockScan('sscan', wg)}
var<workgroup> tmp: array<f32, ${bs}>; // s1: the block's products; s2 overwrites them with the segmented scan
var<workgroup> hd: array<u32, ${bs}>;  // 1 at each partition head
@compute @workgroup_size(${wg})
fn main(${entryArgs()}) {
  let b = wg_linear(wid, nwg);
  if (b >= u.count) { return; } // uniform: the whole workgroup
  let base = b * ${bs}u;
  let len = min(${bs}u, u.slots - base); // the last block may be shorter
  // s1 (coalesced): products and head flags; past len a product of 0 continues the last partition exactly
  for (var j = 0u; j < ${ipt}u; j++) {
    let i = j * ${wg}u + lid;
    var v = 0.0;
    var f = 0u;
    if (i < len) {
      v = prod(base + i);
      f = select(0u, 1u, hdr[base + i] != 0u || i == 0u);
    }
    tmp[i] = v;
    hd[i] = f;
  }
  workgroupBarrier();
  // s2: each invocation scans its ${ipt} consecutive products, restarting at heads, then the
  // segmented block scan of the (any head, running sum) pairs carries partitions across invocations
  var loc: array<f32, ${ipt}>;
  var acc = 0.0;
  var first = ${ipt}u; // position of the first head in this invocation's run
  for (var j = 0u; j < ${ipt}u; j++) {
    let q = lid * ${ipt}u + j;
    if (hd[q] != 0u) {
      acc = tmp[q];
      first = min(first, j);
    } else {
      acc = acc + tmp[q];
    }
    loc[j] = acc;
  }
  let e = sscan_excl(lid, select(0u, 1u, first < ${ipt}u), acc);
  for (var j = 0u; j < ${ipt}u; j++) {
    var w = loc[j];
    if (j < first) { w = e + w; }
    tmp[lid * ${ipt}u + j] = w; // only this invocation ever reads these positions before the barrier
  }
  workgroupBarrier();
  // s3: a head's partition sum is the segmented scan at the partition's last slot
  for (var j = 0u; j < ${ipt}u; j++) {
    let i = j * ${wg}u + lid;
    if (i < len) {
      let h = hdr[base + i];
      if (h != 0u || i == 0u) {
        let o = min(h & ${bs - 1}u, len - 1u - i); // validated on upload
        part[base + i] = tmp[i + o];
      }
    }
  }
}`;
  },
  ...axPipelines<Axtch1Params>(BINDINGS, (p) => `axtch1(thw=${p.thw},bs=${p.bs},gather=${p.gather})`, true),
  upload(ctx, m, params = {}, opts) {
    const p = { ...this.defaults, ...params };
    matchLayoutParam(this.id, 'thw', p.thw, m.thw);
    matchLayoutParam(this.id, 'th', 1, m.th);
    matchLayoutParam(this.id, 'bs', p.bs, m.bs);
    const product = ctx.pipelines.get(this.pipelineSpec!(p, ctx.caps));
    return uploadAxt(ctx, this.id, m, {
      unit: p.bs,
      tile: p.thw,
      slotsPerPartial: 1,
      group: p.bs,
      ptr: comRowPointer(m, p.bs, this.id),
      aux: m.hdr,
      product,
      gather: p.gather,
      thw: p.thw,
      dispatch: (slots) => ({ groups: Math.ceil(slots / p.bs), count: Math.ceil(slots / p.bs) }),
    }, opts);
  },
  encode: (ctx, h, x, y, scale) => encodeAxt(ctx, h, x, y, scale),
};
