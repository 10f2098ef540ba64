/**
 * The WebGPU vector space: float32 vectors in device buffers and scalars in slots of a device
 * scalar buffer. Every method only records work into the context's batch (submitted in
 * batches); `read`, `readMany` and `toArray` are the only synchronisation points. The values
 * live in ./gpu-values, the scalar slots, arithmetic and readback in ./scalar-space (the base
 * class); this file keeps the vector operations.
 * @module
 */
import { DimensionMismatchError, InvalidParameterError, type ScalarLike, type VectorSpace } from '@gpusparse/formats';
import { GmresBlock } from './blas1/gmres-block';
import { LanczosBlock } from './blas1/lanczos-block';
import { imm, type Operand } from './blas1/ops';
import { checkFloat32Range, type GpuScalar, GpuVector } from './gpu-values';
import type { GpuBuf } from './memory/buffers';
import { readF32 } from './memory/readback';
import { writeValues } from './memory/upload';
import { GpuScalarSpace } from './scalar-space';

export { checkFloat32Range, GpuScalar, GpuVector, SCALAR_GROUP, type ScalarGroup } from './gpu-values';

/** Whether some x shares v's buffer. O(k), no closure. */
function holds(xs: readonly GpuVector[], v: GpuVector): boolean {
  for (let j = 0; j < xs.length; j++) if (xs[j]!.buf.id === v.buf.id) return true;
  return false;
}

/**
 * VectorSpace over WebGPU (precision 'f32'): dot products accumulate in float32 in a fixed
 * tree order (deterministic); scalars never leave the device unless read.
 * @example
 * const ctx = await createGpuContext();
 * const s = new GpuVectorSpace(ctx);
 * const x = s.fromArray([3, 4]);
 * await s.read(s.norm2(x)); // 5
 */
export class GpuVectorSpace extends GpuScalarSpace implements VectorSpace<GpuVector, GpuScalar> {
  readonly name = 'webgpu-f32';
  readonly precision = 'f32' as const;
  /** Operand and buffer arrays of the combine being recorded, reused ({@link operands}). */
  private readonly coeffScratch: Operand[] = [];
  private readonly bufScratch: GpuBuf[] = [];
  private readonly slotScratch: number[] = [];

  private same(where: string, a: GpuVector, b: GpuVector): void {
    if (a.n !== b.n) throw new DimensionMismatchError(where, a.n, b.n);
  }

  /** The fused combines' checks: one coefficient per vector, every x of y's length, no x aliasing y. */
  private checkCombineArgs(where: string, coeffs: readonly unknown[], xs: readonly GpuVector[], y: GpuVector): void {
    if (coeffs.length !== xs.length) throw new DimensionMismatchError(`${where} coeffs`, xs.length, coeffs.length);
    for (let j = 0; j < xs.length; j++) this.same(where, xs[j]!, y);
    if (holds(xs, y)) throw new InvalidParameterError(`${where} xs`, 'vectors distinct from y', 'an alias of y');
  }

  /**
   * The device operands of a combine (the coefficients and the vectors' buffers) in the reused
   * scratch arrays: Blas1 reads them while it records and keeps none. O(k), no allocation once
   * the arrays have grown (a number coefficient still makes its immediate operand).
   */
  private operands(coeffs: readonly ScalarLike<GpuScalar>[], xs: readonly GpuVector[]): [Operand[], GpuBuf[]] {
    const cs = this.coeffScratch;
    const bs = this.bufScratch;
    cs.length = coeffs.length;
    bs.length = xs.length;
    for (let j = 0; j < coeffs.length; j++) cs[j] = this.op(coeffs[j]!);
    for (let j = 0; j < xs.length; j++) bs[j] = xs[j]!.buf;
    return this.operandPair;
  }
  /** The pair {@link operands} returns (made once). */
  private readonly operandPair: [Operand[], GpuBuf[]] = [this.coeffScratch, this.bufScratch];

  /** `count` fresh scalars, their slots in the reused {@link slotScratch}. */
  private slots(count: number): GpuScalar[] {
    const out: GpuScalar[] = new Array<GpuScalar>(count);
    const ns = this.slotScratch;
    ns.length = count;
    for (let j = 0; j < count; j++) {
      out[j] = this.slot();
      ns[j] = out[j]!.num;
    }
    return out;
  }

