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
export { FUSED_G, FUSED_G_MAX, fusedGroup } from './blas1/fused-shaders';
export * from './blas1/scalar-pool';
export { LanczosBlock, LANCZOS_MAX_ROWS } from './blas1/lanczos-block';
export { GmresBlock, type GmresBlockRows } from './blas1/gmres-block';
export { type ColumnLoops, columnLoops, columnLoopsTuning } from './blas1/loops';
export * from './kernels/types';
export * from './kernels/registry';
export * from './kernels/wgsl/index';
export * from './kernels/csr/csr-device';
export * from './kernels/csr/scalar.kernel';
export * from './kernels/csr/vector.kernel';
export * from './kernels/csr/adaptive.kernel';
export * from './kernels/csr-vi/vi.kernel';
export * from './kernels/csr-vi/vi-device';
export * from './kernels/csr-vi/vi-slice.kernel';
export type { ViSliceBlock, ViSliceMatrix } from './kernels/csr-vi/vi-slice-device';
export type { DeviceDiaMatrix, DiaDeviceLayout, DiaDevicePiece } from './kernels/dia/dia-build';
export type { DeviceEllMatrix } from './kernels/ell/ell-build';
export * from './device/probe';
export * from './vector-space';
export * from './operator';
export * from './autotune/index';
export * from './df64/index';
export * from './spgemm/index';
