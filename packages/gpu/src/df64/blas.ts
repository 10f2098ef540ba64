/**
 * df64 vectors and BLAS-1 on the device: from / to Float64Array, axpy, scale, the float32
 * hand-over of a scaled vector, and deterministic df64 dot products whose results stay in
 * device slots until read. Every method only records work, except the `read*` methods and
 * `toFloat64`, the synchronisation points.
 * @module
 */
import { DimensionMismatchError, GpuSparseError } from '@gpusparse/formats';
import type { GpuContext } from '../device/context';
import type { PipelineEntry, PipelineSpec } from '../device/pipelines';
import { signature } from '../kernels/wgsl/index';
import type { GpuBuf } from '../memory/buffers';
import { readRanges } from '../memory/readback';
import { Uniforms } from '../memory/recorder';
import { writeData } from '../memory/upload';
import { DF_DOT_CHUNK, DF_DOT1_BINDINGS, DF_DOT2_BINDINGS, DF_ELEMENTWISE, DF_WG, dfDot1Wgsl, dfDot2Wgsl, dfElementwiseWgsl } from './blas.kernel';
import { JOIN_BINDINGS, joinF64Wgsl, SPLIT_BINDINGS, SPLIT_WG, splitF64Wgsl } from './split.kernel';
import { df64Mode } from './selftest';
import type { TwoProdMode } from './wgsl';

/** A df64 vector on the device: n interleaved (hi, lo) float32 pairs (8 bytes per element). */
export class Df64Vector {
  constructor(
    readonly buf: GpuBuf,
    readonly n: number,
  ) {}
}

/** Device slots for df64 reduction results. */
export const DF_SLOTS = 256;

/**
 * The power of two nearest |v| within float32's normal range [2^-126, 2^126] (1 for 0 and
 * non-finite v, which the product then carries as they are).
 * @example
 * powerOfTwoNear(3e36); // 2^121
 */
export function powerOfTwoNear(v: number): number {
  if (v === 0 || !Number.isFinite(v)) return 1;
  const e = Math.max(-126, Math.min(126, Math.round(Math.log2(Math.abs(v)))));
  return 2 ** e;
}

/** A float64 value as the (hi, lo) pair a kernel's uniform block carries. */
function pair(v: number): [number, number] {
  const hi = Math.fround(v);
  return [hi, Number.isFinite(hi) ? Math.fround(v - hi) : 0];
}

/**
 * The df64 BLAS of one context. Get it with {@link Df64Blas.of}: undefined when the device
 * fails the df64 self-test (then no df64 path is offered).
 * @example
 * const d = await Df64Blas.of(ctx);
 * const x = d!.fromFloat64(values);
 * d!.dot(x, x, 0);
 * const [xx] = await d!.readSlots([0]);
 */
export class Df64Blas {
  /** Slot buffer: DF_SLOTS df64 values. */
  readonly slots: GpuBuf;
  private partial: GpuBuf;

  private constructor(
    readonly ctx: GpuContext,
    readonly mode: TwoProdMode,
  ) {
    this.slots = ctx.buffers.acquire(DF_SLOTS * 8, undefined, 'df64-slots');
    this.partial = ctx.buffers.acquire(4096 * 8, undefined, 'df64-partials');
  }

  private static readonly byCtx = new WeakMap<GpuContext, Promise<Df64Blas | undefined>>();
  /** The df64 BLAS of `ctx` (self-test once per context; undefined if df64 is not exact here). */
  static of(ctx: GpuContext): Promise<Df64Blas | undefined> {
    let p = Df64Blas.byCtx.get(ctx);
    if (!p) {
      p = df64Mode(ctx).then((m) => (m ? new Df64Blas(ctx, m) : undefined));
      Df64Blas.byCtx.set(ctx, p);
    }
    return p;
  }

  /** Pipelines by name (the key and spec are built once, not per dispatch). */
  private readonly pipes = new Map<string, PipelineEntry>();
  private pipesEvictions = 0;

  /** A compiled df64 pipeline (key includes the TwoProd form). */
  pipe(name: string, wgsl: () => string, bindings: string): PipelineEntry {
    if (this.pipesEvictions !== this.ctx.pipelines.evictions) {
      this.pipes.clear(); // a compile failed somewhere: ask the context again (it recompiles and reports)
      this.pipesEvictions = this.ctx.pipelines.evictions;
    }
    let p = this.pipes.get(name);
    if (!p) this.pipes.set(name, (p = this.ctx.pipelines.get(this.spec(name, wgsl, bindings))));
    return p;
  }

