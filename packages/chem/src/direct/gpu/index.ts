/** The direct σ on the GPU (float32 WGSL): packed tables, kernel, operator, CI factory. @module */
export * from './tables';
export * from './sigma.kernel';
export * from './operator';
export type { Df64DirectSigma } from './operator-df64';
export * from './ci';
export * from './auto';
