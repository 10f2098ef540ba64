/**
 * The GPU linear operator: any registered SpMV kernel bound to one device matrix.
 * @module
 */
import {
  type CsrMatrix,
  csrDiagonal,
  csrTranspose,
  DimensionMismatchError,
  type ExtendedPrecisionResidual,
  type ExtendedPrecisionSource,
  getFormat,
  type LinearOperator,
  NotSupportedError,
  ResourceLimitError,
} from '@gpusparse/formats';
import { Blas1, imm } from './blas1/ops';
import { Df64Blas } from './df64/blas';
import type { SharedCsrArrays } from './df64/csr';
import { addValueRange, df64FlushLoss, emptyValueRange } from './df64/flush';
import { Df64Residual } from './df64/refinement';
import type { CsrDeviceMatrix } from './kernels/csr/csr-device';
import { deviceDiaFor } from './kernels/dia/dia-build';
import type { GpuContext } from './device/context';
import { getKernel } from './kernels/registry';
import { type AnySpmvKernel, type DeviceMatrix, supportsCsr, type UploadOptions } from './kernels/types';
import { GpuVector } from './vector-space';
import { checkFloat32Range } from './memory/float32-range';

/** Options of {@link gpuOperatorFromCsr}. */
export interface GpuOperatorOptions {
  /** Kernel id from the registry or a kernel object (default 'csr-vector'). */
  readonly kernel?: string | AnySpmvKernel;
  /** Kernel parameters (defaults filled in). */
  readonly params?: Record<string, number>;
  /** Upload options (e.g. a lower binding size for tests). */
  readonly upload?: UploadOptions;
}

/**
 * y = A·x on the device with one registered kernel. `apply` and `applyScaled` record one
 * dispatch per binding block (no wait). `diagonal` and `applyTranspose` exist when the operator
 * was built from CSR (the transpose is uploaded on first use with the same kernel).
 * @example
 * const op = gpuOperatorFromCsr(ctx, a, { kernel: 'csr-adaptive' });
 * op.apply(x, y);
 */
export class GpuOperator implements LinearOperator<GpuVector>, ExtendedPrecisionSource<GpuVector> {
  readonly rows: number;
  readonly cols: number;
  readonly label: string;
  private transposed: GpuOperator | undefined;
  private tmp: GpuVector | undefined;
  private ext: Promise<Df64Residual | undefined> | undefined;

  constructor(
    readonly ctx: GpuContext,
    readonly kernel: AnySpmvKernel,
    readonly handle: DeviceMatrix,
    readonly params: Record<string, number>,
    private readonly csrSource?: CsrMatrix,
  ) {
    this.rows = handle.rows;
    this.cols = handle.cols;
    this.label = `${kernel.id}(${Object.entries(params).map(([k, v]) => `${k}=${v}`).join(',')})`;
  }

  private run(x: GpuVector, y: GpuVector, alpha: number, beta: number, where: string): void {
    if (x.n !== this.cols) throw new DimensionMismatchError(`${this.label} ${where} x`, this.cols, x.n);
    if (y.n !== this.rows) throw new DimensionMismatchError(`${this.label} ${where} y`, this.rows, y.n);
    if (x.buf.id === y.buf.id) {
      // in place (square A): t = alpha·A·x into scratch, then y = t + beta·y
      const t = this.scratch();
      this.kernel.encode(this.ctx, this.handle, x.buf, t.buf, { alpha, beta: 0 });
      Blas1.of(this.ctx).axpby(imm(1), t.buf, imm(beta), y.buf, this.rows);
      return;
    }
    this.kernel.encode(this.ctx, this.handle, x.buf, y.buf, { alpha, beta });
  }

  private scratch(): GpuVector {
    return (this.tmp ??= new GpuVector(this.ctx.buffers.acquire(this.rows * 4, undefined, 'op-scratch'), this.rows));
  }

  /** y = A·x. */
  apply(x: GpuVector, y: GpuVector): void {
    this.run(x, y, 1, 0, 'apply');
  }

  /** y = alpha·A·x + beta·y (fused into the kernel's store). */
  applyScaled(alpha: number, x: GpuVector, beta: number, y: GpuVector): void {
    this.run(x, y, alpha, beta, 'applyScaled');
  }

  /** y = Aᵀ·x (present when built from CSR). */
  get applyTranspose(): ((x: GpuVector, y: GpuVector) => void) | undefined {
    const src = this.csrSource;
    if (!src || this.kernel.format !== 'csr') return undefined;
    return (x, y) => {
      this.transposed ??= gpuOperatorFromCsr(this.ctx, csrTranspose(src), { kernel: this.kernel, params: this.params });
      this.transposed.apply(x, y);
    };
  }

  /** The main diagonal in float64 (present when built from CSR). */
  get diagonal(): (() => Float64Array) | undefined {
    const src = this.csrSource;
    return src ? () => csrDiagonal(src) : undefined;
  }

