/**
 * What the trials share: the conversions of one tuning run (one per layout, timed once, shared
 * by candidates of the same format parameters) and the device vectors x and y. The DIA
 * candidates (`dia`, `dia-tiled`) convert on the device from the CSR arrays the run uploaded
 * once (`kernels/dia/dia-build.ts`): no host pass over the non-zeros, no transfer of the padded
 * slots, and the conversion time reported is the device build's; so do `ell` and `ell-r`
 * (`kernels/ell/ell-build.ts`) when its slots fit one binding; the other formats convert on the
 * host.
 * @module
 */
import { type CsrMatrix, getFormat, mulberry32, type SparseMatrix } from '@gpusparse/formats';
import type { GpuContext, GpuLimits } from '../device/context';
import type { SharedCsrUpload } from '../kernels/csr/csr-device';
import { DEVICE_DIA_KERNELS, type DeviceDiaMatrix, deviceDiaApplies, deviceDiaFromCsr, isDeviceDia } from '../kernels/dia/dia-build';
import { diagonalCountFits } from '../kernels/dia/diagonal-device';
import { buildEllOnDevice, DEVICE_ELL_KERNELS, type DeviceEllMatrix, deviceEllApplies, isDeviceEll } from '../kernels/ell/ell-build';
import { bindingCapElems } from '../kernels/ell/ell-device';
import { supportsCsr } from '../kernels/types';
import type { GpuBuf } from '../memory/buffers';
import { uploadF32 } from '../memory/upload';
import type { Candidate } from './candidates';

/** A converted matrix and what its conversion cost. */
export interface Converted {
  readonly m: SparseMatrix | CsrMatrix | DeviceDiaMatrix | DeviceEllMatrix;
  /** Conversion time (ms) the first time this layout was built; 0 for CSR. */
  readonly ms: number;
  /** True when this call did the conversion (false: shared with an earlier candidate). */
  readonly fresh: boolean;
  readonly hostBytes: number;
  /** Where the conversion ran ('none' for CSR). */
  readonly where: 'host' | 'device' | 'none';
}

/** What the device conversions need: the context, the run's CSR arrays and, when known, the occupied diagonal offsets (ascending). */
export interface DeviceConversion {
  readonly ctx: GpuContext;
  readonly shared: SharedCsrUpload;
  readonly offsets?: Int32Array;
}


/**
 * Device conversion time per converted byte before one is measured, as a multiple of the
 * first product's time per byte it streamed: the build clears the padded values and scatters
 * into them (two passes over the layout), reads the CSR arrays and looks every entry's diagonal
 * up — about the traffic of three products over the same bytes, with a scatter's writes.
 */
const DEVICE_BUILD_PRODUCTS = 3;
/** Fixed cost (ms) of a device build besides its traffic: a few dispatches, a wait, the pipelines when not compiled yet. */
const DEVICE_BUILD_FIXED_MS = 20;

const hostBytesOf = (m: object): number => {
  let b = 0;
  for (const v of Object.values(m)) if (ArrayBuffer.isView(v)) b += v.byteLength;
  return b;
};

/** Bytes a converted layout holds (host arrays, or the device values of a device build). */
const heldBytes = (m: Converted['m']): number => (isDeviceEll(m) ? 8 * m.rows * m.width + (m.format === 'ell-r' ? 4 * m.rows : 0) : isDeviceDia(m) ? 4 * m.rows * m.offsets.length : hostBytesOf(m));

/**
 * Conversions of one tuning run, shared between candidates of the same format parameters; the
 * oldest are dropped past `capBytes` (their measured time is kept). With `device`, the DIA
 * candidates convert on the device (`DEVICE_DIA_KERNELS`).
 */
export class ConversionCache {
  private readonly held = new Map<string, Converted>();
  private readonly times = new Map<string, number>();
  private bytes = 0;
  /** Measured device build ms per converted byte (0 until one is measured). */
  private deviceMsPerByte = 0;
  /** Whether ELL / ELL-R build on the device in this run (an O(rows) check, made once). */
  private ellOnDevice?: boolean;
  /** Formats converted on the host in this run (their rate is measured). */
  private readonly hostFormats = new Set<string>();

  constructor(
    private readonly a: CsrMatrix,
    private readonly capBytes: number,
    private readonly device?: DeviceConversion,
  ) {}

  /** Whether candidate `c` converts on the device in this run. O(1). */
  onDevice(c: Candidate): boolean {
    if (this.device === undefined) return false;
    if (DEVICE_ELL_KERNELS.has(c.kernel.id)) return (this.ellOnDevice ??= deviceEllApplies(this.device.shared, this.a, bindingCapElems(this.device.ctx)) === true);
    return DEVICE_DIA_KERNELS.has(c.kernel.id) && deviceDiaApplies(this.device.ctx, this.a) === true;
  }

