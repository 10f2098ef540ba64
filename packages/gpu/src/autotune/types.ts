/**
 * Options, results and errors of the autotuner (shared by `autotune.ts` and `search.ts`).
 * @module
 */
import { GpuSparseError } from '@gpusparse/formats';
import type { AnySpmvKernel, DeviceMatrix } from '../kernels/types';
import type { GpuOperator } from '../operator';
import type { TuneStore } from './cache';
import type { Calibration } from './calibrate';
import type { CandidateSpec, PruneRules } from './candidates';
import type { InSolveCandidate } from './in-solve';
import type { Trial, TuningReport } from './report';

/** Raised when no kernel at all could run and pass verification (each candidate's reason is in the message). */
export class TuningError extends GpuSparseError {}

/** Progress of a tuning run. */
export interface TuneProgress {
  readonly phase: 'stats' | 'trial' | 'verify' | 'done';
  /** Candidates handled so far / all candidates. */
  readonly done: number;
  readonly total: number;
  readonly spentMs: number;
  readonly budgetMs: number;
  readonly trial?: Trial;
}

/** Options of {@link autotune}. */
export interface AutotuneOptions {
  /** The caller's whole time budget (ms), e.g. of a solve; tuning spends `fraction` of it. */
  readonly budgetMs?: number;
  /** Products the caller expects to do (default: budgetMs / first product time, else 1000). */
  readonly expectedProducts?: number;
  /** Share of the budget tuning may spend (default 0.1). */
  readonly fraction?: number;
  /** Restrict to these kernels (all variants) or kernels with some parameters fixed. */
  readonly candidates?: readonly CandidateSpec[];
  /** Skip tuning: use this kernel and parameters. */
  readonly fixed?: { readonly kernel: string; readonly params?: Readonly<Record<string, number>> };
  /** false: no tuning, the default kernel (csr-vector with its defaults). */
  readonly tune?: boolean;
  /** true (default): the default store; a path; a store; false: no cache. */
  readonly cache?: boolean | string | TuneStore;
  /** Add an FNV-1a hash of the arrays to the fingerprint (default false: structure only). */
  readonly contentHash?: boolean;
  /** Time every candidate that can run (soft prunes included), ignoring the budget (benchmarks). */
  readonly exhaustive?: boolean;
  /** Timed repetitions per candidate and round (default 5; each round adds one untimed lead product per candidate). */
  readonly reps?: number;
  /** @deprecated Ignored since the interleaved rounds (each round runs one untimed lead product per candidate before its timed ones); accepted so that existing callers still compile. */
  readonly warmup?: number;
  /**
   * Interleaved timing rounds to keep (default 3). Each round runs every short-listed candidate
   * back to back in one stream of GPU work; rounds taken while the GPU clock was still rising
   * (their times fall in later rounds: the H100 idles at 345–480 MHz, 2–4× slower products) are
   * discarded and more are run; the rounds stop early once two kept rounds separate the leader,
   * and go on up to twice this while the spreads overlap and the budget allows.
   */
  readonly rounds?: number;
  /** Most candidates timed (the short-list: the CSR floor and scouts, then the best of each other family and the CSR parameter neighbours (csr-vector lanes, csr-adaptive entries per block); default 8 (DEFAULT_MAX_TIMED); ignored by `exhaustive`). On power-law rows the csr-vec4 scout takes one slot past it (its device quads cost a few ms; the model cannot rank it there). */
  readonly maxTimed?: number;
  /** Smallest tuning budget (ms) when no budgetMs is stated (default 500, `MIN_BUDGET_MS`: the overhead a user accepts whatever the work; below ~100 no alternative to the first kernel could be tried). */
  readonly minBudgetMs?: number;
  /**
   * Tune inside the solve ({@link tunedOperator} only, on devices with timestamp queries): the
   * short-listed candidates are uploaded and verified, then run the first products of the
   * caller's solve in turn (`rounds` each, default 3) and the operator switches to the fastest —
   * no product is spent on tuning alone. Default false (timed trials before the solve).
   */
  readonly inSolve?: boolean | { readonly rounds?: number };
  /**
   * The calibrated cost model (`calibrate.ts`): true calibrates the adapter once (a micro-benchmark
   * of ~0.2 s on an H100, cached beside the tuning cache and in the process) and short-lists every
   * candidate the model cannot separate from the predicted best; a {@link Calibration} is used as
   * given; false keeps the static model's short-list. Default: true on hardware adapters, false on
   * software ones (lavapipe's costs say nothing of a GPU).
   */
  readonly calibrate?: boolean | Calibration;
  /** Pruning thresholds. */
  readonly rules?: Partial<PruneRules>;
  /** Kernels to choose from (default: the registry). */
  readonly kernels?: readonly AnySpmvKernel[];
  readonly onProgress?: (p: TuneProgress) => void;
  /** Where warnings go (default console.warn); they are also in the report. */
  readonly warn?: (msg: string) => void;
}

/** What {@link autotune} returns. */
export interface AutotuneResult {
  readonly kernel: string;
  readonly params: Record<string, number>;
  readonly report: TuningReport;
  /** Build the GPU operator of the choice (first call reuses the verified upload when kept). */
  operator(): GpuOperator;
}

/** Internal: keep the verified winner's upload for the operator. */
export interface Held {
  keep?: boolean;
  handle?: DeviceMatrix;
  /** Verified candidates left for the solve to time (in-solve tuning), the provisional winner first. */
  inSolve?: InSolveCandidate[];
  /** Caches the in-solve winner once the operator has decided. */
  remember?: (winner: Trial) => void;
  /** Replaces (or forgets) the cached in-solve winner when the operator dropped it after the decision. */
  forget?: (verified: Trial | undefined) => void;
}

/** Median of a non-empty list (mean of the middle two for even lengths). O(n log n). @example medianOf([3, 1, 2, 4]) // 2.5 */
export function medianOf(v: readonly number[]): number {
  const s = [...v].sort((x, y) => x - y);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}
