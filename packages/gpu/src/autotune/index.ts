/**
 * The SpMV autotuner: {@link autotune}, {@link tunedOperator}, the tuning report, the cache
 * stores (memory, localStorage; the file store is loaded dynamically in Node) and the pieces
 * (fingerprint, candidates, profile) for tools that want them.
 * @module
 */
export * from './autotune';
export * from './cache';
export * from './candidates';
export * from './fingerprint';
export { ConversionCache, type Converted, type Measurement, measureCandidate, type TuneVectors, tuneVector, tuneVectors, type Verification, verifyProduct } from './measure';
export * from './profile';
export * from './report';
export * from './store';
