/**
 * CSR vector kernel: `lanes` invocations per row (2…256), strided partial sums, then a segmented
 * reduction — subgroup shuffles when the device's subgroups are contiguous and `lanes` divides
 * the subgroup size (8 on lavapipe, 32 on NVIDIA), otherwise a tree in workgroup memory. The
 * warp-per-row kernel of seed 001 §4.2 (Algorithm 7) with the lane count as a parameter; 64–256
 * lanes (several subgroups up to a whole workgroup per row) are for rows of hundreds to
 * thousands of entries, e.g. CI Hamiltonians (seed 001's Reference rows), where 32 lanes leave
 * each lane a long serial walk with 128-byte accesses.
 *
 * No float atomics (Algorithm 7 uses atomicAdd; WGSL has none for floats): the partial sums of
 * a row are combined by a fixed-order tree inside the lane group and only lane 0 stores y[r].
 * @module
 */
import type { CsrMatrix } from '@gpusparse/formats';
import type { GpuCaps } from '../../device/context';
import { entryArgs, preamble, SPMV_STORE, SPMV_UNIFORMS, segmentedSum, signature } from '../wgsl/index';
import type { SpmvKernel } from '../types';
import { CSR_BINDINGS, type CsrDeviceMatrix, csrVectorsFit, encodeCsr, uploadLanesCsr } from './csr-device';

/** Parameters of {@link csrVectorKernel}. */
export type CsrVectorParams = { lanes: number; workgroupSize: number };

const LANES = [2, 4, 8, 16, 32, 64, 128, 256];

/** Whether the subgroup reduction path is valid for `lanes` on a device with `caps`. */
export function useSubgroupPath(lanes: number, caps: GpuCaps): boolean {
  return (
    caps.subgroups &&
    caps.subgroupContiguous &&
    caps.subgroupSize > 0 &&
    caps.subgroupMinSize === caps.subgroupMaxSize &&
    caps.subgroupSize % lanes === 0
  );
}

/**
 * Lanes-per-row CSR SpMV. Cost per apply: one dispatch per binding block; coalesced loads of
 * each row's entries; log2(lanes) reduction steps.
 * @example const h = csrVectorKernel.upload(ctx, a, { lanes: 8 });
 */
export const csrVectorKernel: SpmvKernel<CsrMatrix, CsrVectorParams, CsrDeviceMatrix> = {
  id: 'csr-vector',
  format: 'csr',
  title: 'CSR vector: a group of 2–256 lanes per row with a segmented reduction (seed 001 §4.2, Algorithm 7)',
  params: {
    lanes: { description: 'invocations per row (power of two, 2..256; above the subgroup size the reduction runs in workgroup memory)', values: [8, 2, 4, 16, 32, 64, 128, 256] },
    workgroupSize: { description: 'invocations per workgroup', values: [256] },
  },
  defaults: { lanes: 8, workgroupSize: 256 },
  supports: (m, limits) => csrVectorsFit(m, limits.maxStorageBufferBindingSize),
  wgsl(p, caps) {
    const { lanes, workgroupSize: wg } = p;
    if (!LANES.includes(lanes) || wg % lanes !== 0) throw new RangeError(`csr-vector: lanes expected one of ${LANES.join(', ')} dividing ${wg}, got ${lanes}`);
    const sg = useSubgroupPath(lanes, caps);
    return `${preamble(SPMV_UNIFORMS, CSR_BINDINGS, { subgroups: sg })}
${SPMV_STORE}
${segmentedSum('red', lanes, wg, sg)}
@compute @workgroup_size(${wg})
fn main(${entryArgs()}) {
  let lane = lid % ${lanes}u;
  let r = wg_linear(wid, nwg) * ${wg / lanes}u + lid / ${lanes}u;
  var s = 0.0;
  if (r < u.rows) {
    let end = row_ptr[r + 1u];
    for (var k = row_ptr[r] + lane; k < end; k += ${lanes}u) { s = s + vals[k] * x[col_idx[k]]; }
  }
  let t = red_seg(lid, s);
  if (r < u.rows && lane == 0u) { store_y(r, t); }
}`;
  },
  pipelineSpec(p, caps) {
    const text = this.wgsl(p, caps);
    const label = `${this.id}(lanes=${p.lanes}${useSubgroupPath(p.lanes, caps) ? ',subgroup' : ',wgmem'})`;
    return { key: text, label, bindings: signature(CSR_BINDINGS), wgsl: () => text };
  },
  upload(ctx, m, params = {}, opts) {
    const p = { ...this.defaults, ...params };
    return uploadLanesCsr(ctx, this.id, m, ctx.pipelines.get(this.pipelineSpec!(p, ctx.caps)), p.lanes, p.workgroupSize, opts);
  },
  encode: (ctx, h, x, y, scale) => encodeCsr(ctx, h, x, y, scale),
};
