/**
 * Sliced ELL kernel (seed 001 §3.4, Algorithm 4): one invocation per row; row p lies in slice
 * c = p / sliceHeight and reads the slice's column-major slots sl[c].offset + k·h_c + r for
 * k < the slice's width (padding, value 0, multiplied without a branch). One long row pads only
 * its slice.
 * Caveat of multiplying padding: an empty row's slots point at column 0, so its result is
 * 0·x[0], NaN when x[0] is ±Inf or NaN (the -R kernels and the hybrid stop at the row length). Slice height is a format parameter (uniform, not shader text). Split over
 * bindings by whole slices, a slice wider than a binding by slot ranges (`sliced-device`).
 *
 * No float atomics: invocation p alone computes and stores y[p] within a dispatch; slot-range
 * pieces of the same rows accumulate with beta = 1 in later, ordered dispatches.
 * @module
 */
import { type SlicedEllMatrix, validateSlicedEll } from '@gpusparse/formats';
import type { SpmvKernel } from '../types';
import { signature } from '../wgsl/index';
import { bindingCapElems, type EllDeviceMatrix, encodeEll, uploadPieces } from './ell-device';
import { type SlicedLayout, slicedBindings, slicedPieces, slicedSupports, slicedWgsl } from './sliced-device';

/** Parameters of the sliced ELL and sliced ELL-R kernels. */
export type SlicedEllKernelParams = { sliceHeight: number; workgroupSize: number };

/** What distinguishes sliced ELL from sliced ELL-R for {@link slicedFamilyKernel}. */
export interface SlicedFamilySpec<M> {
  readonly id: string;
  readonly title: string;
  /** Full validation of `m` (throws InvalidMatrixError): the shader reads without bounds checks. */
  readonly validate: (m: M) => void;
  /** rl[] to stop each row at (sliced ELL-R), or null to multiply every slot of the slice. */
  readonly rowLength: (m: M) => Int32Array | null;
}

/** The sliced matrices' common fields. */
type SlicedMatrix = Omit<SlicedLayout, 'height' | 'padLast'> & { sliceHeight: number; cols: number; nnz: number };

/**
 * A thread-per-row kernel over a sliced ELL format (`id` is also the format name).
 * @example slicedFamilyKernel({ id: 'sliced-ell', title: '…', validate: validateSlicedEll, rowLength: () => null })
 */
export function slicedFamilyKernel<M extends SlicedMatrix>(spec: SlicedFamilySpec<M>): SpmvKernel<M, SlicedEllKernelParams, EllDeviceMatrix> {
  const v = { lanes: 1, padLast: false, lengths: spec.id.endsWith('-r'), perm: false };
  return {
    id: spec.id,
    format: spec.id,
    title: spec.title,
    params: {
      sliceHeight: { description: 'rows per slice (format parameter; a multiple of the subgroup size is natural)', values: [32, 8, 64] },
      workgroupSize: { description: 'invocations per workgroup', values: [256] },
    },
    defaults: { sliceHeight: 32, workgroupSize: 256 },
    formatParams: (p) => ({ sliceHeight: p.sliceHeight }),
    supports: (m, limits) => slicedSupports(m, m.sliceHeight, limits),
    wgsl: (p, caps) => slicedWgsl({ ...v, workgroupSize: p.workgroupSize }, caps),
    // declared so that the tuner compiles it ahead of time (autotune/prewarm.ts)
    pipelineSpec(p, caps) {
      const text = this.wgsl(p, caps);
      return { key: text, label: `${spec.id}(wg=${p.workgroupSize})`, bindings: signature(slicedBindings(v)), wgsl: () => text };
    },
    upload(ctx, m, params = {}, opts) {
      const p = { ...this.defaults, ...params };
      spec.validate(m);
      const pipe = ctx.pipelines.get(this.pipelineSpec!(p, ctx.caps));
      const layout = { ...m, height: m.sliceHeight, padLast: false };
      return uploadPieces(ctx, spec.id, m, pipe, slicedPieces(layout, spec.rowLength(m), null, bindingCapElems(ctx, opts)), p.workgroupSize);
    },
    encode: encodeEll,
  };
}

/**
 * Thread-per-row sliced ELL SpMV. Cost per apply: one dispatch per piece; 8·Σ_s h_s·w_s bytes
 * of matrix traffic (slice padding included) + 8 bytes per slice, plus the x gathers.
 * @example const h = slicedEllKernel.upload(ctx, slicedEllFromCsr(a, { sliceHeight: 32 }));
 */
export const slicedEllKernel: SpmvKernel<SlicedEllMatrix, SlicedEllKernelParams, EllDeviceMatrix> = slicedFamilyKernel<SlicedEllMatrix>({
  id: 'sliced-ell',
  title: 'Sliced ELL: one invocation per row over its slice’s column-major slots (seed 001 §3.4, Algorithm 4)',
  validate: validateSlicedEll, // slice pointers, columns, padding
  rowLength: () => null,
});
