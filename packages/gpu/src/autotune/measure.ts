/**
 * Measuring one candidate: host conversion (shared by candidates with the same format
 * parameters, timed once), upload (pipeline compilation included, timed to the queue's
 * completion), the product time (median of repetitions with {@link timeGpu}), and the
 * verification of a winner against the float64 CSR product with the per-row bound.
 * @module
 */
import { type CsrMatrix, csrSpmv, getFormat, type SparseMatrix } from '@gpusparse/formats';
import type { GpuContext } from '../device/context';
import type { GpuBuf } from '../memory/buffers';
import { readF32 } from '../memory/readback';
import { uploadF32 } from '../memory/upload';
import { timeGpu } from '../timing/index';
import type { DeviceMatrix } from '../kernels/types';
import type { Candidate } from './candidates';

/** A converted matrix and what its conversion cost. */
export interface Converted {
  readonly m: SparseMatrix | CsrMatrix;
  readonly ms: number;
  readonly hostBytes: number;
}

const hostBytesOf = (m: object): number => {
  let b = 0;
  for (const v of Object.values(m)) if (ArrayBuffer.isView(v)) b += v.byteLength;
  return b;
};

/**
 * Host conversions of one tuning run, shared between candidates of the same format parameters;
 * the oldest are dropped past `capBytes` (their measured time is kept).
 */
export class ConversionCache {
  private readonly held = new Map<string, Converted>();
  private readonly times = new Map<string, number>();
  private bytes = 0;

  constructor(
    private readonly a: CsrMatrix,
    private readonly capBytes: number,
  ) {}

  /** The converted matrix of candidate `c` and the measured conversion ms (0 for CSR). */
  get(c: Candidate): Converted {
    const held = this.held.get(c.conversionKey);
    if (held) return held;
    const t0 = performance.now();
    const m = c.kernel.format === 'csr' ? this.a : getFormat(c.kernel.format).fromCsr(this.a, c.kernel.formatParams?.(c.params));
    const ms = c.kernel.format === 'csr' ? 0 : performance.now() - t0;
    const first = this.times.get(c.conversionKey);
    if (first === undefined) this.times.set(c.conversionKey, ms);
    const out = { m, ms: first ?? ms, hostBytes: c.kernel.format === 'csr' ? 0 : hostBytesOf(m) };
    this.held.set(c.conversionKey, out);
    this.bytes += out.hostBytes;
    for (const [key, v] of this.held) {
      if (this.bytes <= this.capBytes || key === c.conversionKey) continue;
      this.held.delete(key);
      this.bytes -= v.hostBytes;
    }
    return out;
  }

  /** Drop every held conversion. */
  clear(): void {
    this.held.clear();
    this.bytes = 0;
  }
}

/** What {@link measureCandidate} measured. */
export interface Measurement {
  readonly conversionMs: number;
  readonly uploadMs: number;
  readonly medianMs: number;
  readonly minMs: number;
  readonly method: 'timestamp' | 'wall';
  readonly storageBytes: number;
  readonly deviceBytes: number;
}

/** Device vectors x (float32-representable values) and y of one tuning run. */
export interface TuneVectors {
  readonly x: Float64Array;
  readonly dx: GpuBuf;
  readonly dy: GpuBuf;
}

/** Deterministic x in [-1, 1), float32-representable (mulberry32). O(n). */
export function tuneVector(n: number, seed = 12345): Float64Array {
  let s = seed >>> 0;
  const x = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = Math.imul(s ^ (s >>> 15), s | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    x[i] = Math.fround((((t ^ (t >>> 14)) >>> 0) / 4294967296) * 2 - 1);
  }
  return x;
}

/** Upload x and allocate y for a rows × cols matrix. Cost: one transfer of x. */
export function tuneVectors(ctx: GpuContext, rows: number, cols: number): TuneVectors {
  const x = tuneVector(cols);
  return { x, dx: uploadF32(ctx, x, 'tune-x'), dy: ctx.buffers.acquire(Math.max(1, rows) * 4, undefined, 'tune-y') };
}

