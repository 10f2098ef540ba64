/**
 * SpMV over CSR-VI with column windows in the sliced layout (`vi-slice-device.ts`; issue 20): one
 * invocation per row, S consecutive invocations on the S rows of a slice, each walking its row's
 * slots k = 0, 1, … with `unroll` words in flight (loads, columns from its segment cursor, table
 * values and x gathers, separate sums), then its raw pairs; it stores its own y (no reduction).
 * At one slot the S invocations read one contiguous run of words and gather x at columns that
 * neighbouring rows of a CI Hamiltonian share — csr-vi's row layout gathers 32 entries of one row
 * instead. Padding: each slice's rows are padded to its longest.
 * @module
 */
import type { CsrViMatrix } from '@gpusparse/formats';
import type { PipelineSpec } from '../../device/pipelines';
import { csrVectorsFit } from '../csr/csr-device';
import type { SpmvKernel } from '../types';
import { entryArgs, preamble, SPMV_STORE, SPMV_UNIFORMS } from '../wgsl/index';
import { pairwiseSum } from '../wgsl/lanes';
import { encodeViSliced, uploadViSliced, VI_SLICE_BINDINGS, type ViSliceMatrix } from './vi-slice-device';
import { viPipelineSpec, viRowPrologue, viWordSteps } from './vi-wgsl';

/** Parameters of {@link csrViSliceKernel}. */
export type CsrViSliceParams = { sliceHeight: number; unroll: number; valueBits: number; workgroupSize: number };

const SLICE = [8, 16, 32, 64, 128, 256];
const UNROLL = [1, 2, 4, 6, 8];

/** WGSL of the kernel for `p`. */
function sliceWgsl(p: CsrViSliceParams): string {
  const { sliceHeight: S, unroll: n, workgroupSize: wg } = p;
  const accs = Array.from({ length: n }, (_, i) => `a${i}`);
  const addr = (i: number) => (i === 0 ? 'wp + k * S' : `wp + (k + ${i}u) * S`);
  const pos = (i: number) => (i === 0 ? 'p0 + k' : `p0 + k + ${i}u`);
  return `${preamble(SPMV_UNIFORMS, VI_SLICE_BINDINGS)}
${SPMV_STORE}
const S = ${S}u;
@compute @workgroup_size(${wg})
fn main(${entryArgs()}) {
  let r = wg_linear(wid, nwg) * ${wg}u + lid;
  if (r >= u.rows) { return; }
  ${viRowPrologue(n)}
  let p0 = rowp[3u * r];
  let base = sl[r / S];
  let wp = base.x + r % S;
  let len = p1 - p0;
  var k = 0u;
  for (; k + ${n - 1}u < len; k += ${n}u) {
    ${viWordSteps(n, addr, pos)}
  }
  for (; k < len; k++) {
    ${viWordSteps(1, addr, pos)}
  }
  let nr = rowp[3u * r + 5u] - rowp[3u * r + 2u];
  for (var q = 0u; q < nr; q++) {
    let e = raw[base.y + q * S + r % S];
    a0 = fma(bitcast<f32>(e.y), x[e.x], a0);
  }
  store_y(r, ${pairwiseSum(accs)});
}`;
}

/**
 * CSR-VI SpMV, sliced: one invocation per row, slot-major words within slices of `sliceHeight`
 * rows. Cost per apply: one dispatch per block; 4 bytes per padded word slot, 8 per padded raw slot
 * and per segment, 12 per row, plus the x gathers and table reads.
 * @example const h = csrViSliceKernel.upload(ctx, csrViFromCsr(a), { sliceHeight: 32, unroll: 4 });
 */
export const csrViSliceKernel: SpmvKernel<CsrViMatrix, CsrViSliceParams, ViSliceMatrix> = {
  id: 'csr-vi-slice',
  format: 'csr-vi',
  title: 'CSR-VI with column windows, sliced: one invocation per row, slot-major words in slices of rows (shared x lines at a slot), `unroll` words in flight',
  params: {
    sliceHeight: { description: 'rows per slice (8…256, a power of two dividing the workgroup): consecutive invocations on its rows', values: [32, 16, 64] },
    unroll: { description: 'words each invocation loads before using them (1, 2, 4, 6, 8; separate sums)', values: [4, 2, 8] },
    valueBits: { description: 'the conversion’s v (csrViFromCsr), 0: chosen from sampled rows', values: [0, 16] },
    workgroupSize: { description: 'invocations (rows) per workgroup', values: [256] },
  },
  defaults: { sliceHeight: 32, unroll: 4, valueBits: 0, workgroupSize: 256 },
  formatParams: (p) => ({ valueBits: p.valueBits }),
  supports: (m, limits) => csrVectorsFit(m, limits.maxStorageBufferBindingSize),
  precheck: (a, limits) => csrVectorsFit(a, limits.maxStorageBufferBindingSize),
  wgsl(p) {
    if (!SLICE.includes(p.sliceHeight) || p.workgroupSize % p.sliceHeight !== 0) throw new RangeError(`csr-vi-slice: sliceHeight expected one of ${SLICE.join(', ')} dividing ${p.workgroupSize}, got ${p.sliceHeight}`);
    if (!UNROLL.includes(p.unroll)) throw new RangeError(`csr-vi-slice: unroll expected one of ${UNROLL.join(', ')}, got ${p.unroll}`);
    return sliceWgsl(p);
  },
  pipelineSpec(p, caps): PipelineSpec {
    return viPipelineSpec(`csr-vi-slice(S=${p.sliceHeight},unroll=${p.unroll})`, this.wgsl(p, caps), VI_SLICE_BINDINGS);
  },
  upload(ctx, m, params = {}, opts) {
    const p = { ...this.defaults, ...params };
    return uploadViSliced(ctx, m, ctx.pipelines.get(this.pipelineSpec!(p, ctx.caps)), p.sliceHeight, p.workgroupSize, opts);
  },
  encode: (ctx, h, x, y, scale) => encodeViSliced(ctx, h, x, y, scale),
};
