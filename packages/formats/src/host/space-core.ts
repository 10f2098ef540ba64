/**
 * The core of {@link WasmVectorSpace} (./space.ts): the heap of float64 vectors in shared
 * WebAssembly memory, its worker pool, and VectorSpace's operations as wasm SIMD kernels split
 * over threads above a measured size — dot products as ordered sums of fixed block partials
 * (the same bits for any thread count). The solvers' fused operations (CG's updates,
 * multiDotCopy, combineMany) are the subclass's.
 * @module
 */
import { DimensionMismatchError } from '../core/errors';
import { norm2F64 } from '../operator/blas1-host';
import { type HostScalar, HostVectorSpace } from '../operator/host';
import type { ScalarLike } from '../operator/interfaces';
import { Scratch, type WasmHeap } from './heap';
import { COMBINE_BLOCK, DOT_BLOCK } from './kernels';
import { PARTS_PER_THREAD, type ThreadKernel, type ThreadPool } from './threads';


/** Options of {@link WasmVectorSpace.create}. */
export interface WasmSpaceOptions {
  /**
   * Threads for the product and the long vector operations (the calling thread plus
   * `threads − 1` workers); default 1. Results are bit-identical for every value.
   */
  threads?: number;
  /** Vector length from which vector operations are split over threads (default {@link PAR_MIN_N}). */
  parallelMinLength?: number;
  /** Non-zeros from which the product is split over threads (default {@link PAR_MIN_NNZ}). */
  parallelMinNnz?: number;
}

/**
 * Vector operations shorter than this run on one thread. Measured (2-core Xeon, node 20, load
 * average ≈ 16 from other jobs, medians of 7): axpy 1 thread / 2 threads = 23 / 159 µs at 5·10^4,
 * 200 / 455 µs at 2·10^5, 1 489 / 821 µs at 10^6 — waking a worker costs ≈ 0.1 ms on a busy
 * machine, so only vectors of several 10^5 elements gain.
 */
export const PAR_MIN_N = 500_000;
/** Products with fewer non-zeros run on one thread (≈ 0.5 ms of product; see {@link PAR_MIN_N}). */
export const PAR_MIN_NNZ = 500_000;

export const val = (s: ScalarLike<HostScalar>): number => (typeof s === 'number' ? s : s.value);
export const box = (value: number): HostScalar => ({ value });
const NORM2_SAFE_MIN = 2 ** -900;

export function checkLen(where: string, a: Float64Array, b: Float64Array): void {
  if (a.length !== b.length) throw new DimensionMismatchError(where, a.length, b.length);
}

/** True when two views of one buffer overlap. */
export function overlaps(a: Float64Array, b: Float64Array): boolean {
  return a.byteOffset < b.byteOffset + b.byteLength && b.byteOffset < a.byteOffset + a.byteLength;
}

/** The operations of {@link WasmVectorSpace} that VectorSpace defines, on its heap and pool. */
export abstract class WasmSpaceCore extends HostVectorSpace {
  override readonly name = 'host-wasm-f64';
  readonly threads: number;
  protected readonly table: Scratch;
  protected readonly partials: Scratch;
  protected readonly parMinN: number;
  readonly parMinNnz: number;

  protected constructor(
    readonly heap: WasmHeap,
    readonly pool: ThreadPool | undefined,
    opts: WasmSpaceOptions,
  ) {
    super();
    this.threads = pool?.threads ?? 1;
    this.table = new Scratch(heap);
    this.partials = new Scratch(heap);
    this.parMinN = opts.parallelMinLength ?? PAR_MIN_N;
    this.parMinNnz = opts.parallelMinNnz ?? PAR_MIN_NNZ;
  }

  /** Stop the worker threads (vectors stay readable; later operations run on one thread). */
  dispose(): void {
    this.pool?.close();
    (this as { pool: ThreadPool | undefined }).pool = undefined;
  }

  override create(n: number): Float64Array {
    return this.heap.allocF64(n, `WasmVectorSpace.create(${n})`);
  }
  /**
   * A vector whose contents are unspecified (whatever a released vector left there): for
   * outputs that are written in full before they are read — a product's y, a combine with
   * β = 0 — it saves create's zero-filling pass (≈ 3 % of a host Lanczos step).
   * @example const w = space.createUninitialized(n); op.apply(x, w);
   */
  createUninitialized(n: number): Float64Array {
    return this.heap.allocF64(n, `WasmVectorSpace.createUninitialized(${n})`, false);
  }
  override fromArray(values: ArrayLike<number>): Float64Array {
    const v = this.create(values.length);
    v.set(values);
    return v;
  }
  override release(x: Float64Array | HostScalar): void {
    if (x instanceof Float64Array) this.heap.free(x);
  }

