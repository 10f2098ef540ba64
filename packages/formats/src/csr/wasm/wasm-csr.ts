/**
 * A CSR matrix resident in WebAssembly memory, multiplied by the wasm kernel of
 * {@link csrSpmvModuleBytes}; and `csrSpmvFast`, which uses it when it pays.
 *
 * Layout of the module's memory (byte offsets, all 8-aligned):
 * `x` (8·cols) | `y` (8·rows) | values (8·nnz) | colIdx (4·nnz) | rowPtr (4·(rows + 1)).
 * wasm32 addresses are 32-bit, so everything must fit in 4 GiB (65 536 pages of 64 KiB): at most
 * about 4 GiB / 12 B ≈ 357 M non-zeros for a square matrix of few rows. Above that (or when the
 * engine cannot grow the memory that far) `WasmCsr.create` throws {@link WasmMemoryLimitError};
 * `csrSpmvFast` and `HostOperator.fromCsr` fall back to the JavaScript `csrSpmv` instead.
 * @module
 */
import { DimensionMismatchError, GpuSparseError, NotSupportedError } from '../../core/errors';
import type { CsrMatrix } from '../../core/types';
import { csrNnz, csrSpmv, validateCsr } from '../csr';
import { csrSpmvModule, type KernelVariant } from './spmv-kernel';

/** Bytes of one wasm page. */
export const WASM_PAGE_BYTES = 65_536;
/** The wasm32 address space: 65 536 pages = 4 GiB. */
export const WASM32_MAX_BYTES = 65_536 * WASM_PAGE_BYTES;
/**
 * Below this many non-zeros `csrSpmvFast` (and so `HostOperator.fromCsr`) keep the JavaScript
 * kernel. The wasm product is faster at every size (x/y copies included), but creating a
 * WasmCsr costs ≈ 40 µs (instance, first 64 KiB page) plus ≈ 5–12 ns per non-zero (validation
 * and copy): measured break-even ≈ 440 products at 400 non-zeros, 13 at 4 000, 6–9 from 10^4 on
 * (2-core Xeon, node 20). From 10^4 the copy pays back within the first ten products.
 */
export const WASM_MIN_NNZ = 10_000;
/**
 * The kernel variant used by default: f64x2 SIMD, 4 entries per iteration. Measured (2-core
 * Xeon, node 20, interleaved medians, ns per non-zero incl. x/y copies): within 5 % of the best
 * of the four variants on every matrix tried, while simd8 is 10–20 % faster on long rows but
 * 40 % slower on rows of 1–2 entries (Pd), and the scalar ones 5–15 % slower on long rows.
 * Engines without SIMD get the scalar variant of the same unroll.
 */
export const DEFAULT_WASM_VARIANT: KernelVariant = { simd: true, unroll: 4 };

/** The matrix (with its x and y) does not fit the 4 GiB wasm32 memory, or the engine refused to grow it. */
export class WasmMemoryLimitError extends GpuSparseError {
  constructor(
    readonly where: string,
    readonly bytes: number,
    detail = `the wasm32 limit is ${WASM32_MAX_BYTES} bytes (4 GiB)`,
  ) {
    super(`${where}: needs ${bytes} bytes of WebAssembly memory; ${detail}. Use the JavaScript csrSpmv for this matrix.`);
  }
}

/** Byte offsets of the arrays in the wasm memory, and the total. O(1). */
export function wasmCsrLayout(rows: number, cols: number, nnz: number) {
  const x = 0;
  const y = x + 8 * cols;
  const values = y + 8 * rows;
  const colIdx = values + 8 * nnz;
  const rowPtr = colIdx + 4 * nnz;
  const bytes = rowPtr + 4 * (rows + 1);
  return { x, y, values, colIdx, rowPtr, bytes };
}

/** True when this engine can compile the default kernel (WebAssembly present and working). */
export function wasmAvailable(variant: KernelVariant = DEFAULT_WASM_VARIANT): boolean {
  return csrSpmvModule(variant) !== null || csrSpmvModule({ simd: false, unroll: 4 }) !== null;
}

