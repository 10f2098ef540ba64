/**
 * Matrix statistics on the device, from the CSR arrays uploaded once for the CSR kernels: the
 * row-length histogram (and from it min, max, mean, standard deviation, percentiles and empty
 * rows — the numbers of `rowLengthStats`), the occupied diagonals and bandwidths, and the
 * padded slots of sliced ELL for given chunk heights. The host never walks the non-zeros: it
 * reads back one histogram (longest row + 1 words), one bitmap ((rows + cols) / 32 words) and
 * two words per chunk height, in two round trips.
 * @module
 */
import type { RowLengthStats } from '@gpusparse/formats';
import type { GpuContext } from '../device/context';
import type { PipelineSpec } from '../device/pipelines';
import type { SharedCsrUpload } from '../kernels/csr/csr-device';
import { signature } from '../kernels/wgsl/index';
import type { GpuBuf } from '../memory/buffers';
import { readRanges } from '../memory/readback';
import { Uniforms } from '../memory/recorder';
import { writeData } from '../memory/upload';
import { CHUNK_BINDINGS, chunksWgsl, HIST_BINDINGS, histWgsl, MAX_SIGMA_WINDOW, SCAN_BINDINGS, STATS_WG, scanWgsl, sigmaWgsl } from './matrix-stats.kernel';

/** Histogram bins at most (longest row + 1); past this the host statistics are used. */
export const MAX_HIST_BINS = 1 << 24;

/** What {@link deviceMatrixStats} returns. */
export interface DeviceMatrixStats {
  /** Equal to `rowLengthStats(a)` (rsd up to float64 summation order). */
  readonly stats: RowLengthStats;
  /** Rows of each length 0 … max. */
  readonly histogram: Uint32Array;
  /** Occupied diagonal offsets j − i, ascending. */
  readonly offsets: Int32Array;
  /** Sliced-ELL slots per chunk height asked for (chunks of C consecutive rows, the last padded to C). */
  readonly sliceSlots: ReadonlyMap<number, number>;
  /** SELL-C-σ slots per `${C}:${σ}` asked for (rows sorted by length inside windows of max(C, σ) rows). */
  readonly sellSlots: ReadonlyMap<string, number>;
}

/** A SELL-C-σ layout whose padding the device sums (σ > C; σ ≤ C sorts nothing inside a chunk). */
export interface SellLayout {
  readonly C: number;
  readonly sigma: number;
}

const isPow2 = (v: number): boolean => v > 0 && (v & (v - 1)) === 0;

type Kind = 'scan' | 'hist' | 'chunks' | 'sigma';
const SOURCES: Record<Kind, { wgsl: () => string; bindings: string }> = {
  scan: { wgsl: scanWgsl, bindings: signature(SCAN_BINDINGS) },
  hist: { wgsl: histWgsl, bindings: signature(HIST_BINDINGS) },
  chunks: { wgsl: chunksWgsl, bindings: signature(CHUNK_BINDINGS) },
  sigma: { wgsl: sigmaWgsl, bindings: signature(CHUNK_BINDINGS) },
};

/** The pipelines of the statistics kernels (for PipelineCache.prewarm: the autotuner compiles them while the host prepares the CSR upload). */
export function deviceStatsSpecs(): PipelineSpec[] {
  return (Object.keys(SOURCES) as Kind[]).map((kind) => statsSpec(kind));
}

function statsSpec(kind: Kind): PipelineSpec {
  const text = SOURCES[kind].wgsl();
  return { key: text, label: `matrix-stats-${kind}`, bindings: SOURCES[kind].bindings, wgsl: () => text };
}

