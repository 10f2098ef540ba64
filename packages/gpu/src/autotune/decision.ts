/**
 * Stage 4 of a tuning run, the decision: rank the timed candidates by objective (the expected
 * total cost still to pay: conversion + upload + expected products × product time, the
 * conversion and upload counted as 0 when the winner's upload becomes the caller's operator —
 * spent whichever wins, see `buildCostLeft` in trials.ts), say whether
 * the winner is separated from the runner-up by the measurement, verify in rank order on the
 * device matrix the trials already uploaded (a candidate that fails verification is rejected with
 * its error and the next one is verified), and fall back to the CSR floor when nothing on the
 * short-list runs and verifies. Only when no kernel at all works is a {@link TuningError} raised,
 * naming every candidate's reason.
 * @module
 */
import { prepare } from './admission';
import type { Candidate } from './candidates';
import type { Trial, TuningDecision } from './report';
import { byObjective, type Contender, keptSamples, noKeptRound, type RoundsRun, SINGLE_ROUND_SPREAD, summarise } from './rounds';
import { buildCostLeft, type Live, probe, type TrialSession, timeRounds } from './trials';
import { type Held, TuningError } from './types';
import { verifyProduct } from './verify';

const base = (t: Trial): number => (t.conversionMs ?? 0) + (t.uploadMs ?? 0);

/** The rounds' contenders (index i = live[i]): kept-round summaries of those still uploaded, with the build cost left to pay. */
const contenders = (s: Pick<TrialSession, 'sunkBuild'>, timed: { run: RoundsRun; live: Live[] }): Contender[] => timed.live.map((f, i) => ({ base: buildCostLeft(s, f), summary: f.h ? timed.run.summaries[i] : undefined }));

export { noKeptRound } from './rounds';

/** The contenders summarised over all rounds (see {@link noKeptRound}): ranked on noisy rounds rather than on none. */
const allRounds = (s: Pick<TrialSession, 'sunkBuild'>, timed: { run: RoundsRun; live: Live[] }): Contender[] =>
  timed.live.map((f, i) => ({ base: buildCostLeft(s, f), summary: f.h && !timed.run.failed.includes(i) ? summarise(keptSamples(timed.run.times, 0, i)) : undefined }));

/**
 * The order to verify in: the rounds' winner (the best objective of what is still to pay, or the cheaper to build when
 * spreads overlap), then the others by objective; objectiveMs set on every timed trial. O(n log n).
 */
export function verifyOrder(s: Pick<TrialSession, 'products' | 'live' | 'sunkBuild'>, timed?: { run: RoundsRun; live: Live[] }): Live[] {
  if (!timed) return [];
  // every timed trial gets its objective (those timed only in discarded rounds, or in an earlier
  // group of an exhaustive sweep, too: shown, ranked only through the rounds), also when every
  // round was discarded for the clock (a noisy CI machine): the report never lacks it
  for (const f of s.live) if (f.t.status === 'timed' && f.t.ms !== undefined) f.t.objectiveMs = base(f.t) + s.products * f.t.ms;
  // with every round discarded nothing would be ranked, and a working kernel set would end in a TuningError
  if (noKeptRound(timed.run)) return byObjective(allRounds(s, timed), s.products).map((i) => timed.live[i]!);
  const cs = contenders(s, timed);
  const w = timed.run.decision.winner;
  const rest = byObjective(cs, s.products).filter((i) => i !== w);
  return [...(w !== undefined && cs[w]!.summary ? [w] : []), ...rest].map((i) => timed.live[i]!);
}

const label = (t: Trial) => `${t.kernel}(${Object.entries(t.params).map(([k, v]) => `${k}=${v}`).join(',')})`;
const spread = (t: Trial) => `${t.loMs!.toPrecision(3)}–${t.hiMs!.toPrecision(3)} ms`;

/** A trial as the decision's runner-up (it has a spread), else undefined. */
const runnerUpOf = (t: Trial | undefined): TuningDecision['runnerUp'] =>
  t?.ms !== undefined && t.loMs !== undefined && t.hiMs !== undefined ? { kernel: t.kernel, params: { ...t.params }, ms: t.ms, loMs: t.loMs, hiMs: t.hiMs } : undefined;

/**
 * The decision record when every round was discarded for the clock ({@link noKeptRound}): ranked
 * on all rounds (`record` in trials.ts put their median and spread on each trial), uncertain, the
 * next in that ranking as the runner-up — the same fields as a decision on kept rounds.
 */
function allDiscarded(run: RoundsRun, order: readonly Live[]): TuningDecision {
  const n = run.times.length;
  const note = `every one of the ${n} rounds was discarded for the clock (too noisy to find a settled one): ranked on all of them, ${label(order[0]!.t)} first; uncertain`;
  return { rounds: 0, discardedRounds: run.from, uncertain: true, cheaperToBuild: false, note, runnerUp: runnerUpOf(order[1]?.t) };
}

