/**
 * Interleaved timing rounds and what they can tell (no device here: the rounds are taken by a
 * {@link RoundTimer}, `round-timer.ts` on a device, a fake one in the tests).
 *
 * Why rounds: on the H100 the SM clock sits at 345–480 MHz while GPU work comes in bursts and
 * reaches 1 980 MHz only after continuous work, and the same product then runs 2–4× faster
 * (bench/RESULTS.md, session 6). A ranking of candidates timed one after another, each at the
 * clock of its moment, is not a ranking. So every round times all candidates back to back in one
 * stream of GPU work (A B C, then B C A, …), and the clock state is read from the samples
 * themselves: while the clock rises, a round's times fall below the earlier rounds' — those
 * earlier rounds are discarded ({@link firstStableRound}) and more rounds are run until enough
 * stable ones are kept. Each candidate's time is the median over the kept rounds, its spread the
 * smallest and largest kept round, and the decision is `uncertain` when the leader's spread
 * overlaps the runner-up's.
 * @module
 */
import { medianOf } from './types';

/**
 * Times one round: `order` lists candidate indices; returns each one's product time (ms, the
 * median of its `reps` repetitions in this round; NaN when its products failed) in the same
 * order. The candidates must run back to back, with no host pause between them, so that they
 * all see one clock.
 */
export type RoundTimer = (order: readonly number[], reps: number) => Promise<number[]>;

/**
 * A round slower than the fastest round by more than this share (the median over candidates of
 * each one's time over its own fastest) counts as taken at a lower clock. The H100's clock states
 * differ by 2–4×; repeated rounds at one clock differ by a few per cent.
 */
export const CLOCK_TOLERANCE = 0.1;

/** times[round][candidate]: ms, or undefined where the candidate did not run in that round. */
export type RoundTimes = (number | undefined)[][];

/**
 * Per round, how slow it ran: the median over its candidates of (time / that candidate's fastest
 * round). 1 is the fastest clock seen; 2.7 a round at the H100's idle clock. O(rounds · n log n).
 * @example clockIndex([[3, 6], [1, 2]]) // [3, 1]
 */
export function clockIndex(times: RoundTimes): number[] {
  const n = Math.max(0, ...times.map((r) => r.length));
  const best: number[] = [];
  for (let i = 0; i < n; i++) best.push(Math.min(...times.map((r) => r[i] ?? Number.POSITIVE_INFINITY)));
  return times.map((r) => {
    const ratios = r.flatMap((ms, i) => (ms !== undefined && best[i]! > 0 ? [ms / best[i]!] : []));
    return ratios.length ? medianOf(ratios) : 1;
  });
}

/**
 * The first round taken at the settled clock: rounds before it ran more than `tol` slower than the
 * fastest round (the clock was still rising), and are discarded. A slow round later on (a load
 * burst on the host) is kept: it widens the spread instead of throwing away good rounds.
 * O(rounds · n log n).
 * @example firstStableRound([[3, 6], [1.3, 2.5], [1, 2], [1.02, 2.01]]) // 2
 */
export function firstStableRound(times: RoundTimes, tol = CLOCK_TOLERANCE): number {
  const idx = clockIndex(times);
  const r = idx.findIndex((v) => v <= 1 + tol);
  return r < 0 ? times.length : r;
}

/** One candidate's kept samples: its times in rounds `from` on. */
export function keptSamples(times: RoundTimes, from: number, i: number): number[] {
  return times.slice(from).flatMap((r) => (r[i] === undefined ? [] : [r[i]!]));
}

/** Median and spread of one candidate over the kept rounds. */
export interface RoundSummary {
  readonly ms: number;
  readonly loMs: number;
  readonly hiMs: number;
  readonly samples: number[];
}

/** Median, smallest and largest of the kept samples; undefined when none. */
export function summarise(samples: readonly number[]): RoundSummary | undefined {
  if (samples.length === 0) return undefined;
  return { ms: medianOf(samples), loMs: Math.min(...samples), hiMs: Math.max(...samples), samples: [...samples] };
}

/** A candidate as the decision sees it: `base` is its build cost (ms: conversion + upload). */
export interface Contender {
  readonly base: number;
  readonly summary?: RoundSummary;
}

/** Objective (ms) at product time `ms`: build cost + products · ms. */
export const objective = (c: Contender, products: number, ms: number): number => c.base + products * ms;

/** Indices of the contenders with a summary, best objective (at the median) first. */
export function byObjective(cs: readonly Contender[], products: number): number[] {
  const idx = cs.flatMap((c, i) => (c.summary ? [i] : []));
  return idx.sort((x, y) => objective(cs[x]!, products, cs[x]!.summary!.ms) - objective(cs[y]!, products, cs[y]!.summary!.ms));
}

/**
 * The spread assumed around a single kept round (no spread measured): ±25 %. Wider than the
 * H100's round-to-round spread at one clock (about 1 %), so that one round separates only a clear
 * gap (a 4× slower kernel is not "uncertain"), while close calls stay uncertain.
 */
