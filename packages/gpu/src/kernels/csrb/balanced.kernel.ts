/**
 * CSR nnz-balanced kernel for irregular (power-law) rows: row blocks of at most
 * `perThread`·workgroupSize entries (a longer row is a block alone, reduced by the whole
 * workgroup). Inside a block of several rows, the products are staged in workgroup memory with
 * coalesced loads and each invocation takes the same number of consecutive entries
 * (`perThread`), whatever rows they belong to — a merge-path split inside the workgroup: the
 * invocation finds its first row by binary search over the block's row pointers, sums the rows
 * that start and end in its slice and stores them, and hands the partial sum of a row that
 * crosses its slice's end to a segmented block scan. A row of 900 entries among rows of 3 thus
 * costs every invocation the same, unlike one lane group per row (csr-adaptive's stream mode
 * gives such a row 2 lanes while 254 wait).
 *
 * No float atomics: each row is stored once — by the invocation holding its last entry (with
 * the scanned carry when the row began in an earlier slice) — empty rows by invocation
 * `row − r0`; segments never mix values of two rows (no prefix-sum differences).
 * @module
 */
import type { CsrMatrix } from '@gpusparse/formats';
import type { GpuLimits } from '../../device/context';
import { ROW_BLOCK_BOUNDS, ROW_BLOCK_VARS, ROW_BLOCK_WORKGROUP, uploadRowBlocked } from '../csr/adaptive.kernel';
import { CSR_BINDINGS, type CsrDeviceMatrix, csrVectorsFit, encodeCsr } from '../csr/csr-device';
import type { SpmvKernel } from '../types';
import { segmentedBlockScan } from '../wgsl/scan';
import { entryArgs, preamble, SPMV_STORE, SPMV_UNIFORMS, signature, type WgslBinding, workgroupSum } from '../wgsl/index';

/** Parameters of {@link csrBalancedKernel}. */
export type CsrBalancedParams = { perThread: number; workgroupSize: number };

const BINDINGS: readonly WgslBinding[] = [...CSR_BINDINGS, { name: 'blk', type: 'array<u32>', access: 'r' }];

/** Workgroup memory of the kernel in bytes (products, row pointers, scan, tree). */
const wgBytes = (p: CsrBalancedParams): number => 4 * (p.perThread * p.workgroupSize + p.workgroupSize + 1 + 3 * p.workgroupSize + 2);

/** The slice walk of one invocation: rows ending in the slice are stored, the crossing row's partial is returned. */
const SLICE_WALK = `
    var tail = 0.0;
    var head = 1u;
    var first = 0.0;
    var first_row = NONE;
    if (c0 < n) {
      // the row holding entry c0: the largest i < nrows with rpl[i] <= c0 (skips empty rows)
      var lo = 0u;
      var hi = nrows - 1u;
      while (lo < hi) {
        let mid = (lo + hi + 1u) / 2u;
        if (rpl[mid] <= c0) { lo = mid; } else { hi = mid - 1u; }
      }
      var row = lo;
      var started = rpl[row] == c0;
      var acc = 0.0;
      for (var k = c0; ; k++) {
        // finish every row that ends at k (empty rows are stored by the pass above)
        while (row < nrows && rpl[row + 1u] <= k) {
          if (rpl[row + 1u] > rpl[row]) {
            if (started) { store_y(r0 + row, acc); } else { first = acc; first_row = row; }
          }
          row++;
          acc = 0.0;
          started = true;
        }
        if (k == c1) { break; }
        acc = acc + prod[k];
      }
      if (row < nrows) { tail = acc; head = select(0u, 1u, started); }
    }`;

const BALANCED_PARAMS = {
  perThread: { description: 'entries per invocation in a block of several rows (block capacity perThread·workgroupSize)', values: [4, 2, 8] },
  workgroupSize: ROW_BLOCK_WORKGROUP,
};

