/**
 * Options, results and errors of the autotuner (shared by `autotune.ts` and `search.ts`).
 * @module
 */
import { GpuSparseError } from '@gpusparse/formats';
import type { AnySpmvKernel, DeviceMatrix } from '../kernels/types';
import type { GpuOperator } from '../operator';
import type { TuneStore } from './cache';
import type { CandidateSpec, PruneRules } from './candidates';
import type { Trial, TuningReport } from './report';

/** Raised when no candidate could be timed and verified. */
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
  /** Timed repetitions per candidate (default 10) and untimed warm-up runs (default 2). */
  readonly reps?: number;
  readonly warmup?: number;
  /** How many of the best (by objective) are re-timed in interleaved rounds before choosing (default 3; 0 or 1: none). */
  readonly finalists?: number;
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
}

/** Factor on the calibrated product time of kernels not timed yet (< 1: try them earlier). */
export const OPTIMISM = 0.6;

/** Scouts: one variant per kernel whose static prediction is at most this factor above the best. */
export const SCOUT_RANGE = 4;

/** Median of a non-empty list (upper median for even lengths). O(n log n). @example medianOf([3, 1, 2]) // 2 */
export const medianOf = (v: readonly number[]): number => [...v].sort((x, y) => x - y)[v.length >> 1]!;
