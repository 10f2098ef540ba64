/**
 * Stage 3 of a tuning run, the trials: each short-listed candidate is converted (once per
 * layout), checked by its kernel's `supports`, uploaded (once: the same device matrix serves
 * the timing, the verification and, for the winner, the operator; CSR kernels add only their
 * own tables to the CSR arrays uploaded once for the whole run), then all live candidates are
 * timed in interleaved rounds (A B C, B C A, C A B …) so that a load change on the device or the
 * host cannot decide by itself, each sample after an idle device preceded by untimed products
 * that raise the SM clock ({@link warmClock}: the H100 ran the same product 2.7× slower at its
 * idle clock). A candidate that fails at any step is recorded with the step and
 * the reason, and the run goes on. Admission of each further candidate and each further round is
 * checked against the budget with estimates from what was measured so far.
 * @module
 */
import { type CsrMatrix, InvalidMatrixError, type SparseMatrix, getFormat } from '@gpusparse/formats';
import type { GpuContext } from '../device/context';
import type { SharedCsrUpload } from '../kernels/csr/csr-device';
import type { DeviceMatrix } from '../kernels/types';
import { timeGpu } from '../timing/index';
import { type Candidate, CSR_RELAYOUT } from './candidates';
import type { ConversionCache, TuneVectors } from './conversions';
import type { Trial, TuningReport } from './report';
import { medianOf, type TuneProgress } from './types';
import { VERIFY_NNZ } from './verify';

/** A short-listed candidate whose matrix is on the device. */
export interface Live {
  readonly c: Candidate;
  readonly t: Trial;
  readonly m: SparseMatrix | CsrMatrix;
  h: DeviceMatrix | undefined;
  /** Round medians (ms). */
  readonly samples: number[];
}

/** What the trials need and update. */
export interface TrialSession {
  readonly ctx: GpuContext;
  readonly a: CsrMatrix;
  readonly v: TuneVectors;
  readonly conv: ConversionCache;
  readonly report: TuningReport;
  readonly start: number;
  readonly reps: number;
  readonly warmup: number;
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
  /** Untimed device work (ms, wall) before a sample that follows an idle device ({@link warmClock}); 0 or absent: none. */
  readonly clockWarmMs?: number;
  /** When the device last ran products for this session (performance.now()); absent: not yet. */
  busyAt?: number;
}

/**
 * Device work (ms of wall time, untimed) that brings the SM clock up before timing. On the
 * H100 (session 6, nvidia-smi every 100 ms beside bench/spmv-gap.ts) the SM clock sat at
 * 345–480 MHz whenever the GPU was not kept busy, and the same product took 0.47 ms instead of
 * 0.173 ms at 1980 MHz; the tuner's own samples (warmup 1, reps 5, a readback between) never
 * kept it busy long enough: all three rounds of its first candidate read 0.44 ms. 500
 * back-to-back products (≈ 90 ms at the high clock) were enough. Capped by autotune at a fifth
 * of the budget.
 */
export const CLOCK_WARM_MS = 100;
/**
 * Idle time after which the clock is assumed to have dropped: the H100 held 1980 MHz for about
 * 3 s of an idle GPU, and a product after 1 s of idle still ran at 0.173 ms.
 */
const CLOCK_IDLE_MS = 1000;

/**
 * Keep the device busy with untimed products of `encode` for about `s.clockWarmMs` when it has
 * been idle past {@link CLOCK_IDLE_MS} (or has not run for this session yet), so that every
 * timed sample sees the clock a solve's back-to-back products see. Batches double from one
 * product (the product time is not known before the first sample), each drained and sized to
 * what is left of `clockWarmMs` at the rate measured so far. O(clockWarmMs).
 */
export async function warmClock(s: Pick<TrialSession, 'ctx' | 'clockWarmMs' | 'busyAt'>, encode: () => void): Promise<void> {
  const target = s.clockWarmMs ?? 0;
  if (target <= 0 || (s.busyAt !== undefined && performance.now() - s.busyAt < CLOCK_IDLE_MS)) return;
  const t0 = performance.now();
  let done = 0;
  for (let k = 1; ; ) {
    for (let i = 0; i < k; i++) encode();
    await s.ctx.finish();
    done += k;
    const spentMs = performance.now() - t0;
    if (spentMs >= target) break;
    // the next batch at most doubles and fits what is left at the rate seen so far (no overshoot
    // by a doubled batch of slow products)
    k = Math.max(1, Math.min(2 * k, 4096, Math.ceil((target - spentMs) / (spentMs / done))));
  }
  s.busyAt = performance.now();
}

