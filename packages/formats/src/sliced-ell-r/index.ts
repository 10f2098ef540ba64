/**
 * Sliced ELLPACK-R, seed 001 §3.5: sliced ELL plus rl[]. Storage: sliced ELL storage plus
 * rows·sizeof(index).
 * @module
 */
import type { FormatDescriptor } from '../core/types';
import type { SlicedEllParams } from '../sliced-ell/sliced-ell';
import { slicedEllDefaults } from '../sliced-ell/sliced-ell';
import { type SlicedEllRMatrix, slicedEllRFromCsr, slicedEllRSpmv, slicedEllRStorageBytes, slicedEllRToCsr } from './sliced-ell-r';

export { type SlicedEllRMatrix, slicedEllRFromCsr, slicedEllRSpmv, slicedEllRStorageBytes, slicedEllRToCsr, validateSlicedEllR } from './sliced-ell-r';

/**
 * Sliced ELL-R as a {@link FormatDescriptor}; parameter `sliceHeight` (default 32).
 * @example
 * const m = slicedEllRFormat.fromCsr(a, { sliceHeight: 64 });
 */
export const slicedEllRFormat: FormatDescriptor<SlicedEllRMatrix, SlicedEllParams> = {
  name: 'sliced-ell-r',
  title: 'Sliced ELLPACK-R',
  source: 'seed 001 §3.5 (hybrid-ell-csr-ci-spmv.md)',
  defaultParams: slicedEllDefaults,
  fromCsr: slicedEllRFromCsr,
  toCsr: slicedEllRToCsr,
  spmvReference: slicedEllRSpmv,
  storageBytes: slicedEllRStorageBytes,
};
