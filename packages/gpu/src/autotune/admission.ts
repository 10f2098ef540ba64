/**
 * Stage 3a of a tuning run, admission: the short-listed candidates are put on the device in
 * order — converted (once per layout), checked by their kernel's `supports`, uploaded (once: the
 * same device matrix serves the timing, the verification and, for the winner, the operator; CSR
 * kernels add only their own tables to the CSR arrays uploaded once for the whole run) — each
 * further one only when its estimated cost (from the rates measured so far) fits the budget. The
 * first one is probed at once: its product time sets the budget. A candidate that fails at any
 * step is recorded with the step and the reason, and the run goes on. An exhaustive sweep admits
 * every candidate, timing them in groups (interleaved rounds, `trials.ts`) and keeping only the
 * fastest uploaded.
 * @module
 */
import { type CsrMatrix, getFormat, InvalidMatrixError, type SparseMatrix } from '@gpusparse/formats';
import type { DeviceMatrix } from '../kernels/types';
import type { Candidate } from './candidates';
import { CSR_RELAYOUT } from './cost-model';
import { ANALOGY_SPREAD, anchorPrediction, termsOf } from './cost-terms';
import { awaitCompiled, candidateSpecs } from './prewarm';
import type { Trial } from './report';
import { budgetLeft, drain, fail, type Live, probe, spent, type TrialSession, timeRounds } from './trials';
import { medianOf } from './types';

/** Prior host conversion rate before one is measured: 200 MB/s (JavaScript conversions of 10^7 non-zeros took 0.4–1.2 s on the H200 host). */
export const CONVERSION_MS_PER_BYTE = 1 / 2e5;

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
    // its pipelines (asked for with the whole short-list): waited for apart, so that the
    // conversion and upload times and the rates estimated from them hold no compile
    s.report.costs.compileMs += await awaitCompiled(s.ctx, candidateSpecs(s.ctx, c));
    stage = 'conversion';
    const conv = await s.conv.get(c);
    if (conv.fresh) s.report.costs.conversionMs += conv.ms;
    if (conv.fresh && conv.where === 'host' && c.estimatedBytes > 0) s.convMsPerByte = Math.max(s.convMsPerByte, conv.ms / c.estimatedBytes);
    stage = 'unsupported';
    const ok = c.kernel.supports(conv.m, s.ctx.limits, c.params);
    if (ok !== true) throw new Error(ok);
    stage = 'upload';
    h = await upload(s, c, conv.m, conv.ms, t, conv.where === 'device');
    return { c, t, m: conv.m, h, samples: [] };
  } catch (e) {
    h?.dispose();
    if (s.ctx.isLost) throw e;
    if (e instanceof InvalidMatrixError && c.kernel.format === 'csr') throw e;
    await drain(s.ctx);
    fail(s, t, stage, e);
    return undefined;
  }
}

/** Upload a converted candidate, drained and timed; csr-vec4's host padding inside the upload counts as its conversion. */
async function upload(s: TrialSession, c: Candidate, m: SparseMatrix | CsrMatrix, convMs: number, t: Trial, deviceBuilt = false): Promise<DeviceMatrix> {
  const t0 = performance.now();
  const csr = c.kernel.format === 'csr';
  // a CSR kernel adds only its own tables to the shared arrays (no validation, no transfer)
  const handle: DeviceMatrix = c.kernel.upload(s.ctx, m, c.params, csr ? { sharedCsr: s.shared } : undefined);
  try {
    await s.ctx.finish();
  } catch (e) {
    handle.dispose();
    throw e;
  }
  const ms = performance.now() - t0;
  const relayout = CSR_RELAYOUT.has(c.kernel.id);
  const uploadMs = relayout ? 0 : ms;
  s.report.costs.uploadMs += uploadMs;
  if (relayout) {
    s.report.costs.conversionMs += ms;
    // quads built on the device from the shared CSR say nothing of the host conversion rate
    const onDevice = (handle as { builtOnDevice?: boolean }).builtOnDevice === true;
    if (c.prepBytes > 0 && !onDevice) s.convMsPerByte = Math.max(s.convMsPerByte, ms / c.prepBytes);
  }
  if (c.estimatedBytes > 0 && !csr && !deviceBuilt) s.uploadMsPerByte = uploadMs / c.estimatedBytes;
  Object.assign(t, { conversionMs: relayout ? ms : convMs, uploadMs, bytes: storageBytes(c, m), deviceBytes: handle.deviceBytes });
  return handle;
}

/** Storage bytes of the converted matrix (float32 values, 32-bit indices). */
function storageBytes(c: Candidate, m: SparseMatrix | CsrMatrix): number {
  const nnz = (m as { nnz?: number }).nnz ?? (m as CsrMatrix).rowPtr[(m as CsrMatrix).rows]!;
  return getFormat(c.kernel.format).storageBytes(c.kernel.format === 'csr' ? { ...(m as CsrMatrix), nnz } : m, { valueBytes: 4, indexBytes: 4 }).bytes;
}

