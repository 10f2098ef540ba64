/**
 * Stage 4 of a tuning run, the decision: rank the timed candidates by objective (the expected
 * total cost to the caller: conversion + upload + expected products × product time), say whether
 * the winner is separated from the runner-up by the measurement, verify in rank order on the
 * device matrix the trials already uploaded (a candidate that fails verification is rejected with
 * its error and the next one is verified), and fall back to the CSR floor when nothing on the
 * short-list runs and verifies. Only when no kernel at all works is a {@link TuningError} raised,
 * naming every candidate's reason.
 * @module
 */
import type { Candidate } from './candidates';
import type { Trial, TuningDecision } from './report';
import { type Live, prepare, sample, type TrialSession } from './trials';
import { type Held, medianOf, TuningError } from './types';
import { verifyProduct } from './verify';

const base = (t: Trial): number => (t.conversionMs ?? 0) + (t.uploadMs ?? 0);

/** Objective (ms) of a timed trial at product time `ms`. */
const objectiveAt = (t: Trial, products: number, ms: number): number => base(t) + products * ms;

/** The live, timed candidates by objective, best first (objectiveMs set on each). O(n log n). */
export function ranked(s: TrialSession): Live[] {
  const timed = s.live.filter((f) => f.t.status === 'timed' && f.samples.length > 0);
  for (const f of timed) f.t.objectiveMs = objectiveAt(f.t, s.products, medianOf(f.samples));
  const out = timed.filter((f) => f.h);
  return out.sort((x, y) => x.t.objectiveMs! - y.t.objectiveMs!);
}

/**
 * True when the best two objectives overlap over their product-time spreads (the measurement does
 * not separate them), or when the leader has a single sample (a one-product probe or one round:
 * no spread to compare; on a loaded machine one product varied 50× between rounds).
 */
export function uncertain(s: TrialSession): boolean {
  const [w, r] = ranked(s);
  if (!w || !r) return false;
  if (w.samples.length < 2) return true;
  return objectiveAt(w.t, s.products, Math.max(...w.samples)) >= objectiveAt(r.t, s.products, Math.min(...r.samples));
}

const label = (t: Trial) => `${t.kernel}(${Object.entries(t.params).map(([k, v]) => `${k}=${v}`).join(',')})`;

/** The decision record: rounds, runner-up, whether their spreads overlap, one sentence. */
function describe(s: TrialSession, order: Live[], rounds: number): TuningDecision {
  const [w, r] = order;
  if (!w) return { rounds, uncertain: false, note: 'no short-listed candidate was timed; the CSR floor was taken' };
  if (!r) return { rounds, uncertain: false, note: `${label(w.t)} was the only candidate timed (the budget admitted no other)` };
  const un = uncertain(s);
  const gain = r.t.objectiveMs! / w.t.objectiveMs! - 1;
  const spread = (t: Trial) => `${t.loMs!.toPrecision(3)}–${t.hiMs!.toPrecision(3)} ms`;
  const why = w.samples.length < 2 ? `${label(w.t)} was timed once (no second round fitted the budget), so its spread is unknown` : `product spreads ${spread(w.t)} vs ${spread(r.t)} overlap`;
  const note = un
    ? `${label(w.t)} and ${label(r.t)} are not separated: ${why} (objectives differ by ${(100 * gain).toFixed(1)} %); either is a sound choice`
    : `${label(w.t)} beats ${label(r.t)} by ${(100 * gain).toFixed(1)} % in objective, spreads ${spread(w.t)} vs ${spread(r.t)} apart`;
  return { rounds, uncertain: un, note, runnerUp: { kernel: r.t.kernel, params: { ...r.t.params }, ms: r.t.ms!, loMs: r.t.loMs!, hiMs: r.t.hiMs! } };
}

/** Verify one live candidate on its own upload; records the outcome on its trial. */
async function verified(s: TrialSession, f: Live): Promise<boolean> {
  const t0 = performance.now();
  try {
    const res = await verifyProduct(s.ctx, s.a, f.c, f.m, f.h!, s.v);
    Object.assign(f.t, { verified: res.ok, maxErrOverBound: res.maxErrOverBound, verifiedRows: res.rows });
    if (!res.ok) f.t.error = `verification failed: error/bound ${res.maxErrOverBound.toExponential(2)} at row ${res.row}`;
    return res.ok;
  } catch (e) {
    if (s.ctx.isLost) throw e;
    Object.assign(f.t, { verified: false, error: `verification failed: ${(e as Error).message}` });
    return false;
  } finally {
    s.report.costs.verifyMs += performance.now() - t0;
  }
}

