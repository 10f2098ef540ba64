/**
 * Sparse matrix–matrix products with diagonal storage on the device (seed 002): CDM banded ×
 * banded (Algorithm 1, T×T tiles, A staged in workgroup memory) and HM structured × structured
 * (Algorithm 2's work grouped by the diagonal of C it feeds). No float atomics: every entry of C
 * has one owning invocation.
 * @module
 */
export * from './cdm-spgemm';
export * from './common';
export * from './hm-spgemm';
