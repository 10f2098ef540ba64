/**
 * AXTUH kernel (seed 004 §2.3.2, Listing 6): MODE = UNC, TH > 1. A tile is TH steps × THW
 * columns stored column-major; each column holds entries of one row. One invocation per tile
 * column sums its TH products down the column (coalesced: the THW columns of a tile are
 * adjacent in ax[] at every step). No cross-lane step, so THW and the subgroup size are
 * independent.
 *
 * No float atomics (Listing 6 atomicAdds each column sum into y[rwp[c]]): the column sum goes
 * to part[c]; the combine pass (axt-partials.ts) adds each row's columns in order and stores
 * y. Unused columns at the end of the last tile (all padding) are summed to 0 and never read.
 * @module
 */
import type { AxtParams, AxtUncMatrix } from '@gpusparse/formats';
import type { SpmvKernel } from '../types';
import { entryArgs, preamble } from '../wgsl/index';
import { AX_PARAMS, axSlotWgsl, axVectorsFit, checkGather, matchLayoutParam } from './ax-device';
import { AXT_PRODUCT_UNIFORMS, type AxtDeviceMatrix, axPipelines, axtProductBindings, encodeAxt, uploadAxt } from './axt-device';
import { uncRowPointer } from './axt-partials';

/** Parameters of {@link axtuhKernel}. */
export type AxtuhParams = { thw: number; th: number; gather: number; workgroupSize: number };

const BINDINGS = axtProductBindings(false);

/**
 * AXTUH SpMV. Cost per apply: gather (12 B/slot), product (8 B/slot + 4 B/column), combine
 * (4 B/column + 8 B/row).
 * @example const h = axtuhKernel.upload(ctx, axtuhFormat.fromCsr(a, { thw: 32, th: 4 }), { thw: 32, th: 4 });
 */
export const axtuhKernel: SpmvKernel<AxtUncMatrix, AxtuhParams, AxtDeviceMatrix> = {
  id: 'axtuh',
  format: 'axtuh',
  title: 'AXTUH: one invocation per tile column sums TH steps, per-column partials + ordered per-row combine (seed 004 §2.3.2, Listing 6)',
  params: {
    thw: AX_PARAMS.thw('columns per tile'),
    th: { description: 'tile height TH ≥ 2 (steps per column)', values: [4, 3] },
    gather: AX_PARAMS.gather,
    workgroupSize: AX_PARAMS.workgroupSize,
  },
  defaults: { thw: 32, th: 4, gather: 1, workgroupSize: 256 },
  formatParams: (p): Partial<AxtParams> => ({ thw: p.thw, th: p.th, mode: 'UNC' }),
  supports: (m, limits) => axVectorsFit(m, limits.maxStorageBufferBindingSize),
  wgsl(p) {
    const { thw, th, workgroupSize: wg } = p;
    checkGather(this.id, p.gather);
    if (!(Number.isInteger(th) && th >= 2)) throw new RangeError(`axtuh: th expected an integer ≥ 2, got ${th}`);
    return `${preamble(AXT_PRODUCT_UNIFORMS, BINDINGS)}
${axSlotWgsl(thw, p.gather)}
@compute @workgroup_size(${wg})
fn main(${entryArgs()}) {
  let c = wg_linear(wid, nwg) * ${wg}u + lid;
  if (c >= u.count) { return; }
  // slot of (tile t, step f, lane l) = t·TH·THW + f·THW + l
  let s0 = (c / ${thw}u) * ${th * thw}u + (c % ${thw}u);
  var v = 0.0;
  for (var f = 0u; f < ${th}u; f++) { v = v + prod(s0 + f * ${thw}u); }
  part[c] = v;
}`;
  },
  ...axPipelines<AxtuhParams>(BINDINGS, (p) => `axtuh(thw=${p.thw},th=${p.th},gather=${p.gather})`, true),
  upload(ctx, m, params = {}, opts) {
    const p = { ...this.defaults, ...params };
    matchLayoutParam(this.id, 'thw', p.thw, m.thw);
    matchLayoutParam(this.id, 'th', p.th, m.th);
    const product = ctx.pipelines.get(this.pipelineSpec!(p, ctx.caps));
    const { thw, th } = p;
    // a column is used iff its top slot holds an entry (columns fill top to bottom)
    const ptr = uncRowPointer(m.rows, m.rwp, m.nTiles * thw, (c) => m.xIdx[Math.floor(c / thw) * th * thw + (c % thw)]! >= 0, this.id);
    return uploadAxt(ctx, this.id, m, {
      unit: th * thw,
      slotsPerPartial: th,
      group: 1,
      ptr,
      product,
      gather: p.gather,
      thw,
      dispatch: (slots) => ({ groups: Math.ceil(slots / th / p.workgroupSize), count: slots / th }),
    }, opts);
  },
  encode: (ctx, h, x, y, scale) => encodeAxt(ctx, h, x, y, scale),
};