  /** True when every vector lives in this heap (otherwise the JavaScript kernels run). */
  protected inHeap(...vs: Float64Array[]): boolean {
    for (const v of vs) if (!this.heap.owns(v)) return false;
    return true;
  }

  /** {@link inHeap} for y and a list (no array spread: multiDot and combine run at every Krylov step). */
  protected allInHeap(y: Float64Array, xs: readonly Float64Array[]): boolean {
    if (!this.heap.owns(y)) return false;
    for (let j = 0; j < xs.length; j++) if (!this.heap.owns(xs[j]!)) return false;
    return true;
  }

  /**
   * Parts of [0, n) for the threads (`PARTS_PER_THREAD` per thread, claimed in turn: see
   * ./threads), cut at DOT_BLOCK multiples; one part when the elements touched (`work`: n per
   * vector, k·n for a k-vector multiDot/combine) are below the threshold.
   */
  parts(n: number, work = n): number[] {
    const t = this.pool && work >= this.parMinN ? this.threads * PARTS_PER_THREAD : 1;
    const blocks = Math.ceil(n / DOT_BLOCK);
    const cuts = [0];
    for (let i = 1; i < t; i++) cuts.push(Math.min(n, Math.round((blocks * i) / t) * DOT_BLOCK));
    cuts.push(n);
    return cuts;
  }

  /** Run `kernel` with args(lo, hi) per part (on the pool when there is more than one). */
  protected runParts(kernel: ThreadKernel, cuts: readonly number[], args: (lo: number, hi: number) => number[]): void {
    if (cuts.length === 2) {
      (this.heap.kernels[kernel] as (...a: number[]) => void)(...args(0, cuts[1]!));
      return;
    }
    const parts = [];
    for (let i = 0; i + 1 < cuts.length; i++) parts.push(args(cuts[i]!, cuts[i + 1]!));
    this.pool!.run(kernel, parts);
  }

  /** Run a threaded job on the pool (used by the operator). */
  runJob(kernel: ThreadKernel, parts: readonly (readonly number[])[]): void {
    if (parts.length === 1 || !this.pool) for (const p of parts) (this.heap.kernels[kernel] as (...a: number[]) => void)(...p);
    else this.pool.run(kernel, parts);
  }

  override axpby(alpha: ScalarLike<HostScalar>, x: Float64Array, beta: ScalarLike<HostScalar>, y: Float64Array): void {
    if (!this.inHeap(x, y)) {
      super.axpby(alpha, x, beta, y);
      return;
    }
    checkLen('axpby', x, y);
    const a = val(alpha);
    const b = val(beta);
    const xp = x.byteOffset;
    const yp = y.byteOffset;
    const cuts = this.parts(y.length);
    if (cuts.length === 2) {
      const k = this.heap.kernels;
      if (b === 0) k.axpy0(a, xp, yp, y.length);
      else if (b === 1) k.axpy1(a, xp, yp, y.length);
      else k.axpby2(a, xp, b, yp, y.length);
      return;
    }
    if (b === 0) this.runParts('axpy0', cuts, (lo, hi) => [a, xp + 8 * lo, yp + 8 * lo, hi - lo]);
    else if (b === 1) this.runParts('axpy1', cuts, (lo, hi) => [a, xp + 8 * lo, yp + 8 * lo, hi - lo]);
    else this.runParts('axpby2', cuts, (lo, hi) => [a, xp + 8 * lo, b, yp + 8 * lo, hi - lo]);
  }

  /** dst = src by memory.copy (one thread: a copy is cheaper than waking a worker up to ~10^6). */
  override copy(src: Float64Array, dst: Float64Array): void {
    if (!this.inHeap(src, dst)) {
      super.copy(src, dst);
      return;
    }
    checkLen('copy', src, dst);
    this.heap.kernels.copy(dst.byteOffset, src.byteOffset, dst.length);
  }

  /** v[i] = value, by a wasm kernel. */
  override fill(v: Float64Array, value: number): void {
    if (!this.inHeap(v)) {
      super.fill(v, value);
      return;
    }
    this.heap.kernels.fill(value, v.byteOffset, v.length);
  }