/** Prior host conversion rate before one is measured: 200 MB/s (JavaScript conversions of 10^7 non-zeros took 0.4–1.2 s on the H200 host). */
const CONVERSION_MS_PER_BYTE = 1 / 2e5;
/** Host reference of the verification: about 10 ns per non-zero, plus a readback. */
const verifyEstimateMs = (nnz: number): number => Math.min(nnz, VERIFY_NNZ) * 1e-5 + 2;

const spent = (s: TrialSession): number => performance.now() - s.start;

const fail = (s: TrialSession, t: Trial, stage: string, e: unknown): void => {
  t.status = 'error';
  t.error = `${stage}: ${(e as Error).message ?? String(e)}`;
  s.report.failed++;
};

/** Surface and clear errors a failed step left on the device, so the next candidate starts clean. */
async function drain(ctx: GpuContext): Promise<void> {
  try {
    await ctx.finish();
  } catch (e) {
    if (ctx.isLost) throw e;
  }
}

/**
 * Convert, check and upload candidate `c` (timed: conversion and upload with the queue drained).
 * On failure records the stage and reason on `t` and returns undefined. A CSR candidate refusing
 * the matrix itself as invalid rethrows (bad input, not a kernel's limitation).
 */
export async function prepare(s: TrialSession, c: Candidate, t: Trial): Promise<Live | undefined> {
  let stage = 'unsupported';
  let h: DeviceMatrix | undefined;
  try {
    // refusals that the CSR source already shows (binding limits, padding, diagonals) come
    // before any conversion: a conversion of 10^7 entries costs seconds
    const pre = s.conv.precheck(c, s.ctx.limits);
    if (pre !== true) throw new Error(pre);
    stage = 'conversion';
    const conv = await s.conv.get(c);
    if (conv.fresh) s.report.costs.conversionMs += conv.ms;
    if (conv.fresh && conv.where === 'host' && c.estimatedBytes > 0) s.convMsPerByte = Math.max(s.convMsPerByte, conv.ms / c.estimatedBytes);
    stage = 'unsupported';
    const ok = c.kernel.supports(conv.m, s.ctx.limits, c.params);
    if (ok !== true) throw new Error(ok);
    stage = 'upload';
    const t0 = performance.now();
    const csr = c.kernel.format === 'csr';
    // a CSR kernel adds only its own tables to the shared arrays (no validation, no transfer)
    const handle: DeviceMatrix = c.kernel.upload(s.ctx, conv.m, c.params, csr ? { sharedCsr: s.shared } : undefined);
    h = handle;
    await s.ctx.finish();
    const ms = performance.now() - t0;
    // csr-vec4 pads the rows on the host inside its upload: the whole call is its conversion
    const relayout = CSR_RELAYOUT.has(c.kernel.id);
    const uploadMs = relayout ? 0 : ms;
    const conversionMs = relayout ? ms : conv.ms;
    s.report.costs.uploadMs += uploadMs;
    if (relayout) {
      s.report.costs.conversionMs += ms;
      if (c.prepBytes > 0) s.convMsPerByte = Math.max(s.convMsPerByte, ms / c.prepBytes);
    }
    if (c.estimatedBytes > 0 && !csr && conv.where !== 'device') s.uploadMsPerByte = uploadMs / c.estimatedBytes;
    Object.assign(t, { conversionMs, uploadMs, bytes: storageBytes(c, conv.m), deviceBytes: handle.deviceBytes });
    return { c, t, m: conv.m, h: handle, samples: [] };
  } catch (e) {
    h?.dispose();
    if (s.ctx.isLost) throw e;
    if (e instanceof InvalidMatrixError && c.kernel.format === 'csr') throw e;
    await drain(s.ctx);
    fail(s, t, stage, e);
    return undefined;
  }
}

/** Storage bytes of the converted matrix (float32 values, 32-bit indices). */
function storageBytes(c: Candidate, m: SparseMatrix | CsrMatrix): number {
  const nnz = (m as { nnz?: number }).nnz ?? (m as CsrMatrix).rowPtr[(m as CsrMatrix).rows]!;
  return getFormat(c.kernel.format).storageBytes(c.kernel.format === 'csr' ? { ...(m as CsrMatrix), nnz } : m, { valueBytes: 4, indexBytes: 4 }).bytes;
}

