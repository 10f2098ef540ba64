/**
 * What the trials share: the host conversions of one tuning run (one per layout, timed once,
 * shared by candidates of the same format parameters) and the device vectors x and y.
 * @module
 */
import { type CsrMatrix, getFormat, mulberry32, type SparseMatrix } from '@gpusparse/formats';
import type { GpuContext } from '../device/context';
import type { GpuBuf } from '../memory/buffers';
import { uploadF32 } from '../memory/upload';
import type { Candidate } from './candidates';

/** A converted matrix and what its conversion cost. */
export interface Converted {
  readonly m: SparseMatrix | CsrMatrix;
  /** Host conversion time (ms) the first time this layout was built; 0 for CSR. */
  readonly ms: number;
  /** True when this call did the conversion (false: shared with an earlier candidate). */
  readonly fresh: boolean;
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

  /** The converted matrix of candidate `c` and the measured conversion ms (0 for CSR). Throws the format's error. */
  get(c: Candidate): Converted {
    const held = this.held.get(c.conversionKey);
    if (held) return { ...held, fresh: false };
    if (c.kernel.format === 'csr') return { m: this.a, ms: 0, fresh: false, hostBytes: 0 };
    const t0 = performance.now();
    const m = getFormat(c.kernel.format).fromCsr(this.a, c.kernel.formatParams?.(c.params));
    const ms = performance.now() - t0;
    const first = this.times.get(c.conversionKey);
    if (first === undefined) this.times.set(c.conversionKey, ms);
    const out = { m, ms: first ?? ms, fresh: first === undefined, hostBytes: hostBytesOf(m) };
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

/** Device vectors x (float32-representable values) and y of one tuning run. */
export interface TuneVectors {
  readonly x: Float64Array;
  readonly dx: GpuBuf;
  readonly dy: GpuBuf;
}

/** Deterministic x in [-1, 1), float32-representable (mulberry32). O(n). */
export function tuneVector(n: number, seed = 12345): Float64Array {
  const r = mulberry32(seed);
  const x = new Float64Array(n);
  for (let i = 0; i < n; i++) x[i] = Math.fround(r() * 2 - 1);
  return x;
}

/** Upload x and allocate y for a rows × cols matrix. Cost: one transfer of x. */
export function tuneVectors(ctx: GpuContext, rows: number, cols: number): TuneVectors {
  const x = tuneVector(cols);
  return { x, dx: uploadF32(ctx, x, 'tune-x'), dy: ctx.buffers.acquire(Math.max(1, rows) * 4, undefined, 'tune-y') };
}