  /**
   * df64 residuals r = b − A·x on the device for `refinedSolve` (square operators built from
   * CSR; undefined otherwise, or when this device fails the df64 self-test). The first call
   * prepares the df64 matrix: with a single-block CSR kernel it reads this operator's own row
   * pointers, columns and float32 values and adds only a lo array where some value is not exact
   * in float32 (0 or 4 bytes per non-zero); other formats get their own CSR copy (8 or 12 bytes
   * per non-zero plus 4 per row). A matrix whose arrays exceed one storage binding is declined
   * (undefined), so refinement falls back to the host float64 path.
   */
  extendedPrecision(): Promise<ExtendedPrecisionResidual<GpuVector> | undefined> {
    const src = this.csrSource;
    if (!src || src.rows !== src.cols) return Promise.resolve(undefined);
    // parts below float32's normal range are flushed on NVIDIA: where that costs more than df64's
    // own rounding the df64 A would be the float32 A, and refinement 'converged' on it (A·1e-30:
    // host float64 rel 7e-8 at rtol 1e-10). A few tiny entries next to order-one ones lose
    // nothing that matters (df64/flush.ts) and keep the df64 residual.
    if (df64FlushLoss(addValueRange(emptyValueRange(), src.values)) !== undefined) return Promise.resolve(undefined);
    this.ext ??= Df64Blas.of(this.ctx).then((d) => {
      if (!d) return undefined;
      try {
        return new Df64Residual(d, src, this.sharedCsr());
      } catch (e) {
        // a matrix too large for one binding or buffer: no df64 offer, refinement stays on the host
        if (e instanceof ResourceLimitError || e instanceof RangeError) return undefined;
        throw e;
      }
    });
    return this.ext;
  }

  /** The float32 CSR arrays of a single-block CSR upload (the df64 residual reads them too). */
  private sharedCsr(): SharedCsrArrays | undefined {
    const parts = (this.handle as Partial<CsrDeviceMatrix>).parts;
    if (this.kernel.format !== 'csr' || parts?.length !== 1) return undefined;
    const p = parts[0]!;
    return p.rowStart === 0 && p.k0 === 0 && p.rows === this.rows ? { rowPtr: p.rowPtr, colIdx: p.colIdx, values: p.values } : undefined;
  }

  /** Return the matrix buffers to the pool. */
  dispose(): void {
    void this.ext?.then((e) => e?.dispose());
    this.handle.dispose();
    this.tmp?.buf.dispose();
    this.transposed?.dispose();
  }
}

/**
 * Every SpMV kernel binds x and y whole: refuse, before any conversion, a matrix whose x or y in
 * float32 exceeds one storage binding (ResourceLimitError, CLI exit 5) — this was a kernel's
 * NotSupportedError (exit 3) or, through the tuner, "no kernel passes verification". O(1).
 * @example checkVectorBindings(ctx, a, 'solve');
 */
export function checkVectorBindings(ctx: GpuContext, a: Pick<CsrMatrix, 'rows' | 'cols'>, what: string): void {
  const need = 4 * Math.max(a.rows, a.cols);
  const max = ctx.limits.maxStorageBufferBindingSize;
  if (need > max) {
    throw new ResourceLimitError(`${what}: x (${a.cols} entries) or y (${a.rows}) in float32, bound whole by every SpMV kernel`, need, max, 'one storage binding of this device (maxStorageBufferBindingSize) holds fewer: use a device with a larger binding limit, or --backend cpu (float64 on the host)');
  }
}

/**
 * Upload CSR matrix `a` for a registered kernel (converted to the kernel's format with the
 * format descriptor when it is not CSR). Cost: O(nnz) validation, conversion and transfer.
 * @throws NotSupportedError when the kernel cannot run this matrix on this device
 * @example const op = gpuOperatorFromCsr(ctx, generators.poisson2d(64), { kernel: 'csr-vector', params: { lanes: 4 } });
 */
export function gpuOperatorFromCsr(ctx: GpuContext, a: CsrMatrix, opts: GpuOperatorOptions = {}): GpuOperator {
  const kernel = typeof opts.kernel === 'object' ? opts.kernel : getKernel(opts.kernel ?? 'csr-vector');
  checkVectorBindings(ctx, a, kernel.id);
  checkFloat32Range(a, 'gpuOperatorFromCsr');
  const params = { ...kernel.defaults, ...opts.params };
  const pre = supportsCsr(kernel, a, ctx.limits, params); // before any conversion
  if (pre !== true) throw new NotSupportedError(`${kernel.id}: expected a matrix this kernel supports, got ${a.rows}×${a.cols}: ${pre}`);
  const dev = deviceDiaFor(ctx, kernel, a, params, opts.upload); // DIA: built on the device, no host conversion
  try {
    const m = dev ?? (kernel.format === 'csr' ? a : getFormat(kernel.format).fromCsr(a, kernel.formatParams?.(params)));
    const ok = kernel.supports(m, ctx.limits, params);
    if (ok !== true) throw new NotSupportedError(`${kernel.id}: expected a matrix this kernel supports, got ${a.rows}×${a.cols}: ${ok}`);
    return new GpuOperator(ctx, kernel, kernel.upload(ctx, m, params, opts.upload), params, a);
  } finally {
    dev?.release(); // the upload holds its layout
  }
}

/** Upload a matrix already in `kernel`'s format (no CSR source: no transpose or diagonal). */
export function gpuOperatorFromFormat(ctx: GpuContext, kernel: AnySpmvKernel, m: { rows: number; cols: number }, params: Record<string, number> = {}): GpuOperator {
  const p = { ...kernel.defaults, ...params };
  const ok = kernel.supports(m, ctx.limits, p);
  if (ok !== true) throw new NotSupportedError(`${kernel.id}: expected a matrix this kernel supports, got ${m.rows}×${m.cols}: ${ok}`);
  return new GpuOperator(ctx, kernel, kernel.upload(ctx, m, p), p);
}