/**
 * Time one live candidate once (warmup + reps products; the median is one sample). A candidate
 * not yet timed is first probed with one product: when warmup + reps of those would not fit in
 * what is left of the budget, the probe is its only sample (a kernel 30× slower than the floor
 * on a power-law matrix cost 2 s of a 1 s budget before). False when it failed (then disposed).
 */
export async function sample(s: TrialSession, f: Live): Promise<boolean> {
  const t0 = performance.now();
  const encode = () => f.c.kernel.encode(s.ctx, f.h!, s.v.dx, s.v.dy);
  try {
    await warmClock(s, encode);
    if (f.samples.length === 0 && !s.exhaustive && Number.isFinite(s.report.budgetMs)) {
      const probe = await timeGpu(s.ctx, encode, { reps: 1, warmup: 0, batches: 1 });
      if (probe.medianMs * (s.warmup + s.reps) > s.report.budgetMs - spent(s)) {
        f.samples.push(probe.medianMs);
        s.report.method = probe.method;
        summarise(s, f);
        return true;
      }
    }
    const tm = await timeGpu(s.ctx, encode, { reps: s.reps, warmup: s.warmup });
    f.samples.push(tm.medianMs);
    s.report.method = tm.method;
    summarise(s, f);
    return true;
  } catch (e) {
    if (s.ctx.isLost) throw e;
    await drain(s.ctx);
    f.h?.dispose();
    f.h = undefined;
    fail(s, f.t, 'timing', e);
    return false;
  } finally {
    s.busyAt = performance.now();
    s.report.costs.timingMs += performance.now() - t0;
  }
}

/** Fold the samples of a live candidate into its trial: median, spread, GFLOP/s. */
function summarise(s: TrialSession, f: Live): void {
  const ms = medianOf(f.samples);
  Object.assign(f.t, { status: 'timed', ms, loMs: Math.min(...f.samples), hiMs: Math.max(...f.samples), samples: [...f.samples], gflops: (2 * s.report.nnz) / (ms * 1e6) });
}

/** Host preparation (ms) of candidate `c` before its upload: a conversion of another format (unless shared) or csr-vec4's padding. */
function prepEstimateMs(s: TrialSession, c: Candidate, seen: ReadonlySet<string>): number {
  const rate = s.convMsPerByte || CONVERSION_MS_PER_BYTE;
  if (CSR_RELAYOUT.has(c.kernel.id)) return c.prepBytes * rate;
  return c.kernel.format === 'csr' || seen.has(c.conversionKey) ? 0 : s.conv.estimateMs(c, rate, s.live[0] && medianOf(s.live[0].samples), s.live[0]?.c.estimatedBytes);
}

/**
 * Why a CSR kernel that re-lays the matrix out (csr-vec4) is not worth its preparation, or
 * undefined: its predicted gain over the first timed candidate (that one's measured product
 * time scaled by the model's work ratio) times the expected products must exceed the
 * estimated preparation. O(1).
 */
export function prepDoesNotPay(s: Pick<TrialSession, 'live' | 'products' | 'convMsPerByte'>, c: Candidate): string | undefined {
  const first = s.live[0];
  if (!first || !CSR_RELAYOUT.has(c.kernel.id)) return undefined;
  const firstMs = medianOf(first.samples);
  const predictedMs = firstMs * (c.work / Math.max(1e-12, first.c.work));
  const gainMs = s.products * (firstMs - predictedMs);
  const prepMs = c.prepBytes * (s.convMsPerByte || CONVERSION_MS_PER_BYTE);
  if (gainMs > prepMs) return undefined;
  return `conversion does not pay: host preparation ~${prepMs.toFixed(1)} ms > predicted gain ${Math.max(0, gainMs).toFixed(1)} ms over ${s.products} products`;
}

/** Estimated cost (ms) of admitting candidate `c`: its conversion (unless shared), upload and timing rounds. */
function admissionCost(s: TrialSession, c: Candidate, rounds: number, seen: ReadonlySet<string>): { ms: number; text: string } {
  const conv = prepEstimateMs(s, c, seen);
  const upload = c.kernel.format === 'csr' || s.conv.onDevice(c) ? 0 : c.estimatedBytes * s.uploadMsPerByte; // a device build uploads tables only
  const first = s.live[0];
  const productMs = first ? medianOf(first.samples) * Math.max(0.25, c.predicted / Math.max(1e-12, first.c.predicted)) : 0;
  const timing = rounds * (s.warmup + s.reps) * productMs;
  return { ms: conv + upload + timing, text: `conversion ~${conv.toFixed(1)}, upload ~${upload.toFixed(1)}, timing ~${timing.toFixed(1)} ms` };
}

