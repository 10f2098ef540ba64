/**
 * Test-only emulation of the GPU's float32 arithmetic on the host: every vector written and
 * every scalar produced is rounded to float32 with Math.fround. Reductions accumulate in float64
 * and round once (the GPU accumulates in float32 and is a little less accurate), so this is an
 * optimistic stand-in for precision, not for performance.
 * @module
 */
import {
  type CsrMatrix,
  csrDiagonal,
  csrSpmv,
  csrTranspose,
  HostVectorSpace,
  type HostScalar,
  type LinearOperator,
  type ScalarLike,
  type VectorSpace,
} from '@gpusparse/formats';

const f = Math.fround;
const round = (v: Float64Array): Float64Array => {
  for (let i = 0; i < v.length; i++) v[i] = f(v[i]!);
  return v;
};
const box = (s: HostScalar): HostScalar => ({ value: f(s.value) });

/** A host VectorSpace whose vectors and scalars are rounded to float32 after every operation. */
export class Float32HostSpace implements VectorSpace<Float64Array, HostScalar> {
  readonly name = 'host-f32-emulated';
  readonly precision = 'f32' as const;
  private readonly h = new HostVectorSpace();
  create(n: number): Float64Array {
    return this.h.create(n);
  }
  fromArray(values: ArrayLike<number>): Float64Array {
    return round(this.h.fromArray(values));
  }
  toArray(v: Float64Array): Promise<Float64Array> {
    return this.h.toArray(v);
  }
  write(v: Float64Array, values: ArrayLike<number>): void {
    this.h.write(v, values);
    round(v);
  }
  length(v: Float64Array): number {
    return v.length;
  }
  copy(src: Float64Array, dst: Float64Array): void {
    this.h.copy(src, dst);
  }
  fill(v: Float64Array, value: number): void {
    v.fill(f(value));
  }
  axpby(alpha: ScalarLike<HostScalar>, x: Float64Array, beta: ScalarLike<HostScalar>, y: Float64Array): void {
    this.h.axpby(alpha, x, beta, y);
    round(y);
  }
  multiply(x: Float64Array, y: Float64Array, z: Float64Array): void {
    this.h.multiply(x, y, z);
    round(z);
  }
  dot(x: Float64Array, y: Float64Array): HostScalar {
    return box(this.h.dot(x, y));
  }
  norm2(x: Float64Array): HostScalar {
    return box(this.h.norm2(x));
  }
  multiDot(xs: readonly Float64Array[], y: Float64Array): HostScalar[] {
    return xs.map((x) => this.dot(x, y));
  }
  combine(coeffs: readonly ScalarLike<HostScalar>[], xs: readonly Float64Array[], beta: ScalarLike<HostScalar>, y: Float64Array): void {
    this.h.combine(coeffs, xs, beta, y);
    round(y);
  }
  scalar(value: number): HostScalar {
    return { value: f(value) };
  }
  div(a: ScalarLike<HostScalar>, b: ScalarLike<HostScalar>): HostScalar {
    return box(this.h.div(a, b));
  }
  mul(a: ScalarLike<HostScalar>, b: ScalarLike<HostScalar>): HostScalar {
    return box(this.h.mul(a, b));
  }
  add(a: ScalarLike<HostScalar>, b: ScalarLike<HostScalar>): HostScalar {
    return box(this.h.add(a, b));
  }
  sub(a: ScalarLike<HostScalar>, b: ScalarLike<HostScalar>): HostScalar {
    return box(this.h.sub(a, b));
  }
  neg(a: ScalarLike<HostScalar>): HostScalar {
    return box(this.h.neg(a));
  }
  sqrt(a: ScalarLike<HostScalar>): HostScalar {
    return box(this.h.sqrt(a));
  }
  read(s: ScalarLike<HostScalar>): Promise<number> {
    return this.h.read(s);
  }
  readMany(s: readonly ScalarLike<HostScalar>[]): Promise<number[]> {
    return this.h.readMany(s);
  }
  release(_x: Float64Array | HostScalar): void {}
}

/** A float32 operator: matrix values rounded to float32, every product rounded to float32. */
export function f32Operator(a: CsrMatrix): LinearOperator<Float64Array> {
  const a32: CsrMatrix = { ...a, values: round(a.values.slice()) };
  let at: CsrMatrix | undefined;
  const n = a.rows;
  return {
    rows: a.rows,
    cols: a.cols,
    label: 'host-csr-f32',
    apply: (x, y) => round(csrSpmv(a32, x, y)),
    applyScaled(alpha, x, beta, y) {
      const t = csrSpmv(a32, x, new Float64Array(n));
      for (let i = 0; i < n; i++) y[i] = f(alpha * t[i]! + (beta === 0 ? 0 : beta * y[i]!));
    },
    applyTranspose: (x, y) => round(csrSpmv(at ?? (at = csrTranspose(a32)), x, y)),
    diagonal: () => csrDiagonal(a32),
  };
}
