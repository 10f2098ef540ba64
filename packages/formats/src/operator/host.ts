/**
 * The float64 host backend: a {@link VectorSpace} over Float64Array and a
 * {@link LinearOperator} over any format's reference product. Fast paths for CSR.
 * @module
 */
import { DimensionMismatchError } from '../core/errors';
import type { CsrMatrix, FormatDescriptor, SparseMatrix } from '../core/types';
import type { CheckOptions } from '../core/validate';
import { csr, csrDiagonal, csrTranspose, validateCsr } from '../csr/csr';
import { csrSpmvFast } from '../csr/wasm/wasm-csr';
import { combineF64, dotF64, multiDotF64, norm2F64 } from './blas1-host';
import type { LinearOperator, ScalarLike, VectorSpace } from './interfaces';

/** A host scalar: a boxed float64. */
export interface HostScalar {
  readonly value: number;
}

const val = (s: ScalarLike<HostScalar>): number => (typeof s === 'number' ? s : s.value);
const box = (value: number): HostScalar => ({ value });

function checkLen(where: string, a: Float64Array, b: Float64Array): void {
  if (a.length !== b.length) throw new DimensionMismatchError(where, a.length, b.length);
}

/**
 * Float64 vectors and scalars on the host. Every method computes at once; read() is trivial.
 * @example
 * const s = new HostVectorSpace();
 * const x = s.fromArray([3, 4]);
 * await s.read(s.norm2(x)); // 5
 */
export class HostVectorSpace implements VectorSpace<Float64Array, HostScalar> {
  readonly name: string = 'host-f64';
  readonly precision = 'f64' as const;
  create(n: number): Float64Array {
    return new Float64Array(n);
  }
  fromArray(values: ArrayLike<number>): Float64Array {
    return Float64Array.from(values);
  }
  async toArray(v: Float64Array): Promise<Float64Array> {
    return v.slice();
  }
  write(v: Float64Array, values: ArrayLike<number>): void {
    if (values.length !== v.length) throw new DimensionMismatchError('write', v.length, values.length);
    v.set(values);
  }
  length(v: Float64Array): number {
    return v.length;
  }
  copy(src: Float64Array, dst: Float64Array): void {
    checkLen('copy', src, dst);
    dst.set(src);
  }
  fill(v: Float64Array, value: number): void {
    v.fill(value);
  }
  axpby(alpha: ScalarLike<HostScalar>, x: Float64Array, beta: ScalarLike<HostScalar>, y: Float64Array): void {
    checkLen('axpby', x, y);
    const a = val(alpha);
    const b = val(beta);
    const n = y.length;
    if (b === 0) for (let i = 0; i < n; i++) y[i] = a * x[i]!;
    else if (b === 1) for (let i = 0; i < n; i++) y[i]! += a * x[i]!;
    else for (let i = 0; i < n; i++) y[i] = a * x[i]! + b * y[i]!;
  }
  multiply(x: Float64Array, y: Float64Array, z: Float64Array): void {
    checkLen('multiply', x, y);
    checkLen('multiply', x, z);
    for (let i = 0; i < z.length; i++) z[i] = x[i]! * y[i]!;
  }
  /** x·y, two accumulators (even/odd indices); {@link multiDot} matches it bit for bit. Cost: 2n flops. */
  dot(x: Float64Array, y: Float64Array): HostScalar {
    checkLen('dot', x, y);
    return box(dotF64(x, y));
  }
  /**
   * ‖x‖₂: one pass of the plain sum of squares, with a second, scaled (dnrm2) pass only when
   * that sum overflowed, underflowed or is NaN. Cost: 2n flops.
   */
  norm2(x: Float64Array): HostScalar {
    return box(norm2F64(x));
  }
  /**
   * [x₀·y, x₁·y, …] in one chunked pass over y, four vectors at a time; entry j is bit-identical
   * to `dot(xs[j], y)`. Cost: 2nk flops, (k + 1)·8n bytes of memory traffic.
   */
  multiDot(xs: readonly Float64Array[], y: Float64Array): HostScalar[] {
    for (let j = 0; j < xs.length; j++) checkLen(`multiDot xs[${j}]`, y, xs[j]!);
    return Array.from(multiDotF64(xs, y), box);
  }
  /**
   * y = β·y + Σ coeffs[j]·xs[j] in one chunked pass over y, four vectors at a time; bit-identical
   * to scaling y then one axpby per vector in order (β = 0 ignores y's old content). Cost: 2nk
   * flops, (k + 2)·8n bytes of memory traffic.
   */
  combine(
    coeffs: readonly ScalarLike<HostScalar>[],
    xs: readonly Float64Array[],
    beta: ScalarLike<HostScalar>,
    y: Float64Array,
  ): void {
    if (coeffs.length !== xs.length) throw new DimensionMismatchError('combine coeffs', xs.length, coeffs.length);
    for (let j = 0; j < xs.length; j++) checkLen(`combine xs[${j}]`, y, xs[j]!);
    combineF64(coeffs.map(val), xs, val(beta), y);
  }
  scalar(value: number): HostScalar {
    return box(value);
  }
  div(a: ScalarLike<HostScalar>, b: ScalarLike<HostScalar>): HostScalar {
    return box(val(a) / val(b));
  }
  mul(a: ScalarLike<HostScalar>, b: ScalarLike<HostScalar>): HostScalar {
    return box(val(a) * val(b));
  }
  add(a: ScalarLike<HostScalar>, b: ScalarLike<HostScalar>): HostScalar {
    return box(val(a) + val(b));
  }
  sub(a: ScalarLike<HostScalar>, b: ScalarLike<HostScalar>): HostScalar {
    return box(val(a) - val(b));
  }
  neg(a: ScalarLike<HostScalar>): HostScalar {
    return box(-val(a));
  }
  sqrt(a: ScalarLike<HostScalar>): HostScalar {
    return box(Math.sqrt(val(a)));
  }
  async read(s: ScalarLike<HostScalar>): Promise<number> {
    return val(s);
  }
  async readMany(s: readonly ScalarLike<HostScalar>[]): Promise<number[]> {
    return s.map(val);
  }
  release(_x: Float64Array | HostScalar): void {}
}