  override multiply(x: Float64Array, y: Float64Array, z: Float64Array): void {
    if (!this.inHeap(x, y, z)) {
      super.multiply(x, y, z);
      return;
    }
    checkLen('multiply', x, y);
    checkLen('multiply', x, z);
    const [xp, yp, zp] = [x.byteOffset, y.byteOffset, z.byteOffset];
    this.runParts('multiply', this.parts(z.length), (lo, hi) => [xp + 8 * lo, yp + 8 * lo, zp + 8 * lo, hi - lo]);
  }

  /** x·y as the ordered sum of its block partials. */
  private dotValue(x: Float64Array, y: Float64Array): number {
    const n = y.length;
    if (n <= DOT_BLOCK) return this.heap.kernels.dotRange(x.byteOffset, y.byteOffset, n);
    const blocks = Math.ceil(n / DOT_BLOCK);
    const out = this.partials.get(8 * blocks);
    const xp = x.byteOffset;
    const yp = y.byteOffset;
    const cuts = this.parts(n);
    if (cuts.length === 2) this.heap.kernels.dotBlocks(xp, yp, n, out, DOT_BLOCK);
    else this.runParts('dotBlocks', cuts, (lo, hi) => [xp + 8 * lo, yp + 8 * lo, hi - lo, out + (8 * lo) / DOT_BLOCK, DOT_BLOCK]);
    return this.blockSum(out, blocks);
  }

  /**
   * The ordered sum of `blocks` block partials at byte address `out` (one block: the partial
   * itself, as dotRange gives it): the fixed reduction order of every dot of this space.
   */
  blockSum(out: number, blocks: number): number {
    const p = this.heap.f64All;
    const base = out >> 3;
    if (blocks === 1) return p[base]!;
    let s = 0;
    for (let b = 0; b < blocks; b++) s += p[base + b]!;
    return s;
  }

  /** x·y: fixed 4096-element block partials summed in order (any thread count, same bits). */
  override dot(x: Float64Array, y: Float64Array): HostScalar {
    if (!this.inHeap(x, y)) return super.dot(x, y);
    checkLen('dot', x, y);
    return box(this.dotValue(x, y));
  }

  /** ‖x‖₂ = √(x·x), with HostVectorSpace's scaled pass when that sum over- or underflowed. */
  override norm2(x: Float64Array): HostScalar {
    if (!this.inHeap(x)) return super.norm2(x);
    const ss = this.dotValue(x, x);
    if (ss < Number.POSITIVE_INFINITY && ss >= NORM2_SAFE_MIN) return box(Math.sqrt(ss));
    return box(norm2F64(x));
  }

  /** [x₀·y, x₁·y, …] in one pass over y per block; entry j is bit-identical to dot(xs[j], y). */
  override multiDot(xs: readonly Float64Array[], y: Float64Array): HostScalar[] {
    return this.multiDotInto(xs, y, undefined);
  }


  protected multiDotInto(xs: readonly Float64Array[], y: Float64Array, dst: Float64Array | undefined): HostScalar[] {
    if (!this.allInHeap(y, xs)) {
      const d = super.multiDot(xs, y);
      if (dst) this.copy(y, dst);
      return d;
    }
    for (let j = 0; j < xs.length; j++) if (xs[j]!.length !== y.length) checkLen(`multiDot xs[${j}]`, y, xs[j]!);
    const k = xs.length;
    const n = y.length;
    if (k === 0 || n === 0) {
      if (dst) this.copy(y, dst);
      return xs.map(() => box(0));
    }
    const blocks = Math.max(1, Math.ceil(n / DOT_BLOCK));
    const table = this.table.get(4 * k);
    const out = this.partials.get(8 * k * blocks); // (both before the views: a get may grow the memory)
    const t = this.heap.i32All;
    for (let j = 0; j < k; j++) t[(table >> 2) + j] = xs[j]!.byteOffset;
    const yp = y.byteOffset;
    const cuts = this.parts(n, (k + (dst ? 2 : 1)) * n);
    const kern = this.heap.kernels;
    // one part: the kernel straight (a Krylov or LOBPCG step makes dozens of these calls)
    if (cuts.length === 2 && !dst) kern.multiDotBlocks(k, table, 0, yp, n, out, blocks, DOT_BLOCK);
    else if (cuts.length === 2) kern.multiDotCopyBlocks(k, table, 0, yp, n, out, blocks, DOT_BLOCK, dst!.byteOffset);
    else {
      const args = (lo: number, hi: number) => [k, table, 8 * lo, yp + 8 * lo, hi - lo, out + (8 * lo) / DOT_BLOCK, blocks, DOT_BLOCK, ...(dst ? [dst.byteOffset + 8 * lo] : [])];
      this.runParts(dst ? 'multiDotCopyBlocks' : 'multiDotBlocks', cuts, args);
    }
    const res = new Array<HostScalar>(k);
    for (let j = 0; j < k; j++) res[j] = box(this.blockSum(out + 8 * j * blocks, blocks));
    return res;
  }
  /** y = β·y + Σ cⱼ·xⱼ, bit-identical to HostVectorSpace's combine. */
  override combine(coeffs: readonly ScalarLike<HostScalar>[], xs: readonly Float64Array[], beta: ScalarLike<HostScalar>, y: Float64Array): void {
    if (!this.allInHeap(y, xs) || this.mayOverlap(y, xs)) {
      super.combine(coeffs, xs, beta, y);
      return;
    }
    const { k, table, coefs, b, mode } = this.combineTable(coeffs, xs, beta, y);
    const yp = y.byteOffset;
    const n = y.length;
    const cuts = this.parts(n, (k + 1) * n);
    if (cuts.length === 2) this.heap.kernels.combine(k, table, coefs, 0, b, mode, yp, n, COMBINE_BLOCK);
    else this.runParts('combine', cuts, (lo, hi) => [k, table, coefs, 8 * lo, b, mode, yp + 8 * lo, hi - lo, COMBINE_BLOCK]);
  }

