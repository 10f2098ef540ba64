/**
 * The df64 vector space: float64-accurate (≈ 48 significant bits, f32 exponent range) vectors
 * and scalars on the device, so that the generic solvers (davidsonWith, lanczos, lobpcg, cg,
 * gmres) run their float64 phase on the GPU unchanged. Vectors are interleaved (hi, lo) f32
 * pairs (Df64Vector); scalars are slots of a df64 device buffer that the kernels read directly,
 * so a scalar never leaves the device unless `read`/`readMany` asks for it (the only
 * synchronisation points, with `toArray`). Hand-over to and from the float32 GpuVectorSpace
 * stays on the device (`fromGpu`, `toGpu`).
 * @module
 */
import { DimensionMismatchError, GpuSparseError, InvalidParameterError, type LinearOperator, type ScalarLike, type VectorSpace } from '@gpusparse/formats';
import { fusedGroup } from '../blas1/fused-shaders';
import type { GpuContext } from '../device/context';
import type { PipelineSpec } from '../device/pipelines';
import { signature } from '../kernels/wgsl/index';
import type { GpuBuf } from '../memory/buffers';
import { readRanges } from '../memory/readback';
import { Uniforms } from '../memory/recorder';
import { checkFloat32Range, GpuVector } from '../vector-space';
import { Df64Blas, Df64Vector } from './blas';
import { DF_DOT_CHUNK, DF_DOT2_BINDINGS, DF_WG, dfDot2Wgsl } from './blas.kernel';
import { joinF64 } from './host';
import {
  AXPBY_BINDINGS,
  combineBindings,
  DF_SCALAR_OPS,
  dfAxpbyWgsl,
  dfCombineWgsl,
  dfMultiDot1Wgsl,
  dfMultiplyWgsl,
  dfScalarWgsl,
  dfScaleWgsl,
  dfShiftedDivideWgsl,
  MULTIPLY_BINDINGS,
  multiDotBindings,
  SCALAR_BINDINGS,
  SCALE_BINDINGS,
  SHIFTED_DIVIDE_BINDINGS,
} from './space.kernel';
import { df64SpaceSpecs } from './space-specs';

/** A df64 scalar on the device: one slot of the space's scalar buffer. */
export class Df64Scalar {
  released = false;
  constructor(readonly slot: number) {}
}

/** Live df64 scalars a space holds at most. */
export const DF64_SPACE_SLOTS = 8192;

/** Most bytes of df64 vectors {@link Df64VectorSpace.prewarm} puts in the buffer pool ahead of time. */
export const PREWARM_POOL_BYTES = 64 * 2 ** 20;

/** A float64 number as the (hi, lo) f32 pair of a uniform block. */
function pair(v: number): [number, number] {
  const hi = Math.fround(v);
  return [hi, Number.isFinite(hi) ? Math.fround(v - hi) : 0];
}

/**
 * VectorSpace over df64 device vectors (precision 'f64': about 48 significant bits, exponent
 * range of f32, i.e. |x| in ~1e-38 … 3e38; products and dots outside it over/underflow).
 * Dots are deterministic (fixed tree order). Get one with {@link Df64VectorSpace.of}: undefined
 * when the device fails the df64 self-test.
 * @example
 * const s = (await Df64VectorSpace.of(ctx))!;
 * const x = s.fromArray([3, 4]);
 * await s.read(s.norm2(x)); // 5
 */
export class Df64VectorSpace implements VectorSpace<Df64Vector, Df64Scalar> {
  readonly name = 'webgpu-df64';
  readonly precision = 'f64' as const;
  readonly ctx: GpuContext;
  /** The scalar buffer: DF64_SPACE_SLOTS df64 values. */
  readonly scalars: GpuBuf;
  private readonly free: number[] = [];
  private next = 0;
  private partial: GpuBuf;
  private readonly group: number;
  private readonly finalizer: FinalizationRegistry<number>;

  private constructor(readonly d: Df64Blas) {
    this.ctx = d.ctx;
    this.scalars = d.ctx.buffers.acquire(DF64_SPACE_SLOTS * 8, undefined, 'df64-space-scalars');
    this.partial = d.ctx.buffers.acquire(4096 * 8, undefined, 'df64-space-partials');
    this.group = Math.min(6, fusedGroup(d.ctx.limits.maxStorageBuffersPerShaderStage));
    this.finalizer = new FinalizationRegistry((slot) => this.free.push(slot));
  }

