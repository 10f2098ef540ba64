/**
 * Sparse matrix–matrix products with diagonal storage on the device (seed 002): the planned
 * product (symbolic phase O(diagonals) on the host, one gather kernel per C buffer, operands and
 * C split over buffers past one binding, C kept on the device), the CSR-in library call, and the
 * earlier single-dispatch products — CDM banded × banded (Algorithm 1, T×T tiles, A staged in
 * workgroup memory) and HM structured × structured (Algorithm 2's work grouped by the diagonal
 * of C it feeds). No float atomics: every entry of C has one owning invocation.
 * @module
 */
export * from './cdm-spgemm';
export * from './common';
export * from './device-diagonal';
export * from './gather.kernel';
export * from './hm-spgemm';
export * from './plan';
export * from './range';
export * from './spgemm';
