/**
 * AXTCH1 kernel (seed 004 §2.3.3, Listing 9): MODE = COM, TH = 1. Rows are packed back to back
 * in slots; one workgroup takes one block of BS slots (the last block may be shorter: padded to
 * whole tiles only, so it is guarded) and runs the fast segmented sum of Liu et al.:
 * s1 products into workgroup memory (tmp), s2 an inclusive block scan, s3 at each partition head
 * i, os[i] = scan[i + off] − scan[i] + tmp[i] (Eq. (1)). The block scan is Listing 9's five
 * steps (wgsl/scan.ts: subgroup scan, collect, scan the totals, accumulate, write) over
 * min(BS, 256) invocations; with BS = 512 or 1024 each invocation first scans BS/256 consecutive
 * products of its own. THW only sets where a slot sits in ax[]: the scan does not depend on it.
 *
 * Heads: hdr ≠ 0 or the first slot of the block (hdr = 0 is also row 0's head with offset 0,
 * which Listing 9's `if (ro)` would drop). Offsets are masked with 2^log2(BS) − 1 and validated
 * on upload to stay inside the block.
 *
 * Rounding: Eq. (1) subtracts two prefix sums, so a partition's error scales with its block's
 * Σ|a·x| (declared to the conformance tier by `errorBound`). With Inf/NaN in a block's scan the
 * kernel does what the float64 reference does: every partition of that block is summed directly
 * from tmp, so non-finite values reach only the rows that meet them.
 *
 * No float atomics (Listing 9 atomicAdds os[i] into y[row]): os[i] goes to part[k] at the head's
 * slot k (keyed by block and position); the combine pass (axt-partials.ts) adds a row's first
 * partition and its continuations at later block starts, part[k0] + Σ part[j·BS], and stores y.
 * @module
 */
import { type AxtComMatrix, type AxtParams, axtHdrRow } from '@gpusparse/formats';
import type { GpuCaps, GpuLimits } from '../../device/context';
import type { SpmvKernel } from '../types';
import { entryArgs, preamble } from '../wgsl/index';
import { blockScan, blockScanUsesSubgroups, NON_FINITE } from '../wgsl/scan';
import { AX_PARAMS, axSlotWgsl, axVectorsFit, checkGather, matchLayoutParam, productPipeline } from './ax-device';
import { AXT_PRODUCT_UNIFORMS, type AxtDeviceMatrix, axtProductBindings, encodeAxt, uploadAxt } from './axt-device';
import { comRowPointer } from './axt-partials';

/** Parameters of {@link axtch1Kernel}. */
export type Axtch1Params = { thw: number; bs: number; gather: number; workgroupSize: number };

const BINDINGS = axtProductBindings(true);