  /** The four CG vectors: of one length and distinct (no Set, no array). */
  private cgVectors(where: string, p: GpuVector, q: GpuVector, x: GpuVector, r: GpuVector): void {
    this.same(where, p, q);
    this.same(where, p, x);
    this.same(where, p, r);
    const a = p.buf.id;
    const b = q.buf.id;
    const c = x.buf.id;
    const d = r.buf.id;
    if (a === b || a === c || a === d || b === c || b === d || c === d) throw new InvalidParameterError(`${where} p, q, x, r`, 'four distinct vectors', 'an alias');
  }

  create(n: number): GpuVector {
    const v = new GpuVector(this.ctx.buffers.acquire(n * 4, undefined, 'vector'), n);
    this.b1.fill(v.buf, n, imm(0));
    return v;
  }
  /**
   * A vector whose contents are undefined (a pooled buffer keeps whatever it held): no fill
   * dispatch. Not part of VectorSpace (solvers look for it, see the solvers' eigen/ortho.ts);
   * only for a vector whose next operation writes every element without reading it — combine
   * with β = 0 and at least one vector, combineNormalize's v, copy.
   * @example const y = space.createUninitialized(n); space.combine(c, basis, 0, y);
   */
  createUninitialized(n: number): GpuVector {
    return new GpuVector(this.ctx.buffers.acquire(n * 4, undefined, 'vector'), n);
  }
  fromArray(values: ArrayLike<number>): GpuVector {
    checkFloat32Range(values, 'GpuVectorSpace.fromArray');
    const v = new GpuVector(this.ctx.buffers.acquire(values.length * 4, undefined, 'vector'), values.length);
    writeValues(this.ctx, v.buf, values);
    return v;
  }
  toArray(v: GpuVector): Promise<Float64Array> {
    return readF32(this.ctx, v.buf, v.n);
  }
  write(v: GpuVector, values: ArrayLike<number>): void {
    if (values.length !== v.n) throw new DimensionMismatchError('write', v.n, values.length);
    writeValues(this.ctx, v.buf, values);
  }
  length(v: GpuVector): number {
    return v.n;
  }
  copy(src: GpuVector, dst: GpuVector): void {
    this.same('copy', src, dst);
    this.b1.copy(src.buf, dst.buf, src.n);
  }
  fill(v: GpuVector, value: number): void {
    this.b1.fill(v.buf, v.n, imm(value));
  }
  axpby(alpha: ScalarLike<GpuScalar>, x: GpuVector, beta: ScalarLike<GpuScalar>, y: GpuVector): void {
    this.same('axpby', x, y);
    // y = alpha·x + beta·y (one dispatch; alpha, beta read on the device)
    this.b1.axpby(this.op(alpha), x.buf, this.op(beta), y.buf, y.n);
  }
  shiftedDivide(r: GpuVector, d: GpuVector, sigma: number, clamp: number, t: GpuVector): void {
    this.same('shiftedDivide', r, d);
    this.same('shiftedDivide', r, t);
    if (t.buf.id === r.buf.id || t.buf.id === d.buf.id) throw new InvalidParameterError('shiftedDivide t', 'a vector distinct from r and d', 'an alias');
    this.b1.shiftedDivide(r.buf, d.buf, sigma, clamp, t.buf, t.n);
  }

