/**
 * {@link WasmVectorSpace}: the float64 host backend with its vectors in a shared WebAssembly
 * memory, where the CSR product ({@link WasmCsrOperator}) reads x and writes y directly, and
 * every BLAS-1 operation of a solve is a wasm SIMD kernel, split over worker threads above a
 * measured size. Vectors are plain Float64Array views, so code written for
 * {@link HostVectorSpace} (preconditioners, callbacks, `toArray`) works unchanged; an array
 * that does not live in the heap (a user's own) is handled by the JavaScript kernels.
 * @module
 */
import { DimensionMismatchError, InvalidParameterError } from '../core/errors';
import type { CsrMatrix } from '../core/types';
import type { CheckOptions } from '../core/validate';
import type { HostScalar } from '../operator/host';
import type { ScalarLike } from '../operator/interfaces';
import { WasmHeap } from './heap';
import { COMBINE_BLOCK, DOT_BLOCK } from './kernels';
import { WasmCsrOperator } from './operator';
import { box, checkLen, overlaps, val, WasmSpaceCore, type WasmSpaceOptions } from './space-core';
import { ThreadPool } from './threads';

export { PAR_MIN_N, PAR_MIN_NNZ, type WasmSpaceOptions } from './space-core';

/**
 * Host float64 vectors in WebAssembly memory. Make one with {@link WasmVectorSpace.create}
 * (undefined where WebAssembly SIMD or shared memory is missing: use HostVectorSpace), and its
 * operators with {@link WasmVectorSpace.csrOperator}. Call `dispose()` to stop its workers.
 * Dot products sum fixed 4096-element block partials in order, so they are bit-identical for
 * any thread count (and may differ from HostVectorSpace's in the last bits); axpby, combine and
 * multiply are bit-identical to HostVectorSpace's.
 * @example
 * const space = WasmVectorSpace.create({ threads: 2 })!;
 * const op = space.csrOperator(a);
 * const res = await cg(space, op, space.fromArray(b), { rtol: 1e-8 });
 * space.dispose();
 */
export class WasmVectorSpace extends WasmSpaceCore {
  private constructor(heap: WasmHeap, pool: ThreadPool | undefined, opts: WasmSpaceOptions) {
    super(heap, pool, opts);
  }

  /**
   * A new space (its own memory; with `threads` > 1 its worker pool), or undefined when this
   * engine has no WebAssembly SIMD or shared memory. Throws InvalidParameterError for a
   * `threads` that is not an integer in [1, 64].
   */
  static create(opts: WasmSpaceOptions = {}): WasmVectorSpace | undefined {
    const threads = opts.threads ?? 1;
    if (!Number.isInteger(threads) || threads < 1 || threads > 64) throw new InvalidParameterError('WasmVectorSpace threads', 'an integer in [1, 64]', threads);
    const heap = WasmHeap.create();
    if (heap === undefined) return undefined;
    const pool = threads > 1 ? ThreadPool.create(heap, threads) : undefined;
    return new WasmVectorSpace(heap, pool, opts);
  }

  /**
   * A CSR operator whose product runs on this space's vectors without copies; `a` is copied
   * into the heap once and validated (skipped with `{ unchecked: true }`). Throws
   * ResourceLimitError when the heap cannot hold it (4 GiB).
   */
  csrOperator(a: CsrMatrix, options: CheckOptions = {}): WasmCsrOperator {
    return WasmCsrOperator.create(this, a, options);
  }
  /**
   * {@link multiDot} that also copies y into `dst` in the same pass (each block of y while it is
   * in cache, split over the threads with the dots): the same values as multiDot then copy, one
   * read of y fewer. dst must not overlap y or any x; outside the heap, the two calls.
   * @example const h = space.multiDotCopy(chunk, w, w0); // h = chunkᵀ·w, w0 = w
   */
  multiDotCopy(xs: readonly Float64Array[], y: Float64Array, dst: Float64Array): HostScalar[] {
    checkLen('multiDotCopy dst', y, dst);
    if (!this.heap.owns(dst) || overlaps(dst, y) || xs.some((x) => overlaps(x, dst))) {
      const d = this.multiDot(xs, y);
      this.copy(y, dst);
      return d;
    }
    return this.multiDotInto(xs, y, dst);
  }

  /**
   * CG's update x += α·p, r −= α·q and ⟨r, r⟩ of the new r in one pass over the four vectors
   * (the solvers' cgUpdate finds it), where axpby, axpby, dot read r three times: bit-identical
   * to those three calls, for any thread count. p, q, x, r must be distinct; vectors outside the
   * heap or overlapping take the three calls.
   */
  cgUpdate(alpha: ScalarLike<HostScalar>, p: Float64Array, q: Float64Array, x: Float64Array, r: Float64Array): HostScalar {
    return this.cgPass(val(alpha), p, q, x, r, undefined);
  }

