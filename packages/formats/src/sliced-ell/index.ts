/**
 * Sliced ELLPACK, seed 001 §3.4: ELL per slice of `sliceHeight` rows. Storage: Σ over slices
 * of the ELL formula plus slice pointers and widths.
 * @module
 */
import type { FormatDescriptor } from '../core/types';
import { type SlicedEllMatrix, type SlicedEllParams, slicedEllDefaults, slicedEllFromCsr, slicedEllSpmv, slicedEllStorageBytes, slicedEllToCsr } from './sliced-ell';

export {
  checkSliceHeight,
  type SlicedEllMatrix,
  type SlicedEllParams,
  slicedEllDefaults,
  slicedEllFromCsr,
  slicedEllSpmv,
  slicedEllStorageBytes,
  slicedEllToCsr,
  validateSlicedEll,
} from './sliced-ell';

/**
 * Sliced ELL as a {@link FormatDescriptor}; parameter `sliceHeight` (default 32).
 * @example
 * const m = slicedEllFormat.fromCsr(a, { sliceHeight: 64 });
 */
export const slicedEllFormat: FormatDescriptor<SlicedEllMatrix, SlicedEllParams> = {
  name: 'sliced-ell',
  title: 'Sliced ELLPACK',
  source: 'seed 001 §3.4, §4.1 (hybrid-ell-csr-ci-spmv.md); survey §2.3.4 (2.60)',
  defaultParams: slicedEllDefaults,
  fromCsr: slicedEllFromCsr,
  toCsr: slicedEllToCsr,
  spmvReference: slicedEllSpmv,
  storageBytes: slicedEllStorageBytes,
};