  /** The df64 space of `ctx` (undefined when df64 is not exact on this device). */
  static async of(ctx: GpuContext): Promise<Df64VectorSpace | undefined> {
    const d = await Df64Blas.of(ctx);
    return d ? new Df64VectorSpace(d) : undefined;
  }

  private slot(): Df64Scalar {
    const s = this.free.pop() ?? (this.next < DF64_SPACE_SLOTS ? this.next++ : -1);
    if (s < 0) throw new GpuSparseError(`df64 scalars: expected at most ${DF64_SPACE_SLOTS} live scalars, got more; release() scalars you no longer need`);
    const sc = new Df64Scalar(s);
    this.finalizer.register(sc, s, sc);
    return sc;
  }

  /** Write operand `s` at uniform word `w` (slot, hi, lo). */
  private operand(u: Uniforms, w: number, s: ScalarLike<Df64Scalar>): void {
    if (typeof s === 'number') {
      u.i[w] = -1;
      [u.f[w + 1], u.f[w + 2]] = pair(s);
    } else {
      if (s.released) throw new GpuSparseError('df64 space: a released scalar was used');
      u.i[w] = s.slot;
    }
  }

  private same(where: string, a: Df64Vector, b: Df64Vector): void {
    if (a.n !== b.n) throw new DimensionMismatchError(where, a.n, b.n);
  }

  /**
   * The pipelines of this space's vector and scalar operations and of the f32 hand-over (and,
   * given `rows`/`nnz`, of a Df64CsrOperator of that shape): what a df64 Davidson or
   * Jacobi–Davidson polish compiles on first use.
   */
  prewarmSpecs(shape?: { rows: number; nnz: number }): PipelineSpec[] {
    return df64SpaceSpecs(this.d, this.group, shape);
  }

  /**
   * Get ready for a df64 phase over vectors of `rows` elements while other GPU work runs:
   * compile {@link prewarmSpecs} without blocking (createComputePipelineAsync) and put
   * `vectors` df64 vectors of that length in the buffer pool (allocated now, not inside the
   * phase; at most {@link PREWARM_POOL_BYTES} of them). Resolves when the compiles are done; never rejects.
   * @example void df64.prewarm({ rows: n, nnz, vectors: 4 * k + 16 }); // then the float32 solve
   */
  prewarm(o: { rows: number; nnz?: number; vectors?: number }): Promise<void> {
    // at most PREWARM_POOL_BYTES: the pool keeps them, and they add to the device peak of the work they overlap
    const count = Math.min(o.vectors ?? 0, Math.floor(PREWARM_POOL_BYTES / Math.max(8, o.rows * 8)));
    const bufs = Array.from({ length: count }, () => this.vec(o.rows));
    for (const v of bufs) v.buf.dispose(); // to the pool, kept for the phase's create()
    return this.ctx.pipelines.prewarm(this.prewarmSpecs(o.nnz === undefined ? undefined : { rows: o.rows, nnz: o.nnz }));
  }

  private run(name: string, wgsl: () => string, bindings: string, refs: GpuBuf[], u: Uniforms, groups: number): void {
    this.ctx.recorder.dispatch(this.d.pipe(name, wgsl, bindings), refs, u, groups);
  }

  private vec(n: number): Df64Vector {
    return new Df64Vector(this.ctx.buffers.acquire(Math.max(8, n * 8), undefined, 'df64-vector'), n);
  }