  multiply(x: GpuVector, y: GpuVector, z: GpuVector): void {
    this.same('multiply', x, y);
    this.same('multiply', x, z);
    this.b1.multiply(x.buf, y.buf, z.buf, z.n);
  }
  dot(x: GpuVector, y: GpuVector): GpuScalar {
    this.same('dot', x, y);
    const s = this.slot();
    this.b1.dots([x.buf], y.buf, x.n, [s.num]);
    return s;
  }
  norm2(x: GpuVector): GpuScalar {
    const s = this.slot();
    this.b1.dots([x.buf], x.buf, x.n, [s.num], true);
    return s;
  }
  multiDot(xs: readonly GpuVector[], y: GpuVector): GpuScalar[] {
    for (let j = 0; j < xs.length; j++) this.same('multiDot', xs[j]!, y);
    const out = this.slots(xs.length);
    // s_j = x_j·y (fused: one read of y per group of vectors)
    this.b1.multiDots(this.operands([], xs)[1], y.buf, y.n, this.slotScratch);
    return out;
  }
  combine(coeffs: readonly ScalarLike<GpuScalar>[], xs: readonly GpuVector[], beta: ScalarLike<GpuScalar>, y: GpuVector): void {
    if (coeffs.length !== xs.length) throw new DimensionMismatchError('combine coeffs', xs.length, coeffs.length);
    for (const x of xs) this.same('combine', x, y);
    if (xs.length === 0) {
      if (beta === 0) this.b1.fill(y.buf, y.n, imm(0));
      else this.b1.axpby(this.op(beta), y.buf, imm(0), y.buf, y.n); // y = beta·y
      return;
    }
    // y = beta·y + Σ_j c_j·x_j (one dispatch per group of vectors, j ascending)
    const [cs, bs] = this.operands(coeffs, xs);
    this.b1.combine(cs, bs, this.op(beta), y.buf, y.n);
  }
  /**
   * CG's update, fused (not part of VectorSpace: solvers look for it): x += α·p, r −= α·q, and
   * ⟨r, r⟩ of the updated r. Two dispatches instead of four; the same arithmetic as
   * axpby(α, p, 1, x), axpby(−α, q, 1, r), dot(r, r). p, q, x, r distinct, all of one length.
   * @example const rr = space.cgUpdate(alpha, p, q, x, r);
   */
  cgUpdate(alpha: ScalarLike<GpuScalar>, p: GpuVector, q: GpuVector, x: GpuVector, r: GpuVector): GpuScalar {
    this.cgVectors('cgUpdate', p, q, x, r);
    const s = this.slot();
    this.b1.cgUpdate(this.op(alpha), p.buf, q.buf, x.buf, r.buf, p.n, s.num);
    return s;
  }
  /**
   * A CG step after q = A·p, fused (not part of VectorSpace: solvers look for it): ⟨p, q⟩,
   * α = ρ / ⟨p, q⟩, x += α·p, r −= α·q and ⟨r, r⟩ of the updated r in three dispatches, where
   * dot, axpby, axpby and dot take six; the same arithmetic. p, q, x, r distinct.
   * @example const { pq, rr } = space.cgStep(rho, p, q, x, r);
   */
  cgStep(rho: ScalarLike<GpuScalar>, p: GpuVector, q: GpuVector, x: GpuVector, r: GpuVector): { pq: GpuScalar; rr: GpuScalar } {
    this.cgVectors('cgStep', p, q, x, r);
    const pq = this.slot();
    const rr = this.slot();
    this.b1.cgStep(this.op(rho), p.buf, q.buf, x.buf, r.buf, p.n, pq.num, rr.num);
    return { pq, rr };
  }

  /**
   * {@link cgStep} and then p = r + (⟨r, r⟩/ρ)·p: a whole CG iteration after q = A·p in three
   * dispatches (not part of VectorSpace: solvers look for it), the bits of cgStep + div + axpby.
   * @example const { pq, rr } = space.cgIteration(rho, p, q, x, r);
   */
  cgIteration(rho: GpuScalar, p: GpuVector, q: GpuVector, x: GpuVector, r: GpuVector): { pq: GpuScalar; rr: GpuScalar } {
    this.cgVectors('cgIteration', p, q, x, r);
    const pq = this.slot();
    const rr = this.slot();
    this.b1.cgIteration(rho, p.buf, q.buf, x.buf, r.buf, p.n, pq.num, rr.num);
    return { pq, rr };
  }

