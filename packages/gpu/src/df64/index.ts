/**
 * Double-float (df64) arithmetic on the device: error-free transformations in WGSL, their
 * per-device self-test, and (in later files) df64 vectors, BLAS-1 and the residual product.
 * @module
 */
export * from './host';
export * from './selftest';
export * from './wgsl';
export * from './blas';
export * from './blas.kernel';
export * from './csr';
export * from './residual.kernel';
export * from './refinement';
export * from './space';
export * from './space.kernel';
export * from './csr-operator';
export * from './product.kernel';
export * from './low-parts';
export * from './flush';
