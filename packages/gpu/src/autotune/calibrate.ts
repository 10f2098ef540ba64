/**
 * The cost model's calibration, once per adapter: a short micro-benchmark of what the
 * candidates' product times depend on, on synthetic matrices only (never a bench-set or
 * validation matrix):
 * - the per-dispatch fixed cost (a product of one 1-entry row);
 * - the cost per stored entry for rows of 1, 4, 16, 64, 256 and 1024 entries with columns next
 *   to the diagonal (x streamed), for a thread per row (csr-scalar) and 2…32 lanes per row
 *   (csr-vector): the lanes-per-row efficiency and, at rows of 1, the per-row fixed cost;
 * - the gather cost at three locality levels (columns in a band, in a window of
 *   {@link WINDOW_COLS} columns, anywhere), rows of 16 entries.
 * The probes run in interleaved rounds (`round-timer.ts`: one stream of GPU work per round, the
 * median of the kept rounds), and the fit ({@link fitCalibration}) is a pure function of the
 * probe times, so the tests feed it an injected timer. The result is cached per adapter and
 * kernel-set version (`calibration-store.ts`).
 * @module
 */
import type { CsrMatrix } from '@gpusparse/formats';
import type { GpuContext } from '../device/context';
import type { PipelineSpec } from '../device/pipelines';
import { type SharedCsrUpload, splitCsrPlan, uploadCsrArrays } from '../kernels/csr/csr-device';
import { getKernel } from '../kernels/registry';
import type { DeviceMatrix } from '../kernels/types';
import { type UnsortedEntry, uploadU32 } from '../memory/upload';
import { softwareAdapter } from './prewarm';
import { deviceRoundTimer } from './round-timer';
import { firstStableRound, type RoundTimer } from './rounds';
import { medianOf } from './types';

/** Bump when the probes or the fit change meaning (cached calibrations of another version are ignored). */
export const CALIBRATION_VERSION = 2;
/** Row lengths probed (entries per row). */
export const PROBE_ROW_LENGTHS: readonly number[] = [1, 4, 16, 64, 256, 1024];
/** Lanes per row probed; 1 is a thread per row (csr-scalar), the others csr-vector's `lanes`. */
export const PROBE_LANES: readonly number[] = [1, 2, 4, 8, 16, 32];
/** Locality levels of the gather probes: a band next to the diagonal, a window, anywhere. */
export type Locality = 'band' | 'window' | 'random';
/** Columns of the 'window' locality level (2^15: 128 kB of float32 x, an L1/L2-sized reuse window). */
export const WINDOW_COLS = 1 << 15;
/** Row length and lanes of the gather probes. */
export const GATHER_ROW_LENGTH = 16;
export const GATHER_LANES = 4;
/**
 * The gather probes hold this fraction of the grid probes' entries. They measure a ratio (their
 * per-entry cost over the band's at the same shape), not a rate, and their random columns are
 * the calibration's dearest host work: at full size the two took ~60 % of its generation time on
 * this project's CPU (240 and 290 ms of 865 ms for 2^21 entries), a quarter of it a quarter.
 */
export const GATHER_SHARE = 1 / 4;

/** One synthetic product to time. */
export interface Probe {
  readonly rowLength: number;
  readonly lanes: number;
  readonly locality: Locality;
  readonly rows: number;
  readonly cols: number;
}

/** Times the probes (ms per product, NaN where one failed), in the order given. Injected in tests. */
export type ProbeTimer = (probes: readonly Probe[]) => Promise<number[]>;

/** What the micro-benchmark measured, fitted. */
export interface Calibration {
  readonly version: number;
  /** Adapter and kernel-set key it was taken for. */
  readonly key: string;
  readonly date: string;
  /** Stored entries per probe matrix. */
  readonly probeNnz: number;
  /** Fixed cost of one dispatch (ms). */
  readonly launchMs: number;
  /** ms per stored entry, [row-length index][lanes index] of {@link PROBE_ROW_LENGTHS} × {@link PROBE_LANES}, band locality, launch removed. */
  readonly perEntryMs: readonly (readonly number[])[];
  /** Gather factor of each locality level against the band (rows of `GATHER_ROW_LENGTH`, `GATHER_LANES` lanes). */
  readonly gather: Readonly<Record<Locality, number>>;
  /** Wall time the calibration took (ms), probes' uploads included. */
  readonly spentMs: number;
}