type SpmvFn = (rows: number, rowPtr: number, colIdx: number, values: number, x: number, y: number) => void;

/**
 * A CSR matrix copied once into its own WebAssembly memory; `multiply` computes y = A·x with
 * the wasm kernel, bit-identical to `csrSpmv` (same summation order, no FMA).
 * The copy is a snapshot: later in-place edits of the source arrays are not seen until `load`.
 * Memory: 12·nnz + 12·rows + 8·cols bytes besides the source matrix.
 * @example
 * const w = WasmCsr.create(a);
 * const y = w.multiply(x);        // copies x in and y out: O(rows + cols) besides the product
 * w.x.set(x); w.multiplyInPlace(); // or keep the vectors in wasm memory: w.y holds A·x
 */
export class WasmCsr {
  private readonly memory: WebAssembly.Memory;
  private readonly spmv: SpmvFn;
  private layout = wasmCsrLayout(0, 0, 0);
  private viewBuffer: ArrayBuffer | undefined;
  private xv = new Float64Array(0);
  private yv = new Float64Array(0);
  private shape = { rows: 0, cols: 0, nnz: 0 };

  private constructor(
    instance: WebAssembly.Instance,
    readonly variant: KernelVariant,
  ) {
    this.memory = instance.exports.memory as WebAssembly.Memory;
    this.spmv = instance.exports.spmv as SpmvFn;
  }

  /**
   * Instantiate the kernel and copy `a` in (O(nnz): validation and copy). Throws
   * NotSupportedError without WebAssembly, WasmMemoryLimitError above 4 GiB, InvalidMatrixError
   * for a malformed matrix (a column outside [0, cols) would otherwise read foreign memory).
   */
  static create(a: CsrMatrix, opts: { variant?: KernelVariant } = {}): WasmCsr {
    let variant = opts.variant ?? DEFAULT_WASM_VARIANT;
    let module = csrSpmvModule(variant);
    if (module === null && variant.simd) {
      variant = { simd: false, unroll: variant.unroll }; // engine without SIMD
      module = csrSpmvModule(variant);
    }
    if (module === null) throw new NotSupportedError('WasmCsr: WebAssembly is not available in this engine (or rejected the kernel module); use csrSpmv');
    const w = new WasmCsr(new WebAssembly.Instance(module), variant);
    w.load(a);
    return w;
  }

  /** Rows, columns and stored entries of the loaded matrix. */
  get rows(): number {
    return this.shape.rows;
  }
  get cols(): number {
    return this.shape.cols;
  }
  get nnz(): number {
    return this.shape.nnz;
  }
  /** Current size of the wasm memory in bytes (a multiple of 64 KiB; it only grows). */
  get memoryBytes(): number {
    return this.memory.buffer.byteLength;
  }

  /**
   * Copy a matrix (this one again after in-place edits, or another) into the memory, growing it
   * when needed. O(nnz) validation + copy.
   */
  load(a: CsrMatrix): void {
    validateCsr(a, 'WasmCsr.load', false);
    const nnz = csrNnz(a);
    const layout = wasmCsrLayout(a.rows, a.cols, nnz);
    if (layout.bytes > WASM32_MAX_BYTES) throw new WasmMemoryLimitError(`WasmCsr.load (${a.rows}x${a.cols}, ${nnz} non-zeros)`, layout.bytes);
    const have = this.memory.buffer.byteLength;
    if (layout.bytes > have) {
      const pages = Math.ceil((layout.bytes - have) / WASM_PAGE_BYTES);
      try {
        this.memory.grow(pages);
      } catch (e) {
        throw new WasmMemoryLimitError(`WasmCsr.load (${a.rows}x${a.cols}, ${nnz} non-zeros)`, layout.bytes, `the engine refused to grow the memory by ${pages} pages (${(e as Error).message})`);
      }
    }
    const buf = this.memory.buffer;
    new Float64Array(buf, layout.values, nnz).set(a.values);
    new Int32Array(buf, layout.colIdx, nnz).set(a.colIdx);
    new Int32Array(buf, layout.rowPtr, a.rows + 1).set(a.rowPtr);
    this.layout = layout;
    this.shape = { rows: a.rows, cols: a.cols, nnz };
    this.viewBuffer = undefined;
  }