export const SINGLE_ROUND_SPREAD = 0.25;

/** A summary's spread: the kept rounds' smallest and largest, or ±{@link SINGLE_ROUND_SPREAD} around a single round. */
function spreadOf(s: RoundSummary): [number, number] {
  return s.samples.length >= 2 ? [s.loMs, s.hiMs] : [s.ms / (1 + SINGLE_ROUND_SPREAD), s.ms * (1 + SINGLE_ROUND_SPREAD)];
}

/**
 * Whether contender `w` is separated from `r`: `w`'s worst kept round still beats `r`'s best, in
 * objective (a single kept round counts with the assumed spread {@link SINGLE_ROUND_SPREAD}). O(1).
 */
export function separated(w: Contender, r: Contender, products: number): boolean {
  if (!w.summary || !r.summary) return false;
  return objective(w, products, spreadOf(w.summary)[1]) < objective(r, products, spreadOf(r.summary)[0]);
}

/** What a set of rounds decided. */
export interface RoundsDecision {
  /** The chosen contender (index), undefined when none was timed. */
  readonly winner?: number;
  /** The best other contender by objective. */
  readonly runnerUp?: number;
  /** True when the best by median was not separated from another (see {@link separated}). */
  readonly uncertain: boolean;
  /** True when the best by median was not separated and the cheaper-to-build one of the unseparated was taken instead. */
  readonly cheaper: boolean;
}

/**
 * Decide between contenders: the best objective at the median; when its spread overlaps others',
 * the decision is uncertain and the cheapest to build (least conversion + upload; ties by median
 * objective) among those it is not separated from is taken — the measurement cannot tell them
 * apart, the build cost can. O(n log n).
 * @example decideRounds([{ base: 0, summary: s1 }, { base: 50, summary: s2 }], 1000)
 */
export function decideRounds(cs: readonly Contender[], products: number): RoundsDecision {
  const order = byObjective(cs, products);
  const [best, second] = order;
  if (best === undefined) return { uncertain: false, cheaper: false };
  if (second === undefined) return { winner: best, uncertain: false, cheaper: false };
  const tied = order.filter((i) => i === best || !separated(cs[best]!, cs[i]!, products));
  if (tied.length === 1) return { winner: best, runnerUp: second, uncertain: false, cheaper: false };
  const winner = tied.reduce((x, y) => (cs[y]!.base < cs[x]!.base ? y : x));
  return { winner, runnerUp: winner === best ? second : best, uncertain: true, cheaper: winner !== best };
}

/** When to stop taking rounds. */
export interface RoundsPlan {
  /** Kept (stable-clock) rounds wanted (default 3): fewer when the ranking is clear after two, up to twice while uncertain. */
  readonly rounds: number;
  /** Rounds run, discarded ones included, before a separated ranking may stop them (the tuner: 3, the probe round and two full ones). */
  readonly minRounds: number;
  /** Most rounds in all, discarded ones included. */
  readonly maxRounds: number;
  /** Expected products (the objective's weight on product time). */
  readonly products: number;
  /** Build cost (ms) of each contender: conversion + upload. */
  readonly base: readonly number[];
  /** Timed repetitions per contender and round. */
  readonly reps: number;
  /** Repetitions of the first round (default 1): a probe — a contender far slower than the others is not timed again, and the budget sees the round's cost before a full one. */
  readonly firstReps?: number;
  /** Whether one more round, estimated at this many ms from the last one, fits the budget. */
  readonly fits: (nextRoundMs: number) => boolean;
  /** After two kept rounds, stop timing a contender whose fastest kept round is over this × the best median (default 2). */
  readonly dropOver?: number;
  /** Before two kept rounds, stop timing a contender over this × the fastest of the latest round (default {@link PROBE_DROP}; Infinity: never). */
  readonly probeDrop?: number;
  readonly tol?: number;
}

/** The rounds taken and what they show. */
export interface RoundsRun {
  readonly times: RoundTimes;
  /** First kept round: the rounds before it ran at a lower clock (see {@link firstStableRound}). */
  readonly from: number;
  /** Per contender, its kept samples' median and spread (undefined: never timed). */
  readonly summaries: (RoundSummary | undefined)[];
  readonly decision: RoundsDecision;
  /** Why the rounds stopped: 'clear' (separated after two kept rounds), 'rounds', 'uncertain' (2 × rounds kept, still not separated), 'budget', 'max'. */
  readonly stopped: 'clear' | 'rounds' | 'uncertain' | 'budget' | 'max';
  /** Contenders whose products failed (the timer gave NaN, ±Infinity or a negative time): not timed after that round. */
  readonly failed: number[];
}

/**
 * Whether every round of the run was discarded for the clock: no round's clock index came within
 * the tolerance, which happens when the rounds are so noisy that each candidate's fastest falls in
 * another round (a loaded CPU adapter: 1.7 vs 12 ms for one kernel). The trials then record, and
 * the decision ranks on, all rounds (`trials.ts`, `decision.ts`). O(1).
 */
