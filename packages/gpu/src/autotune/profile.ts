/**
 * Stage 1 of a tuning run, the profile: cheap structural estimates the autotuner prunes and
 * orders candidates with — row-length statistics (seed 004 Table 1), diagonal occupancy, padded
 * slot counts of the ELL family for a given chunk height and sorting window, and the block fill
 * of BCSR — all without converting. {@link profileFromDevice} takes the statistics computed on
 * the device from the shared CSR upload (`profile/device-stats.ts`: no host pass over the
 * non-zeros); {@link profileMatrix} computes them on the host (fallback and tests).
 * @module
 */
import { type CsrMatrix, type DiagonalStats, diagonalLength, diagonalStats, type RowLengthStats, rowLengthStats, sellRowOrder } from '@gpusparse/formats';
import type { GpuContext } from '../device/context';
import type { SharedCsrUpload } from '../kernels/csr/csr-device';
import type { AnySpmvKernel } from '../kernels/types';
import { type DeviceMatrixStats, deviceMatrixStats, deviceStatsSpecs, type SellLayout } from '../profile/device-stats';
import type { PruneRules } from './candidates';
import { adapterKey, candidateSpaceHash, matrixFingerprint, TUNER_VERSION } from './fingerprint';
import { awaitCompiled, softwareAdapter } from './prewarm';
import type { TuningReport } from './report';
import type { AutotuneOptions } from './types';

/**
 * Rows one padded-slot or block-fill estimate looks at, at most: past this, evenly spaced windows
 * (block rows) covering about this many rows are counted and scaled up. Exact counts over all
 * rows cost 0.5–7 s per layout on a 13.5·10⁶-non-zero matrix on the 2-core CI machine, and the
 * candidate space has ~20 layouts; 2^16 sampled rows keep each under ~50 ms.
 */
const SAMPLE_ROWS = 1 << 16;

/**
 * Rows a BCSR block-count estimate walks at most (their non-zeros, for each of the three block
 * sizes): 2^14 — the block fill only orders and soft-prunes BCSR, which never won on the bench
 * set, and at 2^16 the three estimates were the largest host cost of the statistics (160–250 ms
 * of a loaded 2-core machine on 2–5·10^6 non-zeros).
 */
const BLOCK_SAMPLE_ROWS = 1 << 14;

/**
 * Non-zeros a BCSR block-count estimate walks at most (per block size): 2^16. On long rows the
 * row cap alone walked 2^14 rows × the mean length — on the power law α 1.8 (23 entries a row)
 * 3 × 3.8·10^5 entries, the largest part of the candidate estimates (lavapipe host, loaded:
 * 137 of 145–260 ms). The evenly spread sample of 2^16 entries keeps the fill within a few per cent.
 */
const BLOCK_SAMPLE_NNZ = 1 << 16;

/** What DIA and HM would store: the diagonal statistics without the per-diagonal counts. */
export type DiagonalSummary = Omit<DiagonalStats, 'nnzPerDiagonal'>;

/** What the tuner knows about a matrix before it converts anything. */
export interface MatrixProfile {
  readonly stats: RowLengthStats;
  /** Diagonal statistics, computed only when the diagonals are few enough for DIA/HM to matter. */
  readonly diagonals?: DiagonalSummary;
  /** Row lengths in row order. */
  readonly lengths: Int32Array;
  /** Rows of each length 0 … max, when the statistics came from the device. */
  readonly histogram?: Uint32Array;
  /** Where the statistics were computed. */
  readonly where: 'device' | 'host';
  /** Memoised {@link paddedSlots} results. */
  readonly slotMemo: Map<string, number>;
  /** Memoised {@link bcsrBlocks} results. */
  readonly blockMemo: Map<number, number>;
}

/**
 * Profile a CSR matrix: row-length statistics, and diagonal statistics when at most
 * `diagonalLimit` diagonals are occupied. Cost: O(nnz + rows log rows).
 * @example const p = profileMatrix(a, 1024); p.stats.rsdp
 */
export function profileMatrix(a: CsrMatrix, diagonalLimit: number): MatrixProfile {
  const stats = rowLengthStats(a);
  const lengths = rowLengths(a);
  const diagonals = stats.occupiedDiagonals <= diagonalLimit ? diagonalStats(a) : undefined;
  return { stats, diagonals, lengths, where: 'host', slotMemo: new Map(), blockMemo: new Map() };
}

/** Row lengths in row order from the row pointers. O(rows), no pass over the non-zeros. */
function rowLengths(a: CsrMatrix): Int32Array {
  const lengths = new Int32Array(a.rows);
  for (let i = 0; i < a.rows; i++) lengths[i] = a.rowPtr[i + 1]! - a.rowPtr[i]!;
  return lengths;
}

