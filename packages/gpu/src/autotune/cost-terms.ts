/**
 * The calibrated prediction of a candidate's product time (ms) and its prediction interval.
 * What a kernel's time depends on is data, one {@link CostTerms} entry per kernel: how its
 * invocations map onto rows (a thread per row, L lanes per row, entry-balanced, or a coalesced
 * stream over a padded layout), how many dispatches a product takes, and how far the model's
 * prediction for it may be off (its interval). A kernel can carry its own entry as `costTerms`
 * on its registry definition; else {@link COST_TERMS} holds it; an unknown kernel gets
 * {@link DEFAULT_TERMS} (entry-balanced, the widest interval), so a new kernel needs no code here.
 *
 * The prediction: dispatches × the calibrated launch cost + the stored slots (padding included)
 * × the calibrated cost per entry for the matrix's row lengths and the kernel's lanes (a sum over
 * the row-length histogram's log2 bins for the row-mapped kernels), × the gather factor of the
 * matrix's locality, × the kernel's remaining static factor from `cost-model.ts` (1 for the
 * kernels the calibration measures directly: csr-scalar and csr-vector).
 * @module
 */
import type { AnySpmvKernel } from '../kernels/types';
import { bestEntryMs, type Calibration, entryMs, WINDOW_COLS } from './calibrate';
import type { MatrixProfile } from './profile';

/** How a kernel's invocations meet the rows. */
export type LaneMap =
  /** One invocation per row (uncoalesced walks of long rows, waits on the longest row of a warp). */
  | { readonly kind: 'thread' }
  /** `param` lanes per row (csr-vector's `lanes`). */
  | { readonly kind: 'lanes'; readonly param: string }
  /** Work split by entries, not rows (csr-adaptive, COO, AXC/AXT): the best per-entry rate for the mean row length. */
  | { readonly kind: 'balanced' }
  /** A padded layout read coalesced across rows (ELL, SELL, DIA, HM): the best streaming rate. */
  | { readonly kind: 'stream' };

/** What the model needs to know of one kernel. */
export interface CostTerms {
  readonly lanes: LaneMap;
  /** Dispatches per product. */
  readonly passes: number;
  /**
   * Half-width of the prediction interval as a factor: the true time is taken to lie within
   * [predicted / spread, predicted × spread]. Small for the kernels the calibration times itself,
   * wide for those predicted by analogy with them.
   */
  readonly spread: number;
  /** True: the calibration timed this kernel itself (the static factor is not applied). */
  readonly measured?: boolean;
}

const thread = { kind: 'thread' } as const;
const balanced = { kind: 'balanced' } as const;
const stream = { kind: 'stream' } as const;
const lanes = (param: string) => ({ kind: 'lanes', param }) as const;

/**
 * Interval of the measured kernels: the probes' own spread between calls on the H100 (a few per
 * cent) plus the histogram interpolation between probed row lengths.
 */
const MEASURED_SPREAD = 1.3;
/** Interval of kernels predicted by analogy: their static factors were off by up to 2× between families on the H100 bench set (bench/RESULTS.md, issue 16). */
export const ANALOGY_SPREAD = 1.6;

/** The terms of the registered kernels (ids of `kernels/registry.ts`). */
export const COST_TERMS: Readonly<Record<string, CostTerms>> = {
  'csr-scalar': { lanes: thread, passes: 1, spread: MEASURED_SPREAD, measured: true },
  'csr-vector': { lanes: lanes('lanes'), passes: 1, spread: MEASURED_SPREAD, measured: true },
  'csr-adaptive': { lanes: balanced, passes: 1, spread: ANALOGY_SPREAD },
  'csr-vec4': { lanes: balanced, passes: 1, spread: ANALOGY_SPREAD },
  'csr-long': { lanes: balanced, passes: 1, spread: ANALOGY_SPREAD },
  'csr-balanced': { lanes: balanced, passes: 1, spread: ANALOGY_SPREAD },
  'csr-merge': { lanes: balanced, passes: 1, spread: ANALOGY_SPREAD },
  coo: { lanes: balanced, passes: 2, spread: ANALOGY_SPREAD },
  cmrs: { lanes: balanced, passes: 1, spread: ANALOGY_SPREAD }, // its static factor already holds its idle lanes
  ell: { lanes: stream, passes: 1, spread: ANALOGY_SPREAD },
  'ell-r': { lanes: stream, passes: 1, spread: ANALOGY_SPREAD },
  'sliced-ell': { lanes: stream, passes: 1, spread: ANALOGY_SPREAD },
  'sliced-ell-r': { lanes: stream, passes: 1, spread: ANALOGY_SPREAD },
  sell: { lanes: stream, passes: 1, spread: ANALOGY_SPREAD },
  hybrid: { lanes: stream, passes: 2, spread: ANALOGY_SPREAD },
  dia: { lanes: stream, passes: 1, spread: ANALOGY_SPREAD },
  'dia-tiled': { lanes: stream, passes: 1, spread: ANALOGY_SPREAD },
  hm: { lanes: stream, passes: 1, spread: ANALOGY_SPREAD },
  bcsr: { lanes: stream, passes: 1, spread: 2 },
  axc: { lanes: balanced, passes: 2, spread: ANALOGY_SPREAD },
  axtuh1: { lanes: balanced, passes: 2, spread: ANALOGY_SPREAD },
  axtuh: { lanes: balanced, passes: 2, spread: ANALOGY_SPREAD },
  axtch1: { lanes: balanced, passes: 2, spread: ANALOGY_SPREAD },
  axtch: { lanes: balanced, passes: 2, spread: ANALOGY_SPREAD },
};

