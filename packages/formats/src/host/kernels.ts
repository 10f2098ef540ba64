/**
 * The WebAssembly module of the host backend: the CSR product and the BLAS-1 kernels of a
 * solve (dot, axpby, element-wise product, multi-dot, multi-combine), f64x2 SIMD, in one memory
 * that is imported and shared, so worker threads run the same kernels on the same vectors.
 *
 * Rounding is fixed by construction, the same for any split over threads:
 * - a dot product is a sum of *block partials* ({@link DOT_BLOCK} elements per block): inside a
 *   block two f64x2 accumulators take elements i ≡ 0,1 and 2,3 (mod 4), a trailing pair goes to
 *   the first, a trailing single is added last: ((a₀ + a₁) + (a₂ + a₃)) + s. The caller sums the
 *   partials of blocks 0, 1, 2, … in order. Threads split at block boundaries, so each partial
 *   is computed by exactly the same instructions whatever the thread count.
 * - element-wise kernels (axpby, combine, multiply) compute each element by one fixed
 *   expression; combine is ((β·yᵢ + c₀x₀ᵢ) + c₁x₁ᵢ) + … (the order of {@link combineF64}).
 * - the product is the kernel of ../csr/wasm/spmv-kernel (row by row, fixed per row).
 * WebAssembly has no FMA, so lane-wise f64x2 mul/add are the scalar IEEE operations.
 * @module
 */
import { csrSpmvFunction } from '../csr/wasm/spmv-kernel';
import { buildModule, type FunctionSpec } from '../csr/wasm/module-bytes';
import { cgUpdateBlocks } from './wasm/cg-update';
import { combine, combineDotBlocks } from './wasm/combine';
import { spmvDotBlocks } from './wasm/spmv-dot';
import { dot4, dotBlocks, dotRange, multiDotBlocks } from './wasm/dot';
import { axpby2, axpy, axpy4, copy, fill, multiply, scale } from './wasm/elementwise';

export { COMBINE_BLOCK } from './wasm/combine';
export { DOT_BLOCK } from './wasm/dot';

/** The functions of the module, in the order of ./wasm/codegen's FN (the call indices). */
export function hostKernelFunctions(): FunctionSpec[] {
  return [
    csrSpmvFunction({ simd: true, unroll: 4 }),
    dotRange(),
    dotBlocks(),
    multiDotBlocks(),
    axpy(false),
    axpy(true),
    axpby2(),
    scale(),
    multiply(),
    combine(),
    fill(),
    copy(),
    axpy4(),
    dot4(),
    cgUpdateBlocks(),
    spmvDotBlocks(),
    combineDotBlocks(),
    cgUpdateBlocks(true),
    spmvDotBlocks(true),
    csrSpmvFunction({ simd: true, unroll: 4, pair: true }, 'spmvPair'),
    multiDotBlocks(true),
  ];
}

/** Maximum pages of the shared memory: the whole wasm32 space (4 GiB); only address space is reserved. */
export const HOST_MAX_PAGES = 65_536;

/**
 * Module bytes: imports a shared memory `env.memory` (max {@link HOST_MAX_PAGES} pages) and
 * exports spmv, dotRange, dotBlocks, multiDotBlocks, axpy0, axpy1, axpby2, scale, multiply,
 * combine, fill, copy, axpy4, dot4, cgUpdateBlocks, spmvDotBlocks, combineDotBlocks, cgTrueUpdateBlocks, spmvPairDotBlocks, spmvPair and multiDotCopyBlocks (byte addresses, element counts). About 3 KB.
 */
export function hostKernelModuleBytes(): Uint8Array<ArrayBuffer> {
  return buildModule(hostKernelFunctions(), { minPages: 1, maxPages: HOST_MAX_PAGES, shared: true, imported: true });
}

let compiled: WebAssembly.Module | null | undefined;

/**
 * The compiled module, or null when this engine lacks WebAssembly, SIMD or shared memory
 * (then the host backend keeps the JavaScript HostVectorSpace). Compiled once per process.
 */
export function hostKernelModule(): WebAssembly.Module | null {
  if (compiled !== undefined) return compiled;
  compiled = null;
  const wa = (globalThis as { WebAssembly?: typeof WebAssembly }).WebAssembly;
  if (wa === undefined || typeof SharedArrayBuffer === 'undefined') return compiled;
  const bytes = hostKernelModuleBytes();
  if (wa.validate(bytes)) compiled = new wa.Module(bytes);
  return compiled;
}

/** The exported kernels (all addresses are byte offsets into the shared memory). */
export interface HostKernels {
  spmv(rows: number, rowPtr: number, colIdx: number, values: number, x: number, y: number): void;
  dotRange(x: number, y: number, n: number): number;
  dotBlocks(x: number, y: number, n: number, out: number, block: number): void;
  multiDotBlocks(k: number, table: number, off: number, y: number, n: number, out: number, stride: number, block: number): void;
  axpy0(a: number, x: number, y: number, n: number): void;
  axpy1(a: number, x: number, y: number, n: number): void;
  axpby2(a: number, x: number, b: number, y: number, n: number): void;
  scale(b: number, y: number, n: number): void;
  multiply(x: number, y: number, z: number, n: number): void;
  combine(k: number, table: number, coefs: number, off: number, beta: number, mode: number, y: number, n: number, block: number): void;
  fill(value: number, y: number, n: number): void;
  copy(dst: number, src: number, n: number): void;
  axpy4(a0: number, a1: number, a2: number, a3: number, x0: number, x1: number, x2: number, x3: number, y: number, n: number): void;
  dot4(x0: number, x1: number, x2: number, x3: number, y: number, n: number, out: number, stride: number): void;
  cgUpdateBlocks(a: number, ma: number, p: number, q: number, x: number, r: number, n: number, out: number, block: number): void;
  combineDotBlocks(k: number, table: number, coefs: number, off: number, beta: number, mode: number, y: number, n: number, out: number, block: number): void;
  spmvDotBlocks(rows: number, rowPtr: number, colIdx: number, values: number, x: number, xd: number, y: number, out: number, block: number): void;
  cgTrueUpdateBlocks(a: number, ma: number, p: number, q: number, x: number, r: number, b: number, n: number, out: number, block: number): void;
  spmvPairDotBlocks(rows: number, rowPtr: number, colIdx: number, values: number, x: number, xd: number, y: number, x2: number, y2: number, out: number, block: number): void;
  multiDotCopyBlocks(k: number, table: number, off: number, y: number, n: number, out: number, stride: number, block: number, dst: number): void;
  spmvPair(rows: number, rowPtr: number, colIdx: number, values: number, x: number, y: number, x2: number, y2: number): void;
}

/** Instantiate the module on a shared memory. */
export function instantiateHostKernels(module: WebAssembly.Module, memory: WebAssembly.Memory): HostKernels {
  return new WebAssembly.Instance(module, { env: { memory } }).exports as unknown as HostKernels;
}
