/**
 * CSR adaptive kernel (CSR-Adaptive of Greathouse & Daga; seed 003's ACSR idea of binning rows
 * by length): rows are grouped on the host into row blocks. A block of several short rows
 * ("stream" mode) is processed by one workgroup that first stages all its products
 * vals[k]·x[col[k]] in workgroup memory with fully coalesced loads, then lets a group of
 * invocations per row (as many as the block's row count allows) sum it from workgroup memory. A block of one row (a row longer than `nnzPerGroup`, up to
 * 10^5 non-zeros and beyond) is reduced by the whole workgroup: strided partial sums and a
 * workgroup tree.
 *
 * No float atomics: each row belongs to exactly one row block; in stream mode lane 0 of the
 * row's group stores the group's tree sum, in long-row mode invocation 0 stores the tree sum.
 * @module
 */
import type { CsrMatrix } from '@gpusparse/formats';
import type { GpuContext } from '../../device/context';
import type { PipelineEntry } from '../../device/pipelines';
import type { SpmvKernel, UploadOptions } from '../types';
import { entryArgs, preamble, SPMV_STORE, SPMV_UNIFORMS, signature, type WgslBinding, workgroupSum } from '../wgsl/index';
import { CSR_BINDINGS, type CsrDeviceMatrix, csrVectorsFit, encodeCsr, uploadCsr } from './csr-device';

/** Parameters of {@link csrAdaptiveKernel}. */
export type CsrAdaptiveParams = { nnzPerGroup: number; workgroupSize: number };

const BINDINGS: readonly WgslBinding[] = [...CSR_BINDINGS, { name: 'blk', type: 'array<u32>', access: 'r' }];

/**
 * Row blocks of a CSR row-pointer array: consecutive rows whose entries total at most `cap`
 * and at most `maxRows` rows; a row longer than `cap` is a block alone. Returns the block
 * boundaries (length blocks + 1). O(rows).
 * @example adaptiveRowBlocks(Int32Array.of(0, 2, 4, 1004), 3, 1024, 256) // [0, 2, 3]
 */
export function adaptiveRowBlocks(rp: Int32Array | Uint32Array, rows: number, cap: number, maxRows: number): Uint32Array {
  const out: number[] = [0];
  let r = 0;
  while (r < rows) {
    if (rp[r + 1]! - rp[r]! > cap) {
      out.push(++r);
      continue;
    }
    let r1 = r;
    const base = rp[r]!;
    while (r1 < rows && r1 - r < maxRows && rp[r1 + 1]! - base <= cap) r1++;
    out.push((r = r1));
  }
  return Uint32Array.from(out);
}

/** Module-scope WGSL of a row-block kernel: the staged block bounds. */
export const ROW_BLOCK_VARS = 'var<workgroup> bounds: array<u32, 2>;';

/**
 * WGSL statements opening `main` of a row-block kernel: the workgroup's row block g (past
 * u.count the whole workgroup returns) and its bounds `b` (uniform), first row `r0`. Needs
 * {@link ROW_BLOCK_VARS} and the `blk` binding.
 */
export const ROW_BLOCK_BOUNDS = `let g = wg_linear(wid, nwg);
  if (g >= u.count) { return; } // uniform: whole workgroup
  if (lid == 0u) { bounds[0] = blk[g]; bounds[1] = blk[g + 1u]; }
  let b = workgroupUniformLoad(&bounds);
  let r0 = b[0];`;

/** The workgroup-size parameter of the row-block kernels (a block has at most this many rows). */
export const ROW_BLOCK_WORKGROUP = { description: 'invocations per workgroup (also the most rows per block)', values: [256] } as const;

/**
 * Upload `a` for a kernel with one workgroup per row block ({@link adaptiveRowBlocks} with
 * `cap` entries and `maxRows` rows per block): the CSR arrays plus each binding block's table of
 * row-block boundaries, its length − 1 passed as the uniform `count`. Cost O(rows + nnz).
 * @example uploadRowBlocked(ctx, 'csr-adaptive', a, pipe, 1024, 256)
 */
export function uploadRowBlocked(ctx: GpuContext, kernelId: string, a: CsrMatrix, pipe: PipelineEntry, cap: number, maxRows: number, opts?: UploadOptions): CsrDeviceMatrix {
  const perBlock = (rp: Int32Array | Uint32Array, rows: number) => {
    const blk = adaptiveRowBlocks(rp, rows, cap, maxRows);
    return { groups: blk.length - 1, count: blk.length - 1, extra: blk };
  };
  return uploadCsr(ctx, kernelId, a, pipe, perBlock, opts);
}