/**
 * The profile from statistics computed on the device: the same numbers as {@link profileMatrix}
 * (DIA/HM slots from the occupied offsets), the sliced-ELL slot counts the device summed
 * (memoised for {@link paddedSlots} with σ = 1), and the row-length histogram.
 * Cost: O(rows + diagonals) on the host.
 * @example const p = profileFromDevice(a, await deviceMatrixStats(ctx, shared, [8, 32]), 1024);
 */
export function profileFromDevice(a: CsrMatrix, d: DeviceMatrixStats, diagonalLimit: number): MatrixProfile {
  const s = d.stats;
  let diagonals: DiagonalSummary | undefined;
  if (s.occupiedDiagonals <= diagonalLimit) {
    let inMatrixSlots = 0;
    for (const o of d.offsets) inMatrixSlots += diagonalLength(a.rows, a.cols, o);
    const diaSlots = a.rows * d.offsets.length;
    diagonals = { count: d.offsets.length, offsets: d.offsets, nnz: s.nnz, inMatrixSlots, diaSlots, fillRatio: diaSlots === 0 ? 1 : s.nnz / diaSlots, diagonalFill: inMatrixSlots === 0 ? 1 : s.nnz / inMatrixSlots };
  }
  const slotMemo = new Map<string, number>();
  for (const [C, slots] of d.sliceSlots) slotMemo.set(`${C}:1`, slots);
  for (const [key, slots] of d.sellSlots) slotMemo.set(key, slots);
  return { stats: s, diagonals, lengths: rowLengths(a), histogram: d.histogram, where: 'device', slotMemo, blockMemo: new Map() };
}

/** Padded slots of the chunks [w0, w1) of one sorting window (rows order given). */
function windowSlots(lengths: Int32Array, order: Int32Array, C: number): number {
  let slots = 0;
  for (let c = 0; c < order.length; c += C) {
    let m = 0;
    const end = Math.min(order.length, c + C);
    for (let r = c; r < end; r++) m = Math.max(m, lengths[order[r]!]!);
    slots += m * C;
  }
  return slots;
}

/**
 * Slots a sliced-ELL / SELL-C-σ layout stores: Σ over chunks of C · (longest row in the chunk),
 * rows sorted by length inside windows of `sigma` rows (σ = 1: no sorting; the last chunk is
 * padded to C rows, as the SELL kernel does). Exact up to 2^16 rows; past that, the mean over
 * evenly spaced windows covering about 2^16 rows, scaled to all rows. Cost: O(min(rows, 2^16) log σ).
 * @example paddedSlots(profile, 32, 128) / profile.stats.nnz // SELL-32-128 padding ratio
 */
export function paddedSlots(p: MatrixProfile, C: number, sigma: number): number {
  // sorting inside windows of at most C rows leaves each chunk's longest row where it was
  if (sigma > 1 && sigma <= C) return paddedSlots(p, C, 1);
  const key = `${C}:${sigma}`;
  const memo = p.slotMemo.get(key);
  if (memo !== undefined) return memo;
  const rows = p.lengths.length;
  const window = Math.max(C, sigma <= 1 ? C : sigma);
  const nWin = Math.ceil(rows / window);
  let slots = 0;
  const identity = (lo: number, hi: number) => Int32Array.from({ length: hi - lo }, (_, k) => lo + k);
  const winSlots = (w: number): number => {
    const lo = w * window;
    const hi = Math.min(rows, lo + window);
    let order = identity(lo, hi);
    if (sigma > 1) {
      const local = sellRowOrder(p.lengths.subarray(lo, hi), sigma);
      order = Int32Array.from(local, (r) => r + lo);
    }
    return windowSlots(p.lengths, order, C);
  };
  const samples = Math.max(1, Math.ceil(SAMPLE_ROWS / window));
  if (nWin <= samples) {
    for (let w = 0; w < nWin; w++) slots += winSlots(w);
  } else {
    let s = 0;
    for (let k = 0; k < samples; k++) s += winSlots(Math.floor((k * nWin) / samples));
    slots = (s / samples) * nWin;
  }
  p.slotMemo.set(key, slots);
  return slots;
}

/**
 * Non-empty r×r blocks of a CSR matrix (what BCSR stores, r² slots each). Exact up to 2^14
 * rows and 2^16 non-zeros; past that, the mean over evenly spaced block rows covering about
 * min(2^14 rows, 2^16 non-zeros at the mean row length), scaled up.
 * Cost: O(non-zeros of the sampled rows) + O(cols / r) memory.
 * @example bcsrBlocks(a, profile, 4) * 16 / profile.stats.nnz // 1 / block fill
 */