/** Terms of a kernel nobody described: entry-balanced, one dispatch, the widest interval. */
export const DEFAULT_TERMS: CostTerms = { lanes: balanced, passes: 1, spread: 2 };

/**
 * The cost terms of kernel `k`: its own `costTerms` (a registry entry may carry them), else
 * {@link COST_TERMS}, else {@link DEFAULT_TERMS}. O(1).
 * @example termsOf(getKernel('ell')).lanes.kind // 'stream'
 */
export function termsOf(k: AnySpmvKernel): CostTerms {
  return (k as { costTerms?: CostTerms }).costTerms ?? COST_TERMS[k.id] ?? DEFAULT_TERMS;
}

const binMemo = new WeakMap<MatrixProfile, { rows: number[]; entries: number[] }>();
/** Rows and entries per log2 row-length bin (bin 0: empty rows; bin b ≥ 1: lengths in [2^(b−1), 2^b)), from the device histogram or the host lengths. Memoised per profile. */
export function rowLengthBins(p: MatrixProfile): { rows: number[]; entries: number[] } {
  let b = binMemo.get(p);
  if (b) return b;
  b = { rows: [], entries: [] };
  const add = (len: number, count: number) => {
    const i = len === 0 ? 0 : 32 - Math.clz32(len);
    b!.rows[i] = (b!.rows[i] ?? 0) + count;
    b!.entries[i] = (b!.entries[i] ?? 0) + len * count;
  };
  if (p.histogram) {
    for (let len = 0; len < p.histogram.length; len++) if (p.histogram[len]) add(len, p.histogram[len]!);
  } else for (const len of p.lengths) add(len, 1);
  binMemo.set(p, b);
  return b;
}

/**
 * The gather factor of the matrix's locality: 1 within a band of 64 columns, the calibrated
 * window factor at a bandwidth of {@link WINDOW_COLS}, the random factor at half the columns and
 * past; log-linear between. O(1).
 */
export function gatherFactor(cal: Pick<Calibration, 'gather'>, p: MatrixProfile): number {
  const b = Math.max(1, p.stats.bandwidth);
  const far = Math.max(2 * WINDOW_COLS, p.stats.cols / 2);
  const lerp = (lo: number, hi: number, from: number, to: number) => lo * (hi / lo) ** Math.min(1, Math.max(0, Math.log2(b / from) / Math.log2(to / from)));
  if (b <= 64) return 1;
  if (b <= WINDOW_COLS) return lerp(1, cal.gather.window, 64, WINDOW_COLS);
  return lerp(cal.gather.window, cal.gather.random, WINDOW_COLS, far);
}

/** Cost (ms) of the stored entries under a row mapping with `L` lanes (1: a thread per row): a sum over the row-length bins, an empty row costed as one entry's row. */
function rowMappedMs(cal: Pick<Calibration, 'perEntryMs'>, p: MatrixProfile, L: number): number {
  const { rows, entries } = rowLengthBins(p);
  let ms = 0;
  rows.forEach((n, i) => {
    if (!n) return;
    const mean = i === 0 ? 1 : entries[i]! / n;
    ms += n * mean * entryMs(cal, mean, L);
  });
  return ms;
}