  /** The spec {@link pipe} compiles (for ahead-of-time compiles: PipelineCache.prewarm). */
  spec(name: string, wgsl: () => string, bindings: string): PipelineSpec {
    return { key: `df64:${name}:${this.mode}`, label: `df64-${name}`, bindings, wgsl };
  }

  /** The spec of the element-wise kernel `name` (fromF32, toF32, axpy, …). */
  ewSpec(name: string): PipelineSpec {
    return this.spec(name, () => dfElementwiseWgsl(name, this.mode), signature(DF_ELEMENTWISE[name]!.bindings));
  }

  /** A new zero df64 vector. */
  create(n: number): Df64Vector {
    const v = new Df64Vector(this.ctx.buffers.acquire(Math.max(8, n * 8), undefined, 'df64-vector'), n);
    if (n > 0) writeData(this.ctx, v.buf, new Float32Array(2 * n));
    return v;
  }

  /**
   * A new df64 vector holding `values`·2^shift (hi = fl32(v), lo = fl32(v − hi): 48 bits kept).
   * The float64 words are uploaded as they are and split on the device (`splitF64Wgsl`,
   * bit for bit the host's `splitF64`); values beyond float32's range become ±Inf (callers
   * that accept user values check the range first: `checkFloat32Range`, `rhsPowerOfTwo`).
   */
  fromFloat64(values: ArrayLike<number>, shift = 0): Df64Vector {
    const v = new Df64Vector(this.ctx.buffers.acquire(Math.max(8, values.length * 8), undefined, 'df64-vector'), values.length);
    this.splitInto(values, v, shift);
    return v;
  }

  /** Overwrite `v` with `values`. */
  write(v: Df64Vector, values: ArrayLike<number>): void {
    if (values.length !== v.n) throw new DimensionMismatchError('df64 write', v.n, values.length);
    this.splitInto(values, v, 0);
  }

  /** Upload the raw words of `values` into v and split them there in place (·2^shift). */
  private splitInto(values: ArrayLike<number>, v: Df64Vector, shift: number): void {
    if (v.n === 0) return;
    if (!Number.isInteger(shift) || Math.abs(shift) > 2000) throw new GpuSparseError(`df64 split: expected an integer power-of-two shift in [-2000, 2000], got ${shift}`);
    const f64 = values instanceof Float64Array ? values : Float64Array.from(values);
    writeData(this.ctx, v.buf, new Uint32Array(f64.buffer, f64.byteOffset, 2 * v.n));
    const u = Uniforms.take();
    u.u[0] = v.n;
    u.i[1] = shift;
    this.ctx.recorder.dispatch(this.pipe('split-f64', splitF64Wgsl, signature(SPLIT_BINDINGS)), [v.buf], u, Math.ceil(v.n / SPLIT_WG));
  }

  /**
   * hi + lo of every element as float64 (a synchronisation point). The sum is formed on the
   * device (`joinF64Wgsl`: bit for bit the host's `joinF64`) into a scratch buffer, and the
   * bytes read back are the Float64Array: no host pass over the n values.
   */
  async toFloat64(v: Df64Vector): Promise<Float64Array> {
    if (v.n === 0) return new Float64Array(0);
    const out = this.ctx.buffers.acquire(v.n * 8, undefined, 'df64-joined');
    try {
      const u = Uniforms.take();
      u.u[0] = v.n;
      this.ctx.recorder.dispatch(this.pipe('join-f64', joinF64Wgsl, signature(JOIN_BINDINGS)), [v.buf, out], u, Math.ceil(v.n / SPLIT_WG));
      const [b] = await readRanges(this.ctx, [{ buf: out, offset: 0, bytes: v.n * 8 }]);
      return new Float64Array(b!, 0, v.n);
    } finally {
      out.dispose();
    }
  }

  /** dst = src (a buffer copy). */
  copy(src: Df64Vector, dst: Df64Vector): void {
    if (src.n !== dst.n) throw new DimensionMismatchError('df64 copy', dst.n, src.n);
    if (src.buf.id !== dst.buf.id) this.ctx.recorder.copy(src.buf, 0, dst.buf, 0, src.n * 8);
  }

  private ew(name: string, n: number, refs: GpuBuf[], alpha = 0, p2 = 1): void {
    const p = this.pipe(name, () => dfElementwiseWgsl(name, this.mode), signature(DF_ELEMENTWISE[name]!.bindings));
    const u = Uniforms.take();
    u.u[0] = n;
    [u.f[2], u.f[3]] = pair(alpha);
    u.f[4] = p2;
    this.ctx.recorder.dispatch(p, refs, u, Math.ceil(n / DF_WG));
  }

