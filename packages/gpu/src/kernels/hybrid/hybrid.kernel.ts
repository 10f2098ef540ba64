/**
 * Hybrid ELL + CSR kernel, seed 001 §4.2 Algorithm 7 adapted to WebGPU: a group of `lanes`
 * consecutive invocations per row (2…32; the paper uses a 32-thread warp). The group strides
 * over the row's slots in the ELL part (the Reference region, column-major k·rows + r, up to
 * the row's ELL length) and over its CSR entries (the Expansion region, [StartArr, EndArr)),
 * keeping two partial sums; each is reduced over the group (subgroup shuffles when `lanes`
 * divides the device's contiguous subgroup size — 8 on lavapipe, 32 on NVIDIA — else a tree in
 * workgroup memory, as the paper's ShMem1/ShMem2), the two are added once and lane 0 writes
 * y[r] once. BOUNDARY comes from the format (`boundary` param, −1 = the format's 'auto').
 *
 * `ellMap` 1 adapts the Reference region to our column-major ELL (the paper's is row-major, so
 * a warp per row reads consecutive slots there; here lanes of one row read addresses `rows`
 * apart): invocation lid of a workgroup of R = workgroupSize / lanes rows takes ELL row lid % R
 * and slots lid / R, lid / R + lanes, …, so consecutive invocations read consecutive
 * addresses; the row's lanes partial sums are then gathered from workgroup memory by lane 0 in
 * a fixed order. The Expansion region always uses the row's lane group.
 *
 * No float atomics (Algorithm 7 writes Result[Warp_id] from lane 0 only, as here): one lane
 * group per row, one store per row per dispatch; a row wider than a binding is split into
 * pieces that accumulate with beta = 1 in later, ordered dispatches.
 * @module
 */
import { type HybridMatrix, validateHybrid } from '@gpusparse/formats';
import type { SpmvKernel } from '../types';
import { csrVectorsFit } from '../csr/csr-device';
import { useSubgroupPath } from '../csr/vector.kernel';
import { bindingCapElems, type EllDeviceMatrix, encodeEll, uploadPieces } from '../ell/ell-device';
import { signature, type WgslBinding } from '../wgsl/index';
import { spmvLanesHead, stridedSum } from '../wgsl/lanes';
import { hybridPieces } from './hybrid-device';

/** Parameters of {@link hybridKernel}: lanes per row, BOUNDARY (−1 = 'auto'), ELL-region mapping (0 / 1), workgroup size. */
export type HybridKernelParams = { lanes: number; boundary: number; ellMap: number; workgroupSize: number };

const LANES = [2, 4, 8, 16, 32];

const BINDINGS: readonly WgslBinding[] = [
  { name: 'ell_col', type: 'array<u32>', access: 'r' },
  { name: 'ell_val', type: 'array<f32>', access: 'r' },
  { name: 'info', type: 'array<u32>', access: 'r' },
  { name: 'csr_col', type: 'array<u32>', access: 'r' },
  { name: 'csr_val', type: 'array<f32>', access: 'r' },
  { name: 'x', type: 'array<f32>', access: 'r' },
  { name: 'y', type: 'array<f32>', access: 'w' },
];

/**
 * Lanes-per-row hybrid ELL + CSR SpMV. Cost per apply: one dispatch per piece; 8·(ELL slots
 * read, up to each row's length) + 8·CSR entries + 8·rows bytes of matrix traffic, plus the x
 * gathers; 2·log2(lanes) reduction steps per row group.
 * @example const h = hybridKernel.upload(ctx, hybridFromCsr(a, { boundary: 16 }), { lanes: 32 });
 */