/** A prediction: product ms and its interval. */
export interface Prediction {
  readonly ms: number;
  readonly low: number;
  readonly high: number;
}

/**
 * Predict candidate (`k`, `params`) on the profiled matrix: `slots` stored slots (padding
 * included) and `factor` the static cost-model factor (kernel specifics the calibration does
 * not measure). O(log2 max row length).
 * @example predictMs(cal, profile, getKernel('csr-vector'), { lanes: 4 }, nnz, 1)
 */
export function predictMs(cal: Calibration, p: MatrixProfile, k: AnySpmvKernel, params: Record<string, number>, slots: number, factor: number): Prediction {
  const t = termsOf(k);
  const nnz = Math.max(1, p.stats.nnz);
  const padding = slots / nnz;
  let body: number;
  if (t.lanes.kind === 'thread') body = rowMappedMs(cal, p, 1) * padding;
  else if (t.lanes.kind === 'lanes') body = rowMappedMs(cal, p, params[t.lanes.param] ?? 1) * padding;
  else if (t.lanes.kind === 'balanced') body = slots * bestEntryMs(cal, Math.max(1, p.stats.mean));
  else body = slots * bestEntryMs(cal, Math.max(4, p.stats.mean));
  const ms = t.passes * cal.launchMs + body * gatherFactor(cal, p) * (t.measured ? 1 : factor);
  return { ms, low: ms / t.spread, high: ms * t.spread };
}

/** A timed candidate with a prediction: what {@link anchorPrediction} rescales by. */
export interface Anchor {
  readonly prediction: Prediction;
  /** Its dispatches per product ({@link CostTerms.passes}). */
  readonly passes: number;
  /** Its measured product time (ms). */
  readonly ms: number;
}

/**
 * The most of an anchor's measured time that {@link anchorPrediction} takes as the GPU's state:
 * this many times its prediction. On the session-9 H100 run the first candidate ran 0.97–7.2×
 * its prediction on 20 of 21 matrices (the state and cache effects every kernel shares); on the
 * 21st, a matrix with a dense row, csr-adaptive ran 16× its prediction (the row's entries
 * summed by one workgroup: its own kernel's cost), and carried over to every candidate that
 * excess ruled out AXT-CH1, the exhaustive best at 0.16× csr-adaptive's time.
 */
export const ANCHOR_STATE_MAX = 8;

/**
 * Prediction `p` (a candidate of `passes` dispatches) corrected by a measured `anchor` on the
 * same matrix (the CSR floor, timed first): the anchor's excess over its own prediction is taken
 * as a fixed cost per dispatch and added to `p` once per dispatch (`p`'s interval shifted with it,
 * its spread kept); a negative excess (the anchor ran faster than predicted) lowers `p` likewise,
 * never below a quarter of it. The excess counted is at most that of an anchor at
 * `ANCHOR_STATE_MAX` × its prediction.
 *
 * Why a fixed cost and not a factor: on the session-8 H100 run the model under-predicted by a
 * factor that fell with the matrix's size (×4–7 on 0.6–1.7 M entries, ×1.4–2 on 3–4.6 M) and
 * that was 1.0 on the tuner's rounds of the first matrix of each process and 3–4× on everything
 * after it (the same kernels: the GPU's state, not the matrix); the calibration ran in the fast
 * state. Replayed on those sweeps (bench/tune-replay.ts), measured / anchored prediction had a
 * median of 1.08 and 1.27 (validation, bench set), and 516/868 and 173/353 candidates fell inside
 * their interval, against 2.93 and 2.52, 121/883 and 76/359 unanchored (as a factor rather than a
 * fixed cost: fewer inside, 493/850 against 501/850 and 146/344 against 166/344 on an earlier
 * replay). O(1).
 * @example anchorPrediction(c.prediction, 1, { prediction: floor.prediction, passes: 1, ms: 0.031 })
 */
export function anchorPrediction(p: Prediction, passes: number, anchor: Anchor): Prediction {
  const spread = p.high / p.ms;
  // past ANCHOR_STATE_MAX × its prediction the anchor's excess is its own kernel's, not the GPU's state
  const own = Math.min(anchor.ms, ANCHOR_STATE_MAX * anchor.prediction.ms);
  const excess = ((own - anchor.prediction.ms) / Math.max(1, anchor.passes)) * passes;
  const ms = Math.max(p.ms / 4, p.ms + excess);
  return { ms, low: ms / spread, high: ms * spread };
}
