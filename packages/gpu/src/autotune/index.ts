/**
 * The SpMV autotuner: {@link autotune}, {@link tunedOperator}, the tuning report, the cache
 * stores (memory, localStorage; the file store is loaded dynamically in Node) and the stages
 * (profile, candidates and short-list, trials, decision, verification) for tools that want them.
 * @module
 */
export * from './autotune';
export * from './cache';
export * from './candidates';
export { ConversionCache, type Converted, type TuneVectors, tuneVector, tuneVectors } from './conversions';
export * from './fingerprint';
export * from './profile';
export * from './report';
export { DEFAULT_MAX_TIMED, familyOf, floorKernel, SEPARATION, type ShortList, shortList } from './shortlist';
export * from './store';
export { rowScaledError, VERIFY_NNZ, type Verification, verifyProduct, verifyRanges } from './verify';
export { type DeviceMatrixStats, deviceMatrixStats, MAX_HIST_BINS, statsFromHistogram } from '../profile/device-stats';
export { InSolveOperator, type InSolveCandidate, type InSolveOptions } from './in-solve';
export { CLOCK_WARM_MS, warmClock } from './trials';
