/**
 * AXTCH kernel (seed 004 §2.3.4, Listing 11): MODE = COM, TH > 1. Rows are packed column-major
 * into tiles of TH steps × THW columns; a column may hold several rows' partitions. One
 * invocation per tile column walks its partitions top to bottom as Listing 11 does: read the
 * head's hdr word, offset o = h & (2^offsetBits − 1) (TH need not be a power of two), sum the
 * o + 1 products directly, jump to the next head. Direct partition sums — no prefix-sum
 * subtraction — so the rounding error is the row's own and a non-finite x reaches only the rows
 * that meet it. The walk starts at the top of each column, where a head always is, so row 0's
 * hdr = 0 head is handled by position, not by testing hdr ≠ 0.
 *
 * No float atomics (Listing 11 atomicAdds each partition into y[row]): the partition sum goes
 * to part[k] at the compacted entry index k = column·TH + step of its head; the combine pass
 * (axt-partials.ts) adds part[k0] + Σ part[j·TH] over the row's column starts and stores y.
 * @module
 */
import { type AxtComMatrix, type AxtParams, axtCeilLog2 } from '@gpusparse/formats';
import type { SpmvKernel } from '../types';
import { entryArgs, preamble } from '../wgsl/index';
import { AX_PARAMS, axSlotWgsl, axVectorsFit, checkGather, matchLayoutParam } from './ax-device';
import { AXT_PRODUCT_UNIFORMS, type AxtDeviceMatrix, axPipelines, axtProductBindings, encodeAxt, uploadAxt } from './axt-device';
import { comRowPointer } from './axt-partials';

/** Parameters of {@link axtchKernel}. */
export type AxtchParams = { thw: number; th: number; gather: number; workgroupSize: number };

const BINDINGS = axtProductBindings(true);

/**
 * AXTCH SpMV. Cost per apply: gather (12 B/slot), product (12 B/slot + 4 B per head),
 * combine (8 B/row + 4 B per row-column pair).
 * @example const h = axtchKernel.upload(ctx, axtchFormat.fromCsr(a, { thw: 32, th: 16 }), { th: 16 });
 */
export const axtchKernel: SpmvKernel<AxtComMatrix, AxtchParams, AxtDeviceMatrix> = {
  id: 'axtch',
  format: 'axtch',
  title: 'AXTCH: one invocation per tile column walks its hdr partitions with direct sums, per-head partials + ordered per-row combine (seed 004 §2.3.4, Listing 11)',
  params: {
    thw: AX_PARAMS.thw('columns per tile'),
    th: { description: 'tile height TH ≥ 2 (any integer; hdr mask 2^⌈log2 TH⌉ − 1)', values: [4, 3, 16] },
    gather: AX_PARAMS.gather,
    workgroupSize: AX_PARAMS.workgroupSize,
  },
  defaults: { thw: 32, th: 4, gather: 1, workgroupSize: 256 },
  formatParams: (p): Partial<AxtParams> => ({ thw: p.thw, th: p.th, mode: 'COM' }),
  supports: (m, limits) => axVectorsFit(m, limits.maxStorageBufferBindingSize),
  wgsl(p) {
    const { thw, th, workgroupSize: wg } = p;
    checkGather(this.id, p.gather);
    if (!(Number.isInteger(th) && th >= 2)) throw new RangeError(`axtch: th expected an integer ≥ 2, got ${th}`);
    const mask = 2 ** axtCeilLog2(th) - 1;
    return `${preamble(AXT_PRODUCT_UNIFORMS, BINDINGS)}
${axSlotWgsl(thw, p.gather)}
@compute @workgroup_size(${wg})
fn main(${entryArgs()}) {
  let c = wg_linear(wid, nwg) * ${wg}u + lid;
  if (c >= u.count) { return; }
  // slot of (tile t, step f, lane l) = t·TH·THW + f·THW + l
  let s0 = (c / ${thw}u) * ${th * thw}u + (c % ${thw}u);
  var f = 0u;
  loop {
    if (f >= ${th}u) { break; }
    let o = min(hdr[s0 + f * ${thw}u] & ${mask}u, ${th - 1}u - f); // offset validated on upload
    var v = 0.0;
    for (var q = f; q <= f + o; q++) { v = v + prod(s0 + q * ${thw}u); }
    part[c * ${th}u + f] = v;
    f = f + o + 1u;
  }
}`;
  },
  ...axPipelines<AxtchParams>(BINDINGS, (p) => `axtch(thw=${p.thw},th=${p.th},gather=${p.gather})`, true),
  upload(ctx, m, params = {}, opts) {
    const p = { ...this.defaults, ...params };
    matchLayoutParam(this.id, 'thw', p.thw, m.thw);
    matchLayoutParam(this.id, 'th', p.th, m.th);
    matchLayoutParam(this.id, 'offsetBits', axtCeilLog2(p.th), m.offsetBits);
    const product = ctx.pipelines.get(this.pipelineSpec!(p, ctx.caps));
    const { thw, th } = p;
    return uploadAxt(ctx, this.id, m, {
      unit: th * thw,
      slotsPerPartial: 1,
      group: th,
      ptr: comRowPointer(m, th, this.id),
      aux: m.hdr,
      product,
      gather: p.gather,
      thw,
      dispatch: (slots) => ({ groups: Math.ceil(slots / th / p.workgroupSize), count: slots / th }),
    }, opts);
  },
  encode: (ctx, h, x, y, scale) => encodeAxt(ctx, h, x, y, scale),
};