/**
 * Row-block adaptive CSR SpMV. Cost per apply: one dispatch per binding block, one workgroup
 * per row block; the block table adds 4·(blocks + 1) bytes.
 * @example const h = csrAdaptiveKernel.upload(ctx, a, { nnzPerGroup: 1024 });
 */
export const csrAdaptiveKernel: SpmvKernel<CsrMatrix, CsrAdaptiveParams, CsrDeviceMatrix> = {
  id: 'csr-adaptive',
  format: 'csr',
  title: 'CSR adaptive: short rows batched per workgroup through workgroup memory, long rows per workgroup (seed 003 ACSR / CSR-Adaptive)',
  params: {
    nnzPerGroup: { description: 'entries staged in workgroup memory per row block', values: [1024, 512, 2048] },
    workgroupSize: ROW_BLOCK_WORKGROUP,
  },
  defaults: { nnzPerGroup: 1024, workgroupSize: 256 },
  supports(m, limits, params) {
    const cap = params?.nnzPerGroup ?? 1024;
    if (cap * 4 + 2048 > limits.maxComputeWorkgroupStorageSize) return `nnzPerGroup ${cap} needs more workgroup memory than ${limits.maxComputeWorkgroupStorageSize} bytes`;
    return csrVectorsFit(m, limits.maxStorageBufferBindingSize);
  },
  wgsl(p) {
    const { nnzPerGroup: cap, workgroupSize: wg } = p;
    return `${preamble(SPMV_UNIFORMS, BINDINGS)}
${SPMV_STORE}
${workgroupSum('red', wg)}
${ROW_BLOCK_VARS}
var<workgroup> prod: array<f32, ${cap}>;
@compute @workgroup_size(${wg})
fn main(${entryArgs()}) {
  ${ROW_BLOCK_BOUNDS}
  let r1 = b[1];
  if (r1 - r0 == 1u) {
    // one (long) row: the whole workgroup, strided sums + tree
    var s = 0.0;
    let end = row_ptr[r0 + 1u];
    for (var k = row_ptr[r0] + lid; k < end; k += ${wg}u) { s = s + vals[k] * x[col_idx[k]]; }
    let t = red_sum(lid, s);
    if (lid == 0u) { store_y(r0, t); }
  } else {
    // stream: stage products in workgroup memory, then a group of \`lanes\` invocations per row
    // (lanes = the largest power of two with lanes·rows ≤ workgroup size) sums its range with a
    // strided loop and a fixed-order tree (CSR-stream with the vector reduction of CSR-Adaptive)
    let base = row_ptr[r0];
    let n = row_ptr[r1] - base;
    for (var k = lid; k < n; k += ${wg}u) { prod[k] = vals[base + k] * x[col_idx[base + k]]; }
    workgroupBarrier();
    let nrows = r1 - r0;
    var lanes = 1u;
    while (lanes * 2u * nrows <= ${wg}u) { lanes = lanes * 2u; }
    let slot = lid / lanes;
    let lane = lid % lanes;
    var s = 0.0;
    if (slot < nrows) {
      let end = row_ptr[r0 + slot + 1u] - base;
      for (var k = row_ptr[r0 + slot] - base + lane; k < end; k += lanes) { s = s + prod[k]; }
    }
    red[lid] = s;
    workgroupBarrier();
    for (var off = lanes / 2u; off > 0u; off = off >> 1u) {
      if (lane < off) { red[lid] = red[lid] + red[lid + off]; }
      workgroupBarrier();
    }
    if (slot < nrows && lane == 0u) { store_y(r0 + slot, red[lid]); }
  }
}`;
  },
  pipelineSpec(p, caps) {
    const text = this.wgsl(p, caps);
    return { key: text, label: `${this.id}(nnz=${p.nnzPerGroup})`, bindings: signature(BINDINGS), wgsl: () => text };
  },
  upload(ctx, m, params = {}, opts) {
    const p = { ...this.defaults, ...params };
    const pipe = ctx.pipelines.get(this.pipelineSpec!(p, ctx.caps));
    return uploadRowBlocked(ctx, this.id, m, pipe, p.nnzPerGroup, p.workgroupSize, opts);
  },
  encode: (ctx, h, x, y, scale) => encodeCsr(ctx, h, x, y, scale),
};