/**
 * The probes for matrices of about `nnz` entries: the launch probe, the row-length × lanes grid
 * (band) and the two far-gather probes (`GATHER_SHARE` of `nnz` entries each). O(probes).
 * @example calibrationProbes(1 << 20).length // 1 + 36 + 2
 */
export function calibrationProbes(nnz: number): Probe[] {
  const out: Probe[] = [{ rowLength: 1, lanes: 1, locality: 'band', rows: 1, cols: 1 }];
  for (const r of PROBE_ROW_LENGTHS) {
    const rows = Math.max(1, Math.floor(nnz / r));
    for (const l of PROBE_LANES) out.push({ rowLength: r, lanes: l, locality: 'band', rows, cols: Math.max(1, Math.ceil((rows * r) / BAND_REUSE)) });
  }
  const rows = Math.max(1, Math.floor((nnz * GATHER_SHARE) / GATHER_ROW_LENGTH));
  for (const locality of ['window', 'random'] as const) out.push({ rowLength: GATHER_ROW_LENGTH, lanes: GATHER_LANES, locality, rows, cols: Math.max(rows, 2 * WINDOW_COLS) });
  return out;
}

/** A small deterministic generator (xorshift32) for the synthetic columns: its own seed, not the bench or validation sets'. */
function xorshift(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 4294967296;
  };
}

/** Consecutive entries that read one x entry in the band probes (x streamed, each element reused this often). */
const BAND_REUSE = 16;

/**
 * The synthetic CSR matrix of a probe: `rows` rows of `rowLength` entries, values 1. Band: entry
 * k reads column ⌊k / 16⌋ — x streamed in entry order whatever the row length, so every band
 * probe of one entry count has the same columns (`reuse` passes them in: generated once, not per
 * row length). Window: columns uniform within {@link WINDOW_COLS} of the row's diagonal
 * position; random: anywhere (own xorshift seed). O(nnz), O(rows) with `reuse`.
 */
export function probeMatrix(p: Probe, seed = 0x5eed_c0de, reuse?: { colIdx: Int32Array; values: Float64Array }): CsrMatrix {
  const { rows, cols, rowLength: r } = p;
  const nnz = rows * r;
  const rowPtr = new Int32Array(rows + 1);
  for (let i = 0; i < rows; i++) rowPtr[i + 1] = (i + 1) * r;
  if (p.locality === 'band' && reuse && reuse.colIdx.length === nnz && reuse.colIdx[nnz - 1] === Math.min(cols - 1, (nnz - 1) >> 4)) return { format: 'csr', rows, cols, rowPtr, colIdx: reuse.colIdx, values: reuse.values };
  const colIdx = new Int32Array(nnz);
  const rand = xorshift(seed);
  for (let i = 0; i < rows; i++) {
    const centre = Math.floor((i * cols) / rows);
    for (let k = i * r; k < (i + 1) * r; k++) {
      let c: number;
      if (p.locality === 'band') c = Math.floor(k / BAND_REUSE);
      else if (p.locality === 'window') c = centre - WINDOW_COLS / 2 + Math.floor(rand() * WINDOW_COLS);
      else c = Math.floor(rand() * cols);
      colIdx[k] = Math.min(cols - 1, Math.max(0, c));
    }
  }
  return { format: 'csr', rows, cols, rowPtr, colIdx, values: new Float64Array(nnz).fill(1) };
}

/** Index of the nearest probed value at or below `v` and the log2 interpolation weight to the next. */
function bracket(grid: readonly number[], v: number): { i: number; w: number } {
  if (v <= grid[0]!) return { i: 0, w: 0 };
  for (let i = 0; i + 1 < grid.length; i++) {
    if (v < grid[i + 1]!) return { i, w: Math.log2(v / grid[i]!) / Math.log2(grid[i + 1]! / grid[i]!) };
  }
  return { i: grid.length - 1, w: 0 };
}

/**
 * ms per stored entry for rows of `rowLength` entries with `lanes` lanes per row (1: a thread
 * per row), band locality: log-linear interpolation between the probed row lengths, the nearest
 * probed lanes at or below `lanes` (lanes past 32 as 32, scaled by their extra idle lanes). O(1).
 * @example entryMs(cal, 27, 4)
 */