/** Record one stats kernel over every block of the shared upload (`perRow` rows per invocation; `window` for `sigma`). */
function dispatchAll(ctx: GpuContext, kind: Kind, csr: SharedCsrUpload, bufs: (b: SharedCsrUpload['blocks'][number]) => GpuBuf[], param: number, perRow = 1, window = 0): void {
  const pipe = ctx.pipelines.get(statsSpec(kind));
  for (const b of csr.blocks) {
    const u = new Uniforms();
    u.u[0] = b.rows;
    u.u[1] = b.rowStart;
    u.u[2] = csr.source.rows;
    u.u[3] = param;
    u.u[4] = window;
    ctx.recorder.dispatch(pipe, bufs(b), u, Math.ceil(b.rows / perRow / STATS_WG));
  }
}

/** A zeroed device buffer of `words` u32. */
function zeroed(ctx: GpuContext, words: number, label: string): GpuBuf {
  const buf = ctx.buffers.acquire(Math.max(1, words) * 4, undefined, label);
  writeData(ctx, buf, new Uint32Array(Math.max(1, words)));
  return buf;
}

/**
 * Compute the statistics of the matrix held by `csr` on the device. Returns a sentence saying
 * why not instead when the device path does not apply (a row cut over two bindings, or a
 * longest row past {@link MAX_HIST_BINS}). Cost: three passes over the row pointers and one
 * over the columns on the device, two readbacks, O(max row + (rows + cols) / 32) on the host.
 * @example const d = await deviceMatrixStats(ctx, uploadCsrArrays(ctx, a), [8, 32]); d.stats.p50
 */
export async function deviceMatrixStats(ctx: GpuContext, csr: SharedCsrUpload, sliceHeights: readonly number[] = [], sell: readonly SellLayout[] = []): Promise<DeviceMatrixStats | string> {
  const a = csr.source;
  if (csr.blocks.some((b) => b.cont)) return 'a row longer than one storage binding is split over blocks';
  const words = Math.ceil(Math.max(1, a.rows + a.cols - 1) / 32);
  const acc = zeroed(ctx, 4, 'stats-acc');
  const bits = zeroed(ctx, words, 'stats-diagonals');
  const temps: GpuBuf[] = [acc, bits];
  try {
    dispatchAll(ctx, 'scan', csr, (b) => [b.rowPtr, b.colIdx, acc, bits], 0);
    const [head] = await readRanges(ctx, [{ buf: acc, offset: 0, bytes: 4 }]);
    const max = new Uint32Array(head!)[0]!;
    if (max + 1 > MAX_HIST_BINS) return `the longest row (${max}) needs more than ${MAX_HIST_BINS} histogram bins`;
    const hist = zeroed(ctx, max + 1, 'stats-hist');
    temps.push(hist);
    dispatchAll(ctx, 'hist', csr, (b) => [b.rowPtr, hist], max + 1);
    // C · max must fit a u32 per chunk; taller chunks are left to the host estimate
    const heights = [...new Set(sliceHeights)].filter((C) => C >= 1 && C * max < 2 ** 32);
    const sums = heights.map((C) => {
      const s = zeroed(ctx, 2, `stats-chunks-${C}`);
      temps.push(s);
      dispatchAll(ctx, 'chunks', csr, (b) => [b.rowPtr, s], C, C);
      return s;
    });
    const layouts = sell.filter(({ C, sigma }) => sigma > C && isPow2(sigma) && sigma <= MAX_SIGMA_WINDOW && sigma * max < 2 ** 32);
    const sellSums = layouts.map(({ C, sigma }) => {
      const s = zeroed(ctx, 2, `stats-sell-${C}-${sigma}`);
      temps.push(s);
      dispatchAll(ctx, 'sigma', csr, (b) => [b.rowPtr, s], C, sigma / STATS_WG, sigma);
      return s;
    });
    const out = await readRanges(ctx, [{ buf: hist, offset: 0, bytes: 4 * (max + 1) }, { buf: bits, offset: 0, bytes: 4 * words }, ...[...sums, ...sellSums].map((s) => ({ buf: s, offset: 0, bytes: 8 }))]);
    const histogram = new Uint32Array(out[0]!);
    const offsets = bitmapOffsets(new Uint32Array(out[1]!), a.rows, a.cols);
    const sliceSlots = new Map(heights.map((C, i) => [C, sliceTotal(new Uint32Array(out[2 + i]!))]));
    const sellSlots = new Map(layouts.map(({ C, sigma }, i) => [`${C}:${sigma}`, sliceTotal(new Uint32Array(out[2 + heights.length + i]!))]));
    return { stats: statsFromHistogram(a.rows, a.cols, a.nnz, histogram, offsets), histogram, offsets, sliceSlots, sellSlots };
  } finally {
    for (const t of temps) t.dispose();
  }
}