/** Workgroup memory of the kernel in bytes: tmp and scan (BS each) + the scan's totals + a flag. */
const wgBytes = (p: Axtch1Params): number => 8 * p.bs + 4 * Math.min(p.bs, p.workgroupSize) + 16;

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
  wgsl(p, caps: GpuCaps) {
    const { thw, bs } = p;
    checkGather(this.id, p.gather);
    if (!(bs >= 32 && bs <= 1024 && (bs & (bs - 1)) === 0)) throw new RangeError(`axtch1: bs expected a power of two in 32..1024, got ${bs}`);
    const wg = Math.min(bs, p.workgroupSize);
    const ipt = bs / wg;
    const sg = blockScanUsesSubgroups(caps);
    return `${preamble(AXT_PRODUCT_UNIFORMS, BINDINGS, { subgroups: sg })}
${axSlotWgsl(thw, p.gather)}
${NON_FINITE}
${blockScan('bscan', wg, sg)}
var<workgroup> tmp: array<f32, ${bs}>;  // s1: the block's products
var<workgroup> scan: array<f32, ${bs}>; // s2: their inclusive scan
var<workgroup> bad: atomic<u32>;        // the scan met Inf/NaN: sum partitions directly
@compute @workgroup_size(${wg})
fn main(${entryArgs({ subgroups: sg })}) {
  let b = wg_linear(wid, nwg);
  if (b >= u.count) { return; } // uniform: the whole workgroup
  let base = b * ${bs}u;
  let len = min(${bs}u, u.slots - base); // the last block may be shorter
  if (lid == 0u) { atomicStore(&bad, 0u); }
  for (var j = 0u; j < ${ipt}u; j++) {
    let i = j * ${wg}u + lid;
    var v = 0.0;
    if (i < len) { v = prod(base + i); }
    tmp[i] = v;
  }
  workgroupBarrier();
  // each invocation scans its ${ipt} consecutive products, then the block scan of the totals
  var loc: array<f32, ${ipt}>;
  var acc = 0.0;
  for (var j = 0u; j < ${ipt}u; j++) { acc = acc + tmp[lid * ${ipt}u + j]; loc[j] = acc; }
  let e = bscan_excl(lid, ${sg ? 'sg_lane, sg_size' : '0u, 0u'}, acc);
  var nf = 0u;
  for (var j = 0u; j < ${ipt}u; j++) {
    let w = e + loc[j];
    scan[lid * ${ipt}u + j] = w;
    nf = nf | non_finite(w);
  }
  if (nf != 0u) { atomicOr(&bad, 1u); }
  workgroupBarrier();
  let direct = atomicLoad(&bad) != 0u;
  for (var j = 0u; j < ${ipt}u; j++) {
    let i = j * ${wg}u + lid;
    if (i < len) {
      let h = hdr[base + i];
      if (h != 0u || i == 0u) {
        let o = min(h & ${bs - 1}u, len - 1u - i); // validated on upload
        var v = 0.0;
        if (direct) {
          for (var q = i; q <= i + o; q++) { v = v + tmp[q]; }
        } else {
          v = scan[i + o] - scan[i] + tmp[i]; // Eq. (1)
        }
        part[base + i] = v;
      }
    }
  }
}`;
  },
  upload(ctx, m, params = {}, opts) {
    const p = { ...this.defaults, ...params };
    matchLayoutParam(this.id, 'thw', p.thw, m.thw);
    matchLayoutParam(this.id, 'th', 1, m.th);
    matchLayoutParam(this.id, 'bs', p.bs, m.bs);
    const text = this.wgsl(p, ctx.caps);
    const label = `${this.id}(thw=${p.thw},bs=${p.bs},gather=${p.gather}${blockScanUsesSubgroups(ctx.caps) ? ',subgroup' : ',wgmem'})`;
    const product = productPipeline(ctx, text, BINDINGS, label);
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
  /**
   * Eq. (1)'s extra error per row: each of the row's partitions adds 2·BS·ε·Σ_block|a·x| (two
   * prefix sums of at most BS terms in any summation order, plus the subtraction and addition).
   */
  errorBound(m, params, x) {
    const bs = m.bs ?? params.bs;
    const out = new Float64Array(m.rows);
    const { hdr, xIdx, ax, thw, nnz, offsetBits } = m;
    for (let b0 = 0; b0 < hdr.length; b0 += bs) {
      const b1 = Math.min(hdr.length, b0 + bs);
      let mass = 0; // Σ_block |a·x|
      for (let s = b0; s < b1; s++) {
        const c = xIdx[s]!;
        if (c >= 0) mass += Math.abs(ax[2 * thw * Math.floor(s / thw) + (s % thw)]! * x[c]!);
      }
      for (let s = b0; s < Math.min(b1, nnz); s++) {
        const h = hdr[s]!;
        if (h !== 0 || s === b0) out[axtHdrRow(h, offsetBits)]! += 2 * bs * 2 ** -24 * mass;
      }
    }
    return out;
  },
  encode: (ctx, h, x, y, scale) => encodeAxt(ctx, h, x, y, scale),
};