export function entryMs(cal: Pick<Calibration, 'perEntryMs'>, rowLength: number, lanes: number): number {
  const r = bracket(PROBE_ROW_LENGTHS, Math.max(1, rowLength));
  const l = Math.max(0, PROBE_LANES.filter((x) => x <= Math.max(1, lanes)).length - 1);
  const row = (i: number) => cal.perEntryMs[i]![l]!;
  const base = r.w > 0 ? row(r.i) * (row(r.i + 1) / row(r.i)) ** r.w : row(r.i);
  // lanes beyond the largest probe: the extra lanes idle on rows shorter than them
  const extra = lanes > PROBE_LANES[l]! ? Math.max(1, Math.ceil(rowLength / lanes) * lanes / Math.max(rowLength, PROBE_LANES[l]!)) : 1;
  return base * extra;
}

/**
 * The cheapest ms per stored entry the probes reached at any lanes for rows of `rowLength`
 * (what an entry-balanced or streaming kernel can approach). O(lanes).
 */
export function bestEntryMs(cal: Pick<Calibration, 'perEntryMs'>, rowLength: number): number {
  return Math.min(...PROBE_LANES.map((l) => entryMs(cal, rowLength, l)));
}

/**
 * Fit the calibration from the probe times (ms per product, in {@link calibrationProbes}'s
 * order): the launch probe's time is the fixed cost; each grid probe's time less it, over its
 * entries, is the per-entry cost (floored at 1 % of the band's cheapest so that a noisy probe
 * never predicts a free product); the far-gather probes over the band probe of the same shape
 * give the locality factors (≥ 1). A grid probe that did not time (NaN, ≤ 0) takes the most
 * expensive cost of its row length (pessimistic: its kernel is not preferred on a guess), a
 * gather probe the other level's factor. Throws when the launch probe or a whole row length
 * did not time. O(probes).
 * @example const cal = fitCalibration(probes, times, 'key', 12);
 */
export function fitCalibration(probes: readonly Probe[], ms: readonly number[], key: string, spentMs: number): Calibration {
  if (ms.length !== probes.length) throw new RangeError(`calibration: expected ${probes.length} probe times, got ${ms.length}`);
  const ok = (t: number | undefined): t is number => t !== undefined && t > 0 && Number.isFinite(t);
  if (!ok(ms[0])) throw new RangeError(`calibration: probe 0 (${describe(probes[0]!)}, the launch cost) timed ${ms[0]} ms; expected a finite time > 0`);
  const launchMs = ms[0];
  const grid: number[][] = PROBE_ROW_LENGTHS.map(() => PROBE_LANES.map(() => Number.NaN));
  probes.forEach((p, i) => {
    if (i === 0 || p.locality !== 'band' || !ok(ms[i])) return;
    grid[PROBE_ROW_LENGTHS.indexOf(p.rowLength)]![PROBE_LANES.indexOf(p.lanes)] = (ms[i]! - launchMs) / (p.rows * p.rowLength);
  });
  const finite = grid.flat().filter((x) => Number.isFinite(x));
  const floor = 0.01 * Math.max(1e-15, Math.min(...finite.filter((x) => x > 0)));
  const perEntryMs = grid.map((row, r) => {
    const worst = Math.max(...row.filter((x) => Number.isFinite(x)));
    if (!Number.isFinite(worst)) throw new RangeError(`calibration: no probe of rows of ${PROBE_ROW_LENGTHS[r]} timed; expected at least one`);
    return row.map((x) => Math.max(floor, Number.isFinite(x) ? x : worst));
  });
  const bandAt = entryMs({ perEntryMs }, GATHER_ROW_LENGTH, GATHER_LANES);
  const gatherOf = (loc: Locality): number | undefined => {
    const i = probes.findIndex((p) => p.locality === loc);
    if (i < 0 || !ok(ms[i])) return undefined;
    const p = probes[i]!;
    return Math.max(1, Math.max(floor, ms[i]! - launchMs) / (p.rows * p.rowLength) / bandAt);
  };
  const window = gatherOf('window');
  const random = gatherOf('random');
  const gather = { band: 1, window: window ?? random ?? 1, random: Math.max(random ?? window ?? 1, window ?? 1) };
  return { version: CALIBRATION_VERSION, key, date: new Date().toISOString(), probeNnz: probes[1] ? probes[1].rows * probes[1].rowLength : 0, launchMs, perEntryMs, gather, spentMs };
}

const describe = (p: Probe): string => `rows of ${p.rowLength}, ${p.lanes === 1 ? 'a thread per row' : `${p.lanes} lanes`}, ${p.locality}`;

