/**
 * Sparse matrix–matrix products in the diagonal formats (seed 002): float64 CPU references for
 * C = A·B with HM operands (Algorithm 2) and CDM operands (Algorithm 1, transposes through reverse
 * compact diagonals). The diagonal set of C is computed before any arithmetic, so C is allocated once.
 * @module
 */
export * from './cdm-spgemm';
export * from './hm-spgemm';
export * from './parallel';
