/**
 * A matrix in HM or CDM diagonal storage (seed 002 §3) held on the device, its diagonals split
 * over several buffers where one binding cannot hold them all.
 *
 * The host keeps only the structure — one entry per diagonal: its offset (HM: j − i in HM order;
 * CDM: compact index k ascending), its length, the buffer it lives in and its first element
 * there. That is O(number of diagonals) host memory whatever n is; the values (float32) live in
 * `buffers`, each at most the split limit (by default the device's maxStorageBufferBindingSize,
 * so every buffer binds whole). Diagonals are packed in storage order, a new buffer opened when
 * the next diagonal would pass the limit; a single diagonal longer than the limit is refused
 * (ResourceLimitError), as one diagonal must be readable through one binding.
 *
 * Inside buffer `chunk[d]`, element p of diagonal d is at `start[d] + p` where p is the paper's
 * index: HM min(i, j), CDM the row t.
 * @module
 */
import { type CdmMatrix, diagonalLength, type HmMatrix, InvalidParameterError, ResourceLimitError } from '@gpusparse/formats';
import type { GpuContext } from '../device/context';
import type { GpuBuf } from '../memory/buffers';
import { readRanges } from '../memory/readback';
import { writeData } from '../memory/upload';

/** The structure of a diagonal matrix on the device (host side, O(diagonals)). */
export interface DiagonalLayout {
  readonly format: 'hm' | 'cdm';
  readonly rows: number;
  readonly cols: number;
  /** HM: j − i in HM order (0, +1, …, −1, −2, …); CDM: compact indices ascending. */
  readonly offsets: Int32Array;
  /** Elements of each diagonal (HM: the in-matrix length; CDM: n). */
  readonly lengths: Int32Array;
  /** Buffer index of each diagonal. */
  readonly chunk: Int32Array;
  /** First element of each diagonal inside its buffer. */
  readonly start: Int32Array;
  /** Elements held by each buffer. */
  readonly chunkElems: readonly number[];
}

/** A diagonal matrix whose float32 values are on the device. */
export interface DeviceDiagonalMatrix extends DiagonalLayout {
  readonly buffers: readonly GpuBuf[];
  /** Return every buffer to the context's pool. */
  dispose(): void;
}

/** Options that fix how diagonals are split over buffers. */
export interface SplitOptions {
  /**
   * Most bytes per buffer (rounded down to 4). Default: the context's maxStorageBufferBindingSize.
   * Lower it to exercise the split on small matrices (tests) — never above the device limit.
   */
  readonly splitBytes?: number;
}

/** Elements per buffer for `opts` on `ctx`; throws InvalidParameterError on a bad value. O(1). */
export function splitElems(ctx: GpuContext, opts: SplitOptions = {}): number {
  const lim = ctx.limits.maxStorageBufferBindingSize;
  const want = opts.splitBytes ?? lim;
  if (!(Number.isFinite(want) && want >= 16)) throw new InvalidParameterError('splitBytes', 'a number of bytes ≥ 16', want);
  return Math.floor(Math.min(want, lim) / 4);
}

/**
 * Pack diagonals of the given lengths, in order, into buffers of at most `limit` elements.
 * Throws ResourceLimitError naming the diagonal when one alone is longer than `limit`. O(dg).
 * @example diagonalLayout('hm', 4, 4, Int32Array.of(0, 1), Int32Array.of(4, 3), 5) // chunks [0, 1]
 */
export function diagonalLayout(format: 'hm' | 'cdm', rows: number, cols: number, offsets: Int32Array, lengths: Int32Array, limit: number): DiagonalLayout {
  const chunk = new Int32Array(offsets.length);
  const start = new Int32Array(offsets.length);
  const chunkElems: number[] = [];
  let used = limit + 1; // forces a first buffer
  for (let d = 0; d < offsets.length; d++) {
    const len = lengths[d]!;
    if (len > limit) {
      throw new ResourceLimitError(`${format.toUpperCase()} diagonal ${offsets[d]} (${len} float32 values)`, 4 * len, 4 * limit, 'one diagonal must fit one storage binding: raise splitBytes to the device limit or use a smaller matrix');
    }
    if (used + len > limit || chunkElems.length === 0) {
      chunkElems.push(0);
      used = 0;
    }
    chunk[d] = chunkElems.length - 1;
    start[d] = used;
    used += len;
    chunkElems[chunkElems.length - 1] = used;
  }
  return { format, rows, cols, offsets, lengths, chunk, start, chunkElems };
}

