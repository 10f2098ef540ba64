/**
 * CSR scalar kernel: one invocation per row (Bell & Garland's CSR-scalar; seed 001 §4.2 contrasts
 * it with the warp-per-row kernel). Simple and good for short, uniform rows; poor coalescing on
 * long rows.
 *
 * No float atomics: invocation r alone computes and stores y[r] (sequential sum in CSR order).
 * @module
 */
import type { CsrMatrix } from '@gpusparse/formats';
import { entryArgs, preamble, SPMV_STORE, SPMV_UNIFORMS, signature } from '../wgsl/index';
import type { SpmvKernel } from '../types';
import { CSR_BINDINGS, type CsrDeviceMatrix, csrVectorsFit, encodeCsr, uploadCsr } from './csr-device';

/** Parameters of {@link csrScalarKernel}. */
export type CsrScalarParams = { workgroupSize: number };

/**
 * Thread-per-row CSR SpMV. Cost per apply: one dispatch per binding block, 8·nnz + 4·rows
 * bytes of matrix traffic plus the x gathers.
 * @example const h = csrScalarKernel.upload(ctx, a); csrScalarKernel.encode(ctx, h, x, y);
 */
export const csrScalarKernel: SpmvKernel<CsrMatrix, CsrScalarParams, CsrDeviceMatrix> = {
  id: 'csr-scalar',
  format: 'csr',
  title: 'CSR scalar: one invocation per row (seed 001 §4.2, the scalar kernel)',
  params: { workgroupSize: { description: 'invocations per workgroup', values: [256, 128, 64] } },
  defaults: { workgroupSize: 256 },
  supports: (m, limits) => csrVectorsFit(m, limits.maxStorageBufferBindingSize),
  wgsl(p) {
    const wg = p.workgroupSize;
    return `${preamble(SPMV_UNIFORMS, CSR_BINDINGS)}
${SPMV_STORE}
@compute @workgroup_size(${wg})
fn main(${entryArgs()}) {
  let r = wg_linear(wid, nwg) * ${wg}u + lid;
  if (r >= u.rows) { return; }
  var s = 0.0;
  let end = row_ptr[r + 1u];
  for (var k = row_ptr[r]; k < end; k++) { s = s + vals[k] * x[col_idx[k]]; }
  store_y(r, s);
}`;
  },
  pipelineSpec(p, caps) {
    const text = this.wgsl(p, caps);
    return { key: text, label: `${this.id}(wg=${p.workgroupSize})`, bindings: signature(CSR_BINDINGS), wgsl: () => text };
  },
  upload(ctx, m, params = {}, opts) {
    const p = { ...this.defaults, ...params };
    const pipe = ctx.pipelines.get(this.pipelineSpec!(p, ctx.caps));
    return uploadCsr(ctx, this.id, m, pipe, (_rp, rows) => ({ groups: Math.ceil(rows / p.workgroupSize) }), opts);
  },
  encode: (ctx, h, x, y, scale) => encodeCsr(ctx, h, x, y, scale),
};
