/**
 * A df64 CSR operator y = A·x on df64 vectors (the Df64VectorSpace's LinearOperator): values as
 * f32 hi plus, only in blocks where some value is not exact in f32, an f32 lo array; 32-bit
 * columns; the rows split into blocks so that no binding passes maxStorageBufferBindingSize.
 * Blocks are uploaded from a host CSR, or share the column / row-pointer / value arrays of a
 * float32 CSR device matrix (the chunked CI Hamiltonian), adding only lo arrays.
 * Device bytes per non-zero: 8 own (col + hi) or 0 shared, + 4 where lo is needed.
 * @module
 */
import { type CsrMatrix, csrDiagonal, DimensionMismatchError, GpuSparseError, InvalidMatrixError, InvalidParameterError, type LinearOperator, ResourceLimitError } from '@gpusparse/formats';
import type { PipelineSpec } from '../device/pipelines';
import { type CsrDeviceBlock, splitCsrPlan } from '../kernels/csr/csr-device';
import { signature } from '../kernels/wgsl/index';
import type { GpuBuf } from '../memory/buffers';
import { Uniforms } from '../memory/recorder';
import { uploadF32, uploadU32, validateCsrIndices } from '../memory/upload';
import type { Df64Blas, Df64Vector } from './blas';
import { DF_WG } from './blas.kernel';
import { residualLanes } from './csr';
import { addValueRange, type Df64ValueRange, df64FlushLoss, df64ScaleFor, emptyValueRange } from './flush';
import { type LowPartStats, lowParts, uploadLowParts } from './low-parts';
import { PRODUCT_BINDINGS, productWgsl } from './product.kernel';

/** One row block of a df64 CSR operator. */
export interface Df64CsrBlock {
  /** First global row, row count, and whether the first row continues the previous block's. */
  readonly rowStart: number;
  readonly rows: number;
  readonly cont: boolean;
  readonly nnz: number;
  /** Block-local row pointers, global columns, f32 hi values, optional f32 lo values. */
  readonly rowPtr: GpuBuf;
  readonly colIdx: GpuBuf;
  readonly hi: GpuBuf;
  readonly lo: GpuBuf | undefined;
}

/** The df64 product pipeline with `lanes` lanes per row, reading lo arrays or not, hi scaled or not. */
function productSpec(d: Df64Blas, lanes: number, lo: boolean, scaled = false): PipelineSpec {
  return d.spec(`product-${lanes}-${lo ? 'lo' : 'hi'}${scaled ? '-p2' : ''}`, () => productWgsl(d.mode, lanes, lo, scaled), signature(PRODUCT_BINDINGS));
}

/**
 * Options of the df64 operator's factories. `scale`: the operator multiplies by scale·A, a power
 * of two ≥ 1 (default 1), or 'auto': 1 unless A's values would lose accuracy where the device
 * flushes float32 subnormals (df64/flush.ts: A·1e-30), then the power of two that brings
 * max|aᵢⱼ| to 1. The chosen value is the operator's `scale`; whoever uses the operator must
 * divide by it (Df64VectorSpace.polish passes it to eigsMixed, which scales the problem).
 */
export interface Df64OperatorOptions {
  readonly scale?: number | 'auto';
}

/** The scale to build at: the given power of two, or for 'auto' 1 unless the unscaled values lose (one extra scan then). */
function buildScale(values: ArrayLike<number>, scale: Df64OperatorOptions['scale'], where: string): number {
  if (scale === 'auto') {
    const r = addValueRange(emptyValueRange(), values);
    return df64FlushLoss(r) === undefined ? 1 : df64ScaleFor(r.maxAbs);
  }
  const s = scale ?? 1;
  if (!(s >= 1 && s <= 2 ** 126 && 2 ** Math.round(Math.log2(s)) === s)) throw new InvalidParameterError(`${where} scale`, "a power of two in [1, 2^126], or 'auto'", scale);
  return s;
}

/** Throw InvalidMatrixError when values summarised by `r` would lose accuracy under a flush (df64/flush.ts). */
function refuseFlushLoss(r: Df64ValueRange, where: string): void {
  const loss = df64FlushLoss(r);
  if (loss === undefined) return;
  const how = r.scale === 1 ? "build the operator with { scale: 'auto' } (it then multiplies by 2^s·A and says 2^s in .scale; Df64VectorSpace.polish hands it to eigsMixed, which scales the problem to match)" : 'no power-of-two scale helps these values';
  throw new InvalidMatrixError(where, `${loss}; ${how}, or use float64 on the host`);
}

/** A float32 GPU operator as {@link Df64CsrOperator.fromGpuOperator} reads it. */
export type SharedCsrOperator = { readonly kernel: { readonly format: string }; readonly handle: unknown; readonly rows: number; readonly cols: number };

