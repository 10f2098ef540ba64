/**
 * The SpMV autotuner: {@link autotune}, {@link tunedOperator}, the tuning report, the cache
 * stores (memory, localStorage; the file store is loaded dynamically in Node) and the stages
 * (profile, candidates and cost model, short-list, admission and interleaved trials, decision,
 * verification) for tools that want them.
 * @module
 */
export * from './autotune';
export * from './cache';
export * from './candidates';
export * from './cost-model';
export { ConversionCache, type Converted, type DeviceConversion, type TuneVectors, tuneVector, tuneVectors } from './conversions';
export * from './fingerprint';
export * from './profile';
export * from './report';
export { DEFAULT_MAX_TIMED, familyOf, floorKernel, type IntervalRule, inseparable, NET_SLOTS, SEPARATION, type ScoutStats, type ShortList, shortList } from './shortlist';
export { bestEntryMs, type Calibration, CALIBRATION_VERSION, calibrate, calibrationProbes, deviceProbeTimer, entryMs, fitCalibration, type Locality, type Probe, type ProbeTimer, probeMatrix, probeRounds, PROBE_LANES, PROBE_ROW_LENGTHS, WINDOW_COLS } from './calibrate';
export { type CalibrationHit, calibrationFor, calibrationKey, checkCalibration, clearCalibrationMemory } from './calibration-store';
export { type Anchor, anchorPrediction, COST_TERMS, type CostTerms, DEFAULT_TERMS, gatherFactor, type LaneMap, type Prediction, predictMs, rowLengthBins, termsOf } from './cost-terms';
export * from './store';
export { rowScaledError, VERIFY_NNZ, type Verification, verifyProduct, verifyRanges } from './verify';
export { type DeviceMatrixStats, deviceMatrixStats, MAX_HIST_BINS, type SellLayout, statsFromHistogram } from '../profile/device-stats';
export { InSolveOperator, type InSolveCandidate, type InSolveOptions } from './in-solve';
export { byObjective, CLOCK_TOLERANCE, PROBE_DROP, SINGLE_ROUND_SPREAD, type Contender, clockIndex, decideRounds, firstStableRound, keptSamples, type RoundsDecision, type RoundsPlan, type RoundsRun, type RoundSummary, type RoundTimer, type RoundTimes, runRounds, separated, summarise } from './rounds';
export { type DeviceRoundTimer, deviceRoundTimer } from './round-timer';