  create(n: number): Df64Vector {
    const v = this.vec(n);
    this.fill(v, 0); // on the device: no upload of n zeros
    return v;
  }
  fromArray(values: ArrayLike<number>): Df64Vector {
    checkFloat32Range(values, 'Df64VectorSpace.fromArray'); // df64 has float32's exponent range
    return this.d.fromFloat64(values);
  }
  toArray(v: Df64Vector): Promise<Float64Array> {
    return this.d.toFloat64(v);
  }
  /** The vectors as float64, with one readback for all (one synchronisation). */
  async toArrays(vs: readonly Df64Vector[]): Promise<Float64Array[]> {
    const live = vs.filter((v) => v.n > 0);
    const bytes = live.length ? await readRanges(this.ctx, live.map((v) => ({ buf: v.buf, offset: 0, bytes: v.n * 8 }))) : [];
    let k = 0;
    return vs.map((v) => (v.n > 0 ? joinF64(new Float32Array(bytes[k++]!), v.n) : new Float64Array(0)));
  }
  write(v: Df64Vector, values: ArrayLike<number>): void {
    this.d.write(v, values);
  }
  length(v: Df64Vector): number {
    return v.n;
  }
  copy(src: Df64Vector, dst: Df64Vector): void {
    this.d.copy(src, dst);
  }

  /** y = a·y, or y = a when `set`. */
  private scaleOrSet(a: ScalarLike<Df64Scalar>, y: Df64Vector, set: boolean): void {
    if (y.n === 0) return;
    const u = Uniforms.take();
    u.u[0] = y.n;
    u.u[2] = set ? 1 : 0;
    this.operand(u, 3, a);
    this.run('space-scale', () => dfScaleWgsl(this.d.mode), signature(SCALE_BINDINGS), [this.scalars, y.buf], u, Math.ceil(y.n / DF_WG));
  }
  fill(v: Df64Vector, value: number): void {
    this.scaleOrSet(value, v, true);
  }
  axpby(alpha: ScalarLike<Df64Scalar>, x: Df64Vector, beta: ScalarLike<Df64Scalar>, y: Df64Vector): void {
    this.same('axpby', x, y);
    if (x.buf.id === y.buf.id) {
      // y = (alpha + beta)·y (one buffer cannot be bound read-only and writable at once)
      this.scaleOrSet(beta === 0 ? alpha : this.add(alpha, beta), y, false);
      return;
    }
    if (y.n === 0) return;
    const u = Uniforms.take();
    u.u[0] = y.n;
    u.u[2] = beta === 0 ? 1 : 0;
    this.operand(u, 3, alpha);
    this.operand(u, 6, beta);
    this.run('space-axpby', () => dfAxpbyWgsl(this.d.mode), signature(AXPBY_BINDINGS), [this.scalars, x.buf, y.buf], u, Math.ceil(y.n / DF_WG));
  }
  multiply(x: Df64Vector, y: Df64Vector, z: Df64Vector): void {
    this.same('multiply', x, y);
    this.same('multiply', x, z);
    const alias = z.buf.id === x.buf.id || z.buf.id === y.buf.id;
    const out = alias ? this.vec(z.n) : z;
    const u = Uniforms.take();
    u.u[0] = z.n;
    this.run('space-multiply', () => dfMultiplyWgsl(this.d.mode), signature(MULTIPLY_BINDINGS), [x.buf, y.buf, out.buf], u, Math.ceil(z.n / DF_WG));
    if (alias) {
      this.copy(out, z);
      out.buf.dispose();
    }
  }
  shiftedDivide(r: Df64Vector, d: Df64Vector, sigma: number, clamp: number, t: Df64Vector): void {
    this.same('shiftedDivide', r, d);
    this.same('shiftedDivide', r, t);
    if (t.buf.id === r.buf.id || t.buf.id === d.buf.id) throw new InvalidParameterError('shiftedDivide t', 'a vector distinct from r and d', 'an alias');
    const u = Uniforms.take();
    u.u[0] = t.n;
    [u.f[2], u.f[3]] = pair(sigma);
    u.f[4] = clamp;
    this.run('space-shifted-divide', () => dfShiftedDivideWgsl(this.d.mode), signature(SHIFTED_DIVIDE_BINDINGS), [r.buf, d.buf, t.buf], u, Math.ceil(t.n / DF_WG));
  }
  dot(x: Df64Vector, y: Df64Vector): Df64Scalar {
    return this.multiDot([x], y)[0]!;
  }
  norm2(x: Df64Vector): Df64Scalar {
    const xx = this.dot(x, x);
    const s = this.sqrt(xx);
    this.release(xx);
    return s;
  }

