/**
 * Stage 3b of a tuning run, the trials: the live candidates (on the device, `admission.ts`) are
 * timed in interleaved rounds — every round runs all of them back to back in one stream of GPU
 * work (`round-timer.ts`), the start rotating — and the clock state is read from the rounds
 * (`rounds.ts`): rounds taken while the clock was still rising are discarded, and rounds go on
 * until enough stable ones are kept, the ranking is clear, or the budget ends. Each candidate's
 * trial then holds the median and spread of its kept rounds.
 * @module
 */
import type { CsrMatrix, SparseMatrix } from '@gpusparse/formats';
import type { GpuContext } from '../device/context';
import type { SharedCsrUpload } from '../kernels/csr/csr-device';
import type { DeviceMatrix } from '../kernels/types';
import { timeGpu } from '../timing/index';
import type { Candidate } from './candidates';
import type { ConversionCache, TuneVectors } from './conversions';
import type { Trial, TuningReport } from './report';
import { deviceRoundTimer } from './round-timer';
import { clockIndex, keptSamples, noKeptRound, type RoundsRun, type RoundTimer, runRounds, summarise } from './rounds';
import type { TuneProgress } from './types';
import { VERIFY_NNZ } from './verify';

/** A short-listed candidate whose matrix is on the device. */
export interface Live {
  readonly c: Candidate;
  readonly t: Trial;
  readonly m: SparseMatrix | CsrMatrix;
  h: DeviceMatrix | undefined;
  /** Kept round times (ms) of the latest rounds it ran in. */
  samples: number[];
  /** The single probe of the first candidate (sets the budget; not part of the ranking). */
  probeMs?: number;
}

/** What the trials need and update. */
export interface TrialSession {
  readonly ctx: GpuContext;
  readonly a: CsrMatrix;
  readonly v: TuneVectors;
  readonly conv: ConversionCache;
  readonly report: TuningReport;
  readonly start: number;
  /** Timed products per candidate and round (each round adds one untimed lead product per candidate). */
  readonly reps: number;
  /** Kept (stable-clock) rounds wanted; up to twice that while the decision is uncertain. */
  readonly rounds: number;
  /** Rounds (the probe round included) before a separated ranking may stop them. */
  readonly minRounds: number;
  readonly exhaustive: boolean;
  readonly onProgress?: (p: TuneProgress) => void;
  /** Called once with the first measured product time; returns the tuning budget (ms). */
  readonly budgetFrom: (firstMs: number) => number;
  /** Expected products (known after the first product time). */
  products: number;
  readonly live: Live[];
  /** The CSR arrays on the device, uploaded once: every CSR candidate's upload reads them. */
  readonly shared: SharedCsrUpload;
  /** Measured rates for the admission estimates (ms per estimated byte). */
  convMsPerByte: number;
  uploadMsPerByte: number;
  /**
   * True when the winner's upload becomes the caller's operator ({@link tunedOperator}): every
   * timed candidate's conversion and upload are then already spent, whichever wins, so the
   * decision ranks by the remaining cost (products × product time) — see {@link buildCostLeft}.
   */
  readonly sunkBuild?: boolean;
  /** The round timer over the given live candidates (tests inject one; default {@link deviceRoundTimer}). */
  readonly makeTimer?: (live: readonly Live[]) => { time: RoundTimer; method: 'timestamp' | 'wall'; dispose(): void };
}

/**
 * The build cost (ms) still to pay if live candidate `f` wins: 0 when its upload becomes the
 * operator (`s.sunkBuild`: the conversion and upload are spent, win or lose), else its measured
 * conversion + upload (a later operator built from the decision pays them again).
 *
 * Why: on the session-9 H100 run the objective with the spent build costs in it chose csr-scalar
 * over ELL on a 9-point stencil (1.12× the best product) and csr-vector over ELL on banded b9
 * (1.21×) for 3–9 ms of conversion that had already been paid when the rounds decided; the
 * admission is where a conversion is weighed (it is paid only if admitted). O(1).
 */
