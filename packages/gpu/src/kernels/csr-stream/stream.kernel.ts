/**
 * CSR streaming kernel (issue 20): cuSPARSE's access pattern — `lanes` invocations per row, each
 * lane reading single entries k, k + lanes, … so one load instruction of the lane group covers
 * consecutive values and columns (coalesced 4-byte words, and the x gathers of one instruction
 * hit consecutive entries of a sorted row: fewest cache lines) — with csr-long's memory-level
 * parallelism: each lane loads `unroll` independent entries per step before their gathers, and
 * with `prefetch` 1 it issues the next step's column and value loads before this step's gathers,
 * so the column-load → x-gather chain of one step overlaps the loads of the next.
 *
 * Why: on the H100 csr-long (quad-padded, vec4 values) moved 29 % of copy bandwidth on the
 * CI-like matrix and cuSPARSE's plain CSR 1.7 TB/s (≈ 58 %); csr-vector (the same pattern, one
 * entry in flight) was 2.2× slower than csr-long. This kernel tests whether the loss was the
 * quad layout or the loads in flight. It reads the plain CSR arrays (shared upload, no
 * conversion: the tuner pays nothing to try it) and, with lanes < the subgroup size, puts several
 * rows on one subgroup (short uniform rows).
 *
 * No float atomics: a row's partial sums are combined by a fixed-order tree of the `unroll`
 * accumulators, then the lane group's segmented sum; one invocation stores y[r].
 * @module
 */
import type { CsrMatrix } from '@gpusparse/formats';
import type { GpuCaps } from '../../device/context';
import { CSR_BINDINGS, type CsrDeviceMatrix, csrVectorsFit, encodeCsr, uploadLanesCsr } from '../csr/csr-device';
import { useSubgroupPath } from '../csr/vector.kernel';
import type { SpmvKernel } from '../types';
import { signature } from '../wgsl/index';
import { pairwiseSum, spmvLanesHead } from '../wgsl/lanes';

/** Parameters of {@link csrStreamKernel}. */
export type CsrStreamParams = { lanes: number; unroll: number; prefetch: number; workgroupSize: number };

const LANES = [1, 2, 4, 8, 16, 32, 64, 128, 256];
const UNROLL = [1, 2, 4, 8];

const ids = (n: number): number[] => Array.from({ length: n }, (_, i) => i);
/** Entry index of slot i of a step starting at `k` (slot i is k + i·lanes). */
const at = (k: string, i: number, lanes: number): string => (i === 0 ? k : `${k} + ${i * lanes}u`);

/** The unrolled loop without prefetch: n column loads, n value loads, n gathers, n FMAs per step. */
function plainLoop(n: number, lanes: number): string {
  const ix = ids(n);
  return `for (; k + ${(n - 1) * lanes}u < end; k += ${n * lanes}u) {
      ${ix.map((i) => `let c${i} = col_idx[${at('k', i, lanes)}];`).join(' ')}
      ${ix.map((i) => `let v${i} = vals[${at('k', i, lanes)}];`).join(' ')}
      ${ix.map((i) => `let x${i} = x[c${i}];`).join(' ')}
      ${ix.map((i) => `a${i} = fma(v${i}, x${i}, a${i});`).join(' ')}
    }`;
}

/**
 * The unrolled loop with prefetch: the first step's columns and values are loaded before the
 * loop; each step loads the next step's (when there is one) before gathering its own x.
 */
function prefetchLoop(n: number, lanes: number): string {
  const ix = ids(n);
  const span = (n - 1) * lanes;
  return `var full = k + ${span}u < end;
    ${ix.map((i) => `var c${i} = 0u; var v${i} = 0.0;`).join(' ')}
    if (full) {
      ${ix.map((i) => `c${i} = col_idx[${at('k', i, lanes)}]; v${i} = vals[${at('k', i, lanes)}];`).join(' ')}
    }
    while (full) {
      let kn = k + ${n * lanes}u;
      let more = kn + ${span}u < end;
      ${ix.map((i) => `var cn${i} = 0u; var vn${i} = 0.0;`).join(' ')}
      if (more) {
        ${ix.map((i) => `cn${i} = col_idx[${at('kn', i, lanes)}]; vn${i} = vals[${at('kn', i, lanes)}];`).join(' ')}
      }
      ${ix.map((i) => `let x${i} = x[c${i}];`).join(' ')}
      ${ix.map((i) => `a${i} = fma(v${i}, x${i}, a${i});`).join(' ')}
      ${ix.map((i) => `c${i} = cn${i}; v${i} = vn${i};`).join(' ')}
      k = kn;
      full = more;
    }`;
}