export function bcsrBlocks(a: CsrMatrix, p: MatrixProfile, r: number): number {
  const memo = p.blockMemo.get(r);
  if (memo !== undefined) return memo;
  const blockRows = Math.ceil(a.rows / r);
  // seen[block column] = 1 + the block row that last touched it: no Map, no clearing
  const seen = new Int32Array(Math.ceil(Math.max(1, a.cols) / r));
  const countRow = (br: number): number => {
    let n = 0;
    for (let k = a.rowPtr[br * r]!; k < a.rowPtr[Math.min(a.rows, br * r + r)]!; k++) {
      const bc = Math.floor(a.colIdx[k]! / r);
      if (seen[bc] !== br + 1) {
        seen[bc] = br + 1;
        n++;
      }
    }
    return n;
  };
  const mean = Math.max(1, (a.rowPtr[a.rows] ?? 0) / Math.max(1, a.rows));
  const samples = Math.max(1, Math.ceil(Math.min(BLOCK_SAMPLE_ROWS, BLOCK_SAMPLE_NNZ / mean) / r));
  let blocks = 0;
  if (blockRows <= samples) {
    for (let br = 0; br < blockRows; br++) blocks += countRow(br);
  } else {
    let s = 0;
    for (let k = 0; k < samples; k++) s += countRow(Math.floor((k * blockRows) / samples));
    blocks = (s / samples) * blockRows;
  }
  p.blockMemo.set(r, blocks);
  return blocks;
}

/** Sum over rows of min(length, B): the entries the ELL part of a hybrid holds. O(max row) from the histogram, else O(rows). */
export function ellPartEntries(p: MatrixProfile, B: number): number {
  let s = 0;
  if (p.histogram) {
    for (let len = 0; len < p.histogram.length; len++) s += p.histogram[len]! * Math.min(len, B);
    return s;
  }
  for (let i = 0; i < p.lengths.length; i++) s += Math.min(p.lengths[i]!, B);
  return s;
}

const decade = (v: number) => Math.round(Math.log10(Math.max(1, v)));

/** Chunk heights of the sliced layouts among `ks` (their σ = 1 padding is summed on the device). */
function sliceHeights(ks: readonly AnySpmvKernel[]): number[] {
  const out = new Set<number>();
  for (const k of ks) {
    for (const [name, spec] of Object.entries(k.params as Record<string, { values: readonly number[] }>)) if (name === 'sliceHeight' || name === 'C') for (const v of spec.values) out.add(v);
  }
  return [...out];
}

/** SELL-C-σ layouts (σ = C · sigmaChunks > C) among `ks`: their padding is summed on the device. */
function sellLayouts(ks: readonly AnySpmvKernel[]): SellLayout[] {
  const out: SellLayout[] = [];
  for (const k of ks) {
    const p = k.params as Record<string, { values: readonly number[] } | undefined>;
    for (const C of p.C?.values ?? []) for (const n of p.sigmaChunks?.values ?? []) if (n > 1 && !out.some((l) => l.C === C && l.sigma === C * n)) out.push({ C, sigma: C * n });
  }
  return out;
}

/**
 * Stage 1: the profile (on the device from the shared CSR upload; on the host when the device
 * path declines) and the cache key. Cost on the device: a few passes over the row pointers and
 * one over the columns, two readbacks, O(rows) on the host; measured as statsMs.
 */
export async function profileStage(ctx: GpuContext, a: CsrMatrix, shared: SharedCsrUpload, opts: AutotuneOptions, ks: readonly AnySpmvKernel[], rules: PruneRules, report: TuningReport): Promise<MatrixProfile> {
  // the four statistics pipelines, asked for before the CSR upload: joined here, never compiled
  // again on the path (on the H100 they made the first matrix's statistics 37 or 108 ms); the
  // wait is a per-process cost, counted with the other compiles, not as statistics
  const compileWaitMs = await awaitCompiled(ctx, deviceStatsSpecs());
  report.costs.compileMs += compileWaitMs;
  const t0 = performance.now();
  const limit = Math.max(rules.maxDiagonals, 1024);
  // a software adapter (lavapipe) runs the window sorts on the CPU, slower than the host's sampled estimate
  const software = softwareAdapter(ctx);
  const d = await deviceMatrixStats(ctx, shared, sliceHeights(ks), software ? [] : sellLayouts(ks));
  const profile = typeof d === 'string' ? profileMatrix(a, limit) : profileFromDevice(a, d, limit);
  report.statsWhere = typeof d === 'string' ? `host: ${d}` : 'device';
  const fp = matrixFingerprint(a, profile.stats, { content: opts.contentHash, histogram: profile.histogram });
  const sizing = opts.expectedProducts !== undefined ? `p${decade(opts.expectedProducts)}` : opts.budgetMs !== undefined ? `b${decade(opts.budgetMs)}` : 'p3';
  (report as { key: string }).key = [fp.key, adapterKey(ctx), `v${TUNER_VERSION}k${candidateSpaceHash(ks)}`, sizing, opts.candidates ? `c${JSON.stringify(opts.candidates)}` : ''].join('/');
  report.statsMs = report.costs.statsMs = performance.now() - t0;
  report.statsSplit = { deviceMs: report.statsMs, estimatesMs: 0, compiled: 0, compileWaitMs };
  return profile;
}
