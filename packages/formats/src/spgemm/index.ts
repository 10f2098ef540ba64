/**
 * Sparse matrix–matrix products in the diagonal formats (seed 002): float64 CPU references for
 * C = A·B with HM operands (Algorithm 2) and CDM operands (Algorithm 1, transposes through reverse
 * compact diagonals). The diagonal set of C is computed before any arithmetic, so C is allocated once.
 * Also the O(diagonals) symbolic phase of the device product, the format choice, and the float64
 * CSR product that checks it.
 * @module
 */
export * from './cdm-spgemm';
export * from './choose';
export * from './csr-reference';
export * from './hm-spgemm';
export * from './parallel';
export * from './symbolic';