/** WGSL of the kernel for `p` on a device with `caps`. */
function streamWgsl(p: CsrStreamParams, caps: GpuCaps): string {
  const { lanes, unroll: n, workgroupSize: wg } = p;
  const accs = ids(n).map((i) => `a${i}`);
  return `${spmvLanesHead(CSR_BINDINGS, { workgroupSize: wg, lanes, subgroups: useSubgroupPath(lanes, caps) })}
  var s = 0.0;
  if (row < u.rows) {
    let end = row_ptr[row + 1u];
    var k = row_ptr[row] + lane;
    ${accs.map((a) => `var ${a} = 0.0;`).join(' ')}
    ${p.prefetch === 1 && n > 1 ? prefetchLoop(n, lanes) : plainLoop(n, lanes)}
    for (; k < end; k += ${lanes}u) { a0 = fma(vals[k], x[col_idx[k]], a0); }
    s = ${pairwiseSum(accs)};
  }
  let t = red_seg(lid, s);
  if (row < u.rows && lane == 0u) { store_y(row, t); }
}`;
}

/**
 * Streaming CSR SpMV: lanes per row, `unroll` single entries in flight per lane, optional
 * prefetch of the next step. Cost per apply: one dispatch per binding block; 8 bytes per entry +
 * 4 per row of matrix traffic plus the x gathers; no upload conversion (the shared CSR arrays).
 * @example const h = csrStreamKernel.upload(ctx, a, { lanes: 32, unroll: 4, prefetch: 1 });
 */
export const csrStreamKernel: SpmvKernel<CsrMatrix, CsrStreamParams, CsrDeviceMatrix> = {
  id: 'csr-stream',
  format: 'csr',
  title: 'CSR streaming: lanes per row reading single coalesced entries, `unroll` entries in flight per lane, optional prefetch of the next step’s columns and values',
  params: {
    lanes: { description: 'invocations per row (1..256, a power of two; below the subgroup size several rows share a subgroup; 256 = the whole workgroup on one row)', values: [32, 4, 256] },
    unroll: { description: 'entries each invocation loads per step before their gathers (1, 2, 4, 8; separate accumulators)', values: [4, 1, 8] },
    prefetch: { description: '1: load the next step’s columns and values before this step’s x gathers (needs unroll ≥ 2); 0: no prefetch', values: [1, 0] },
    workgroupSize: { description: 'invocations per workgroup', values: [256] },
  },
  defaults: { lanes: 32, unroll: 4, prefetch: 1, workgroupSize: 256 },
  supports: (m, limits) => csrVectorsFit(m, limits.maxStorageBufferBindingSize),
  wgsl(p, caps) {
    if (!LANES.includes(p.lanes) || p.workgroupSize % p.lanes !== 0) throw new RangeError(`csr-stream: lanes expected one of ${LANES.join(', ')} dividing ${p.workgroupSize}, got ${p.lanes}`);
    if (!UNROLL.includes(p.unroll)) throw new RangeError(`csr-stream: unroll expected one of ${UNROLL.join(', ')}, got ${p.unroll}`);
    if (p.prefetch !== 0 && p.prefetch !== 1) throw new RangeError(`csr-stream: prefetch expected 0 or 1, got ${p.prefetch}`);
    return streamWgsl(p, caps);
  },
  pipelineSpec(p, caps) {
    const text = this.wgsl(p, caps);
    const mode = useSubgroupPath(p.lanes, caps) ? 'subgroup' : 'wgmem';
    const label = `${this.id}(lanes=${p.lanes},unroll=${p.unroll},prefetch=${p.prefetch},${mode})`;
    return { key: text, label, bindings: signature(CSR_BINDINGS), wgsl: () => text };
  },
  upload(ctx, m, params = {}, opts) {
    const p = { ...this.defaults, ...params };
    return uploadLanesCsr(ctx, this.id, m, ctx.pipelines.get(this.pipelineSpec!(p, ctx.caps)), p.lanes, p.workgroupSize, opts);
  },
  encode: (ctx, h, x, y, scale) => encodeCsr(ctx, h, x, y, scale),
};