export const noKeptRound = (run: Pick<RoundsRun, 'times' | 'from'>): boolean => run.times.length > 0 && run.from >= run.times.length;

/** The run so far: summaries over the kept rounds and the decision they give. */
function assess(times: RoundTimes, plan: RoundsPlan, failed: readonly number[] = []): { from: number; summaries: (RoundSummary | undefined)[]; decision: RoundsDecision } {
  const from = firstStableRound(times, plan.tol);
  const summaries = plan.base.map((_, i) => (failed.includes(i) ? undefined : summarise(keptSamples(times, from, i))));
  const decision = decideRounds(plan.base.map((base, i) => ({ base, summary: summaries[i] })), plan.products);
  return { from, summaries, decision };
}

/**
 * Contenders still timed next round: before two kept rounds, those within {@link PROBE_DROP} of the
 * fastest in the latest round (one round is one clock, but the ranking may still change with it);
 * after, those whose fastest kept round is within `dropOver` of the best median. Never fewer than two.
 */
function stillRunning(s: (RoundSummary | undefined)[], last: readonly (number | undefined)[], active: readonly number[], kept: number, plan: RoundsPlan): number[] {
  const inf = Number.POSITIVE_INFINITY;
  const on =
    kept < 2
      ? active.filter((i) => (last[i] ?? 0) <= (plan.probeDrop ?? PROBE_DROP) * Math.min(...active.map((j) => last[j] ?? inf)))
      : active.filter((i) => (s[i]?.loMs ?? 0) <= (plan.dropOver ?? 2) * Math.min(...active.map((j) => s[j]?.ms ?? inf)));
  return on.length >= 2 ? on : [...active];
}

/**
 * A contender over this many times the fastest of the same round is not timed again before two
 * rounds are kept: wider than any clock effect on a ranking seen on the H100 (one kernel 2–4× at
 * the idle clock), so only a kernel that cannot win is dropped, and a very slow one (a 30× kernel
 * on power-law rows took 2 s of a 1 s budget) costs one probe product.
 */
export const PROBE_DROP = 4;

/** Why to stop after this round (`kept`: full rounds kept), or undefined to go on. */
function stopAfter(plan: RoundsPlan, rounds: number, kept: number, decision: RoundsDecision): RoundsRun['stopped'] | undefined {
  if (decision.winner === undefined) return undefined;
  if (kept >= 2 && rounds >= plan.minRounds && !decision.uncertain) return kept >= plan.rounds ? 'rounds' : 'clear';
  if (kept >= 2 * plan.rounds) return decision.uncertain ? 'uncertain' : 'rounds';
  return undefined;
}

/**
 * Take interleaved rounds over `plan.base.length` contenders until the kept rounds decide: the
 * start rotates per round (A B C, B C A, …); rounds taken while the clock was rising are dropped
 * ({@link firstStableRound}); it stops when, after `minRounds` rounds and two kept ones, the leader
 * is separated ('clear', or 'rounds' once `rounds` are kept), after 2 × `rounds` kept rounds
 * ('uncertain' when still not separated), when the next round does not fit the budget (the first
 * round always runs), or after `maxRounds`. Cost: per round one call of `timer`.
 * @example const run = await runRounds(timer, { rounds: 3, minRounds: 3, maxRounds: 12, reps: 5, products: 1000, base: [0, 40], fits: () => true });
 */
export async function runRounds(timer: RoundTimer, plan: RoundsPlan): Promise<RoundsRun> {
  const times: RoundTimes = [];
  const failed: number[] = [];
  let active = plan.base.map((_, i) => i);
  let state = assess(times, plan);
  let next = 0; // estimated ms of the next round (after the first)
  for (let r = 0; r < plan.maxRounds && active.length > 0; r++) {
    if (r > 0 && !plan.fits(next)) return { times, ...state, stopped: 'budget', failed };
    const order = active.map((_, k) => active[(k + r) % active.length]!);
    const reps = r === 0 ? (plan.firstReps ?? 1) : plan.reps;
    const t0 = performance.now();
    const ms = await timer(order, reps);
    const roundMs = performance.now() - t0;
    const row: (number | undefined)[] = plan.base.map(() => undefined);
    order.forEach((i, k) => {
      // a contender whose products failed in this round (NaN) is not timed again; nor one timed
      // below zero (end before begin: a counter that wrapped or was reset), which would win
      const t = ms[k]!;
      if (Number.isFinite(t) && t >= 0) row[i] = t;
      else failed.push(i);
    });
    times.push(row);
    state = assess(times, plan, failed);
    // the probe round (few repetitions) counts for the spread, not towards the rounds wanted
    const stop = stopAfter(plan, times.length, times.length - Math.max(1, state.from), state.decision);
    if (stop) return { times, ...state, stopped: stop, failed };
    const before = active.length;
    active = stillRunning(state.summaries, row, active.filter((i) => !failed.includes(i)), times.length - state.from, plan);
    next = (roundMs * ((plan.reps + 1) / (reps + 1)) * active.length) / Math.max(1, before);
  }
  return { times, ...state, stopped: 'max', failed };
}
