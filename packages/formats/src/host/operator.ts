/**
 * {@link WasmCsrOperator}: a CSR matrix in the heap of a {@link WasmVectorSpace}; its product
 * reads x and writes y where the space keeps them (no copy), split by rows over the space's
 * threads (row ranges of about equal non-zeros, fixed per matrix) above a size where it pays.
 * @module
 */
import { DimensionMismatchError } from '../core/errors';
import type { CsrMatrix } from '../core/types';
import type { CheckOptions } from '../core/validate';
import { csrDiagonal, csrNnz, csrTranspose, validateCsr } from '../csr/csr';
import type { HostScalar } from '../operator/host';
import type { LinearOperator } from '../operator/interfaces';
import { Scratch } from './heap';
import { DOT_BLOCK } from './kernels';
import type { WasmVectorSpace } from './space';
import { PARTS_PER_THREAD } from './threads';

/** Row cuts splitting the non-zeros (plus one per row) of `rowPtr` into `t` about equal parts. O(t log rows). */
export function balancedRowCuts(rowPtr: Int32Array, t: number): number[] {
  const rows = rowPtr.length - 1;
  const weight = (i: number) => rowPtr[i]! + i; // a row costs its entries plus its store
  const total = weight(rows);
  const cuts = [0];
  for (let p = 1; p < t; p++) {
    const target = (total * p) / t;
    let lo = cuts[cuts.length - 1]!;
    let hi = rows;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (weight(mid) < target) lo = mid + 1;
      else hi = mid;
    }
    cuts.push(lo);
  }
  cuts.push(rows);
  return cuts;
}

/**
 * y = A·x with A in wasm memory. Vectors of its space go straight to the kernel; other
 * Float64Arrays are copied through two heap vectors (O(rows + cols) more per product).
 * The copy of A is a snapshot: later in-place edits of the source arrays are not seen.
 * Memory: 12·nnz + 4·(rows + 1) bytes of heap. The result is bit-identical to `csrSpmv`.
 * @example
 * const op = space.csrOperator(a);
 * op.apply(x, y); // x, y made by space.create / space.fromArray
 */
export class WasmCsrOperator implements LinearOperator<Float64Array> {
  readonly label = 'host-wasm-csr';
  private xs: Float64Array | undefined;
  private ys: Float64Array | undefined;
  private tmp: Float64Array | undefined;
  private transposed: WasmCsrOperator | undefined;
  private readonly cuts: number[];
  /** The product's row cuts rounded to DOT_BLOCK multiples (the threaded parts of applyDot). */
  private readonly dotCuts: number[];
  private readonly partials: Scratch;

  private constructor(
    private readonly space: WasmVectorSpace,
    private readonly source: CsrMatrix,
    readonly rows: number,
    readonly cols: number,
    readonly nnz: number,
    private readonly rowPtr: number,
    private readonly colIdx: number,
    private readonly values: number,
  ) {
    // several row ranges per thread, claimed in turn (see ./threads)
    const t = space.pool && nnz >= space.parMinNnz ? space.threads * PARTS_PER_THREAD : 1;
    this.cuts = balancedRowCuts(source.rowPtr, t);
    this.dotCuts = blockAlignedCuts(this.cuts);
    this.partials = new Scratch(space.heap);
  }

  /** Copy `a` into the space's heap (O(nnz)); validated unless `unchecked`. */
  static create(space: WasmVectorSpace, a: CsrMatrix, options: CheckOptions = {}): WasmCsrOperator {
    if (!options.unchecked) validateCsr(a, 'WasmVectorSpace.csrOperator', false);
    const nnz = csrNnz(a);
    const h = space.heap;
    const where = `WasmVectorSpace.csrOperator (${a.rows}x${a.cols}, ${nnz} non-zeros)`;
    const values = h.alloc(8 * nnz, where);
    const colIdx = h.alloc(4 * nnz, where);
    const rowPtr = h.alloc(4 * (a.rows + 1), where);
    h.f64View(values, nnz).set(a.values.subarray(0, nnz));
    h.i32View(colIdx, nnz).set(a.colIdx.subarray(0, nnz));
    h.i32View(rowPtr, a.rows + 1).set(a.rowPtr);
    return new WasmCsrOperator(space, a, a.rows, a.cols, nnz, rowPtr, colIdx, values);
  }

  /** Threads the product uses (1 below the space's parallelMinNnz). */
  get threads(): number {
    return this.cuts.length > 2 ? this.space.threads : 1;
  }

  private product(x: Float64Array, y: Float64Array): void {
    const xp = x.byteOffset;
    const yp = y.byteOffset;
    const c = this.cuts;
    const parts = [];
    for (let t = 0; t + 1 < c.length; t++) parts.push([c[t + 1]! - c[t]!, this.rowPtr + 4 * c[t]!, this.colIdx, this.values, xp, yp + 8 * c[t]!]);
    this.space.runJob('spmv', parts);
  }

  apply(x: Float64Array, y: Float64Array): void {
    if (x.length !== this.cols) throw new DimensionMismatchError(`${this.label} apply x`, this.cols, x.length);
    if (y.length !== this.rows) throw new DimensionMismatchError(`${this.label} apply y`, this.rows, y.length);
    const h = this.space.heap;
    const direct = h.owns(x) && h.owns(y) && !overlap(x, y); // both in the heap: byte offsets are addresses (no .buffer read, ≈ 0.15 µs each)
    if (direct) {
      this.product(x, y);
      return;
    }
    const xs = h.owns(x) ? x : (this.xs ??= this.space.create(this.cols));
    if (xs !== x) xs.set(x);
    const ys = h.owns(y) && !overlap(xs, y) ? y : (this.ys ??= this.space.create(this.rows));
    this.product(xs, ys);
    if (ys !== y) y.set(ys);
  }

