/**
 * SELL-C-σ kernel (survey §2.3.4, Kreutzer et al.): rows sorted by length within windows of σ
 * rows, cut into chunks of C rows stored column-major (slot k of local row r of chunk c at
 * chunkPtr[c] + k·C + r). `lanes` invocations per sorted position p (1 = the classic thread
 * per row; more for long rows) stride over the chunk's slots and reduce, then one invocation
 * stores y[rowPerm[p]] (σ = 1: y[p], no permutation uploaded). Padding (value 0) is multiplied.
 * Caveat of multiplying padding: an empty row's slots point at column 0, so its result is
 * 0·x[0], NaN when x[0] is ±Inf or NaN (the -R kernels and the hybrid stop at the row length).
 * Lane map (lanes > 1): `laneMap` 1 (default) puts consecutive invocations on consecutive rows
 * of a chunk (coalesced loads, as thread-per-row SELL; partials gathered from workgroup
 * memory); 0 gives each row a group of consecutive lanes (subgroup shuffles when `lanes`
 * divides the device's contiguous subgroups, else a workgroup-memory tree).
 *
 * No float atomics: rowPerm is validated to be a permutation at upload, so the positions of a
 * dispatch write distinct rows, each by one invocation; slot-range pieces (a chunk wider than a
 * binding) accumulate with beta = 1 in later, ordered dispatches.
 * @module
 */
import { type SellMatrix, validateSell } from '@gpusparse/formats';
import { bindingCapElems, type EllDeviceMatrix, encodeEll, uploadPieces } from '../ell/ell-device';
import { slicedBindings, slicedPieces, slicedSupports, slicedWgsl } from '../ell/sliced-device';
import type { SpmvKernel } from '../types';
import { signature } from '../wgsl/index';

/**
 * Parameters of {@link sellKernel}: chunk height C, σ = C·sigmaChunks (0 means σ = 1, no
 * sorting), lanes per row, the lane map for lanes > 1 (1 = coalesced, 0 = a lane group per
 * row), workgroup size.
 */
export type SellKernelParams = { C: number; sigmaChunks: number; lanes: number; laneMap: number; workgroupSize: number };

/**
 * SELL-C-σ SpMV. Cost per apply: one dispatch per piece; 8·C·Σ_c w_c bytes of matrix traffic
 * (chunk padding included) + 8 per chunk + 4·rows (rowPerm, σ > 1), plus the x gathers.
 * @example const h = sellKernel.upload(ctx, sellFromCsr(a, { C: 32, sigma: 128 }), { lanes: 1 });
 */
export const sellKernel: SpmvKernel<SellMatrix, SellKernelParams, EllDeviceMatrix> = {
  id: 'sell',
  format: 'sell',
  title: 'SELL-C-σ: lanes per sorted row over its chunk’s column-major slots, scattered through rowPerm (survey §2.3.4)',
  params: {
    C: { description: 'chunk height C (format parameter)', values: [32, 8, 64] },
    sigmaChunks: { description: 'sorting window σ in chunks: σ = C·sigmaChunks, 0 = no sorting (σ = 1)', values: [4, 0, 1, 16] },
    lanes: { description: 'invocations per row (power of two ≤ 32)', values: [1, 2, 8, 32] },
    laneMap: {
      description: 'lanes > 1: 1 = coalesced (consecutive invocations on consecutive rows of a chunk, partials gathered in workgroup memory), 0 = a group of consecutive lanes per row (segmented reduction)',
      values: [1, 0],
    },
    workgroupSize: { description: 'invocations per workgroup', values: [256] },
  },
  defaults: { C: 32, sigmaChunks: 4, lanes: 1, laneMap: 1, workgroupSize: 256 },
  formatParams: (p) => ({ C: p.C, sigma: p.sigmaChunks === 0 ? 1 : p.C * p.sigmaChunks }),
  supports: (m, limits) => slicedSupports(m, m.C, limits),
  wgsl: (p, caps) => slicedWgsl({ workgroupSize: p.workgroupSize, lanes: p.lanes, padLast: true, lengths: false, perm: p.sigmaChunks !== 0, coalesced: p.laneMap === 1 }, caps),
  // declared so that the tuner compiles it ahead of time (autotune/prewarm.ts)
  pipelineSpec(p, caps) {
    const text = this.wgsl(p, caps);
    const perm = p.sigmaChunks !== 0;
    const label = `${this.id}(lanes=${p.lanes},laneMap=${p.laneMap}${perm ? ',perm' : ''})`;
    return { key: text, label, bindings: signature(slicedBindings({ lengths: false, perm })), wgsl: () => text };
  },
  upload(ctx, m, params = {}, opts) {
    // the shader variant follows the matrix: a permutation is bound exactly when σ > 1
    const p = { ...this.defaults, ...params, C: m.C, sigmaChunks: m.sigma === 1 ? 0 : m.sigma / m.C };
    validateSell(m); // full validation: rowPerm a permutation (no two positions write one row), columns, padding
    const perm = m.sigma !== 1;
    const pipe = ctx.pipelines.get(this.pipelineSpec!(p, ctx.caps));
    const layout = { ...m, height: m.C, padLast: true, slicePtr: m.chunkPtr, sliceWidth: m.chunkWidth };
    const pieces = slicedPieces(layout, null, perm ? m.rowPerm : null, bindingCapElems(ctx, opts));
    return uploadPieces(ctx, this.id, m, pipe, pieces, p.workgroupSize / p.lanes);
  },
  encode: encodeEll,
};