  private views(): void {
    const buf = this.memory.buffer;
    if (buf === this.viewBuffer) return;
    // growing a wasm memory detaches its old ArrayBuffer: views are rebuilt on the new one
    this.xv = new Float64Array(buf, this.layout.x, this.shape.cols);
    this.yv = new Float64Array(buf, this.layout.y, this.shape.rows);
    this.viewBuffer = buf;
  }

  /** x as a view on the wasm memory (length cols); valid until the next `load`. */
  get x(): Float64Array {
    this.views();
    return this.xv;
  }
  /** y as a view on the wasm memory (length rows); `multiplyInPlace` overwrites it. */
  get y(): Float64Array {
    this.views();
    return this.yv;
  }

  /** y_view = A · x_view, no copies. O(nnz + rows). */
  multiplyInPlace(): void {
    const l = this.layout;
    this.spmv(this.shape.rows, l.rowPtr, l.colIdx, l.values, l.x, l.y);
  }

  /**
   * y = A · x: copies x into the memory, runs the kernel, copies y out (into `y` when given).
   * O(nnz + rows + cols). Throws DimensionMismatchError on wrong lengths.
   */
  multiply(x: Float64Array, y?: Float64Array): Float64Array {
    if (x.length !== this.shape.cols) throw new DimensionMismatchError('WasmCsr.multiply x', this.shape.cols, x.length);
    const out = y ?? new Float64Array(this.shape.rows);
    if (out.length !== this.shape.rows) throw new DimensionMismatchError('WasmCsr.multiply y', this.shape.rows, out.length);
    this.views();
    this.xv.set(x);
    this.multiplyInPlace();
    out.set(this.yv);
    return out;
  }
}

const cache = new WeakMap<CsrMatrix, WasmCsr | null>();

/**
 * The WasmCsr that `csrSpmvFast` uses for `a`, created (and cached per matrix object) on the
 * first call, or undefined when the JavaScript kernel is used. Rule: WebAssembly available,
 * nnz ≥ {@link WASM_MIN_NNZ}, and the layout fits 4 GiB (and the engine grows that far).
 */
export function wasmCsrFor(a: CsrMatrix): WasmCsr | undefined {
  const hit = cache.get(a);
  if (hit !== undefined) return hit ?? undefined;
  let w: WasmCsr | null = null;
  const bytes = wasmCsrLayout(a.rows, a.cols, csrNnz(a)).bytes;
  if (csrNnz(a) >= WASM_MIN_NNZ && bytes <= WASM32_MAX_BYTES && wasmAvailable()) {
    try {
      w = WasmCsr.create(a);
    } catch (e) {
      if (!(e instanceof WasmMemoryLimitError)) throw e; // a malformed matrix is the caller's error
    }
  }
  cache.set(a, w);
  return w ?? undefined;
}

/**
 * y = A·x like {@link csrSpmv} (same signature, bit-identical result), through the wasm kernel
 * when {@link wasmCsrFor} allows it, else through csrSpmv. The first call copies the matrix
 * into wasm memory (O(nnz)); the copy is cached per matrix object, so in-place edits of `a`'s
 * arrays after the first call are not seen (build a new CsrMatrix object instead).
 * @example
 * const y = csrSpmvFast(a, x); // 1.3–4.8× faster than csrSpmv, median 3.6× (bench/RESULTS.md)
 */
export function csrSpmvFast(a: CsrMatrix, x: Float64Array, y?: Float64Array): Float64Array {
  const w = wasmCsrFor(a);
  if (w === undefined) return csrSpmv(a, x, y);
  if (x.length !== a.cols) throw new DimensionMismatchError('csrSpmvFast x', a.cols, x.length);
  if (y !== undefined && y.length !== a.rows) throw new DimensionMismatchError('csrSpmvFast y', a.rows, y.length);
  return w.multiply(x, y);
}