  /**
   * y = β·y + Σ_j c_j·x_j and ‖y‖ after it, fused (not part of VectorSpace: solvers look for
   * it): GMRES's w −= V·h with h_{j+1,j} = ‖w‖ in one pass over w, one dispatch fewer than
   * combine + norm2. No x may alias y.
   * @example const hn = space.combineNorm(h, vs, -1, w);
   */
  combineNorm(coeffs: readonly ScalarLike<GpuScalar>[], xs: readonly GpuVector[], beta: ScalarLike<GpuScalar>, y: GpuVector): GpuScalar {
    this.checkCombineArgs('combineNorm', coeffs, xs, y);
    if (xs.length === 0) {
      this.combine([], [], beta, y);
      return this.norm2(y);
    }
    const s = this.slot();
    const [cs, bs] = this.operands(coeffs, xs);
    this.b1.combineNorm(cs, bs, this.op(beta), y.buf, y.n, s.num);
    return s;
  }
  /**
   * y = β·y + Σ_j c_j·x_j, then the dots x_j·y of the new y, fused (not part of VectorSpace:
   * solvers look for it): the first classical Gram–Schmidt pass w ← Q·h − w and the second
   * pass's Qᵀ·w with one read of (up to G − 1 of) the x's, one dispatch fewer than combine +
   * multiDot; the same bits. No x may alias y.
   * @example const h2 = space.combineDots(h1, basis, -1, w); // w ← Q·h1 − w, h2 = Qᵀ·w
   */
  combineDots(coeffs: readonly ScalarLike<GpuScalar>[], xs: readonly GpuVector[], beta: ScalarLike<GpuScalar>, y: GpuVector): GpuScalar[] {
    this.checkCombineArgs('combineDots', coeffs, xs, y);
    if (xs.length === 0 || y.n === 0) {
      this.combine(coeffs, xs, beta, y);
      return this.multiDot(xs, y);
    }
    const out = this.slots(xs.length);
    const [cs, bs] = this.operands(coeffs, xs);
    this.b1.combineDots(cs, bs, this.op(beta), y.buf, y.n, this.slotScratch);
    return out;
  }
  /**
   * GMRES's Gram–Schmidt tail, fused (not part of VectorSpace: solvers look for it):
   * y = β·y + Σ_j c_j·x_j, h = ‖y‖, v = (k/h)·y; returns h. Two dispatches where combineNorm,
   * and axpby with k/h take three; the same bits. v distinct from y and every x.
   * @example const hn = space.combineNormalize(h, vs, -1, w, basis[j + 1], -1); // v = −w'/‖w'‖
   */
  combineNormalize(coeffs: readonly ScalarLike<GpuScalar>[], xs: readonly GpuVector[], beta: ScalarLike<GpuScalar>, y: GpuVector, v: GpuVector, k: number): GpuScalar {
    this.same('combineNormalize', y, v);
    if (v.buf.id === y.buf.id || holds(xs, v)) throw new InvalidParameterError('combineNormalize v', 'a vector distinct from y and the xs', 'an alias');
    if (xs.length === 0 || y.n === 0) {
      const h = this.combineNorm(coeffs, xs, beta, y);
      const inv = this.div(k, h);
      this.axpby(inv, y, 0, v); // v = (k/h)·y
      this.release(inv);
      return h;
    }
    this.checkCombineArgs('combineNormalize', coeffs, xs, y);
    const s = this.slot();
    const [cs, bs] = this.operands(coeffs, xs);
    this.b1.combineNormalize(cs, bs, this.op(beta), y.buf, y.n, s.num, v.buf, k);
    return s;
  }
  /**
   * A device block for the basis of a Lanczos run (not part of VectorSpace: the solvers' eigen/
   * lanczos-step looks for it): `capacity` columns of length n in one buffer, so that a CGS2
   * step is six dispatches for any basis size, and a history of `rows` steps read back in one
   * readback (./blas1/lanczos-block). Undefined where the block would not fit one storage binding.
   * The caller disposes it.
   * @example const block = space.lanczosBlock(n, maxBasis + 1, 8);
   */
  lanczosBlock(n: number, capacity: number, rows: number): LanczosBlock | undefined {
    return LanczosBlock.create(this.ctx, n, capacity, rows);
  }

  /**
   * A device block for the basis of a GMRES cycle (not part of VectorSpace: the solvers'
   * krylov/gmres looks for it): one-pass Gram–Schmidt steps in four dispatches for any basis size,
   * their history read back once per cycle (./blas1/gmres-block). Undefined where it would not
   * fit one storage binding. The caller disposes it.
   * @example const block = space.gmresBlock(n, restart + 1);
   */
  gmresBlock(n: number, capacity: number): GmresBlock | undefined {
    return GmresBlock.create(this.ctx, n, capacity);
  }
}