/** The CSR device blocks of `op` when they cover `a`'s rows and non-zeros in order, else undefined. */
function sharedParts(op: SharedCsrOperator, a: CsrMatrix): readonly CsrDeviceBlock[] | undefined {
  const parts = (op.handle as { parts?: readonly CsrDeviceBlock[] }).parts;
  if (op.kernel.format !== 'csr' || !parts || parts.length === 0 || op.rows !== a.rows || op.cols !== a.cols) return undefined;
  let row = 0;
  let k = 0;
  for (const p of parts) {
    if (p.rowStart !== (p.cont ? row - 1 : row) || p.k0 !== k) return undefined;
    row = p.rowStart + p.rows;
    k = p.k1;
  }
  return row === a.rows && k === a.rowPtr[a.rows] ? parts : undefined;
}

/** scale·A's diagonal in float64 (exact: scale is a power of two). */
function scaledDiagonal(a: CsrMatrix, scale: number): Float64Array {
  const d = csrDiagonal(a);
  if (scale !== 1) for (let i = 0; i < d.length; i++) d[i] = d[i]! * scale;
  return d;
}

/** df64 y = α·A·x + β·y over row blocks (see the module comment). */
export class Df64CsrOperator implements LinearOperator<Df64Vector> {
  readonly label: string;
  /** Device bytes this operator uploaded (shared arrays not counted). */
  readonly deviceBytes: number;
  /** The main diagonal in float64 (present when known: built from a host CSR, or given). */
  readonly diagonal?: () => Float64Array;
  /** Host milliseconds of the lo build when built in slices ({@link fromGpuOperatorSliced}). */
  build?: LowPartStats;
  /** The power of two this operator multiplies A by (1 unless built with a scale: {@link Df64OperatorOptions}). */
  readonly scale: number;

  /**
   * An operator over `blocks` (covering rows [0, rows) in order). `owned` are the buffers that
   * `dispose` returns (the lo arrays, and everything when uploaded by {@link fromCsr}).
   */
  constructor(
    readonly d: Df64Blas,
    readonly rows: number,
    readonly cols: number,
    readonly blocks: readonly Df64CsrBlock[],
    private readonly owned: readonly GpuBuf[],
    diagonal?: Float64Array,
    scale = 1,
  ) {
    this.scale = scale;
    if (diagonal) {
      if (diagonal.length !== Math.min(rows, cols)) throw new DimensionMismatchError('Df64CsrOperator diagonal', Math.min(rows, cols), diagonal.length);
      this.diagonal = () => diagonal;
    }
    const limit = d.ctx.limits.maxStorageBufferBindingSize;
    if (8 * Math.max(rows, cols) > limit) {
      throw new ResourceLimitError('df64 vector (8 bytes per row)', 8 * Math.max(rows, cols), limit, 'the df64 product binds x and y whole; polish on the host (CPU backend)');
    }
    this.deviceBytes = owned.reduce((s, b) => s + b.bytes, 0);
    const lo = blocks.filter((b) => b.lo).length;
    this.label = `df64-csr(${blocks.length} block${blocks.length === 1 ? '' : 's'}, lo in ${lo}${scale === 1 ? '' : `, ×2^${Math.log2(scale)}`})`;
  }

  /**
   * Upload `a` (validated) in blocks of at most one binding: 4·(rows + blocks) + 8·nnz bytes,
   * + 4 per non-zero of the blocks that need lo. O(rows + nnz) host work.
   * @throws InvalidMatrixError when A's values would lose accuracy where float32 subnormals are flushed (A·1e-30; opts.scale 'auto' builds 2^s·A instead)
   */
  static fromCsr(d: Df64Blas, a: CsrMatrix, opts: { maxBindingBytes?: number } & Df64OperatorOptions = {}): Df64CsrOperator {
    validateCsrIndices(a, 'Df64CsrOperator');
    const scale = buildScale(a.values, opts.scale, 'Df64CsrOperator.fromCsr');
    refuseFlushLoss(addValueRange(emptyValueRange(scale), a.values), 'Df64CsrOperator.fromCsr'); // before any upload
    const ctx = d.ctx;
    const cap = Math.floor(Math.min(opts.maxBindingBytes ?? Number.POSITIVE_INFINITY, ctx.limits.maxStorageBufferBindingSize) / 4);
    const blocks: Df64CsrBlock[] = [];
    const owned: GpuBuf[] = [];
    for (const p of splitCsrPlan(a, cap, cap - 1)) {
      const local = new Uint32Array(p.rows + 1);
      for (let i = 0; i <= p.rows; i++) local[i] = Math.min(Math.max(a.rowPtr[p.rowStart + i]!, p.k0), p.k1) - p.k0;
      const lo = lowParts(a.values, p.k0, p.k1, emptyValueRange(scale));
      const b: Df64CsrBlock = {
        rowStart: p.rowStart,
        rows: p.rows,
        cont: p.cont,
        nnz: p.k1 - p.k0,
        rowPtr: uploadU32(ctx, local, 'df64-op-rowptr'),
        colIdx: uploadU32(ctx, a.colIdx.subarray(p.k0, p.k1), 'df64-op-col'),
        hi: uploadF32(ctx, p.k1 > p.k0 ? Float32Array.from(a.values.subarray(p.k0, p.k1)) : new Float32Array(1), 'df64-op-hi'),
        lo: lo ? uploadF32(ctx, lo, 'df64-op-lo') : undefined,
      };
      blocks.push(b);
      owned.push(b.rowPtr, b.colIdx, b.hi, ...(b.lo ? [b.lo] : []));
    }
    return new Df64CsrOperator(d, a.rows, a.cols, blocks, owned, scaledDiagonal(a, scale), scale);
  }