/**
 * A float64 host operator over a CSR matrix (fast path) or any format through its
 * descriptor's reference product.
 * @example
 * const op = HostOperator.fromCsr(a);
 * op.apply(x, y);
 */
export class HostOperator implements LinearOperator<Float64Array> {
  readonly rows: number;
  readonly cols: number;
  readonly label: string;
  private tmp: Float64Array | undefined;
  private transposed: CsrMatrix | undefined;

  private constructor(
    private readonly product: (x: Float64Array, y: Float64Array) => void,
    rows: number,
    cols: number,
    label: string,
    private readonly csrSource?: CsrMatrix,
  ) {
    this.rows = rows;
    this.cols = cols;
    this.label = label;
  }

  /**
   * Operator over CSR with the fast host kernel; transpose and diagonal available. `a` is
   * validated here, at every size (O(rows + nnz), {@link validateCsr} without the sorted-columns
   * rule: the product sums unsorted or repeated columns); `{ unchecked: true }` skips that for a
   * matrix the caller validated already. The product is `csrSpmvFast`: from 10^4 non-zeros (when
   * WebAssembly is available and the matrix fits its 4 GiB memory) the first apply copies `a`
   * into wasm memory and later applies run the wasm kernel, bit-identical to csrSpmv; in-place
   * edits of `a` after the first apply are not seen.
   * @example
   * const op = HostOperator.fromCsr(csr(2, 2, [0, 1, 2], [0, 1], [1, 2]));
   */
  static fromCsr(a: CsrMatrix, options: CheckOptions = {}): HostOperator {
    let m = a;
    if (options.unchecked) m = csr(a.rows, a.cols, a.rowPtr, a.colIdx, a.values, { unchecked: true, requireSorted: false });
    else validateCsr(a, 'HostOperator.fromCsr', false);
    return new HostOperator((x, y) => csrSpmvFast(m, x, y), m.rows, m.cols, 'host-csr', m);
  }

  /** Operator over any format through its float64 reference product. */
  static fromFormat<M extends SparseMatrix>(desc: FormatDescriptor<M, object>, m: M): HostOperator {
    return new HostOperator((x, y) => desc.spmvReference(m, x, y), m.rows, m.cols, `host-${desc.name}`);
  }

  /** Operator from a user function y = f(x) (y is preallocated and must be overwritten). */
  static fromFunction(
    rows: number,
    cols: number,
    f: (x: Float64Array, y: Float64Array) => void,
    label = 'host-function',
  ): HostOperator {
    return new HostOperator(f, rows, cols, label);
  }

  apply(x: Float64Array, y: Float64Array): void {
    if (x.length !== this.cols) throw new DimensionMismatchError(`${this.label} apply x`, this.cols, x.length);
    if (y.length !== this.rows) throw new DimensionMismatchError(`${this.label} apply y`, this.rows, y.length);
    this.product(x, y);
  }

  applyScaled(alpha: number, x: Float64Array, beta: number, y: Float64Array): void {
    if (y.length !== this.rows) throw new DimensionMismatchError(`${this.label} applyScaled y`, this.rows, y.length);
    const t = this.tmp ?? (this.tmp = new Float64Array(this.rows));
    this.apply(x, t);
    if (beta === 0) for (let i = 0; i < y.length; i++) y[i] = alpha * t[i]!;
    else for (let i = 0; i < y.length; i++) y[i] = alpha * t[i]! + beta * y[i]!;
  }

  get applyTranspose(): ((x: Float64Array, y: Float64Array) => void) | undefined {
    const src = this.csrSource;
    if (!src) return undefined;
    return (x, y) => {
      const t = this.transposed ?? (this.transposed = csrTranspose(src));
      if (x.length !== t.cols) throw new DimensionMismatchError(`${this.label} applyTranspose x`, t.cols, x.length);
      csrSpmvFast(t, x, y);
    };
  }

  get diagonal(): (() => Float64Array) | undefined {
    const src = this.csrSource;
    return src ? () => csrDiagonal(src) : undefined;
  }
}