/** True, or why the kernel cannot run: workgroup memory of `p`, x and y in one binding each. */
function balancedSupports(m: CsrMatrix, limits: GpuLimits, p: CsrBalancedParams): true | string {
  const need = wgBytes(p);
  if (need > limits.maxComputeWorkgroupStorageSize) return `perThread ${p.perThread} needs ${need} bytes of workgroup memory, more than the device's ${limits.maxComputeWorkgroupStorageSize}`;
  return csrVectorsFit(m, limits.maxStorageBufferBindingSize);
}

/**
 * nnz-balanced CSR SpMV. Cost per apply: one dispatch per binding block, one workgroup per
 * row block; the block table adds 4·(blocks + 1) bytes; matrix traffic 8·nnz + 4·rows.
 * @example const h = csrBalancedKernel.upload(ctx, a, { perThread: 4 });
 */
export const csrBalancedKernel: SpmvKernel<CsrMatrix, CsrBalancedParams, CsrDeviceMatrix> = {
  id: 'csr-balanced',
  format: 'csr',
  title: 'CSR nnz-balanced: equal entry slices per invocation inside row blocks (merge-path split), segmented block scan for rows crossing slices',
  params: BALANCED_PARAMS,
  defaults: { perThread: 4, workgroupSize: 256 },
  supports: (m, limits, params) => balancedSupports(m, limits, { perThread: 4, workgroupSize: 256, ...params }),
  wgsl(p) {
    const { perThread: K, workgroupSize: W } = p;
    if (!(K >= 1 && Number.isInteger(K)) || (W & (W - 1)) !== 0) throw new RangeError(`csr-balanced: expected perThread ≥ 1 and a power-of-two workgroup size, got ${K}, ${W}`);
    return `${preamble(SPMV_UNIFORMS, BINDINGS)}
${SPMV_STORE}
${workgroupSum('red', W)}
${segmentedBlockScan('sscan', W)}
const NONE = 0xffffffffu;
var<workgroup> prod: array<f32, ${K * W}>;
var<workgroup> rpl: array<u32, ${W + 1}>;
${ROW_BLOCK_VARS}
@compute @workgroup_size(${W})
fn main(${entryArgs()}) {
  ${ROW_BLOCK_BOUNDS}
  let nrows = b[1] - r0;
  if (nrows == 1u) {
    // one row (possibly far longer than a block): strided partial sums and a tree
    var s = 0.0;
    let end = row_ptr[r0 + 1u];
    for (var k = row_ptr[r0] + lid; k < end; k += ${W}u) { s = s + vals[k] * x[col_idx[k]]; }
    let t = red_sum(lid, s);
    if (lid == 0u) { store_y(r0, t); }
    return;
  }
  let base = row_ptr[r0];
  let n = row_ptr[r0 + nrows] - base;
  for (var k = lid; k < n; k += ${W}u) { prod[k] = vals[base + k] * x[col_idx[base + k]]; }
  for (var i = lid; i <= nrows; i += ${W}u) { rpl[i] = row_ptr[r0 + i] - base; }
  workgroupBarrier();
  if (lid < nrows && rpl[lid] == rpl[lid + 1u]) { store_y(r0 + lid, 0.0); }
  let c0 = lid * ${K}u;
  let c1 = min(c0 + ${K}u, n);
  ${SLICE_WALK}
  let carry = sscan_excl(lid, head, tail);
  if (first_row != NONE) { store_y(r0 + first_row, first + carry); }
}`;
  },
  // declared so that the tuner compiles it ahead of time (autotune/prewarm.ts)
  pipelineSpec(p, caps) {
    const text = this.wgsl(p, caps);
    return { key: text, label: `${this.id}(perThread=${p.perThread})`, bindings: signature(BINDINGS), wgsl: () => text };
  },
  upload(ctx, m, params = {}, opts) {
    const p = { ...this.defaults, ...params };
    const pipe = ctx.pipelines.get(this.pipelineSpec!(p, ctx.caps));
    return uploadRowBlocked(ctx, this.id, m, pipe, p.perThread * p.workgroupSize, p.workgroupSize, opts);
  },
  encode: (ctx, h, x, y, scale) => encodeCsr(ctx, h, x, y, scale),
};