/**
 * Convert, check `supports`, upload and time candidate `c`; the device matrix is returned to
 * the caller (who disposes it). Throws the kernel's refusal or any device error.
 * Cost: one conversion (unless shared), one upload, warmup + reps products.
 */
export async function measureCandidate(
  ctx: GpuContext,
  conv: ConversionCache,
  c: Candidate,
  v: TuneVectors,
  timing: { reps: number; warmup: number },
): Promise<{ meas: Measurement; handle: DeviceMatrix; m: SparseMatrix | CsrMatrix }> {
  const { m, ms: conversionMs } = conv.get(c);
  const ok = c.kernel.supports(m, ctx.limits, c.params);
  if (ok !== true) throw new Error(`unsupported: ${ok}`);
  const fmt = getFormat(c.kernel.format);
  const nnz = (m as { nnz?: number }).nnz ?? (m as CsrMatrix).rowPtr[(m as CsrMatrix).rows]!;
  const storageBytes = fmt.storageBytes(c.kernel.format === 'csr' ? { ...(m as CsrMatrix), nnz } : m, { valueBytes: 4, indexBytes: 4 }).bytes;
  const t0 = performance.now();
  const handle = c.kernel.upload(ctx, m, c.params);
  try {
    await ctx.finish();
    const uploadMs = performance.now() - t0;
    const t = await timeGpu(ctx, () => c.kernel.encode(ctx, handle, v.dx, v.dy), { reps: timing.reps, warmup: timing.warmup });
    return { meas: { conversionMs, uploadMs, medianMs: t.medianMs, minMs: t.minMs, method: t.method, storageBytes, deviceBytes: handle.deviceBytes }, handle, m };
  } catch (e) {
    handle.dispose();
    throw e;
  }
}

/** Result of {@link verifyProduct}. */
export interface Verification {
  readonly ok: boolean;
  /** max over rows of |y − y_ref| / bound (≤ 1 passes). */
  readonly maxErrOverBound: number;
  /** First failing row, if any. */
  readonly row?: number;
}

/**
 * Run the uploaded candidate once on x and compare with the float64 CSR product of the
 * float32-rounded matrix: per row |y − y_ref| ≤ 2 · nnz_row · 2^-24 · Σ|a_ij x_j| plus the
 * kernel's own `errorBound` when it declares one (the conformance tier's rule).
 * Cost: one product, one readback, O(nnz) on the host.
 * @example const v = await verifyProduct(ctx, a, cand, m, handle, vectors); v.ok
 */
export async function verifyProduct(ctx: GpuContext, a: CsrMatrix, c: Candidate, m: SparseMatrix | CsrMatrix, handle: DeviceMatrix, v: TuneVectors): Promise<Verification> {
  const a32 = { ...a, values: Float64Array.from(Float32Array.from(a.values)) };
  const ref = csrSpmv(a32, v.x);
  c.kernel.encode(ctx, handle, v.dx, v.dy, { alpha: 1, beta: 0 });
  const y = await readF32(ctx, v.dy, a.rows);
  const extra = c.kernel.errorBound?.(m, c.params, v.x);
  let worst = 0;
  let row: number | undefined;
  for (let i = 0; i < a.rows; i++) {
    let s = 0;
    for (let k = a.rowPtr[i]!; k < a.rowPtr[i + 1]!; k++) s += Math.abs(a32.values[k]! * v.x[a.colIdx[k]!]!);
    const bound = 2 * (a.rowPtr[i + 1]! - a.rowPtr[i]!) * 2 ** -24 * s + (extra?.[i] ?? 0);
    const e = Math.abs(y[i]! - ref[i]!);
    const r = bound > 0 ? e / bound : e > 0 || Number.isNaN(e) ? Number.POSITIVE_INFINITY : 0;
    if (!(r <= worst)) {
      worst = Number.isNaN(r) ? Number.POSITIVE_INFINITY : r;
      if (!(worst <= 1) && row === undefined) row = i;
    }
  }
  return { ok: worst <= 1, maxErrOverBound: worst, row };
}
