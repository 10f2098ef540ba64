/**
 * The df64 refinement state on the device ({@link ExtendedPrecisionResidual} of a GPU operator
 * built from CSR): x, b, r and the best x in df64 device vectors; r = b − A·x by the df64 CSR
 * residual; the correction's right-hand side handed to the float32 space on the device; x += α·d
 * accumulated in df64. Per outer step the host reads one df64 scalar (‖r‖²).
 * @module
 */
import {
  type CsrMatrix,
  type DeviceSolution,
  DimensionMismatchError,
  type ExtendedPrecisionResidual,
  type ExtendedRefinement,
  type ExtendedVector,
  InvalidParameterError,
} from '@gpusparse/formats';
import { GpuVector } from '../vector-space';
import { type Df64Blas, Df64Vector } from './blas';
import { Df64Csr, type SharedCsrArrays } from './csr';

/** df64 residuals for one square CSR matrix on one context (the matrix is uploaded once). */
export class Df64Residual implements ExtendedPrecisionResidual<GpuVector> {
  readonly precision: string;
  readonly rows: number;
  readonly matrix: Df64Csr;

  /**
   * Upload `a` for df64 residuals (O(nnz) host work; 8 or 12 bytes per non-zero, or 0 or 4 when
   * `share` holds the same matrix's float32 CSR arrays).
   */
  constructor(
    readonly d: Df64Blas,
    a: CsrMatrix,
    share?: SharedCsrArrays,
  ) {
    if (a.rows !== a.cols) throw new DimensionMismatchError('Df64Residual: square matrix, cols', a.rows, a.cols);
    this.matrix = new Df64Csr(d, a, share);
    this.rows = a.rows;
    this.precision = `df64 (≈48 bits, TwoProd by ${d.mode}) on webgpu`;
  }

  start(b: ArrayLike<number> | ExtendedVector, x0?: ArrayLike<number>, opts: { shift?: number } = {}): ExtendedRefinement<GpuVector> {
    const n = isDeviceVector(b) ? b.n : (b as ArrayLike<number>).length;
    if (n !== this.rows) throw new DimensionMismatchError('df64 refinement b', this.rows, n);
    if (!isDeviceVector(b) && 'n' in b) throw new InvalidParameterError('df64 refinement b', 'host values or a Df64Vector / GpuVector of this device', 'another kind of vector');
    if (x0 && x0.length !== this.rows) throw new DimensionMismatchError('df64 refinement x0', this.rows, x0.length);
    return new Df64Refinement(this, b as ArrayLike<number> | Df64Vector | GpuVector, x0, opts.shift ?? 0);
  }

  /** A df64 vector (copied as it is) or a float32 GPU vector (exact in df64) can be the right-hand side. */
  acceptsVector(b: unknown): b is Df64Vector | GpuVector {
    return isDeviceVector(b);
  }

  /** ‖b‖₂ of a device right-hand side in df64 (one synchronisation; two when it leaves f32's range). */
  async vectorNorm(b: ExtendedVector): Promise<number> {
    if (b instanceof Df64Vector) return this.d.norm2Value(b);
    if (!(b instanceof GpuVector)) throw new InvalidParameterError('df64 vectorNorm b', 'a Df64Vector or GpuVector', typeof b);
    const t = deviceVector(this.d, b.n, false);
    try {
      if (b.n > 0) this.d.fromF32(b.buf, t);
      return await this.d.norm2Value(t);
    } finally {
      t.buf.dispose();
    }
  }

  /** Free the matrix copy. */
  dispose(): void {
    this.matrix.dispose();
  }
}

/** Slot of the df64 scalar buffer used for ‖r‖². */
const NORM_SLOT = 1;

class Df64Refinement implements ExtendedRefinement<GpuVector> {
  readbacks = 0;
  private readonly x: Df64Vector;
  private readonly b: Df64Vector;
  private readonly r: Df64Vector;
  private best: Df64Vector | undefined;
  private taken = false;

  constructor(
    private readonly owner: Df64Residual,
    b: ArrayLike<number> | Df64Vector | GpuVector,
    x0: ArrayLike<number> | undefined,
    shift: number,
  ) {
    const d = owner.d;
    this.b = rhsOnDevice(d, b, shift);
    this.x = x0 ? d.fromFloat64(x0) : deviceVector(d, owner.rows, true);
    this.r = deviceVector(d, owner.rows, !!x0);
    if (!x0) d.copy(this.b, this.r); // r = b − A·0 until the first residualNorm
  }