export const hybridKernel: SpmvKernel<HybridMatrix, HybridKernelParams, EllDeviceMatrix> = {
  id: 'hybrid',
  format: 'hybrid',
  title: 'Hybrid ELL + CSR: a lane group per row over both regions, two reductions added once (seed 001 §4.2, Algorithm 7)',
  params: {
    lanes: { description: 'lane group per row, both regions (Algorithm 7 uses a 32-lane warp)', values: [8, 2, 4, 16, 32] },
    boundary: { description: "BOUNDARY (ELL width) given to the format; −1 = the format's 'auto'", values: [-1, 0, 4, 16] },
    ellMap: {
      description: 'ELL-region mapping: 0 = the row’s lane group (Algorithm 7 as written); 1 = coalesced (consecutive invocations on consecutive rows, partials gathered in workgroup memory)',
      values: [0, 1],
    },
    workgroupSize: { description: 'invocations per workgroup', values: [256] },
  },
  defaults: { lanes: 8, boundary: -1, ellMap: 0, workgroupSize: 256 },
  formatParams: (p) => ({ boundary: p.boundary < 0 ? 'auto' : p.boundary }),
  supports: (m, limits) => csrVectorsFit(m, limits.maxStorageBufferBindingSize),
  wgsl(p, caps) {
    const { lanes: L, workgroupSize: wg } = p;
    if (!LANES.includes(L) || wg % L !== 0) throw new RangeError(`hybrid: lanes expected one of ${LANES.join(', ')} dividing ${wg}, got ${L}`);
    if (p.ellMap !== 0 && p.ellMap !== 1) throw new RangeError(`hybrid: ellMap expected 0 or 1, got ${p.ellMap}`);
    const R = wg / L; // rows per workgroup
    const ellLoop = (r: string, first: string) => `let len = info[2u * ${r}];
    for (var k = ${first}; k < len; k += ${L}u) {
      let q = k * u.rows + ${r};
      s_ell = s_ell + ell_val[q] * x[ell_col[q]];
    }`;
    // ellMap 1: invocation lid takes ELL row lid % R, slots lid / R + L·j: consecutive
    // invocations read consecutive addresses of the column-major slots
    const ell =
      p.ellMap === 0
        ? `if (row < u.rows) {
    ${ellLoop('row', 'lane')}
  }
  let t_ell = red_seg(lid, s_ell); // Reference region (ShMem1)`
        : `let er = wg_linear(wid, nwg) * ${R}u + lid % ${R}u;
  if (er < u.rows) {
    ${ellLoop('er', `lid / ${R}u`)}
  }
  let t_ell = ell_part_sum(lid, s_ell, lid / ${L}u); // Reference region: the row's partials, in lane order`;
    return `${spmvLanesHead(BINDINGS, { workgroupSize: wg, lanes: L, subgroups: useSubgroupPath(L, caps) })}
  var s_ell = 0.0;
  var s_csr = 0.0;
  ${ell}
  if (row < u.rows) {
    let end = info[2u * row + 3u];
    for (var j = info[2u * row + 1u] + lane; j < end; j += ${L}u) { s_csr = s_csr + csr_val[j] * x[csr_col[j]]; }
  }
  let t_csr = red_seg(lid, s_csr); // Expansion region (ShMem2)
  if (row < u.rows && lane == 0u) { store_y(row, t_ell + t_csr); }
}${p.ellMap === 1 ? `\n${stridedSum('ell_part', L, wg)}` : ''}`;
  },
  // declared so that the tuner compiles it ahead of time (autotune/prewarm.ts)
  pipelineSpec(p, caps) {
    const text = this.wgsl(p, caps);
    const label = `${this.id}(lanes=${p.lanes},ellMap=${p.ellMap}${useSubgroupPath(p.lanes, caps) ? ',subgroup' : ',wgmem'})`;
    return { key: text, label, bindings: signature(BINDINGS), wgsl: () => text };
  },
  upload(ctx, m, params = {}, opts) {
    const p = { ...this.defaults, ...params };
    validateHybrid(m); // StartArr/EndArr contiguous, columns in range: the shader reads unchecked
    const pipe = ctx.pipelines.get(this.pipelineSpec!(p, ctx.caps));
    return uploadPieces(ctx, this.id, m, pipe, hybridPieces(m, bindingCapElems(ctx, opts)), p.workgroupSize / p.lanes);
  },
  encode: encodeEll,
};