/**
 * A host conversion to a format not yet converted in the run is estimated at this many times the
 * dearest rate measured so far (per estimated byte). On the session-9 H100 host one run measured
 * 0.28 (COO), 0.69 (AXC), 0.84 (hybrid), 0.94 (CMRS) and 2.27 (BCSR) ms per estimated MB: BCSR,
 * admitted last at the 0.94 rate (~63 ms), took 153 ms and its upload 24 more, and the run
 * (cilike-6000-1000) ended at 566 ms of a 500 ms budget, its overhead over the issue-16 bound.
 * The prior before any measurement ({@link CONVERSION_MS_PER_BYTE}, 5 ms/MB) already is this
 * pessimistic.
 */
export const UNSEEN_FORMAT_FACTOR = 2.5;

/** Host preparation (ms) of candidate `c` before its upload: a conversion of another format (unless shared) or csr-vec4's padding. */
export function prepEstimateMs(s: TrialSession, c: Candidate, seen: ReadonlySet<string>): number {
  // a host format not converted yet in this run: its rate is not measured, only others' are
  const unseen = s.convMsPerByte > 0 && !CSR_RELAYOUT.has(c.kernel.id) && c.kernel.format !== 'csr' && !s.conv.onDevice(c) && !s.conv.hostFormatSeen(c.kernel.format);
  const rate = unseen ? UNSEEN_FORMAT_FACTOR * s.convMsPerByte : s.convMsPerByte || CONVERSION_MS_PER_BYTE;
  if (CSR_RELAYOUT.has(c.kernel.id)) return c.prepBytes * rate;
  return c.kernel.format === 'csr' || seen.has(c.conversionKey) ? 0 : s.conv.estimateMs(c, rate, s.live[0] && firstMs(s.live[0]), s.live[0]?.c.estimatedBytes);
}

/** The first live candidate's product time (ms): its probe, or its round median once timed. */
const firstMs = (f: Live): number => (f.samples.length ? medianOf(f.samples) : (f.probeMs ?? 0));

/**
 * A relayout whose preparation is at most this share of the work it serves (expected products ×
 * the floor's product time) is timed whatever the model predicts: the issue-16 overhead bound is
 * 10 % of that work, so its cost is affordable by the target's own terms, and the trials and the
 * objective decide (the device-built quads cost 1–8 ms on the H100, against 15–90 ms of work at
 * 10^3 products on the session-9 matrices).
 */
export const PREP_AFFORDABLE = 0.1;

/**
 * Why a CSR kernel that re-lays the matrix out (csr-vec4) is not worth its preparation, or
 * undefined: its optimistic gain over the first timed candidate (that one's measured product
 * time scaled by the model's work ratio, at the low end of the model's ×/÷ {@link ANALOGY_SPREAD}
 * interval for kernels it predicts by analogy) times the expected products must exceed the
 * estimated preparation. Optimistic, as the calibrated short-list: the static ratio put
 * csr-vec4 at 1.0–1.4× the floor where the H100 ran it 0.8–0.9× (session 9: the device-built
 * quads, ~1–8 ms, were refused on 12 of 21 matrices for a predicted gain of 0 ms); the trials
 * and the objective decide. A preparation within {@link PREP_AFFORDABLE} of the work always pays. O(1).
 */
export function prepDoesNotPay(s: Pick<TrialSession, 'live' | 'products' | 'convMsPerByte'>, c: Candidate): string | undefined {
  const first = s.live[0];
  if (!first || !CSR_RELAYOUT.has(c.kernel.id)) return undefined;
  const ms = firstMs(first);
  const optimisticMs = (ms * (c.work / Math.max(1e-12, first.c.work))) / ANALOGY_SPREAD;
  const gainMs = s.products * (ms - optimisticMs);
  const prepMs = c.prepBytes * (s.convMsPerByte || CONVERSION_MS_PER_BYTE);
  if (gainMs > prepMs || prepMs <= PREP_AFFORDABLE * s.products * ms) return undefined;
  return `conversion does not pay: host preparation ~${prepMs.toFixed(1)} ms > optimistic gain ${Math.max(0, gainMs).toFixed(1)} ms over ${s.products} products`;
}

/**
 * Why the calibrated model, anchored on the first timed candidate, rules candidate `c` out, or
 * undefined: the first (the CSR floor) has a measured product time and a prediction, and its
 * excess over the prediction corrects every prediction for this matrix as a fixed cost per
 * dispatch ({@link anchorPrediction}: the GPU's state and the cache effects the probes did not
 * see move all kernels alike); `c` is left out when even its optimistic objective (its anchored
 * interval's low end × the expected products, plus its estimated preparation `prepMs`) exceeds
 * the first's measured objective. Candidates without a prediction, and runs whose first has
 * none, are never refused here. O(1).
 */