  /** x = x + alpha·d with d a float32 device buffer of n elements (df64 accumulation). */
  axpyF32(alpha: number, d: GpuBuf, x: Df64Vector): void {
    this.ew('axpyF32', x.n, [d, x.buf], alpha);
  }

  /** y = y + alpha·x (x may alias y). */
  axpy(alpha: number, x: Df64Vector, y: Df64Vector): void {
    if (x.n !== y.n) throw new DimensionMismatchError('df64 axpy', y.n, x.n);
    if (x.buf.id === y.buf.id) this.scale(1 + alpha, y); // y = (1 + alpha)·y
    else this.ew('axpy', y.n, [x.buf, y.buf], alpha);
  }

  /** y = alpha·y. */
  scale(alpha: number, y: Df64Vector): void {
    this.ew('scale', y.n, [y.buf], alpha);
  }

  /**
   * out = fl32(alpha·x) into a float32 device buffer of x.n elements. The kernel forms
   * (alpha/p2)·(p2·x) with p2 the power of two nearest |alpha|: the Dekker split multiplies
   * each factor by 4097, so an alpha (or an element) above ≈ 8e34 overflowed it to NaN — the
   * scale 1/‖r‖ of a residual of 1e-36 did (`solve --rtol 0`). p2·x is exact.
   */
  toF32(alpha: number, x: Df64Vector, out: GpuBuf): void {
    const p2 = powerOfTwoNear(alpha);
    this.ew('toF32', x.n, [x.buf, out], alpha / p2, p2);
  }

  /** y = d exactly (float32 buffer → df64). */
  fromF32(d: GpuBuf, y: Df64Vector): void {
    this.ew('fromF32', y.n, [d, y.buf]);
  }

  private ensurePartial(count: number): void {
    if (this.partial.bytes >= count * 8) return;
    this.ctx.recorder.flush();
    this.partial.dispose();
    this.partial = this.ctx.buffers.acquire(count * 8, undefined, 'df64-partials');
  }

  /** slots[slot] = x·y in df64 (two dispatches; fixed order: deterministic). */
  dot(x: Df64Vector, y: Df64Vector, slot: number): void {
    if (x.n !== y.n) throw new DimensionMismatchError('df64 dot', x.n, y.n);
    if (!(slot >= 0 && slot < DF_SLOTS)) throw new GpuSparseError(`df64 dot: expected a slot in [0, ${DF_SLOTS}), got ${slot}`);
    const groups = Math.ceil(x.n / DF_DOT_CHUNK);
    this.ensurePartial(Math.max(1, groups));
    const u1 = Uniforms.take();
    u1.u[0] = x.n;
    u1.u[2] = groups;
    this.ctx.recorder.dispatch(this.pipe('dot1', () => dfDot1Wgsl(this.mode), signature(DF_DOT1_BINDINGS)), [x.buf, y.buf, this.partial], u1, groups);
    const u2 = Uniforms.take();
    u2.u[0] = groups;
    u2.u[2] = slot;
    this.ctx.recorder.dispatch(this.pipe('dot2', () => dfDot2Wgsl(this.mode), signature(DF_DOT2_BINDINGS)), [this.partial, this.slots], u2, 1);
  }

  /** The df64 values of `slots` as float64, with one readback. */
  async readSlots(slots: readonly number[]): Promise<number[]> {
    const bytes = await readRanges(
      this.ctx,
      slots.map((s) => ({ buf: this.slots, offset: s * 8, bytes: 8 })),
    );
    return bytes.map((b) => {
      const f = new Float32Array(b);
      return f[0]! + f[1]!;
    });
  }

  /** x·y in df64, read back (one synchronisation). */
  async dotValue(x: Df64Vector, y: Df64Vector): Promise<number> {
    this.dot(x, y, 0);
    return (await this.readSlots([0]))[0]!;
  }

  /**
   * ‖x‖₂ (one synchronisation): √(x·x) with the sum in df64; when x·x over- or underflows the
   * f32 exponent range (|x_i| ≳ 1e19 or ≲ 1e-19), the vector is read and the norm taken on the
   * host in float64 with scaling (one more synchronisation).
   */
  async norm2Value(x: Df64Vector): Promise<number> {
    const xx = await this.dotValue(x, x);
    if (Number.isFinite(xx) && xx > 1e-30) return Math.sqrt(xx);
    const v = await this.toFloat64(x);
    let m = 0;
    for (let i = 0; i < v.length; i++) m = Math.max(m, Math.abs(v[i]!));
    if (m === 0 || !Number.isFinite(m)) return m === 0 ? 0 : m;
    let s = 0;
    for (let i = 0; i < v.length; i++) s += (v[i]! / m) ** 2;
    return m * Math.sqrt(s);
  }
}
