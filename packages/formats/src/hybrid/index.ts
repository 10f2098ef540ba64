/**
 * The hybrid ELL + CSR format of seed 001 §4.1 (Algorithms 6 and 7). Storage:
 * 3·ROWS·sizeof(uint) + ROWS·BOUNDARY·(sizeof(value) + sizeof(int)) + CSRNonZeros·(sizeof(value) + sizeof(uint)).
 * @module
 */
import type { FormatDescriptor } from '../core/types';
import { type HybridMatrix, type HybridParams, hybridDefaults, hybridFromCsr, hybridSpmv, hybridStorageBytes, hybridToCsr } from './hybrid';

export { type HybridAutoBoundaryOptions, hybridAutoBoundary } from './auto-boundary';
export {
  type HybridMatrix,
  type HybridParams,
  hybridDefaults,
  hybridFromCsr,
  hybridSpmv,
  hybridStorageBytes,
  hybridStorageFormula,
  hybridToCsr,
  resolveBoundary as hybridResolveBoundary,
  validateHybrid,
} from './hybrid';

/**
 * The hybrid ELL + CSR format as a {@link FormatDescriptor}; parameter `boundary`
 * (integer ≥ 0, default 'auto' = {@link hybridAutoBoundary}).
 * @example
 * const h = hybridFormat.fromCsr(a, { boundary: 8 });
 */
export const hybridFormat: FormatDescriptor<HybridMatrix, HybridParams> = {
  name: 'hybrid',
  title: 'Hybrid ELL + CSR',
  source: 'seed 001 §4.1, Algorithms 6–7 (hybrid-ell-csr-ci-spmv.md)',
  defaultParams: hybridDefaults,
  fromCsr: hybridFromCsr,
  toCsr: hybridToCsr,
  spmvReference: hybridSpmv,
  storageBytes: hybridStorageBytes,
};