/** Device matrices an exhaustive sweep keeps uploaded at once (the fastest so far; the others are timed once and released). */
const EXHAUSTIVE_LIVE = 4;

/** Release the uploads of all but the `k` fastest live candidates (their trials keep the measurement). */
function keepFastest(s: TrialSession, k: number): void {
  const up = s.live.filter((f) => f.h).sort((x, y) => medianOf(x.samples) - medianOf(y.samples));
  for (const f of up.slice(k)) {
    f.h!.dispose();
    f.h = undefined;
  }
}

/**
 * Prepare the short-listed candidates in order, each further one only when its estimated cost
 * fits in the budget (the first always: it sets the budget with its product time). The first
 * live candidate is timed once at once; in an exhaustive sweep every candidate is, and only the
 * fastest {@link EXHAUSTIVE_LIVE} stay uploaded (device memory). Fills `s.live`.
 * Cost: per admitted candidate one conversion (unless shared) and one upload.
 */
export async function admit(s: TrialSession, picks: readonly { c: Candidate; t: Trial }[], rounds: number): Promise<void> {
  const seen = new Set<string>();
  for (const { c, t } of picks) {
    if (s.live.length > 0 && !s.exhaustive) {
      const unpaid = prepDoesNotPay(s, c);
      if (unpaid) {
        t.status = 'budget';
        t.reason = unpaid;
        continue;
      }
      const need = admissionCost(s, c, rounds, seen);
      const left = s.report.budgetMs - spent(s) - verifyEstimateMs(s.report.nnz);
      if (need.ms > left) {
        t.status = 'budget';
        t.reason = `budget: needs ~${need.ms.toFixed(1)} ms (${need.text}), ${Math.max(0, left).toFixed(1)} ms left`;
        continue;
      }
    }
    t.reason = undefined;
    const f = await prepare(s, c, t);
    if (f) seen.add(c.conversionKey);
    if (f && s.live.length === 0 && (await sample(s, f))) {
      s.live.push(f);
      s.report.firstProductMs = f.samples[0];
      s.report.budgetMs = s.budgetFrom(f.samples[0]!);
    } else if (f?.h && s.exhaustive) {
      if (await sample(s, f)) s.live.push(f);
      keepFastest(s, EXHAUSTIVE_LIVE);
    } else if (f?.h) s.live.push(f);
    s.onProgress?.({ phase: 'trial', done: s.live.length, total: picks.length, spentMs: spent(s), budgetMs: s.report.budgetMs, trial: t });
  }
}

/**
 * Interleaved rounds over the live candidates: at least one sample each, then up to `rounds`
 * (up to 2·rounds while `uncertain()` says the decision is not separated), each further round
 * only when its measured cost still fits in the budget. After two rounds, a candidate whose
 * fastest sample is over twice the best median is not timed further.
 * Cost: per round, live · (warmup + reps) products.
 */
export async function interleave(s: TrialSession, rounds: number, uncertain: () => boolean): Promise<number> {
  let done = 0;
  let lastRoundMs = 0;
  for (let r = 0; ; r++) {
    const active = s.live.filter((f) => f.h && f.samples.length <= r);
    const best = Math.min(...s.live.filter((f) => f.h).map((f) => medianOf(f.samples.length ? f.samples : [Number.POSITIVE_INFINITY])));
    const running = r < 2 ? active : active.filter((f) => Math.min(...f.samples) <= 2 * best);
    const fits = s.exhaustive || spent(s) + lastRoundMs + verifyEstimateMs(s.report.nnz) <= s.report.budgetMs;
    const wanted = r < rounds || (r < 2 * rounds && uncertain());
    if (running.length === 0 || (r > 0 && (!fits || !wanted))) break;
    const t0 = performance.now();
    for (let k = 0; k < running.length; k++) await sample(s, running[(k + r) % running.length]!);
    lastRoundMs = performance.now() - t0;
    done = r + 1;
  }
  for (const f of s.live) if (f.t.status === 'timed') s.report.timed++;
  return done;
}
