/**
 * WebAssembly CSR SpMV for the host backend: the kernel, {@link WasmCsr} and
 * {@link csrSpmvFast}. The module-bytes builder (./module-bytes) stays internal to the package.
 * @module
 */
export { csrSpmvModule, csrSpmvModuleBytes } from './spmv-kernel';
export type { KernelVariant } from './spmv-kernel';
export {
  csrSpmvFast,
  DEFAULT_WASM_VARIANT,
  WASM_MIN_NNZ,
  WASM_PAGE_BYTES,
  WASM32_MAX_BYTES,
  WasmCsr,
  wasmAvailable,
  wasmCsrFor,
  wasmCsrLayout,
  WasmMemoryLimitError,
} from './wasm-csr';
export { buildModule, CodeBuilder, type FunctionSpec, Op, SimdOp, ValType, type ValTypeByte } from './module-bytes';