/** The layout of a host HM matrix split at `limit` elements. O(dg). */
export function hmLayout(m: HmMatrix, limit: number): DiagonalLayout {
  const lengths = Int32Array.from(m.offsets, (k) => diagonalLength(m.rows, m.cols, k));
  return diagonalLayout('hm', m.rows, m.cols, Int32Array.from(m.offsets), lengths, limit);
}

/** The layout of a host CDM matrix split at `limit` elements. O(dg). */
export function cdmLayout(m: CdmMatrix, limit: number): DiagonalLayout {
  return diagonalLayout('cdm', m.rows, m.cols, Int32Array.from(m.offsets), new Int32Array(m.numDiagonals).fill(m.rows), limit);
}

/**
 * Allocate device buffers for `layout` (contents undefined) and wrap them. O(buffers).
 * @example const c = allocateDiagonal(ctx, layout);
 */
export function allocateDiagonal(ctx: GpuContext, layout: DiagonalLayout, label = 'diag'): DeviceDiagonalMatrix {
  const buffers = layout.chunkElems.map((e, q) => ctx.buffers.acquire(Math.max(1, e) * 4, undefined, `${label}-${q}`));
  return { ...layout, buffers, dispose: () => {
      for (const b of buffers) b.dispose();
    } };
}

/**
 * Fill a device diagonal matrix buffer by buffer: `fill(d, out)` writes diagonal d's values
 * (float32) into `out`. One host staging array per buffer, never the whole matrix. O(values).
 * @example fillDiagonal(ctx, m, (d, out) => out.set(valuesOf(d)));
 */
export function fillDiagonal(ctx: GpuContext, m: DeviceDiagonalMatrix, fill: (d: number, out: Float32Array) => void): void {
  for (let q = 0; q < m.buffers.length; q++) {
    const stage = new Float32Array(m.chunkElems[q]!);
    for (let d = 0; d < m.offsets.length; d++) {
      if (m.chunk[d] !== q) continue;
      fill(d, stage.subarray(m.start[d]!, m.start[d]! + m.lengths[d]!));
    }
    writeData(ctx, m.buffers[q]!, stage);
  }
}

/**
 * Upload a host HM or CDM matrix (values rounded to float32), split per `opts`.
 * Cost: O(stored slots) host conversion plus the transfer.
 * @example const da = uploadDiagonal(ctx, hmFromCsr(a));
 */
export function uploadDiagonal(ctx: GpuContext, m: HmMatrix | CdmMatrix, opts: SplitOptions = {}): DeviceDiagonalMatrix {
  const limit = splitElems(ctx, opts);
  const layout = m.format === 'hm' ? hmLayout(m, limit) : cdmLayout(m, limit);
  const dm = allocateDiagonal(ctx, layout, `${m.format}-upload`);
  const first = (d: number): number => (m.format === 'hm' ? m.starts[d]! : d * m.rows);
  fillDiagonal(ctx, dm, (d, out) => out.set(m.values.subarray(first(d), first(d) + out.length)));
  return dm;
}

/**
 * Read every buffer back (one readback per buffer, so the host never holds two staging copies
 * of a large C). Returns one Float32Array per buffer. O(values) transfer.
 * @example const parts = await readDiagonal(ctx, c); parts[c.chunk[d]][c.start[d] + p]
 */
export async function readDiagonal(ctx: GpuContext, m: DeviceDiagonalMatrix): Promise<Float32Array[]> {
  const out: Float32Array[] = [];
  for (let q = 0; q < m.buffers.length; q++) {
    const [b] = await readRanges(ctx, [{ buf: m.buffers[q]!, offset: 0, bytes: m.chunkElems[q]! * 4 }]);
    out.push(new Float32Array(b!));
  }
  return out;
}