/** The kernel and parameters that run a probe: csr-scalar for a thread per row, csr-vector with `lanes`. */
const probeKernel = (p: Probe) => (p.lanes === 1 ? { k: getKernel('csr-scalar'), params: {} } : { k: getKernel('csr-vector'), params: { lanes: p.lanes } });

/**
 * A {@link ProbeTimer} on `ctx`'s device: each distinct synthetic matrix uploaded once (shared
 * by its lanes' probes), every probe a candidate of interleaved rounds (`rounds` kept after the
 * clock settles, `reps` timed products each), the median over kept rounds. Cost: O(probe nnz)
 * host work and transfer per distinct matrix (9), rounds × probes × (reps + 1) products.
 */
export function deviceProbeTimer(ctx: GpuContext, rounds = 3, reps = 3): ProbeTimer {
  return async (probes) => {
    const shared = new Map<string, { a: CsrMatrix; s: SharedCsrUpload }>();
    let band: { host: { colIdx: Int32Array; values: Float64Array }; s: SharedCsrUpload } | undefined;
    const handles: DeviceMatrix[] = [];
    prewarmProbes(ctx, probes);
    const x = ctx.buffers.acquire(4 * Math.max(...probes.map((p) => p.cols)), undefined, 'calibration-x');
    const y = ctx.buffers.acquire(4 * Math.max(...probes.map((p) => p.rows)), undefined, 'calibration-y');
    try {
      const encoders = probes.map((p) => {
        const id = `${p.rows}|${p.cols}|${p.rowLength}|${p.locality}`;
        let m = shared.get(id);
        if (!m) {
          const a = probeMatrix(p, undefined, band?.host);
          // the band probes of one entry count share their columns and values: on the device too
          const s = band && a.colIdx === band.host.colIdx ? sameEntries(ctx, band.s, a) : uploadCsrArrays(ctx, a, 'calibration');
          if (p.locality === 'band' && p.rows > 1) band ??= { host: { colIdx: a.colIdx, values: a.values }, s };
          m = { a, s };
          shared.set(id, m);
        }
        const { k, params } = probeKernel(p);
        const h = k.upload(ctx, m.a, params, { sharedCsr: m.s });
        handles.push(h);
        return () => k.encode(ctx, h, x, y);
      });
      await ctx.finish();
      return await timeProbes(ctx, encoders, rounds, reps);
    } finally {
      for (const h of handles) h.dispose();
      for (const { s } of shared.values()) s.release();
      x.dispose();
      y.dispose();
    }
  };
}

/**
 * The device arrays of probe `a`, whose column and value arrays are those of `base`'s matrix
 * (the band probes of one entry count differ only in their row pointers): only the row
 * pointers are uploaded, the column and value buffers are `base`'s (held until the last holder
 * of the result releases). No validation pass: the columns were validated with `base`, and
 * the row pointers are the probe generator's (0, r, 2r, …, nnz). Falls back to a full upload
 * when the probe does not fit one binding. Cost: the transfer of 4·(rows + 1) bytes — against
 * 8·nnz + 4·rows: the six band probes of 2^21 entries sent 6 × 16 MB of columns and values,
 * now 16 MB once.
 */
export function sameEntries(ctx: GpuContext, base: SharedCsrUpload, a: CsrMatrix): SharedCsrUpload {
  const plan = splitCsrPlan(a, base.capElems, base.capElems - 1);
  const b0 = base.blocks[0];
  const nnz = a.rowPtr[a.rows]!;
  if (plan.length !== 1 || base.blocks.length !== 1 || !b0 || b0.k1 - b0.k0 !== nnz || base.source.cols !== a.cols) return uploadCsrArrays(ctx, a, 'calibration');
  const rowPtr = uploadU32(ctx, a.rowPtr, 'calibration-rowptr');
  base.retain();
  const ref = new WeakRef(a);
  let holders = 1;
  return {
    source: { rows: a.rows, cols: a.cols, nnz },
    ...unsortedOf(a),
    isSourceOf: (m) => ref.deref() === m,
    capElems: base.capElems,
    blocks: [{ ...plan[0]!, rowPtr, colIdx: b0.colIdx, values: b0.values }],
    deviceBytes: rowPtr.bytes,
    get holders() {
      return holders;
    },
    retain() {
      holders++;
    },
    release() {
      if (--holders > 0) return;
      rowPtr.dispose();
      base.release();
    },
  };
}