export const buildCostLeft = (s: Pick<TrialSession, 'sunkBuild'>, f: Pick<Live, 't'>): number => (s.sunkBuild ? 0 : (f.t.conversionMs ?? 0) + (f.t.uploadMs ?? 0));

/**
 * The verification's estimated cost (ms): about 30 ns per non-zero of the host reference (at most
 * {@link VERIFY_NNZ}), plus a product and a readback. The H100 runs of session 12 took 20–37 ms
 * to verify 1.8–3.2·10^6-non-zero matrices (the host reference of 2^20 entries and its rows'
 * bounds; 6 ms on 6 000 long rows) where the old estimate, 10 ns per non-zero + 2 ms, said ≤ 12.5:
 * the run planned its rounds up to the budget and ended 1–14 ms past it (densrow-100000-8, 501 and
 * 514 ms of 500). O(1).
 */
export const verifyEstimateMs = (nnz: number): number => Math.min(nnz, VERIFY_NNZ) * 3e-5 + 3;

/**
 * Share of the budget the admission and the rounds leave unplanned: what the estimates of the
 * last round, the verification and the host work between stages miss (a few to 15 ms on the H100,
 * more on a loaded host) falls inside the budget instead of past it — the budget is issue 16's
 * overhead bound, not a goal.
 */
export const BUDGET_RESERVE = 0.05;

/** Milliseconds of the budget the run may still plan for: the budget less the reserve, what is spent and the verification to come. O(1). */
export const budgetLeft = (s: Pick<TrialSession, 'start' | 'report'>): number => s.report.budgetMs * (1 - BUDGET_RESERVE) - spent(s) - verifyEstimateMs(s.report.nnz);

/** Milliseconds since the tuning budget started. */
export const spent = (s: Pick<TrialSession, 'start'>): number => performance.now() - s.start;

/** Record a failed step on a trial. */
export const fail = (s: Pick<TrialSession, 'report'>, t: Trial, stage: string, e: unknown): void => {
  t.status = 'error';
  t.error = `${stage}: ${(e as Error).message ?? String(e)}`;
  s.report.failed++;
};

/** Surface and clear errors a failed step left on the device, so the next candidate starts clean. */
export async function drain(ctx: GpuContext): Promise<void> {
  try {
    await ctx.finish();
  } catch (e) {
    if (ctx.isLost) throw e;
  }
}

const gflops = (s: TrialSession, ms: number) => (2 * s.report.nnz) / (ms * 1e6);

/**
 * Probe one candidate's product time for the budget: one product, then (when 1 + 3 of those fit
 * what is left of the budget) a lead and 3 timed ones. Not a ranking sample: the rounds rank. Sets
 * the report's first product time and the budget. False when it failed (then disposed).
 */
export async function probe(s: TrialSession, f: Live): Promise<boolean> {
  const t0 = performance.now();
  const encode = () => f.c.kernel.encode(s.ctx, f.h!, s.v.dx, s.v.dy);
  try {
    let tm = await timeGpu(s.ctx, encode, { reps: 1, warmup: 0 });
    if (s.exhaustive || !Number.isFinite(s.report.budgetMs) || 4 * tm.medianMs <= s.report.budgetMs - spent(s)) tm = await timeGpu(s.ctx, encode, { reps: 3, warmup: 0 });
    f.probeMs = tm.medianMs;
    s.report.method = tm.method;
    Object.assign(f.t, { status: 'timed', ms: tm.medianMs, gflops: gflops(s, tm.medianMs) });
    if (s.report.firstProductMs === undefined) {
      s.report.firstProductMs = tm.medianMs;
      s.report.budgetMs = s.budgetFrom(tm.medianMs);
    }
    return true;
  } catch (e) {
    if (s.ctx.isLost) throw e;
    await drain(s.ctx);
    f.h?.dispose();
    f.h = undefined;
    fail(s, f.t, 'timing', e);
    return false;
  } finally {
    s.report.costs.timingMs += performance.now() - t0;
  }
}

