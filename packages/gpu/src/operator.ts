/**
 * The GPU linear operator: any registered SpMV kernel bound to one device matrix.
 * @module
 */
import { type CsrMatrix, csrDiagonal, csrTranspose, DimensionMismatchError, getFormat, type LinearOperator, NotSupportedError } from '@gpusparse/formats';
import { Blas1, imm } from './blas1/ops';
import type { GpuContext } from './device/context';
import { getKernel } from './kernels/registry';
import { type AnySpmvKernel, type DeviceMatrix, supportsCsr, type UploadOptions } from './kernels/types';
import { GpuVector } from './vector-space';

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
export class GpuOperator implements LinearOperator<GpuVector> {
  readonly rows: number;
  readonly cols: number;
  readonly label: string;
  private transposed: GpuOperator | undefined;
  private tmp: GpuVector | undefined;

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

  /** Return the matrix buffers to the pool. */
  dispose(): void {
    this.handle.dispose();
    this.tmp?.buf.dispose();
    this.transposed?.dispose();
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
  const params = { ...kernel.defaults, ...opts.params };
  const pre = supportsCsr(kernel, a, ctx.limits, params); // before any conversion
  if (pre !== true) throw new NotSupportedError(`${kernel.id}: expected a matrix this kernel supports, got ${a.rows}×${a.cols}: ${pre}`);
  const m = kernel.format === 'csr' ? a : getFormat(kernel.format).fromCsr(a, kernel.formatParams?.(params));
  const ok = kernel.supports(m, ctx.limits, params);
  if (ok !== true) throw new NotSupportedError(`${kernel.id}: expected a matrix this kernel supports, got ${a.rows}×${a.cols}: ${ok}`);
  return new GpuOperator(ctx, kernel, kernel.upload(ctx, m, params, opts.upload), params, a);
}

/** Upload a matrix already in `kernel`'s format (no CSR source: no transpose or diagonal). */
export function gpuOperatorFromFormat(ctx: GpuContext, kernel: AnySpmvKernel, m: { rows: number; cols: number }, params: Record<string, number> = {}): GpuOperator {
  const p = { ...kernel.defaults, ...params };
  const ok = kernel.supports(m, ctx.limits, p);
  if (ok !== true) throw new NotSupportedError(`${kernel.id}: expected a matrix this kernel supports, got ${m.rows}×${m.cols}: ${ok}`);
  return new GpuOperator(ctx, kernel, kernel.upload(ctx, m, p), p);
}
