/**
 * Stage 2a of a tuning run, the candidates: the registry's kernels × their declared parameter
 * values (hybrid BOUNDARY replaced by values around Ginkgo's 33rd-percentile rule), each assessed
 * by the cost model (`cost-model.ts`: a storage estimate, a predicted cost used only for the
 * order of the short-list, and — when cheap statistics rule it out — the reason it is pruned). Hard prunes (storage past the memory
 * limit, more diagonals than the kernel accepts) are never timed; soft prunes (padding,
 * idle lanes, sparse diagonals or blocks) are timed only by an exhaustive sweep.
 * @module
 */
import type { CsrMatrix } from '@gpusparse/formats';
import type { AnySpmvKernel } from '../kernels/types';
import { assessCandidate } from './cost-model';
import type { Prediction } from './cost-terms';
import type { MatrixProfile } from './profile';

/** Why a candidate is not timed. */
export interface PruneReason {
  readonly reason: string;
  /** True: never timed (would not fit or not run); false: timed only in exhaustive mode. */
  readonly hard: boolean;
}

/** One (kernel, parameters) pair the tuner may time. */
export interface Candidate {
  readonly kernel: AnySpmvKernel;
  readonly params: Record<string, number>;
  /** Candidates with the same key share one host conversion (format + format parameters). */
  readonly conversionKey: string;
  /** Estimated device bytes of the matrix (float32 values, u32 indices). */
  readonly estimatedBytes: number;
  /** Predicted relative cost (lower first); a heuristic for the timing order only. */
  readonly predicted: number;
  /** Predicted product work: traffic bytes × kernel factor (the tuner calibrates ms per unit). */
  readonly work: number;
  /**
   * Host bytes prepared before the upload (a conversion): the converted layout of another
   * format, the quad-padded arrays of csr-vec4, the row-block tables of csr-adaptive and
   * csr-balanced; 0 for the kernels that read the shared CSR arrays as they are.
   */
  readonly prepBytes: number;
  /** Stored slots of its layout (padding included; `cost-model.ts`). */
  readonly slots: number;
  /** The static cost model's kernel factor (idle lanes, imbalance, kernel specifics). */
  readonly factor: number;
  /** The calibrated product-time prediction and its interval (`cost-terms.ts`), when the adapter is calibrated. */
  readonly prediction?: Prediction;
  readonly pruned?: PruneReason;
}

/** Thresholds of the pruning rules. */
export interface PruneRules {
  /** Largest padded slots / nnz of ELL-family layouts (default 3). */
  readonly maxPadding: number;
  /** Padding past which an ELL-family layout is never built, not even by an exhaustive sweep (default 32). */
  readonly maxPaddingHard: number;
  /** Most occupied diagonals for DIA / HM (default 64). */
  readonly maxDiagonals: number;
  /** Smallest fill nnz / slots of DIA and HM (default 0.5). */
  readonly minDiagonalFill: number;
  /** Smallest BCSR block fill nnz / (blocks · r²) (default 0.3). */
  readonly minBlockFill: number;
  /** Largest estimated device bytes of one matrix (default 4 GiB; WebGPU does not report device memory). */
  readonly memoryBytes: number;
  /** Most parameter combinations per kernel (default 128). */
  readonly maxPerKernel: number;
}

/** Default {@link PruneRules}. */
export const defaultPruneRules: PruneRules = { maxPadding: 3, maxPaddingHard: 32, maxDiagonals: 64, minDiagonalFill: 0.5, minBlockFill: 0.3, memoryBytes: 4 * 2 ** 30, maxPerKernel: 128 };