  private ensurePartial(count: number): void {
    if (this.partial.bytes >= count * 8) return;
    this.ctx.recorder.flush();
    this.partial.dispose();
    this.partial = this.ctx.buffers.acquire(count * 8, undefined, 'df64-space-partials');
  }

  multiDot(xs: readonly Df64Vector[], y: Df64Vector): Df64Scalar[] {
    for (const x of xs) this.same('multiDot', x, y);
    const out = xs.map(() => this.slot());
    const groups = Math.max(1, Math.ceil(y.n / DF_DOT_CHUNK));
    const g = this.group;
    for (let j0 = 0; j0 < xs.length; j0 += g) {
      const m = Math.min(g, xs.length - j0);
      this.ensurePartial(g * groups);
      const u1 = Uniforms.take();
      u1.u[0] = y.n;
      u1.u[2] = groups;
      u1.u[3] = m;
      // unused bindings repeat the first vector (m tells the kernel how many are real)
      const refs = Array.from({ length: g }, (_, j) => xs[j0 + Math.min(j, m - 1)]!.buf);
      this.run(`space-mdot1-${g}`, () => dfMultiDot1Wgsl(this.d.mode, g), signature(multiDotBindings(g)), [...refs, y.buf, this.partial], u1, groups);
      for (let j = 0; j < m; j++) {
        const u2 = Uniforms.take();
        u2.u[0] = groups;
        u2.u[2] = out[j0 + j]!.slot;
        u2.u[3] = j * groups;
        this.run('dot2', () => dfDot2Wgsl(this.d.mode), signature(DF_DOT2_BINDINGS), [this.partial, this.scalars], u2, 1);
      }
    }
    return out;
  }

  combine(coeffs: readonly ScalarLike<Df64Scalar>[], xs: readonly Df64Vector[], beta: ScalarLike<Df64Scalar>, y: Df64Vector): void {
    if (coeffs.length !== xs.length) throw new DimensionMismatchError('combine coeffs', xs.length, coeffs.length);
    for (const x of xs) this.same('combine', x, y);
    if (xs.length === 0) {
      if (beta === 0) this.fill(y, 0);
      else this.scaleOrSet(beta, y, false);
      return;
    }
    // y itself among xs: combine from a copy of it (a buffer is bound once per dispatch)
    const alias = xs.some((x) => x.buf.id === y.buf.id) ? this.vec(y.n) : undefined;
    if (alias) this.copy(y, alias);
    const src = alias ? xs.map((x) => (x.buf.id === y.buf.id ? alias : x)) : xs;
    const g = this.group;
    for (let j0 = 0; j0 < src.length; j0 += g) {
      const m = Math.min(g, src.length - j0);
      const u = Uniforms.take();
      u.u[0] = y.n;
      u.u[2] = m;
      const b = j0 === 0 ? beta : 1; // y = β·y + Σ c_j·x_j, later groups add to y
      u.u[3] = b === 0 ? 1 : 0;
      this.operand(u, 4, b);
      for (let j = 0; j < m; j++) this.operand(u, 7 + 3 * j, coeffs[j0 + j]!);
      const refs = Array.from({ length: g }, (_, j) => src[j0 + Math.min(j, m - 1)]!.buf);
      if (y.n > 0) this.run(`space-combine-${g}`, () => dfCombineWgsl(this.d.mode, g), signature(combineBindings(g)), [this.scalars, ...refs, y.buf], u, Math.ceil(y.n / DF_WG));
    }
    if (alias) alias.buf.dispose();
  }