  /**
   * {@link cgUpdate} for CG's step that takes the true residual (the solvers' cg near its exit):
   * r holds t = A·x on entry (WasmCsrOperator.applyPairDot) and becomes r = (b − t) − α·q, the
   * residual b − A·(x + α·p) of the new x up to one rounding of x + α·p; x += α·p; returns ⟨r, r⟩.
   * One pass over five vectors, bit-identical to axpby(α, p, 1, x), axpby(1, b, −1, r),
   * axpby(−α, q, 1, r), dot(r, r) — which it takes for vectors outside the heap or overlapping.
   */
  cgTrueUpdate(alpha: ScalarLike<HostScalar>, p: Float64Array, q: Float64Array, x: Float64Array, r: Float64Array, b: Float64Array): HostScalar {
    return this.cgPass(val(alpha), p, q, x, r, b);
  }

  private cgPass(a: number, p: Float64Array, q: Float64Array, x: Float64Array, r: Float64Array, b: Float64Array | undefined): HostScalar {
    const vs = b ? [p, q, x, r, b] : [p, q, x, r];
    if (!this.inHeap(...vs) || vs.some((u, i) => vs.some((w, j) => j > i && overlaps(u, w)))) {
      this.axpby(a, p, 1, x);
      if (b) this.axpby(1, b, -1, r);
      this.axpby(-a, q, 1, r);
      return this.dot(r, r);
    }
    for (const [name, v] of [['p', p], ['q', q], ['x', x], ['b', b ?? r]] as const) checkLen(`cgUpdate ${name}`, v, r);
    const n = r.length;
    if (n === 0) return box(0);
    const blocks = Math.ceil(n / DOT_BLOCK);
    const out = this.partials.get(8 * blocks);
    const [pp, qp, xp, rp] = [p.byteOffset, q.byteOffset, x.byteOffset, r.byteOffset];
    const cuts = this.parts(n);
    if (b) {
      const bp = b.byteOffset;
      this.runParts('cgTrueUpdateBlocks', cuts, (lo, hi) => [a, -a, pp + 8 * lo, qp + 8 * lo, xp + 8 * lo, rp + 8 * lo, bp + 8 * lo, hi - lo, out + (8 * lo) / DOT_BLOCK, DOT_BLOCK]);
    } else this.runParts('cgUpdateBlocks', cuts, (lo, hi) => [a, -a, pp + 8 * lo, qp + 8 * lo, xp + 8 * lo, rp + 8 * lo, hi - lo, out + (8 * lo) / DOT_BLOCK, DOT_BLOCK]);
    return box(this.blockSum(out, blocks));
  }


  /**
   * ys[t] = Σⱼ coeffs[t][j]·xs[j] for every t (Ritz vectors Q·S of a restart, the Rayleigh–Ritz
   * updates of LOBPCG and Davidson): each output bit-identical to `combine(coeffs[t], xs, 0,
   * ys[t])`, but in one sweep over the basis — row blocks of xs small enough to stay in cache
   * while all outputs take their part of it, where one combine per output reads all of xs again
   * (a thick restart keeping 5–10 of 20 vectors: 5–10 sweeps). Outputs must not overlap xs or
   * each other. On the worker pool (long vectors) or outside the heap: one combine per output.
   */
  combineMany(coeffs: readonly (readonly number[])[], xs: readonly Float64Array[], ys: readonly Float64Array[]): void {
    if (coeffs.length !== ys.length) throw new DimensionMismatchError('combineMany outputs', coeffs.length, ys.length);
    const k = xs.length;
    const n = ys.length > 0 ? ys[0]!.length : 0;
    for (let t = 0; t < ys.length; t++) {
      if (coeffs[t]!.length !== k) throw new DimensionMismatchError(`combineMany coeffs[${t}]`, k, coeffs[t]!.length);
      checkLen(`combineMany ys[${t}]`, ys[0]!, ys[t]!);
    }
    for (let j = 0; j < k; j++) checkLen(`combineMany xs[${j}]`, ys[0] ?? xs[j]!, xs[j]!);
    const clash = ys.some((y, t) => xs.some((x) => overlaps(x, y)) || ys.some((z, u) => u > t && overlaps(y, z)));
    if (k === 0 || n === 0 || clash || !this.allInHeap(xs[0]!, xs) || !ys.every((y) => this.heap.owns(y)) || this.parts(n, (k + 1) * n).length > 2) {
      for (let t = 0; t < ys.length; t++) this.combine(coeffs[t]!, xs, 0, ys[t]!);
      return;
    }
    const p = ys.length;
    const table = this.table.get(4 * k + 8 * k * p + 8);
    const coefs = table + 8 * Math.ceil((4 * k) / 8);
    const ti = this.heap.i32All;
    const tf = this.heap.f64All;
    for (let j = 0; j < k; j++) ti[(table >> 2) + j] = xs[j]!.byteOffset;
    for (let t = 0; t < p; t++) for (let j = 0; j < k; j++) tf[(coefs >> 3) + t * k + j] = coeffs[t]![j]!;
    // rows per block: the block of all k inputs in ≈ 256 KiB (L2), a multiple of 4 elements, at least 256
    const rows = Math.max(256, 4 * Math.floor(32_768 / (4 * k)));
    const kern = this.heap.kernels;
    for (let lo = 0; lo < n; lo += rows) {
      const m = Math.min(rows, n - lo);
      for (let t = 0; t < p; t++) kern.combine(k, table, coefs + 8 * k * t, 8 * lo, 0, 0, ys[t]!.byteOffset + 8 * lo, m, COMBINE_BLOCK);
    }
  }
}
