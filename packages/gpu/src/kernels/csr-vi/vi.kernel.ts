/**
 * SpMV over CSR-VI with column windows (`@gpusparse/formats` csr-vi; issue 20): 4 bytes per
 * entry for the values the matrix repeats, so a CI Hamiltonian moves about half of CSR's 8 bytes
 * per entry. `lanes` invocations per row; lane l reads the row's words l, l + lanes, … (each
 * load of the lane group reads consecutive words, and its x gathers consecutive entries of the
 * sorted row), `unroll` words in flight per invocation: their loads first, then their columns
 * (window base + the word's low 32 − v bits; each invocation walks the row's segments with a
 * cursor, the positions it visits only grow), then the table values and x gathers, then
 * `unroll` separate sums. The row's raw entries (column, float32 bits) follow, lanes-strided.
 * @module
 */
import type { CsrViMatrix } from '@gpusparse/formats';
import type { GpuCaps } from '../../device/context';
import type { PipelineSpec } from '../../device/pipelines';
import { csrVectorsFit } from '../csr/csr-device';
import type { SpmvKernel } from '../types';
import { groupSum, groupSumMode, groupSumNeedsSubgroups } from '../wgsl/group';
import { entryArgs, preamble, SPMV_STORE, SPMV_UNIFORMS } from '../wgsl/index';
import { laneRow, pairwiseSum } from '../wgsl/lanes';
import { encodeVi, uploadVi, VI_BINDINGS, type ViDeviceMatrix } from './vi-device';
import { viPipelineSpec, viRowPrologue, viWordSteps } from './vi-wgsl';

/** Parameters of {@link csrViKernel}. */
export type CsrViKernelParams = { lanes: number; unroll: number; valueBits: number; workgroupSize: number };

const LANES = [4, 8, 16, 32, 64, 128, 256];
const UNROLL = [1, 2, 4, 6, 8];

/** The statements of `n` words at p, p + lanes, … (their positions are their addresses). */
function step(n: number, lanes: number): string {
  const at = (i: number) => (i === 0 ? 'p' : `p + ${i * lanes}u`);
  return viWordSteps(n, at, at);
}

/** WGSL of the kernel for `p` on a device with `caps`. */
function viWgsl(p: CsrViKernelParams, caps: GpuCaps): string {
  const { lanes, unroll: n } = p;
  const mode = groupSumMode(lanes, caps);
  const accs = Array.from({ length: n }, (_, i) => `a${i}`);
  return `${preamble(SPMV_UNIFORMS, VI_BINDINGS, { subgroups: groupSumNeedsSubgroups(mode) })}
${SPMV_STORE}
${groupSum('red', lanes, p.workgroupSize, caps)}
@compute @workgroup_size(${p.workgroupSize})
fn main(${entryArgs()}) {
  ${laneRow(lanes, p.workgroupSize)}
  let r = row;
  var s = 0.0;
  if (r < u.rows) {
    ${viRowPrologue(n)}
    var p = rowp[3u * r] + lane;
    for (; p + ${(n - 1) * lanes}u < p1; p += ${n * lanes}u) {
      ${step(n, lanes)}
    }
    for (; p < p1; p += ${lanes}u) {
      ${step(1, lanes)}
    }
    let q1 = rowp[3u * r + 5u];
    for (var q = rowp[3u * r + 2u] + lane; q < q1; q += ${lanes}u) {
      let e = raw[q];
      a0 = fma(bitcast<f32>(e.y), x[e.x], a0);
    }
    s = ${pairwiseSum(accs)};
  }
  let t = red_group(lid, s);
  if (r < u.rows && lane == 0u) { store_y(r, t); }
}`;
}

/**
 * CSR-VI SpMV: lanes per row over 32-bit word entries (window offset | value-table index) and a
 * raw stream. Cost per apply: one dispatch per row block; 4 bytes per word entry, 8 per raw entry
 * and per segment, 12 per row, plus the x gathers and the table reads (≤ 2^v values: cached).
 * @example const h = csrViKernel.upload(ctx, csrViFromCsr(a), { lanes: 32, unroll: 4 });
 */
export const csrViKernel: SpmvKernel<CsrViMatrix, CsrViKernelParams, ViDeviceMatrix> = {
  id: 'csr-vi',
  format: 'csr-vi',
  title: 'CSR-VI with column windows: 4-byte words (window offset | value-table index) and a raw stream, lanes per row, `unroll` words in flight per invocation, subgroup reduction',
  params: {
    lanes: { description: 'invocations per row (4..256, a power of two dividing the workgroup)', values: [32, 16, 64, 8] },
    unroll: { description: 'words each invocation loads before using them (1, 2, 4, 6, 8; separate sums)', values: [4, 2, 8, 1] },
    valueBits: { description: 'the conversion’s v (csrViFromCsr): bits of a value-table index, 32 − v of a column offset; 0 chooses from sampled rows (fewest predicted bytes); 16: 64 Ki-column windows', values: [0, 16] },
    workgroupSize: { description: 'invocations per workgroup', values: [256] },
  },
  defaults: { lanes: 32, unroll: 4, valueBits: 0, workgroupSize: 256 },
  formatParams: (p) => ({ valueBits: p.valueBits }),
  supports: (m, limits) => csrVectorsFit(m, limits.maxStorageBufferBindingSize),
  precheck: (a, limits) => csrVectorsFit(a, limits.maxStorageBufferBindingSize),
  wgsl(p, caps) {
    if (!LANES.includes(p.lanes) || p.workgroupSize % p.lanes !== 0) throw new RangeError(`csr-vi: lanes expected one of ${LANES.join(', ')} dividing ${p.workgroupSize}, got ${p.lanes}`);
    if (!UNROLL.includes(p.unroll)) throw new RangeError(`csr-vi: unroll expected one of ${UNROLL.join(', ')}, got ${p.unroll}`);
    return viWgsl(p, caps);
  },
  pipelineSpec(p, caps): PipelineSpec {
    return viPipelineSpec(`csr-vi(lanes=${p.lanes},unroll=${p.unroll})`, this.wgsl(p, caps), VI_BINDINGS);
  },
  upload(ctx, m, params = {}, opts) {
    const p = { ...this.defaults, ...params };
    const pipe = ctx.pipelines.get(this.pipelineSpec!(p, ctx.caps));
    return uploadVi(ctx, m, pipe, p.workgroupSize / p.lanes, opts);
  },
  encode: (ctx, h, x, y, scale) => encodeVi(ctx, h, x, y, scale),
};
