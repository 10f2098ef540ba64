/**
 * CMRS kernel (survey §2.3.1; Koza, Matyka, Szkoda & Mirosław 2014): a group of `lanes`
 * invocations per strip of h rows. The strip's non-zeros are one contiguous range of CSR's
 * arrays, read by the lanes with stride `lanes` (coalesced whatever the row lengths); each lane
 * keeps h partial sums in registers, indexed by the non-zero's row-within-strip. The h sums are
 * then reduced across the lane group one row at a time (subgroup shuffles when the lane count
 * divides the subgroup size and subgroups are contiguous, else a tree in workgroup memory).
 *
 * No float atomics: each row belongs to one strip, hence one lane group, whose lane
 * (ρ mod lanes) alone stores y[strip·h + ρ] — one write per row. A strip longer than a binding is
 * cut into ranges whose later pieces accumulate in later, ordered dispatches.
 * @module
 */
import { type CmrsMatrix, InvalidMatrixError } from '@gpusparse/formats';
import { validateIndexRange } from '../../memory/upload';
import { checkGroupPtr, groupedPieces } from '../bcsr/grouped-device';
import { csrVectorsFit } from '../csr/csr-device';
import { useSubgroupPath } from '../csr/vector.kernel';
import { bindingCapElems, type EllDeviceMatrix, encodeEll, uploadPieces } from '../ell/ell-device';
import type { SpmvKernel } from '../types';
import { entryArgs, preamble, SPMV_STORE, SPMV_UNIFORMS, segmentedSum, signature, type WgslBinding } from '../wgsl/index';
import { laneRow } from '../wgsl/lanes';

/** Parameters of {@link cmrsKernel}. */
export type CmrsKernelParams = { stripHeight: number; lanes: number; workgroupSize: number };

const BINDINGS: readonly WgslBinding[] = [
  { name: 'sptr', type: 'array<u32>', access: 'r' },
  { name: 'ris', type: 'array<u32>', access: 'r' },
  { name: 'col', type: 'array<u32>', access: 'r' },
  { name: 'vals', type: 'array<f32>', access: 'r' },
  { name: 'x', type: 'array<f32>', access: 'r' },
  { name: 'y', type: 'array<f32>', access: 'w' },
];

/**
 * Lane-group-per-strip CMRS SpMV. Cost per apply: one dispatch per piece; 12·nnz bytes of
 * matrix traffic (values, columns, rows in strip) + 4 per strip; h·log2(lanes) reduction steps.
 * @example const h = cmrsKernel.upload(ctx, cmrsFromCsr(a, { stripHeight: 8 }), { stripHeight: 8 });
 */
export const cmrsKernel: SpmvKernel<CmrsMatrix, CmrsKernelParams, EllDeviceMatrix> = {
  id: 'cmrs',
  format: 'cmrs',
  title: 'CMRS: a lane group per strip, h partial sums per lane in registers, one write per row (survey §2.3.1)',
  params: {
    stripHeight: { description: 'strip height h (rows per strip)', values: [8, 2, 4, 16] },
    lanes: { description: 'invocations per strip (power of two)', values: [32, 8] },
    workgroupSize: { description: 'invocations per workgroup', values: [256] },
  },
  defaults: { stripHeight: 8, lanes: 32, workgroupSize: 256 },
  formatParams: (p) => ({ stripHeight: p.stripHeight }),
  supports(m, limits, params) {
    const h = params?.stripHeight ?? 8;
    if (m.stripHeight !== h) return `cmrs kernel compiled for strips of ${h} rows, matrix has ${m.stripHeight}`;
    return csrVectorsFit(m, limits.maxStorageBufferBindingSize);
  },
  wgsl(p, caps) {
    const { stripHeight: h, lanes, workgroupSize: wg } = p;
    if (!(h >= 1 && h <= 32) || ![2, 4, 8, 16, 32].includes(lanes) || wg % lanes !== 0) {
      throw new RangeError(`cmrs: expected stripHeight in [1, 32] and lanes in {2, …, 32} dividing ${wg}, got ${h} and ${lanes}`);
    }
    const sg = useSubgroupPath(lanes, caps);
    return `${preamble(SPMV_UNIFORMS, BINDINGS, { subgroups: sg })}
${SPMV_STORE}
${segmentedSum('red', lanes, wg, sg)}
@compute @workgroup_size(${wg})
fn main(${entryArgs({ subgroups: sg })}) {
  ${laneRow(lanes, wg)}
  var acc: array<f32, ${h}>;
  if (row < u.count) {
    let k1 = sptr[row + 1u];
    for (var k = sptr[row] + lane; k < k1; k += ${lanes}u) {
      let r = ris[k];
      acc[r] = acc[r] + vals[k] * x[col[k]];
    }
  }
  for (var rho = 0u; rho < ${h}u; rho++) {
    let t = red_seg(lid, acc[rho]);
    let local = row * ${h}u + rho;
    if (row < u.count && lane == rho % ${lanes}u && local < u.rows) { store_y(local, t); }
  }
}`;
  },
  // declared so that the tuner compiles it ahead of time (autotune/prewarm.ts)
  pipelineSpec(p, caps) {
    const text = this.wgsl(p, caps);
    const label = `${this.id}(h=${p.stripHeight},lanes=${p.lanes}${useSubgroupPath(p.lanes, caps) ? ',subgroup' : ',wgmem'})`;
    return { key: text, label, bindings: signature(BINDINGS), wgsl: () => text };
  },
  upload(ctx, m, params = {}, opts) {
    const p = { ...this.defaults, ...params };
    const h = p.stripHeight;
    const pipe = ctx.pipelines.get(this.pipelineSpec!(p, ctx.caps));
    if (m.stripHeight !== h) throw new InvalidMatrixError('cmrs upload', `expected strips of ${h} rows, got ${m.stripHeight}`);
    if (m.numStrips !== Math.ceil(m.rows / h)) throw new InvalidMatrixError('cmrs upload', `expected ${Math.ceil(m.rows / h)} strips, got ${m.numStrips}`);
    const nnz = m.values.length;
    checkGroupPtr(m.stripPtr, m.numStrips, nnz, 'cmrs upload');
    if (m.colIdx.length !== nnz || m.rowInStrip.length !== nnz) throw new InvalidMatrixError('cmrs upload', `expected ${nnz} columns and rows in strip, got ${m.colIdx.length} and ${m.rowInStrip.length}`);
    validateIndexRange(m.colIdx, m.cols, 'cmrs upload columns');
    validateIndexRange(m.rowInStrip, h, 'cmrs upload rows in strip');
    const arrays = [m.rowInStrip, m.colIdx, m.values].map((data) => ({ data, per: 1 }));
    const pieces = groupedPieces(m.stripPtr, m.numStrips, arrays, m.rows, h, bindingCapElems(ctx, opts), (strips) => strips);
    return uploadPieces(ctx, this.id, m, pipe, pieces, (h * p.workgroupSize) / p.lanes);
  },
  encode: (ctx, h, x, y, scale) => encodeEll(ctx, h, x, y, scale),
};