/** Every combination of the declared values (one-at-a-time variants first), at most `cap`. */
function combinations(k: AnySpmvKernel, values: Record<string, readonly number[]>, cap: number): Record<string, number>[] {
  const names = Object.keys(values);
  const seen = new Set<string>();
  const out: Record<string, number>[] = [];
  const push = (p: Record<string, number>) => {
    const key = names.map((n) => p[n]).join(',');
    if (out.length < cap && !seen.has(key)) {
      seen.add(key);
      out.push(p);
    }
  };
  const base: Record<string, number> = {};
  for (const n of names) base[n] = values[n]!.includes(k.defaults[n]) ? k.defaults[n] : values[n]![0]!;
  push(base);
  for (const n of names) for (const v of values[n]!) push({ ...base, [n]: v });
  const rec = (i: number, acc: Record<string, number>) => {
    if (out.length >= cap) return;
    if (i === names.length) return push({ ...acc });
    for (const v of values[names[i]!]!) rec(i + 1, { ...acc, [names[i]!]: v });
  };
  rec(0, {});
  return out;
}

/** BOUNDARY values: 0, Ginkgo's p33 and its multiples ½, 2, 4, the median and p90, capped at RMAX. */
export function boundaryCandidates(p: MatrixProfile, declared: readonly number[]): number[] {
  const s = p.stats;
  const raw = [s.p33, Math.floor(s.p33 / 2), 2 * s.p33, 4 * s.p33, s.p50, s.p90, 0, ...declared.filter((b) => b >= 0)];
  return [...new Set(raw.map((b) => Math.min(b, s.max)))].sort((a, b) => a - b);
}

/**
 * Values the tuner tries beyond a kernel's declared ones: TH = 8 for AXTUH/AXTCH (seed 004 found
 * TH 4 or 8 best on most matrices; both kernels take any TH ≥ 2). Every choice is verified.
 */
export const EXTRA_VALUES: Readonly<Record<string, Readonly<Record<string, readonly number[]>>>> = { axtuh: { th: [8] }, axtch: { th: [8] } };


/** A candidate request: a kernel id (all its variants) or a kernel with some parameters fixed. */
export type CandidateSpec = string | { readonly kernel: string; readonly params?: Readonly<Record<string, number>> };

/**
 * The candidates for matrix `a`: every kernel of `ks` (or of `specs`) × its parameter
 * combinations, assessed and sorted by predicted cost (unpruned first). Cost: O(rows) per
 * distinct layout estimate plus O(candidates).
 * @example const list = enumerateCandidates(a, profile, kernels, defaultPruneRules, 1000);
 */
export function enumerateCandidates(a: CsrMatrix, p: MatrixProfile, ks: readonly AnySpmvKernel[], rules: PruneRules, products: number, specs?: readonly CandidateSpec[]): Candidate[] {
  const out: Candidate[] = [];
  const seen = new Set<string>();
  const wanted = specs?.map((s) => (typeof s === 'string' ? { kernel: s, params: undefined } : s));
  for (const k of ks) {
    const reqs = wanted ? wanted.filter((w) => w.kernel === k.id) : [{ kernel: k.id, params: undefined }];
    for (const req of reqs) {
      const values: Record<string, readonly number[]> = {};
      for (const [name, spec] of Object.entries(k.params as Record<string, { values: readonly number[] }>)) {
        const fixed = req.params?.[name];
        const declared = [...new Set([...spec.values, ...(EXTRA_VALUES[k.id]?.[name] ?? [])])];
        values[name] = fixed !== undefined ? [fixed] : k.id === 'hybrid' && name === 'boundary' ? boundaryCandidates(p, spec.values) : declared;
      }
      for (const params of combinations(k, values, rules.maxPerKernel)) {
        if (k.id === 'hybrid' && params.boundary! < 0) params.boundary = Math.min(p.stats.p33, p.stats.max);
        const id = `${k.id}${JSON.stringify(params)}`;
        if (seen.has(id)) continue;
        seen.add(id);
        const conversionKey = `${k.format}${JSON.stringify(k.formatParams?.(params) ?? {})}`;
        out.push({ kernel: k, params, conversionKey, ...assessCandidate(a, p, k, params, rules, products) });
      }
    }
  }
  const rank = (c: Candidate) => (c.pruned ? (c.pruned.hard ? 2 : 1) : 0);
  return out.sort((x, y) => rank(x) - rank(y) || x.predicted - y.predicted);
}