  /**
   * `supportsCsr` of candidate `c` for this run's matrix; for a device-built DIA candidate whose
   * offsets the run's statistics already counted, the count is checked in O(1) instead of the
   * kernels' host pass over every column (≈ 0.1–0.2 s at 4.6·10^7 non-zeros).
   */
  precheck(c: Candidate, limits: GpuLimits): true | string {
    const offsets = this.device?.offsets;
    if (!offsets || !this.onDevice(c)) return supportsCsr(c.kernel, this.a, limits, c.params);
    const shape = supportsCsr({ ...c.kernel, precheck: undefined }, this.a, limits, c.params);
    const max = { ...c.kernel.defaults, ...c.params }.maxDiagonals ?? Number.POSITIVE_INFINITY;
    return shape === true ? diagonalCountFits(offsets.length, max, c.kernel.format) : shape;
  }

  /**
   * Estimated conversion ms of candidate `c`: a device build at the measured device rate, or
   * before one is measured `DEVICE_BUILD_PRODUCTS` products' worth of its bytes at the
   * first product's rate (`productMs` for `productBytes`) plus `DEVICE_BUILD_FIXED_MS`;
   * a host conversion at `hostMsPerByte`. O(1).
   */
  estimateMs(c: Candidate, hostMsPerByte: number, productMs?: number, productBytes?: number): number {
    if (!this.onDevice(c)) return c.estimatedBytes * hostMsPerByte;
    if (this.deviceMsPerByte > 0) return c.estimatedBytes * this.deviceMsPerByte;
    const rate = productMs !== undefined && productBytes ? productMs / productBytes : hostMsPerByte;
    return DEVICE_BUILD_FIXED_MS + DEVICE_BUILD_PRODUCTS * c.estimatedBytes * rate;
  }

  /** Whether a conversion to `format` already ran on the host in this run. O(1). */
  hostFormatSeen(format: string): boolean {
    return this.hostFormats.has(format);
  }

  /** The converted matrix of candidate `c` and the measured conversion ms (0 for CSR). Throws the format's error. */
  async get(c: Candidate): Promise<Converted> {
    const held = this.held.get(c.conversionKey);
    if (held) return { ...held, fresh: false };
    if (c.kernel.format === 'csr') return { m: this.a, ms: 0, fresh: false, hostBytes: 0, where: 'none' };
    const params = c.kernel.formatParams?.(c.params);
    const t0 = performance.now();
    const onDevice = this.onDevice(c);
    const m = !onDevice ? getFormat(c.kernel.format).fromCsr(this.a, params) : DEVICE_ELL_KERNELS.has(c.kernel.id) ? await this.buildEll(c.kernel.id as 'ell' | 'ell-r') : await this.build(params?.maxDiagonals as number | undefined);
    const ms = performance.now() - t0;
    if (!onDevice) this.hostFormats.add(c.kernel.format);
    const first = this.times.get(c.conversionKey);
    if (first === undefined) this.times.set(c.conversionKey, ms);
    if (onDevice && first === undefined && c.estimatedBytes > 0) this.deviceMsPerByte = Math.max(this.deviceMsPerByte, ms / c.estimatedBytes);
    const out: Converted = { m, ms: first ?? ms, fresh: first === undefined, hostBytes: heldBytes(m), where: onDevice ? 'device' : 'host' };
    this.held.set(c.conversionKey, out);
    this.bytes += out.hostBytes;
    for (const [key, v] of this.held) {
      if (this.bytes <= this.capBytes || key === c.conversionKey) continue;
      this.drop(key, v);
    }
    return out;
  }

  /** The DIA layout of the run's CSR arrays, built on the device and waited for (so that its time is the build's). */
  private async build(maxDiagonals: number | undefined): Promise<DeviceDiaMatrix> {
    const { ctx, shared, offsets } = this.device!;
    const m = await deviceDiaFromCsr(ctx, shared, { offsets, maxDiagonals });
    try {
      // the whole-matrix layout both DIA kernels take (one piece when it fits a binding)
      m.layout(bindingCapElems(ctx), Number.POSITIVE_INFINITY).release();
      await ctx.finish();
    } catch (e) {
      m.release();
      throw e;
    }
    return m;
  }

  /** The ELL slots of the run's CSR arrays, built on the device and waited for (so that its time is the build's). */
  private async buildEll(format: 'ell' | 'ell-r'): Promise<DeviceEllMatrix> {
    const { ctx, shared } = this.device!;
    const m = buildEllOnDevice(ctx, shared, this.a, format);
    try {
      await ctx.finish();
    } catch (e) {
      m.release();
      throw e;
    }
    return m;
  }

  private drop(key: string, v: Converted): void {
    this.held.delete(key);
    this.bytes -= v.hostBytes;
    if (isDeviceEll(v.m) || isDeviceDia(v.m)) v.m.release(); // uploads taken from it keep their own hold
  }

  /** Drop every held conversion (device builds released: the handles taken from them keep theirs). */
  clear(): void {
    for (const [key, v] of [...this.held]) this.drop(key, v);
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