/** A 64-bit count from its low and high u32 words. */
const sliceTotal = (w: Uint32Array): number => w[0]! + w[1]! * 2 ** 32;

const popcount = (v: number): number => {
  let x = v - ((v >>> 1) & 0x55555555);
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return (Math.imul((x + (x >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24) & 0xff;
};

/** The set bits of the diagonal bitmap as offsets j − i, ascending. O(words + diagonals). */
export function bitmapOffsets(bits: Uint32Array, rows: number, cols: number): Int32Array {
  let n = 0;
  for (let w = 0; w < bits.length; w++) if (bits[w]) n += popcount(bits[w]!);
  const out = new Int32Array(n);
  const span = Math.max(0, rows + cols - 1);
  let k = 0;
  for (let w = 0; w < bits.length; w++) {
    let v = bits[w]!;
    while (v !== 0) {
      const b = 31 - Math.clz32(v & -v);
      v &= v - 1;
      const slot = 32 * w + b;
      if (slot < span) out[k++] = slot - (rows - 1);
    }
  }
  return k === n ? out : out.subarray(0, k);
}

/** Row length at sorted position `pos` (lower nearest rank), from the histogram. O(bins). */
function rankLength(hist: Uint32Array, pos: number): number {
  let cum = 0;
  for (let len = 0; len < hist.length; len++) {
    cum += hist[len]!;
    if (cum > pos) return len;
  }
  return 0;
}

/**
 * `rowLengthStats` from a row-length histogram and the occupied diagonal offsets: every field
 * identical, rsd summed by length instead of by row (the same value up to float64 rounding).
 * O(bins + 1). @example statsFromHistogram(3, 3, 4, Uint32Array.of(1, 1, 1), Int32Array.of(0, 1))
 */
export function statsFromHistogram(rows: number, cols: number, nnz: number, hist: Uint32Array, offsets: Int32Array): RowLengthStats {
  const mean = rows > 0 ? nnz / rows : 0;
  let min = 0;
  while (rows > 0 && min < hist.length && hist[min] === 0) min++;
  let max = hist.length - 1;
  while (max > 0 && hist[max] === 0) max--;
  let ss = 0;
  for (let len = 0; len < hist.length; len++) if (hist[len]) ss += hist[len]! * (len - mean) * (len - mean);
  const rsd = rows > 0 ? Math.sqrt(ss / rows) : 0;
  const rank = (q: number) => (rows > 0 ? rankLength(hist, Math.min(rows - 1, Math.floor(rows * q))) : 0);
  const lower = offsets.length && offsets[0]! < 0 ? -offsets[0]! : 0;
  const upper = offsets.length && offsets[offsets.length - 1]! > 0 ? offsets[offsets.length - 1]! : 0;
  return {
    rows,
    cols,
    nnz,
    min: rows > 0 ? min : 0,
    max: rows > 0 ? Math.max(0, max) : 0,
    mean,
    rsd,
    rsdp: mean > 0 ? (100 * rsd) / mean : 0,
    p33: rank(1 / 3),
    p50: rank(0.5),
    p90: rank(0.9),
    p99: rank(0.99),
    emptyRows: rows > 0 ? hist[0] ?? 0 : 0,
    occupiedDiagonals: offsets.length,
    bandwidth: Math.max(lower, upper),
    lowerBandwidth: lower,
    upperBandwidth: upper,
  };
}