  /**
   * y = β·y + Σ cⱼ·xⱼ and ‖y‖ after it in one sweep over y (the solvers' combineNorm finds it):
   * each 4 096-element block of y is combined, then its ⟨y, y⟩ partial taken while it is in
   * cache. y and the norm are bit-identical to combine then norm2, for any thread count; vectors
   * outside the heap or overlapping take those two calls.
   */
  combineNorm(coeffs: readonly ScalarLike<HostScalar>[], xs: readonly Float64Array[], beta: ScalarLike<HostScalar>, y: Float64Array): HostScalar {
    if (!this.allInHeap(y, xs) || this.mayOverlap(y, xs) || y.length === 0) {
      this.combine(coeffs, xs, beta, y);
      return this.norm2(y);
    }
    const { k, table, coefs, b, mode } = this.combineTable(coeffs, xs, beta, y);
    const n = y.length;
    const blocks = Math.ceil(n / DOT_BLOCK);
    const out = this.partials.get(8 * blocks);
    const yp = y.byteOffset;
    this.runParts('combineDotBlocks', this.parts(n, (k + 1) * n), (lo, hi) => [k, table, coefs, 8 * lo, b, mode, yp + 8 * lo, hi - lo, out + (8 * lo) / DOT_BLOCK, DOT_BLOCK]);
    const ss = this.blockSum(out, blocks);
    if (ss < Number.POSITIVE_INFINITY && ss >= NORM2_SAFE_MIN) return box(Math.sqrt(ss));
    return box(norm2F64(y)); // norm2's scaled pass
  }

  /** Check combine's arguments and write its table of addresses and coefficients into the heap. */
  protected combineTable(coeffs: readonly ScalarLike<HostScalar>[], xs: readonly Float64Array[], beta: ScalarLike<HostScalar>, y: Float64Array) {
    if (coeffs.length !== xs.length) throw new DimensionMismatchError('combine coeffs', xs.length, coeffs.length);
    for (let j = 0; j < xs.length; j++) if (xs[j]!.length !== y.length) checkLen(`combine xs[${j}]`, y, xs[j]!);
    const k = xs.length;
    const b = val(beta);
    const table = this.table.get(4 * k + 8 * k + 8);
    const coefs = table + 8 * Math.ceil((4 * k) / 8);
    const t = this.heap.i32All;
    const c = this.heap.f64All;
    for (let j = 0; j < k; j++) {
      t[(table >> 2) + j] = xs[j]!.byteOffset;
      c[(coefs >> 3) + j] = val(coeffs[j]!);
    }
    return { k, table, coefs, b, mode: b === 0 ? 0 : b === 1 ? 1 : 2 };
  }
  /**
   * True when some x other than y itself overlaps y. Vectors the heap allocated are distinct
   * blocks, so a list of those needs no byteOffset reads (≈ 0.1 µs a pair: a Krylov step's
   * combine over 20–30 vectors).
   */
  protected mayOverlap(y: Float64Array, xs: readonly Float64Array[]): boolean {
    const h = this.heap;
    let own = h.made(y);
    for (let j = 0; own && j < xs.length; j++) own = h.made(xs[j]!);
    if (own) return false;
    for (let j = 0; j < xs.length; j++) if (xs[j] !== y && overlaps(xs[j]!, y)) return true;
    return false;
  }
}