/**
 * A round timer that survives a failing candidate: when a whole round fails (a validation error
 * surfaces at the readback), each candidate of it is timed alone, and the ones that fail read NaN
 * (not timed again). Device loss propagates.
 */
function isolating(ctx: GpuContext, time: RoundTimer): RoundTimer {
  return async (order, reps) => {
    try {
      return await time(order, reps);
    } catch (e) {
      if (ctx.isLost) throw e;
      await drain(ctx);
      const out: number[] = [];
      for (const i of order) {
        try {
          out.push((await time([i], reps))[0]!);
        } catch (e2) {
          if (ctx.isLost) throw e2;
          await drain(ctx);
          out.push(Number.NaN);
        }
      }
      return out;
    }
  };
}

/**
 * Fold a run into the live candidates' trials: kept median and spread; failures disposed. When
 * every round was discarded for the clock ({@link noKeptRound}: a loaded machine) the decision
 * ranks on all rounds, so every trial records those (median, spread, samples): the report never
 * shows a winner without a spread, nor a first candidate with its probe time in place of the
 * rounds it was ranked on.
 */
function record(s: TrialSession, live: readonly Live[], run: RoundsRun): void {
  const none = noKeptRound(run);
  live.forEach((f, i) => {
    if (run.failed.includes(i)) {
      f.h?.dispose();
      f.h = undefined;
      fail(s, f.t, 'timing', new Error('its products failed in an interleaved round'));
      return;
    }
    const all = summarise(keptSamples(run.times, 0, i));
    const m = run.summaries[i] ?? (none ? all : undefined);
    if (m) {
      f.samples = m.samples;
      Object.assign(f.t, { status: 'timed', ms: m.ms, loMs: m.loMs, hiMs: m.hiMs, samples: [...m.samples], gflops: gflops(s, m.ms) });
      return;
    }
    // timed only in rounds discarded for the clock (then dropped as far slower): shown, not ranked;
    // also the first candidate, whose probe set its status (an earlier group's kept rounds stay)
    if (all && f.t.loMs === undefined) Object.assign(f.t, { status: 'timed', ms: all.ms, gflops: gflops(s, all.ms), reason: 'timed only in rounds taken while the clock was rising (not ranked)' });
  });
  s.report.rounds = { run: run.times.length, discarded: run.from, stopped: run.stopped, clockIndex: clockIndex(run.times).map((v) => Number(v.toFixed(3))), method: s.report.method };
}

/**
 * Time the live uploaded candidates in interleaved rounds (see `rounds.ts`) within the budget
 * (an exhaustive sweep ignores it), and record each one's kept median and spread on its trial.
 * Returns the run with the candidates it covered (index i of the run is `live[i]`), or undefined
 * when none is uploaded. Cost: per round live · (reps + 1) products and one readback.
 */
export async function timeRounds(s: TrialSession): Promise<{ run: RoundsRun; live: Live[] } | undefined> {
  const live = s.live.filter((f) => f.h);
  if (live.length === 0) return undefined;
  const t0 = performance.now();
  const timer = s.makeTimer?.(live) ?? deviceRoundTimer(s.ctx, live.map((f) => () => f.c.kernel.encode(s.ctx, f.h!, s.v.dx, s.v.dy)), s.reps);
  try {
    const run = await runRounds(isolating(s.ctx, timer.time), {
      rounds: s.rounds,
      minRounds: s.minRounds,
      maxRounds: 4 * s.rounds,
      products: s.products,
      base: live.map((f) => buildCostLeft(s, f)),
      reps: s.reps,
      fits: (nextMs) => s.exhaustive || nextMs <= budgetLeft(s),
    });
    s.report.method = timer.method;
    record(s, live, run);
    return { run, live };
  } finally {
    timer.dispose();
    s.report.costs.timingMs += performance.now() - t0;
  }
}
