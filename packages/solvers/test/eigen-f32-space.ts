/**
 * Test-only float32 emulation of the GPU backend: every vector and scalar operation of
 * HostVectorSpace rounded to float32 (Math.fround), reductions done the way a GPU does them
 * (float32 partial sums per 256-element workgroup, then a float32 tree over the partials),
 * and a CSR operator with float32 values and float32 accumulation per row.
 * @module
 */
import type { CsrMatrix, HostScalar, LinearOperator, ScalarLike, VectorSpace } from '@gpusparse/formats';
import { DimensionMismatchError, HostVectorSpace } from '@gpusparse/formats';

const f = Math.fround;
const val = (s: ScalarLike<HostScalar>): number => (typeof s === 'number' ? s : s.value);
const box = (value: number): HostScalar => ({ value: f(value) });

function roundAll(v: Float64Array): void {
  for (let i = 0; i < v.length; i++) v[i] = f(v[i]!);
}

/** Float32 dot product with workgroup-style partial sums and a tree over them. */
function dot32(x: Float64Array, y: Float64Array): number {
  const partial: number[] = [];
  for (let s = 0; s < x.length; s += 256) {
    let acc = 0;
    const e = Math.min(x.length, s + 256);
    for (let i = s; i < e; i++) acc = f(acc + f(x[i]! * y[i]!));
    partial.push(acc);
  }
  while (partial.length > 1) {
    const next: number[] = [];
    for (let i = 0; i < partial.length; i += 2) next.push(i + 1 < partial.length ? f(partial[i]! + partial[i + 1]!) : partial[i]!);
    partial.splice(0, partial.length, ...next);
  }
  return partial[0] ?? 0;
}

/**
 * HostVectorSpace with float32 rounding on every operation (vectors are Float64Array holding
 * float32-representable values). `precision` is 'f32', so solvers pick their f32 defaults.
 */
export class Float32HostSpace implements VectorSpace<Float64Array, HostScalar> {
  readonly name = 'host-f32-emulated';
  readonly precision = 'f32' as const;
  private readonly inner = new HostVectorSpace();
  /** Number of read/readMany/toArray calls (the emulated synchronisations). */
  syncs = 0;
  create(n: number): Float64Array {
    return new Float64Array(n);
  }
  fromArray(values: ArrayLike<number>): Float64Array {
    const v = Float64Array.from(values);
    roundAll(v);
    return v;
  }
  async toArray(v: Float64Array): Promise<Float64Array> {
    this.syncs++;
    return v.slice();
  }
  write(v: Float64Array, values: ArrayLike<number>): void {
    this.inner.write(v, values);
    roundAll(v);
  }
  length(v: Float64Array): number {
    return v.length;
  }
  copy(src: Float64Array, dst: Float64Array): void {
    this.inner.copy(src, dst);
  }
  fill(v: Float64Array, value: number): void {
    v.fill(f(value));
  }
  axpby(alpha: ScalarLike<HostScalar>, x: Float64Array, beta: ScalarLike<HostScalar>, y: Float64Array): void {
    if (x.length !== y.length) throw new DimensionMismatchError('axpby', x.length, y.length);
    const a = f(val(alpha));
    const b = f(val(beta));
    for (let i = 0; i < y.length; i++) y[i] = b === 0 ? f(a * x[i]!) : f(f(a * x[i]!) + f(b * y[i]!));
  }
  multiply(x: Float64Array, y: Float64Array, z: Float64Array): void {
    this.inner.multiply(x, y, z);
    roundAll(z);
  }
  dot(x: Float64Array, y: Float64Array): HostScalar {
    if (x.length !== y.length) throw new DimensionMismatchError('dot', x.length, y.length);
    return box(dot32(x, y));
  }
  norm2(x: Float64Array): HostScalar {
    return box(Math.sqrt(dot32(x, x)));
  }
  multiDot(xs: readonly Float64Array[], y: Float64Array): HostScalar[] {
    return xs.map((x) => this.dot(x, y));
  }
  combine(coeffs: readonly ScalarLike<HostScalar>[], xs: readonly Float64Array[], beta: ScalarLike<HostScalar>, y: Float64Array): void {
    if (coeffs.length !== xs.length) throw new DimensionMismatchError('combine coeffs', xs.length, coeffs.length);
    const c = coeffs.map((s) => f(val(s)));
    const b = f(val(beta));
    for (let i = 0; i < y.length; i++) {
      let acc = b === 0 ? 0 : f(b * y[i]!); // y = beta·y + Σ c_j·x_j, in float32
      for (let j = 0; j < xs.length; j++) acc = f(acc + f(c[j]! * xs[j]![i]!));
      y[i] = acc;
    }
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
    this.syncs++;
    return val(s);
  }
  async readMany(s: readonly ScalarLike<HostScalar>[]): Promise<number[]> {
    this.syncs++;
    return s.map(val);
  }
  release(_x: Float64Array | HostScalar): void {}
}

/** y = A·x with float32 matrix values and float32 accumulation per row (like a CSR-scalar kernel). */
export function float32CsrOperator(a: CsrMatrix): LinearOperator<Float64Array> {
  const values = Float64Array.from(a.values, f);
  const apply = (x: Float64Array, y: Float64Array): void => {
    if (x.length !== a.cols) throw new DimensionMismatchError('f32 csr apply x', a.cols, x.length);
    for (let i = 0; i < a.rows; i++) {
      let acc = 0;
      for (let p = a.rowPtr[i]!; p < a.rowPtr[i + 1]!; p++) acc = f(acc + f(values[p]! * x[a.colIdx[p]!]!));
      y[i] = acc;
    }
  };
  return {
    rows: a.rows,
    cols: a.cols,
    label: 'host-csr-f32-emulated',
    apply,
    applyScaled(alpha, x, beta, y) {
      const t = new Float64Array(a.rows);
      apply(x, t);
      for (let i = 0; i < y.length; i++) y[i] = beta === 0 ? f(alpha * t[i]!) : f(f(alpha * t[i]!) + f(beta * y[i]!));
    },
  };
}