  async residualNorm(): Promise<number> {
    const d = this.owner.d;
    this.owner.matrix.residual(this.x, this.b, this.r); // r = b − A·x (df64)
    d.dot(this.r, this.r, NORM_SLOT);
    const [rr] = await d.readSlots([NORM_SLOT]);
    this.readbacks++;
    if (Number.isFinite(rr) && rr! > 1e-30) return Math.sqrt(rr!);
    // ‖r‖² outside the f32 exponent range (or r non-finite): scaled norm on the host
    const v = await d.toFloat64(this.r);
    this.readbacks++;
    let m = 0;
    for (let i = 0; i < v.length; i++) m = Number.isNaN(v[i]!) ? Number.NaN : Math.max(m, Math.abs(v[i]!));
    if (!(m > 0) || !Number.isFinite(m)) return m;
    let s = 0;
    for (let i = 0; i < v.length; i++) s += (v[i]! / m) ** 2;
    return m * Math.sqrt(s);
  }

  correctionRhs(scale: number, out: GpuVector): void {
    if (out.n !== this.owner.rows) throw new DimensionMismatchError('df64 correctionRhs out', this.owner.rows, out.n);
    this.owner.d.toF32(scale, this.r, out.buf); // out = fl32(scale·r)
  }

  update(alpha: number, dv: GpuVector): void {
    if (dv.n !== this.owner.rows) throw new DimensionMismatchError('df64 update d', this.owner.rows, dv.n);
    this.owner.d.axpyF32(alpha, dv.buf, this.x); // x = x + alpha·d (df64)
  }

  saveBest(): void {
    this.best ??= deviceVector(this.owner.d, this.owner.rows, false); // the copy overwrites it
    this.owner.d.copy(this.x, this.best);
  }

  restoreBest(): void {
    if (this.best) this.owner.d.copy(this.best, this.x);
  }

  async solution(): Promise<Float64Array> {
    this.readbacks++;
    return this.owner.d.toFloat64(this.x);
  }

  /** The allocations' error scopes awaited: an out-of-memory of x, b or r is thrown here (one round trip). */
  async settle(): Promise<void> {
    const ctx = this.owner.d.ctx;
    await ctx.settle();
    ctx.check();
  }

  takeSolution(): DeviceSolution {
    if (this.taken) throw new InvalidParameterError('df64 refinement takeSolution', 'one call', 'a second call');
    this.taken = true;
    const { x } = this;
    const d = this.owner.d;
    return { vector: x, read: () => d.toFloat64(x), dispose: () => x.buf.dispose() };
  }

  dispose(): void {
    for (const v of [this.taken ? undefined : this.x, this.b, this.r, this.best]) v?.buf.dispose();
  }
}

function isDeviceVector(b: unknown): b is Df64Vector | GpuVector {
  return b instanceof Df64Vector || b instanceof GpuVector;
}

/** The refinement's own copy of b·2^shift: split on the device from host words, copied from a df64 vector, or widened from float32. */
function rhsOnDevice(d: Df64Blas, b: ArrayLike<number> | Df64Vector | GpuVector, shift: number): Df64Vector {
  if (!isDeviceVector(b)) return d.fromFloat64(b, shift);
  const own = deviceVector(d, b.n, false);
  if (b.n === 0) return own;
  if (b instanceof Df64Vector) d.copy(b, own);
  else d.fromF32(b.buf, own);
  if (shift !== 0) d.scale(2 ** shift, own); // a power of two: exact unless it leaves f32's range
  return own;
}

/**
 * A df64 vector of n elements, zeroed on the device when `zero` (a clearBuffer recorded in
 * order with the other work): `Df64Blas.create` uploads n·8 zero bytes from the host, 14 MB
 * per vector on the 1.73 M-row stencil, three times per solve.
 */
function deviceVector(d: Df64Blas, n: number, zero: boolean): Df64Vector {
  const bytes = Math.max(8, n * 8);
  const v = new Df64Vector(d.ctx.buffers.acquire(bytes, undefined, 'df64-vector'), n);
  if (zero) d.ctx.recorder.commandEncoder().clearBuffer(v.buf.buffer, 0, bytes);
  return v;
}
