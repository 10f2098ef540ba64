/**
 * The wasm host backend: {@link WasmVectorSpace} (vectors in a shared WebAssembly memory,
 * SIMD BLAS-1 kernels, worker threads) and its {@link WasmCsrOperator}.
 * @module
 */
export { WasmVectorSpace, PAR_MIN_N, PAR_MIN_NNZ } from './space';
export type { WasmSpaceOptions } from './space';
export { Scratch, WasmHeap } from './heap';
export { MAX_PARTS_PER_THREAD, ThreadPool } from './threads';
export { WasmCsrOperator, balancedRowCuts } from './operator';
export { DOT_BLOCK, COMBINE_BLOCK, type HostKernels } from './kernels';
