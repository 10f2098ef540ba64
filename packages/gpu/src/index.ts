/**
 * @gpusparse/gpu — the WebGPU runtime: context (adapter, limits, device loss), device memory,
 * timing, BLAS-1 on the device, the SpMV kernel registry, and the GPU vector space / operator.
 * @module
 */
export * from './device/errors';
export * from './device/context';
export * from './device/pipelines';
export * from './memory/buffers';
export * from './memory/recorder';
export * from './memory/readback';
export * from './memory/upload';
export * from './timing/index';
export * from './blas1/ops';
export * from './blas1/scalar-pool';