  private scalarOp(op: keyof typeof DF_SCALAR_OPS, a: ScalarLike<Df64Scalar>, b: ScalarLike<Df64Scalar>): Df64Scalar {
    const s = this.slot();
    const u = Uniforms.take();
    u.u[1] = DF_SCALAR_OPS[op];
    u.u[2] = s.slot;
    this.operand(u, 3, a);
    this.operand(u, 6, b);
    this.run('space-scalar', () => dfScalarWgsl(this.d.mode), signature(SCALAR_BINDINGS), [this.scalars], u, 1);
    return s;
  }
  scalar(value: number): Df64Scalar {
    return this.scalarOp('set', value, 0);
  }
  div(a: ScalarLike<Df64Scalar>, b: ScalarLike<Df64Scalar>): Df64Scalar {
    return this.scalarOp('div', a, b);
  }
  mul(a: ScalarLike<Df64Scalar>, b: ScalarLike<Df64Scalar>): Df64Scalar {
    return this.scalarOp('mul', a, b);
  }
  add(a: ScalarLike<Df64Scalar>, b: ScalarLike<Df64Scalar>): Df64Scalar {
    return this.scalarOp('add', a, b);
  }
  sub(a: ScalarLike<Df64Scalar>, b: ScalarLike<Df64Scalar>): Df64Scalar {
    return this.scalarOp('sub', a, b);
  }
  neg(a: ScalarLike<Df64Scalar>): Df64Scalar {
    return this.scalarOp('sub', 0, a);
  }
  sqrt(a: ScalarLike<Df64Scalar>): Df64Scalar {
    return this.scalarOp('sqrt', a, 0);
  }
  async read(s: ScalarLike<Df64Scalar>): Promise<number> {
    return (await this.readMany([s]))[0]!;
  }
  async readMany(s: readonly ScalarLike<Df64Scalar>[]): Promise<number[]> {
    const slots = [...new Set(s.flatMap((x) => (typeof x === 'number' ? [] : [x.slot])))];
    if (!slots.length) {
      await this.ctx.finish();
      return s.map((x) => x as number);
    }
    const bytes = await readRanges(this.ctx, slots.map((i) => ({ buf: this.scalars, offset: i * 8, bytes: 8 })));
    const val = new Map(
      slots.map((i, k) => {
        const f = new Float32Array(bytes[k]!);
        return [i, f[0]! + f[1]!];
      }),
    );
    return s.map((x) => (typeof x === 'number' ? x : val.get(x.slot)!));
  }
  release(x: Df64Vector | Df64Scalar): void {
    if (x instanceof Df64Vector) x.buf.dispose();
    else if (!x.released) {
      x.released = true;
      this.finalizer.unregister(x);
      this.free.push(x.slot);
    }
  }

  /** A new df64 vector holding the float32 vector `v` exactly (on the device). */
  fromGpu(v: GpuVector): Df64Vector {
    const y = this.vec(v.n);
    if (v.n > 0) this.d.fromF32(v.buf, y);
    return y;
  }

  /** out = fl32(scale·x) (on the device; out a float32 vector of x's length). */
  toGpu(x: Df64Vector, scale: number, out: GpuVector): void {
    if (out.n !== x.n) throw new DimensionMismatchError('df64 toGpu out', x.n, out.n);
    if (x.n > 0) this.d.toF32(scale, x, out.buf);
  }

  /** A new float32 vector fl32(scale·x). */
  toNewGpu(x: Df64Vector, scale: number): GpuVector {
    const out = new GpuVector(this.ctx.buffers.acquire(Math.max(4, x.n * 4), undefined, 'vector'), x.n);
    this.toGpu(x, scale, out);
    return out;
  }

  /**
   * The polish pair of eigsMixed's `devicePolish` (and the CI driver's device polish): this
   * space, `operator` in it, and the f32 hand-over on the device. An operator that multiplies by
   * 2^s·A (a Df64CsrOperator built with `scale`, e.g. 'auto' for A·1e-30) passes 2^s on as the
   * polish's `scale`: eigsMixed then scales the whole problem by it and the eigenvalues back.
   * @example eigsMixed({ ..., devicePolish: df64.polish(Df64CsrOperator.fromCsr(df64.d, a, { scale: 'auto' })) })
   */
  polish(operator: LinearOperator<Df64Vector> & { readonly scale?: number }): { space: Df64VectorSpace; operator: LinearOperator<Df64Vector>; fromFast(v: GpuVector): Df64Vector; toFast(p: Df64Vector, scale: number): GpuVector; unitRoundoff: number; scale?: number } {
    // 2⁻⁴⁴: the measured residual and dot precision (46.7–49 bits) with a margin of 4–32
    const scaled = operator.scale !== undefined && operator.scale !== 1 ? { scale: operator.scale } : {};
    return { space: this, operator, fromFast: (v) => this.fromGpu(v), toFast: (p, scale) => this.toNewGpu(p, scale), unitRoundoff: 2 ** -44, ...scaled };
  }
}