/** The CSR floor, tried in turn after the short-list gave nothing: upload, one timing sample, verification. */
async function fromFloor(s: TrialSession, floor: readonly { c: Candidate; t: Trial }[]): Promise<Live | undefined> {
  for (const { c, t } of floor) {
    const f = await prepare(s, c, t);
    if (!f) continue;
    s.live.push(f);
    const timed = await sample(s, f);
    if (timed && s.report.firstProductMs === undefined) {
      s.report.firstProductMs = f.samples[0];
      s.report.budgetMs = s.budgetFrom(f.samples[0]!);
    }
    if (timed && (await verified(s, f))) {
      s.report.timed++;
      f.t.objectiveMs = objectiveAt(f.t, s.products, f.t.ms!);
      return f;
    }
    s.report.rejected += f.t.verified === false ? 1 : 0;
  }
  return undefined;
}

/** Every candidate's reason, for the error when no kernel works. */
function reasons(trials: readonly Trial[]): string {
  const told = trials.filter((t) => t.error || t.status === 'pruned');
  return told.map((t) => `${label(t)}: ${t.error ?? t.reason}`).join('; ');
}

/**
 * Decide: rank, verify in rank order (rejecting failures), else the CSR floor; dispose every
 * upload but the winner's (kept in `held` when asked). Sets the report's winner and decision.
 * Cost: one verification per candidate tried; the floor costs an upload and a timing each.
 * @throws TuningError when no kernel runs and verifies, with every candidate's reason
 */
export async function decide(s: TrialSession, rounds: number, floor: readonly { c: Candidate; t: Trial }[], held: Held): Promise<Trial> {
  const order = ranked(s);
  s.report.decision = describe(s, order, rounds);
  let win: Live | undefined;
  try {
    for (const f of order) {
      s.onProgress?.({ phase: 'verify', done: s.report.trials.length, total: s.report.trials.length, spentMs: performance.now() - s.start, budgetMs: s.report.budgetMs, trial: f.t });
      if (await verified(s, f)) {
        win = f;
        break;
      }
      s.report.rejected++;
    }
    if (!win) {
      win = await fromFloor(s, floor);
      if (win) s.report.decision.note = `nothing on the short-list ran and verified; the CSR floor ${label(win.t)} was taken`;
    }
  } finally {
    for (const f of s.live) if (f !== win || !held.keep) f.h?.dispose();
    s.conv.clear();
  }
  if (!win) {
    throw new TuningError(`autotune: expected a kernel that runs and passes verification on this ${s.a.rows}×${s.a.cols} matrix (${s.report.nnz} nnz), got none (${s.report.timed} timed, ${s.report.failed} failed, ${s.report.rejected} rejected): ${reasons(s.report.trials) || 'no candidate'}`);
  }
  if (held.keep) held.handle = win.h;
  const t = win.t;
  s.report.winner = { kernel: t.kernel, params: { ...t.params }, ms: t.ms!, loMs: t.loMs, hiMs: t.hiMs, objectiveMs: t.objectiveMs, gflops: t.gflops };
  return t;
}

/**
 * In-solve tuning: verify every live candidate on its own upload (rejecting failures), keep the
 * verified ones in `held.inSolve` for the solve to time (the first, the timed CSR floor, is the
 * provisional winner), and dispose the rest. Falls back to {@link decide} when fewer than two
 * verify. Cost: one verification per live candidate.
 */
export async function deferToSolve(s: TrialSession, floor: readonly { c: Candidate; t: Trial }[], held: Held): Promise<Trial> {
  const ok: Live[] = [];
  for (const f of s.live) {
    if (f.h && (await verified(s, f))) ok.push(f);
    else if (f.h) s.report.rejected++;
  }
  if (ok.length < 2) return decide(s, 1, floor, held);
  for (const f of s.live) if (!ok.includes(f)) f.h?.dispose();
  s.conv.clear();
  held.inSolve = ok.map((f) => ({ kernel: f.c.kernel, handle: f.h!, params: { ...f.c.kernel.defaults, ...f.c.params }, trial: f.t }));
  for (const f of ok.slice(1)) f.t.reason = 'verified; timed in the first products of the solve';
  const t = ok[0]!.t;
  s.report.winner = { kernel: t.kernel, params: { ...t.params }, ms: t.ms!, gflops: t.gflops };
  s.report.decision = { rounds: 0, uncertain: true, note: `in-solve: ${ok.length} verified candidates will run the first products of the solve in turn; ${label(t)} until the timestamps are read` };
  return t;
}
