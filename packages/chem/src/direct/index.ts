/** The direct (matrix-free) σ = H·c for FCI and CAS spaces: string tables, kernel, threads, operator. @module */
export * from './tables';
export * from './kernel';
export * from './scatter.kernel';
export * from './threads';
export * from './operator';
export * from './ci';
export * from './time-reversal';
export * from './choose';
// the GPU part (./gpu) is the subpath @gpusparse/chem/gpu: loading it loads @gpusparse/gpu; its CI factories load lazily
export * from './gpu-entry';
export type { GpuAutoOptions, GpuDirectCiHamiltonian, GpuDirectEstimate, GpuDirectHamiltonianOptions, GpuDirectSigmaOperator, PackedSigmaTables } from './gpu/index';