  /**
   * y = A·x and ⟨x, y⟩ in one sweep over the rows (CG's q = A·p and ⟨p, q⟩: the solvers' cg
   * finds it): each block of {@link DOT_BLOCK} rows is multiplied, then its dot partial taken
   * while that block of x and y is in cache, where apply and a dot read both vectors again.
   * y and the value are bit-identical to apply(x, y) then space.dot(x, y), for any thread count
   * (threaded parts are the product's row ranges rounded to whole blocks). Does nothing and
   * returns undefined where it cannot fuse — `space` is not this operator's, A is not square or
   * empty, x or y lies outside the heap, or they overlap — so the caller takes apply and dot.
   * @example const pq = op.applyDot(p, q, space) ?? (op.apply(p, q), space.dot(p, q));
   */
  applyDot(x: Float64Array, y: Float64Array, space: unknown): HostScalar | undefined {
    return this.sweepDot(x, y, undefined, undefined, space);
  }

  /**
   * {@link applyDot} with a second product in the same sweep of A: y = A·x, y2 = A·x2 and ⟨x, y⟩
   * (CG's q = A·p with A·x for the true residual near its exit: the solvers' cg finds it): each
   * entry's value and column are read once for both products. y, y2 and the value are bit-identical to apply(x, y),
   * apply(x2, y2), space.dot(x, y), for any thread count; undefined (nothing done) where applyDot
   * would be, or where x2, y2 lie outside the heap or any two of the four vectors overlap.
   * @example const pq = op.applyPairDot(p, q, x, t, space); // q = A·p, t = A·x, ⟨p, q⟩
   */
  applyPairDot(x: Float64Array, y: Float64Array, x2: Float64Array, y2: Float64Array, space: unknown): HostScalar | undefined {
    return this.sweepDot(x, y, x2, y2, space);
  }

  private sweepDot(x: Float64Array, y: Float64Array, x2: Float64Array | undefined, y2: Float64Array | undefined, space: unknown): HostScalar | undefined {
    if (space !== this.space || this.rows !== this.cols || this.rows === 0) return undefined;
    const what = x2 ? 'applyPairDot' : 'applyDot';
    for (const [name, v] of [['x', x], ['y', y], ['x2', x2], ['y2', y2]] as const) {
      if (v !== undefined && v.length !== this.rows) throw new DimensionMismatchError(`${this.label} ${what} ${name}`, this.rows, v.length);
    }
    const h = this.space.heap;
    const vs = x2 && y2 ? [x, y, x2, y2] : [x, y];
    // all in the heap (byte offsets are addresses) and pairwise apart
    if (!vs.every((v) => h.owns(v)) || vs.some((u, i) => vs.some((w, j) => j > i && overlap(u, w)))) return undefined;
    const blocks = Math.ceil(this.rows / DOT_BLOCK);
    const out = this.partials.get(8 * blocks);
    const [xp, yp, c] = [x.byteOffset, y.byteOffset, this.dotCuts];
    const parts = [];
    for (let t = 0; t + 1 < c.length; t++) {
      const lo = c[t]!;
      const head = [c[t + 1]! - lo, this.rowPtr + 4 * lo, this.colIdx, this.values, xp, xp + 8 * lo, yp + 8 * lo];
      const tail = [out + (8 * lo) / DOT_BLOCK, DOT_BLOCK];
      parts.push(x2 && y2 ? [...head, x2.byteOffset, y2.byteOffset + 8 * lo, ...tail] : [...head, ...tail]);
    }
    this.space.runJob(x2 ? 'spmvPairDotBlocks' : 'spmvDotBlocks', parts);
    return { value: this.space.blockSum(out, blocks) }; // the space's order: the same bits as its dot
  }

  applyScaled(alpha: number, x: Float64Array, beta: number, y: Float64Array): void {
    if (y.length !== this.rows) throw new DimensionMismatchError(`${this.label} applyScaled y`, this.rows, y.length);
    const t = (this.tmp ??= this.space.create(this.rows));
    this.apply(x, t);
    this.space.axpby(alpha, t, beta, y);
  }

  /** y = Aᵀ·x (the transpose is built and copied into the heap on first use). */
  applyTranspose(x: Float64Array, y: Float64Array): void {
    const t = (this.transposed ??= WasmCsrOperator.create(this.space, csrTranspose(this.source), { unchecked: true }));
    t.apply(x, y);
  }

  diagonal(): Float64Array {
    return csrDiagonal(this.source);
  }
}

/** Interior cuts rounded to the nearest DOT_BLOCK multiple (the ends kept; empty parts dropped). */
function blockAlignedCuts(cuts: readonly number[]): number[] {
  const n = cuts[cuts.length - 1]!;
  const out = [0];
  for (let t = 1; t + 1 < cuts.length; t++) {
    const c = Math.min(n, Math.round(cuts[t]! / DOT_BLOCK) * DOT_BLOCK);
    if (c > out[out.length - 1]!) out.push(c);
  }
  if (n > out[out.length - 1]!) out.push(n);
  return out;
}

function overlap(a: Float64Array, b: Float64Array): boolean {
  return a.byteOffset < b.byteOffset + b.byteLength && b.byteOffset < a.byteOffset + a.byteLength;
}
