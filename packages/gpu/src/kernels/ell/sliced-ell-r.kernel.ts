/**
 * Sliced ELL-R kernel (seed 001 §3.5, Algorithm 5): as the sliced ELL kernel, but row p stops
 * at its length rl[p], so slice padding is neither read nor multiplied.
 *
 * No float atomics: invocation p alone computes and stores y[p] within a dispatch; slot-range
 * pieces of the same rows accumulate with beta = 1 in later, ordered dispatches.
 * @module
 */
import { type SlicedEllRMatrix, validateSlicedEllR } from '@gpusparse/formats';
import type { SpmvKernel } from '../types';
import type { EllDeviceMatrix } from './ell-device';
import { type SlicedEllKernelParams, slicedFamilyKernel } from './sliced-ell.kernel';

/**
 * Thread-per-row sliced ELL-R SpMV. Cost per apply: one dispatch per piece; 8·nnz bytes of
 * matrix traffic + 4·rows (rl) + 8 per slice, plus the x gathers.
 * @example const h = slicedEllRKernel.upload(ctx, slicedEllRFromCsr(a, { sliceHeight: 32 }));
 */
export const slicedEllRKernel: SpmvKernel<SlicedEllRMatrix, SlicedEllKernelParams, EllDeviceMatrix> = slicedFamilyKernel<SlicedEllRMatrix>({
  id: 'sliced-ell-r',
  title: 'Sliced ELL-R: one invocation per row, loop to rl[p] inside its slice (seed 001 §3.5, Algorithm 5)',
  validate: validateSlicedEllR, // rl ≤ slice width, columns, padding
  rowLength: (m) => m.rowLength,
});