export function modelRulesOut(s: Pick<TrialSession, 'live' | 'products'>, c: Candidate, prepMs: number): string | undefined {
  const first = s.live[0];
  if (!first || !c.prediction || !first.c.prediction) return undefined;
  const ms = firstMs(first);
  if (!(ms > 0)) return undefined;
  const anchored = anchorPrediction(c.prediction, termsOf(c.kernel).passes, { prediction: first.c.prediction, passes: termsOf(first.c.kernel).passes, ms });
  const best = s.products * anchored.low + prepMs;
  const leader = s.products * ms;
  if (best <= leader) return undefined;
  return `the calibrated model rules it out: at best ${anchored.low.toFixed(4)} ms a product (its interval's low end, anchored on the first candidate's measured ${ms.toFixed(4)} against predicted ${first.c.prediction.ms.toFixed(4)} ms) + ~${prepMs.toFixed(1)} ms preparation over ${s.products} products > the first's measured ${ms.toFixed(4)} ms`;
}

/** Estimated cost (ms) of admitting candidate `c`: its conversion (unless shared), upload and timing rounds. */
function admissionCost(s: TrialSession, c: Candidate, seen: ReadonlySet<string>): { ms: number; text: string } {
  const conv = prepEstimateMs(s, c, seen);
  const upload = c.kernel.format === 'csr' || s.conv.onDevice(c) ? 0 : c.estimatedBytes * s.uploadMsPerByte; // a device build uploads tables only
  const first = s.live[0];
  const productMs = first ? firstMs(first) * Math.max(0.25, c.predicted / Math.max(1e-12, first.c.predicted)) : 0;
  const timing = s.rounds * (1 + s.reps) * productMs;
  return { ms: conv + upload + timing, text: `conversion ~${conv.toFixed(1)}, upload ~${upload.toFixed(1)}, timing ~${timing.toFixed(1)} ms` };
}

/** Why the budget leaves candidate `c` out (the short-list goes on), or undefined when it fits. */
function budgetRefusal(s: TrialSession, c: Candidate, seen: ReadonlySet<string>, net = false): string | undefined {
  const unpaid = prepDoesNotPay(s, c);
  if (unpaid) return unpaid;
  const need = admissionCost(s, c, seen);
  // by product time only: what a conversion may cost is the budget's to limit (below), and the
  // decision weighs it by objective; the model only drops what cannot be faster at all
  const ruled = net ? undefined : modelRulesOut(s, c, 0);
  if (ruled) return ruled;
  const left = budgetLeft(s);
  return need.ms > left ? `budget: needs ~${need.ms.toFixed(1)} ms (${need.text}), ${Math.max(0, left).toFixed(1)} ms left` : undefined;
}

/** Candidates an exhaustive sweep times together in one group of rounds (besides the leaders kept from earlier groups). */
const EXHAUSTIVE_GROUP = 4;
/** Device matrices an exhaustive sweep keeps uploaded between groups (the fastest so far; the others keep their measurement). */
const EXHAUSTIVE_KEEP = 3;

/** Release the uploads of all but the `k` fastest timed live candidates (their trials keep the measurement). */
function keepFastest(s: TrialSession, k: number): void {
  const up = s.live.filter((f) => f.h && f.samples.length).sort((x, y) => medianOf(x.samples) - medianOf(y.samples));
  for (const f of up.slice(k)) {
    f.h!.dispose();
    f.h = undefined;
  }
}

/**
 * Prepare the short-listed candidates in order, each further one only when its estimated cost
 * fits in the budget (the first always: it sets the budget with its probed product time). In an
 * exhaustive sweep every candidate is prepared, and each group of {@link EXHAUSTIVE_GROUP} is
 * timed in interleaved rounds together with the {@link EXHAUSTIVE_KEEP} fastest so far (device
 * memory: the others are released). Fills `s.live`. Cost: per admitted candidate one conversion
 * (unless shared) and one upload.
 */
export async function admit(s: TrialSession, picks: readonly { c: Candidate; t: Trial; net?: boolean }[]): Promise<void> {
  const seen = new Set<string>();
  let fresh = 0;
  for (const { c, t, net } of picks) {
    if (s.live.length > 0 && !s.exhaustive) {
      const refusal = budgetRefusal(s, c, seen, net);
      if (refusal) {
        // the model's refusal after the first measurement is a short-list decision, the others the budget's
        t.status = refusal.startsWith('the calibrated model') ? 'skipped' : 'budget';
        t.reason = refusal;
        continue;
      }
    }
    t.reason = undefined;
    const f = await prepare(s, c, t);
    if (f) seen.add(c.conversionKey);
    // the first is probed at once: its product time sets the budget and the expected products
    if (f && (s.live.length > 0 || (await probe(s, f)))) {
      s.live.push(f);
      fresh++;
    }
    if (s.exhaustive && fresh >= EXHAUSTIVE_GROUP) {
      await timeRounds(s);
      keepFastest(s, EXHAUSTIVE_KEEP);
      fresh = 0;
    }
    s.onProgress?.({ phase: 'trial', done: s.live.length, total: picks.length, spentMs: spent(s), budgetMs: s.report.budgetMs, trial: t });
  }
}
