/** The direct (matrix-free) σ = H·c for FCI and CAS spaces: string tables, kernel, threads, operator. @module */
export * from './tables';
export * from './kernel';
export * from './scatter.kernel';
export * from './threads';
export * from './operator';
export * from './ci';
export * from './time-reversal';
export * from './choose';
export * from './gpu/index';
