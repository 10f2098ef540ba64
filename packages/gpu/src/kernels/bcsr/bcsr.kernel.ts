/**
 * BCSR kernel (survey §2.2.1, r×r blocks as in SPARSITY): a group of L = max(r², 32) lanes per
 * block row. The block row's values are one contiguous range (its blocks back to back, each
 * row-major), which the lanes read with stride L: coalesced. Because r² divides L, lane l always
 * sees the same position of a block — row li = (l mod r²) / r, column lj = l mod r — so it keeps
 * a single partial sum for row li. Lanes then write their sums to workgroup memory and lane
 * li < r of the group adds the L / r lanes of its row in a fixed order.
 *
 * No float atomics: each matrix row belongs to one block row, hence to one lane group, and lane
 * li alone stores y[b·r + li]; rows past the matrix (rows not divisible by r) are not stored and
 * columns past it (padded edge blocks) are not read. A block row longer than a binding is cut
 * into block ranges whose later pieces accumulate in later, ordered dispatches.
 * @module
 */
import { type BcsrMatrix, InvalidMatrixError } from '@gpusparse/formats';
import { validateIndexRange } from '../../memory/upload';
import { csrVectorsFit } from '../csr/csr-device';
import { bindingCapElems, type EllDeviceMatrix, encodeEll, uploadPieces } from '../ell/ell-device';
import type { SpmvKernel } from '../types';
import { entryArgs, preamble, SPMV_STORE, SPMV_UNIFORMS, signature, type WgslBinding } from '../wgsl/index';
import { laneRow } from '../wgsl/lanes';
import { checkGroupPtr, groupedPieces } from './grouped-device';

/** Parameters of {@link bcsrKernel}: square blocks of `blockSize`. */
export type BcsrKernelParams = { blockSize: number; workgroupSize: number };

const BINDINGS: readonly WgslBinding[] = [
  { name: 'bptr', type: 'array<u32>', access: 'r' },
  { name: 'bcol', type: 'array<u32>', access: 'r' },
  { name: 'vals', type: 'array<f32>', access: 'r' },
  { name: 'x', type: 'array<f32>', access: 'r' },
  { name: 'y', type: 'array<f32>', access: 'w' },
];

const SIZES = [2, 4, 8];

/** Lanes per block row for r×r blocks: max(r², 32), a multiple of r². */
export const bcsrLanes = (r: number): number => Math.max(r * r, 32);

/**
 * Lane-group-per-block-row BCSR SpMV. Cost per apply: one dispatch per piece; 4·r²·nnzb value
 * bytes (fill included, β = nnz / (r²·nnzb)) + 4·nnzb column bytes; one x load per stored slot.
 * The uniform `count` carries the column count (x is guarded against padded edge blocks).
 * @example const h = bcsrKernel.upload(ctx, bcsrFromCsr(a, { blockSize: 4 }), { blockSize: 4 });
 */
export const bcsrKernel: SpmvKernel<BcsrMatrix, BcsrKernelParams, EllDeviceMatrix> = {
  id: 'bcsr',
  format: 'bcsr',
  title: 'BCSR: a lane group per block row, blocks read contiguously, per-row sums in workgroup memory (survey §2.2.1)',
  params: {
    blockSize: { description: 'block edge r (r×r blocks)', values: [4, 2, 8] },
    workgroupSize: { description: 'invocations per workgroup', values: [256] },
  },
  defaults: { blockSize: 4, workgroupSize: 256 },
  formatParams: (p) => ({ blockSize: p.blockSize }),
  supports(m, limits, params) {
    const r = params?.blockSize ?? 4;
    if (m.blockRows !== r || m.blockCols !== r) return `bcsr kernel compiled for ${r}×${r} blocks, matrix has ${m.blockRows}×${m.blockCols}`;
    return csrVectorsFit(m, limits.maxStorageBufferBindingSize);
  },
  wgsl(p) {
    const { blockSize: r, workgroupSize: wg } = p;
    const lanes = bcsrLanes(r);
    if (!SIZES.includes(r) || wg % lanes !== 0) throw new RangeError(`bcsr: blockSize expected one of ${SIZES.join(', ')} with ${lanes} lanes dividing ${wg}, got ${r}`);
    const rr = r * r;
    return `${preamble(SPMV_UNIFORMS, BINDINGS)}
${SPMV_STORE}
var<workgroup> part: array<f32, ${wg}>;
@compute @workgroup_size(${wg})
fn main(${entryArgs()}) {
  ${laneRow(lanes, wg)}
  let nbr = (u.rows + ${r - 1}u) / ${r}u;
  var s = 0.0;
  if (row < nbr) {
    let lj = lane % ${r}u;
    let k1 = bptr[row + 1u] * ${rr}u;
    for (var k = bptr[row] * ${rr}u + lane; k < k1; k += ${lanes}u) {
      let j = bcol[k / ${rr}u] * ${r}u + lj;
      if (j < u.count) { s = s + vals[k] * x[j]; }
    }
  }
  part[lid] = s;
  workgroupBarrier();
  let li = lane;
  if (row < nbr && li < ${r}u && row * ${r}u + li < u.rows) {
    let g0 = lid - lane + li * ${r}u;
    var t = 0.0;
    for (var q = 0u; q < ${lanes}u; q += ${rr}u) {
      for (var c = 0u; c < ${r}u; c++) { t = t + part[g0 + q + c]; }
    }
    store_y(row * ${r}u + li, t);
  }
}`;
  },
  // declared so that the tuner compiles it ahead of time (autotune/prewarm.ts)
  pipelineSpec(p, caps) {
    const text = this.wgsl(p, caps);
    return { key: text, label: `${this.id}(r=${p.blockSize})`, bindings: signature(BINDINGS), wgsl: () => text };
  },
  upload(ctx, m, params = {}, opts) {
    const p = { ...this.defaults, ...params };
    const r = p.blockSize;
    const pipe = ctx.pipelines.get(this.pipelineSpec!(p, ctx.caps));
    if (m.blockRows !== r || m.blockCols !== r) throw new InvalidMatrixError('bcsr upload', `expected ${r}×${r} blocks, got ${m.blockRows}×${m.blockCols}`);
    checkGroupPtr(m.rowPtr, m.numBlockRows, m.numBlocks, 'bcsr upload');
    validateIndexRange(m.colIdx, Math.ceil(m.cols / r), 'bcsr upload block columns');
    if (m.values.length !== m.numBlocks * r * r) throw new InvalidMatrixError('bcsr upload', `expected ${m.numBlocks * r * r} values, got ${m.values.length}`);
    const arrays = [
      { data: m.colIdx, per: 1 },
      { data: m.values, per: r * r },
    ];
    const pieces = groupedPieces(m.rowPtr, m.numBlockRows, arrays, m.rows, r, bindingCapElems(ctx, opts), () => m.cols);
    return uploadPieces(ctx, this.id, m, pipe, pieces, (r * p.workgroupSize) / bcsrLanes(r));
  },
  encode: (ctx, h, x, y, scale) => encodeEll(ctx, h, x, y, scale),
};
