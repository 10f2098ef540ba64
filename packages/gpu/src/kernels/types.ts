/**
 * The SpMV kernel contract. A kernel is a pure description (tfjs-style program object): its
 * format, parameters, a `supports` test, a WGSL generator, an upload and an encoder. Compiled
 * pipelines, bind groups and buffers live in the {@link GpuContext}; device matrices
 * (`upload`'s result) hold the buffers of one matrix. Add a kernel: one `*.kernel.ts` file
 * plus one line in `registry.ts`; the conformance test then covers it automatically.
 * @module
 */
import type { CsrMatrix, SparseMatrix } from '@gpusparse/formats';
import type { GpuCaps, GpuContext, GpuLimits } from '../device/context';
import type { PipelineSpec } from '../device/pipelines';
import type { GpuBuf } from '../memory/buffers';
import type { SharedCsrUpload } from './csr/csr-device';

/** What every matrix a kernel consumes has: a shape (CSR lacks `nnz`; other formats have it). */
export interface MatrixShape {
  readonly rows: number;
  readonly cols: number;
}

/** One tunable parameter of a kernel. */
export interface ParamSpec {
  readonly description: string;
  /** Values the benchmark and the conformance test sweep (the first is the default). */
  readonly values: readonly number[];
}

/** y = alpha·A·x + beta·y (beta = 0 ignores y's old content). */
export interface SpmvScale {
  readonly alpha: number;
  readonly beta: number;
}

/** Options of an upload that do not change the shader text. */
export interface UploadOptions {
  /**
   * Largest byte size of one binding for the matrix arrays (default: the device's
   * maxStorageBufferBindingSize). Matrices larger than this are split over several bindings /
   * row blocks, never rejected. Tests lower it to exercise splitting on small matrices.
   */
  readonly maxBindingBytes?: number;
  /**
   * CSR kernels only: the matrix's arrays already on the device ({@link uploadCsrArrays}); the
   * upload then adds only the kernel's own tables (no validation, no transfer of the arrays).
   * The autotuner shares one such upload between every CSR candidate and the final operator.
   */
  readonly sharedCsr?: SharedCsrUpload;
}

/** A matrix resident on the device, ready for `encode`. */
export interface DeviceMatrix {
  readonly kernelId: string;
  readonly rows: number;
  readonly cols: number;
  readonly nnz: number;
  /** Bytes of all device arrays of this matrix. */
  readonly deviceBytes: number;
  /** Number of binding blocks the matrix was split into (1 when it fits). */
  readonly blocks: number;
  /** Return every buffer to the context's pool. */
  dispose(): void;
}

/**
 * An SpMV kernel over matrices of format `format` (a name in @gpusparse/formats' registry).
 * @typeParam M - the format's matrix type
 * @typeParam P - the parameter record (numbers only)
 * @typeParam H - the device matrix handle
 */
export interface SpmvKernel<M extends MatrixShape = SparseMatrix, P extends Record<string, number> = Record<string, number>, H extends DeviceMatrix = DeviceMatrix> {
  /** Unique id, e.g. 'csr-vector'. */
  readonly id: string;
  /** Format name from @gpusparse/formats' registry, e.g. 'csr'. */
  readonly format: string;
  /** One line: the algorithm and the paper/section it follows. */
  readonly title: string;
  /** Parameter schema; `defaults` holds the first value of each. */
  readonly params: Readonly<Record<keyof P & string, ParamSpec>>;
  readonly defaults: Readonly<P>;
  /** Format parameters to convert CSR with (e.g. SELL's C), derived from kernel params. */
  formatParams?(params: P): Record<string, unknown>;
  /** True, or the reason this kernel cannot run `m` on a device with `limits`. */
  supports(m: M, limits: GpuLimits, params?: P): true | string;
  /**
   * Optional: true, or the reason this kernel cannot run CSR matrix `a`, decided from the CSR
   * source before any conversion (e.g. ELL's rows × longest row slots would not fit), so that
   * nothing large is built only to be refused. Callers run it first ({@link supportsCsr}).
   */
  precheck?(a: CsrMatrix, limits: GpuLimits, params: P): true | string;
  /** The shader text (pure; the pipeline cache key is this text, so only what changes it matters). */
  wgsl(params: P, caps: GpuCaps): string;
  /**
   * Optional: the pipeline `upload` compiles for `params` (the same key, label and bindings), so
   * that a caller can compile it ahead of time with PipelineCache.prewarm (the autotuner does,
   * while the host prepares the CSR upload).
   */
  pipelineSpec?(params: P, caps: GpuCaps): PipelineSpec;
  /**
   * Optional: the other pipelines `upload` compiles beside {@link pipelineSpec} (e.g. csr-merge's
   * fix-up pass), so that a caller can compile them ahead of time too.
   */
  uploadSpecs?(params: P, caps: GpuCaps): PipelineSpec[];
  /** Validate and upload `m`; returns the device matrix. */
  upload(ctx: GpuContext, m: M, params?: Partial<P>, opts?: UploadOptions): H;
  /**
   * Optional: an extra per-row absolute error allowance of y = A·x in float32, for a kernel whose
   * reduction is not a sum of the row's own products. No registered kernel declares one (AXTCH1
   * used to, for Eq. (1) of seed 004; it now meets the plain per-row bound). `x` is what the device holds. The conformance tier adds
   * |alpha|·errorBound[i] to its per-row bound; kernels without it get no extra allowance.
   */
  errorBound?(m: M, params: P, x: Float64Array): Float64Array;
  /** Record y = alpha·A·x + beta·y into the context's batch (no wait). */
  encode(ctx: GpuContext, h: H, x: GpuBuf, y: GpuBuf, scale?: SpmvScale): void;
}

/** Any kernel of the registry. */
// biome-ignore lint/suspicious/noExplicitAny: heterogeneous registry of kernels
export type AnySpmvKernel = SpmvKernel<any, any, any>;

/** Fill `params` with the kernel's defaults and check each against its declared values. */
export function resolveParams<P extends Record<string, number>>(k: SpmvKernel<MatrixShape, P, DeviceMatrix>, params: Partial<P> = {}): P {
  const out = { ...k.defaults, ...params } as P;
  for (const name of Object.keys(k.params)) {
    const v = out[name];
    if (typeof v !== 'number' || !Number.isFinite(v)) {
      throw new RangeError(`${k.id}: parameter ${name} expected a number (one of ${k.params[name as keyof P & string].values.join(', ')}), got ${String(v)}`);
    }
  }
  return out;
}

/**
 * The checks a kernel can make on a CSR matrix before conversion: x and y each fit one binding
 * (every kernel binds them whole), then the kernel's own {@link SpmvKernel.precheck}. O(1) plus
 * the precheck (O(rows) for ELL).
 * @example const ok = supportsCsr(ellKernel, a, ctx.limits); if (ok !== true) console.log(ok);
 */
export function supportsCsr(k: AnySpmvKernel, a: CsrMatrix, limits: GpuLimits, params: Record<string, number> = k.defaults): true | string {
  const max = limits.maxStorageBufferBindingSize;
  if (4 * a.cols > max || 4 * a.rows > max) return `x (${a.cols}) or y (${a.rows}) float32 entries exceed one binding of ${max} bytes`;
  return k.precheck ? k.precheck(a, limits, { ...k.defaults, ...params }) : true;
}