/** The first entry of `a` whose column does not increase within its row, as the validating upload records it; stops there (at entry 1 on a band probe of rows ≥ 2). O(nnz) worst. */
function unsortedOf(a: CsrMatrix): { unsorted?: UnsortedEntry } {
  for (let r = 0; r < a.rows; r++) {
    for (let k = a.rowPtr[r]! + 1; k < a.rowPtr[r + 1]!; k++) {
      if (a.colIdx[k]! <= a.colIdx[k - 1]!) return { unsorted: { row: r, entry: k, col: a.colIdx[k]!, prev: a.colIdx[k - 1]! } };
    }
  }
  return {};
}

/**
 * Ask for the probes' pipelines ahead (createComputePipelineAsync, no wait): csr-scalar and
 * csr-vector at five lanes compile on the device's worker threads while the host generates and
 * uploads the probe matrices, instead of one by one on the calibration's path (10–30 ms each on
 * the H100). Not on a software adapter, whose compiles would take the same cores. Returns the
 * number asked for and the promise of their end (never rejects). O(probes).
 */
export function prewarmProbes(ctx: GpuContext, probes: readonly Probe[]): { asked: number; done: Promise<void> } {
  if (softwareAdapter(ctx)) return { asked: 0, done: Promise.resolve() };
  const specs = new Map<string, PipelineSpec>();
  for (const p of probes) {
    const { k, params } = probeKernel(p);
    const spec = k.pipelineSpec?.({ ...k.defaults, ...params }, ctx.caps);
    if (spec) specs.set(spec.key, spec);
  }
  return { asked: specs.size, done: ctx.pipelines.prewarm([...specs.values()]) };
}

/** Interleaved rounds over the probe encoders on the device ({@link probeRounds}). */
async function timeProbes(ctx: GpuContext, encoders: readonly (() => void)[], rounds: number, reps: number): Promise<number[]> {
  const timer = deviceRoundTimer(ctx, encoders, reps);
  try {
    return await probeRounds(timer.time, encoders.length, rounds, reps);
  } finally {
    timer.dispose();
  }
}

/**
 * Interleaved rounds of `n` probes (the order reversed every other round) until `rounds` rounds
 * are kept after the clock settles (at most 3 × rounds; one more when a probe has no finite time
 * in them); per probe the median of its kept rounds, NaN when it never timed. O(rounds · n log n).
 * @example await probeRounds(timer.time, 39, 3, 3)
 */
export async function probeRounds(time: RoundTimer, n: number, rounds: number, reps: number): Promise<number[]> {
  const times: number[][] = [];
  const order = Array.from({ length: n }, (_, i) => i);
  // the timer answers in the order asked: each round is put back in probe order
  const round = async (o: readonly number[]) => {
    const got = await time(o, reps);
    const t: number[] = [];
    o.forEach((i, k) => {
      t[i] = got[k]!;
    });
    times.push(t);
  };
  for (let r = 0; r < 3 * rounds; r++) {
    await round(r % 2 ? [...order].reverse() : order);
    if (times.length - firstStableRound(times) >= rounds) break;
  }
  const kept = () => times.slice(firstStableRound(times));
  if (order.some((i) => !kept().some((t) => Number.isFinite(t[i])))) await round(order);
  return order.map((i) => {
    const v = kept().map((t) => t[i]!).filter((x) => Number.isFinite(x));
    return v.length ? medianOf(v) : Number.NaN;
  });
}

/**
 * Run the micro-benchmark with `timer` (the device's by default) on probe matrices of `nnz`
 * entries and fit it. Cost: the probes' generation and upload (O(9 · nnz)) and their rounds.
 * @example const cal = await calibrate(ctx, 'adapter|v1');
 */
export async function calibrate(ctx: GpuContext | undefined, key: string, opts: { nnz?: number; timer?: ProbeTimer } = {}): Promise<Calibration> {
  const t0 = performance.now();
  const probes = calibrationProbes(opts.nnz ?? 1 << 21);
  const timer = opts.timer ?? (ctx ? deviceProbeTimer(ctx) : undefined);
  if (!timer) throw new RangeError('calibrate: expected a device context or a probe timer, got neither');
  const ms = await timer(probes);
  return fitCalibration(probes, ms, key, performance.now() - t0);
}