  /**
   * Share the arrays of float32 CSR device blocks (global `rowStart`s) and add lo arrays:
   * `lo[i]` for block i (undefined where its values are exact in f32). The lo buffers become
   * this operator's; the shared ones stay with their owner. `range` summarises the values the
   * lo parts were made from (lowParts adds to it; unscaled).
   * @throws InvalidMatrixError when those values would lose accuracy where float32 subnormals are flushed (the lo buffers are then released)
   */
  static fromDeviceBlocks(d: Df64Blas, rows: number, cols: number, parts: readonly CsrDeviceBlock[], lo: readonly (GpuBuf | undefined)[], range: Df64ValueRange): Df64CsrOperator {
    if (lo.length !== parts.length) throw new DimensionMismatchError('Df64CsrOperator lo arrays', parts.length, lo.length);
    if (range.scale !== 1) throw new InvalidParameterError('Df64CsrOperator.fromDeviceBlocks range.scale', '1 (lo parts of the unscaled values)', range.scale);
    try {
      refuseFlushLoss(range, 'Df64CsrOperator.fromDeviceBlocks');
    } catch (e) {
      for (const b of lo) b?.dispose();
      throw e;
    }
    const blocks = parts.map((p, i) => ({ rowStart: p.rowStart, rows: p.rows, cont: p.cont, nnz: p.k1 - p.k0, rowPtr: p.rowPtr, colIdx: p.colIdx, hi: p.values, lo: lo[i] }));
    return new Df64CsrOperator(d, rows, cols, blocks, lo.filter((b): b is GpuBuf => b !== undefined));
  }

  /**
   * Share the float32 upload of a CSR-family GPU operator (`csr-scalar`, `csr-vector`,
   * `csr-adaptive`, … built from `a`) and add only lo arrays where its values are not exact in
   * f32: 0 device bytes per non-zero for integer-valued or f32-exact matrices (Hubbard), 4
   * otherwise, instead of 8–12 for {@link fromCsr}'s own copy. Undefined when `op` holds another
   * format or its blocks do not cover `a` (then use fromCsr). O(nnz) host work for the lo scan.
   * @throws InvalidMatrixError as {@link fromCsr}
   * @example const dop = Df64CsrOperator.fromGpuOperator(df64.d, gpuOp, a) ?? Df64CsrOperator.fromCsr(df64.d, a);
   */
  static fromGpuOperator(d: Df64Blas, op: SharedCsrOperator, a: CsrMatrix, opts: Df64OperatorOptions = {}): Df64CsrOperator | undefined {
    const parts = sharedParts(op, a);
    if (!parts) return undefined;
    const scale = buildScale(a.values, opts.scale, 'Df64CsrOperator.fromGpuOperator');
    const range = emptyValueRange(scale);
    const host = parts.map((p) => lowParts(a.values, p.k0, p.k1, range));
    refuseFlushLoss(range, 'Df64CsrOperator.fromGpuOperator'); // before any upload
    const lo = host.map((l) => (l ? uploadF32(d.ctx, l, 'df64-op-lo') : undefined));
    return Df64CsrOperator.overParts(d, a, parts, lo, scale);
  }

