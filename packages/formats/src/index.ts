/**
 * @gpusparse/formats — sparse storage formats with float64 reference products, Matrix Market
 * I/O, generators, and the host backend of the operator interface.
 * @module
 */
export * from './core/errors';
export * from './core/numbers';
export * from './core/random';
export * from './core/types';
export * from './operator/interfaces';
export * from './operator/host';
export * from './host/index';
export * from './csr/index';
export * from './coo/index';
export * from './csc/index';
export * from './axc/index';
export * from './axt/index';
export * from './core/row-stats';
export * from './ell/index';
export * from './ell-r/index';
export * from './sliced-ell/index';
export * from './sliced-ell-r/index';
export * from './sell/index';
export * from './hybrid/index';
export * from './dia/index';
export * from './hm/index';
export * from './cdm/index';
export * from './bcsr/index';
export * from './csb/index';
export * from './rgcsr/index';
export * from './cmrs/index';
export * from './quadtree/index';
export * from './streamed/index';
export * from './acsr/index';
export * from './csr-vi/index';
export * from './spgemm/index';
export * as generators from './generators/index';
export * from './registry';
export * from './report/format-report';
export * from './report/estimate';
export * from './mtx/index';
export * from './petsc/index';
