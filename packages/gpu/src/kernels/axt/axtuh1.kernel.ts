/**
 * AXTUH1 kernel (seed 004 §2.3.1, Listing 4): MODE = UNC, TH = 1. A tile is THW slots of one
 * row; THW invocations take one tile, multiply entry·x (from the gathered ax[] x slots, or
 * x[xIdx] with gather = 0) and reduce across the tile — subgroup shuffles when THW divides the
 * subgroup size (lavapipe 8, NVIDIA 32), otherwise a tree in workgroup memory — so THW is a
 * free parameter whatever the device's SIMD width.
 *
 * No float atomics (Listing 4 atomicAdds the tile sum into y[rwp[t]]): the tile sum goes to
 * part[t]; the combine pass (axt-partials.ts) gives each row one invocation that adds
 * part[ptr[i] .. ptr[i+1]) in tile order and stores y. Tiles past NT are never read: the
 * product guards t < NT (the `count` uniform). rwp[] is turned into ptr[] on upload.
 * @module
 */
import type { AxtParams, AxtUncMatrix } from '@gpusparse/formats';
import type { GpuCaps } from '../../device/context';
import { useSubgroupPath } from '../csr/vector.kernel';
import type { SpmvKernel } from '../types';
import { entryArgs, preamble, segmentedSum } from '../wgsl/index';
import { AX_PARAMS, axSlotWgsl, axVectorsFit, checkGather, matchLayoutParam } from './ax-device';
import { AXT_PRODUCT_UNIFORMS, type AxtDeviceMatrix, axPipelines, axtProductBindings, encodeAxt, uploadAxt } from './axt-device';
import { uncRowPointer } from './axt-partials';

/** Parameters of {@link axtuh1Kernel}. */
export type Axtuh1Params = { thw: number; gather: number; workgroupSize: number };

const BINDINGS = axtProductBindings(false);

/**
 * AXTUH1 SpMV. Cost per apply: gather (12 B/slot), product (8 B/slot read + 4 B/tile written),
 * combine (4 B/tile + 8 B/row); log2(THW) reduction steps per tile.
 * @example const h = axtuh1Kernel.upload(ctx, axtuh1Format.fromCsr(a, { thw: 32 }));
 */
export const axtuh1Kernel: SpmvKernel<AxtUncMatrix, Axtuh1Params, AxtDeviceMatrix> = {
  id: 'axtuh1',
  format: 'axtuh1',
  title: 'AXTUH1: one tile of THW slots per lane group, cross-lane tree sum, per-tile partials + ordered per-row combine (seed 004 §2.3.1, Listing 4)',
  params: {
    thw: AX_PARAMS.thw('lanes per tile'),
    gather: AX_PARAMS.gather,
    workgroupSize: AX_PARAMS.workgroupSize,
  },
  defaults: { thw: 32, gather: 1, workgroupSize: 256 },
  formatParams: (p): Partial<AxtParams> => ({ thw: p.thw, th: 1, mode: 'UNC' }),
  supports: (m, limits) => axVectorsFit(m, limits.maxStorageBufferBindingSize),
  wgsl(p, caps: GpuCaps) {
    const { thw, workgroupSize: wg } = p;
    checkGather(this.id, p.gather);
    if (thw < 1 || wg % thw !== 0) throw new RangeError(`axtuh1: thw expected a power of two in 1..64 dividing ${wg}, got ${thw}`);
    const sg = useSubgroupPath(thw, caps);
    return `${preamble(AXT_PRODUCT_UNIFORMS, BINDINGS, { subgroups: sg })}
${axSlotWgsl(thw, p.gather)}
${segmentedSum('red', thw, wg, sg)}
@compute @workgroup_size(${wg})
fn main(${entryArgs()}) {
  let t = wg_linear(wid, nwg) * ${wg / thw}u + lid / ${thw}u;
  let l = lid % ${thw}u;
  var v = 0.0;
  if (t < u.count) { v = prod(t * ${thw}u + l); }
  let r = red_seg(lid, v);
  if (t < u.count && l == 0u) { part[t] = r; }
}`;
  },
  ...axPipelines<Axtuh1Params>(BINDINGS, (p, caps) => `axtuh1(thw=${p.thw},gather=${p.gather}${useSubgroupPath(p.thw, caps) ? ',subgroup' : ',wgmem'})`, true),
  upload(ctx, m, params = {}, opts) {
    const p = { ...this.defaults, ...params };
    matchLayoutParam(this.id, 'thw', p.thw, m.thw);
    matchLayoutParam(this.id, 'th', 1, m.th);
    const product = ctx.pipelines.get(this.pipelineSpec!(p, ctx.caps));
    const ptr = uncRowPointer(m.rows, m.rwp, m.nTiles, (t) => m.xIdx[t * m.thw]! >= 0, this.id);
    const tilesPerGroup = p.workgroupSize / p.thw;
    return uploadAxt(ctx, this.id, m, {
      unit: p.thw,
      slotsPerPartial: p.thw,
      group: 1,
      ptr,
      product,
      gather: p.gather,
      thw: p.thw,
      dispatch: (slots) => ({ groups: Math.ceil(slots / p.thw / tilesPerGroup), count: slots / p.thw }),
    }, opts);
  },
  encode: (ctx, h, x, y, scale) => encodeAxt(ctx, h, x, y, scale),
};