  /**
   * {@link fromGpuOperator} built in slices (low-parts.ts): the lo scan writes each slice of
   * 2^20 values to the device and yields to the event loop before the next, so that it runs
   * while a float32 solve awaits its readbacks; host memory one slice instead of a lo array.
   * The operator's `build` says the host milliseconds it took. Resolves undefined where
   * fromGpuOperator would return undefined.
   * @throws InvalidMatrixError as {@link fromCsr} (after the scan: the lo buffers are released)
   * @example const pending = Df64CsrOperator.fromGpuOperatorSliced(d, gpuOp, a); await davidson(...); const dop = await pending;
   */
  static async fromGpuOperatorSliced(d: Df64Blas, op: SharedCsrOperator, a: CsrMatrix, o: { slice?: number } & Df64OperatorOptions = {}): Promise<Df64CsrOperator | undefined> {
    const parts = sharedParts(op, a);
    if (!parts) return undefined;
    const scale = buildScale(a.values, o.scale, 'Df64CsrOperator.fromGpuOperatorSliced');
    const range = emptyValueRange(scale);
    const stats: LowPartStats = { scanMs: 0, uploadMs: 0, slices: 0, yields: 0 };
    const lo: (GpuBuf | undefined)[] = [];
    try {
      for (const [i, p] of parts.entries()) lo.push(await uploadLowParts(d.ctx, a.values, p.k0, p.k1, stats, { yieldBetween: true, yieldFirst: i > 0, range, ...(o.slice === undefined ? {} : { slice: o.slice }) }));
      refuseFlushLoss(range, 'Df64CsrOperator.fromGpuOperatorSliced');
    } catch (e) {
      for (const b of lo) b?.dispose();
      throw e;
    }
    const dop = Df64CsrOperator.overParts(d, a, parts, lo, scale);
    dop.build = stats;
    try {
      // the lo uploads' out-of-memory belongs to this call (one round trip), not to the first product
      await d.ctx.settle();
      d.ctx.check();
    } catch (e) {
      dop.dispose();
      throw e;
    }
    return dop;
  }

  private static overParts(d: Df64Blas, a: CsrMatrix, parts: readonly CsrDeviceBlock[], lo: readonly (GpuBuf | undefined)[], scale: number): Df64CsrOperator {
    const blocks = parts.map((p, i) => ({ rowStart: p.rowStart, rows: p.rows, cont: p.cont, nnz: p.k1 - p.k0, rowPtr: p.rowPtr, colIdx: p.colIdx, hi: p.values, lo: lo[i] }));
    return new Df64CsrOperator(d, a.rows, a.cols, blocks, lo.filter((b): b is GpuBuf => b !== undefined), scaledDiagonal(a, scale), scale);
  }

  /**
   * The product pipelines an operator of `rows` rows and `nnz` non-zeros will most likely use
   * (lanes from the mean row length, with and without lo), for PipelineCache.prewarm before
   * the operator exists. Blocks whose own mean row length differs compile on first use.
   */
  static prewarmSpecs(d: Df64Blas, rows: number, nnz: number): PipelineSpec[] {
    const lanes = residualLanes(rows, nnz);
    return [true, false].map((lo) => productSpec(d, lanes, lo));
  }

  apply(x: Df64Vector, y: Df64Vector): void {
    this.applyScaled(1, x, 0, y);
  }

  /** y = alpha·(scale·A)·x + beta·y in df64 (beta = 0 ignores y's old content); x and y distinct. */
  applyScaled(alpha: number, x: Df64Vector, beta: number, y: Df64Vector): void {
    if (x.n !== this.cols) throw new DimensionMismatchError('df64 product x', this.cols, x.n);
    if (y.n !== this.rows) throw new DimensionMismatchError('df64 product y', this.rows, y.n);
    if (x.buf.id === y.buf.id) throw new GpuSparseError('df64 product: expected y distinct from x, got an alias');
    const ah = Math.fround(alpha);
    const bh = Math.fround(beta);
    for (const b of this.blocks) {
      const lanes = residualLanes(b.rows, b.nnz);
      const p = this.d.ctx.pipelines.get(productSpec(this.d, lanes, b.lo !== undefined, this.scale !== 1));
      const u = new Uniforms();
      u.u[0] = b.rows;
      u.u[2] = b.rowStart;
      u.u[3] = beta === 0 ? 1 : 0;
      u.u[4] = b.cont ? 1 : 0;
      u.f[5] = ah;
      u.f[6] = Math.fround(alpha - ah);
      u.f[7] = bh;
      u.f[8] = Math.fround(beta - bh);
      u.f[9] = this.scale;
      this.d.ctx.recorder.dispatch(p, [b.rowPtr, b.colIdx, b.hi, b.lo ?? b.hi, x.buf, y.buf], u, Math.ceil(b.rows / (DF_WG / lanes)));
    }
  }

  /** Return the buffers this operator uploaded. */
  dispose(): void {
    for (const b of this.owned) b.dispose();
  }
}