/** The decision record: kept and discarded rounds, runner-up, whether their spreads overlap, one sentence. Exported for the tests. */
export function describeDecision(s: Pick<TrialSession, 'sunkBuild'>, order: Live[], timed?: { run: RoundsRun; live: Live[] }): TuningDecision {
  const run = timed?.run;
  const rounds = run ? run.times.length - run.from : 0;
  const discardedRounds = run?.from ?? 0;
  const clock = discardedRounds ? `; ${discardedRounds} earlier round${discardedRounds > 1 ? 's' : ''} discarded (the clock was still rising)` : '';
  const [w] = order;
  if (!w || !run) return { rounds, discardedRounds, uncertain: false, note: 'no short-listed candidate was timed; the CSR floor was taken' };
  if (noKeptRound(run)) return allDiscarded(run, order);
  const rIdx = run.decision.runnerUp;
  const r = rIdx !== undefined ? timed!.live[rIdx] : undefined;
  if (!r || r.t.ms === undefined || r.t.loMs === undefined) return { rounds, discardedRounds, uncertain: false, note: `${label(w.t)} was the only candidate timed (the budget admitted no other)${clock}` };
  const un = run.decision.uncertain;
  // with the builds spent (the winner's upload becomes the operator) only the products are left to weigh
  const what = s.sunkBuild ? 'product time (conversions and uploads already spent)' : 'objective';
  const gain = s.sunkBuild ? Math.abs(r.t.ms / w.t.ms! - 1) : Math.abs(r.t.objectiveMs! / w.t.objectiveMs! - 1);
  const single = w.samples.length < 2 || r.samples.length < 2;
  const why = single ? `one of them has a single kept round (no second fitted the budget), so a ±${100 * SINGLE_ROUND_SPREAD} % spread is assumed` : `product spreads ${spread(w.t)} vs ${spread(r.t)} overlap`;
  const pick = run.decision.cheaper
    ? `; ${label(r.t)} has the better objective at the median by ${(100 * gain).toFixed(1)} %, but the cheaper to build (conversion + upload ${base(w.t).toFixed(1)} vs ${base(r.t).toFixed(1)} ms) was taken`
    : ` (${s.sunkBuild ? 'product times' : 'objectives'} differ by ${(100 * gain).toFixed(1)} %); either is a sound choice`;
  const note = un
    ? `${label(w.t)} and ${label(r.t)} are not separated after ${rounds} kept round${rounds === 1 ? '' : 's'}: ${why}${pick}${clock}`
    : `${label(w.t)} beats ${label(r.t)} by ${(100 * gain).toFixed(1)} % in ${what} over ${rounds} kept round${rounds === 1 ? '' : 's'}${single ? '' : `, spreads ${spread(w.t)} vs ${spread(r.t)} apart`}${clock}`;
  return { rounds, discardedRounds, uncertain: un, cheaperToBuild: run.decision.cheaper, note, runnerUp: runnerUpOf(r.t) };
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
    const timed = await probe(s, f);
    if (timed && (await verified(s, f))) {
      s.report.timed++;
      f.t.objectiveMs = base(f.t) + s.products * f.t.ms!;
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
export async function decide(s: TrialSession, timed: { run: RoundsRun; live: Live[] } | undefined, floor: readonly { c: Candidate; t: Trial }[], held: Held): Promise<Trial> {
  const order = verifyOrder(s, timed);
  s.report.decision = describeDecision(s, order, timed);
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
    else if (f.h) {
      s.report.rejected++;
      f.h.dispose();
      f.h = undefined;
    }
  }
  // fewer than two to choose from in the solve: time what is left in rounds and decide now
  if (ok.length < 2) return decide(s, await timeRounds(s), floor, held);
  for (const f of s.live) if (!ok.includes(f)) f.h?.dispose();
  s.conv.clear();
  // the provisional winner runs until the timestamps are read: the probed one when it verified; when it
  // was rejected none has a product time yet, and the report names no winner until the solve's timing
  // does (it never carries a winner without its ms)
  const first = ok.find((f) => f.t.ms !== undefined) ?? ok[0]!;
  const order = [first, ...ok.filter((f) => f !== first)];
  held.inSolve = order.map((f) => ({ kernel: f.c.kernel, handle: f.h!, params: { ...f.c.kernel.defaults, ...f.c.params }, trial: f.t }));
  for (const f of order.slice(1)) f.t.reason = 'verified; timed in the first products of the solve';
  const t = first.t;
  s.report.winner = t.ms !== undefined ? { kernel: t.kernel, params: { ...t.params }, ms: t.ms, gflops: t.gflops } : undefined;
  s.report.decision = { rounds: 0, uncertain: true, note: `in-solve: ${ok.length} verified candidates will run the first products of the solve in turn; ${label(t)} until the timestamps are read` };
  return t;
}
