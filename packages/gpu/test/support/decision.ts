/**
 * What a tuning decision must satisfy whatever the timing (session 13, CI stability): on a loaded
 * 2-core CI machine with lavapipe the rounds are noisy, spreads overlap, and every round may be
 * discarded for the clock — so the tests do not assert which candidate wins a timing race, but
 * that the winner follows from the measurements the report shows, by the tuner's own rule
 * (`decideRounds` in src/autotune/rounds.ts). Uses vitest's expect.
 */
import { expect } from 'vitest';
import type { Trial, TuningReport } from '../../src/autotune/report';
import { SINGLE_ROUND_SPREAD } from '../../src/autotune/rounds';

const build = (t: Trial): number => (t.conversionMs ?? 0) + (t.uploadMs ?? 0);

/** A ranked trial's product-time spread as the decision saw it: its kept rounds, or ±25 % around a single one. */
function spread(t: Trial): [number, number] {
  return t.samples!.length >= 2 ? [t.loMs!, t.hiMs!] : [t.ms! / (1 + SINGLE_ROUND_SPREAD), t.ms! * (1 + SINGLE_ROUND_SPREAD)];
}

/**
 * The trials the decision ranked (timed with kept samples — or, when every round was discarded,
 * all rounds — and not rejected by verification), the winner and the best of them by what was
 * still to pay (objective; product time alone when `sunkBuild`: tunedOperator keeps the winner's
 * upload). Checks: the winner is one of them; it is the best, or the decision says uncertain and
 * it is the cheaper to build of two the measurement did not separate. Returns the winner and the best.
 */
export function expectSoundDecision(rep: TuningReport, opts: { sunkBuild?: boolean } = {}): { win: Trial; best: Trial } {
  const ranked = rep.trials.filter((t) => t.status === 'timed' && t.samples !== undefined && t.verified !== false);
  const win = ranked.find((t) => t.kernel === rep.winner!.kernel && JSON.stringify(t.params) === JSON.stringify(rep.winner!.params));
  expect(win, `the winner ${rep.winner?.kernel} among the ranked trials`).toBeDefined();
  const cost = (t: Trial, ms: number) => (opts.sunkBuild ? 0 : build(t)) + rep.expectedProducts * ms;
  const best = ranked.reduce((x, y) => (cost(y, y.ms!) < cost(x, x.ms!) ? y : x));
  const d = rep.decision!;
  if (d.cheaperToBuild) {
    expect(d.uncertain).toBe(true);
    expect(build(win!)).toBeLessThan(build(best));
    // not separated: the best's worst does not beat the winner's best (rounds.ts `separated`)
    expect(cost(win!, spread(win!)[0])).toBeLessThanOrEqual(cost(best, spread(best)[1]));
  } else expect(cost(win!, win!.ms!)).toBe(cost(best, best.ms!));
  return { win: win!, best };
}

/**
 * When the budget admitted only the first candidate (a loaded CI machine: the fixed costs — the
 * statistics, compiles, the floor's probe — can take most of it), that must be the budget's doing:
 * every candidate it left out says it needs more than was left, or the report's budget note names
 * the fixed costs that passed it. Call it where the budget leaves room for more on a quiet machine.
 */
export function expectOnlyBudgetLimited(rep: TuningReport): void {
  if (rep.timed > 1) return;
  const refused = rep.trials.filter((t) => t.status === 'budget' && /^budget: needs/.test(t.reason ?? ''));
  expect(refused.length + (rep.budgetNote ? 1 : 0), 'a budget refusal or note').toBeGreaterThan(0);
  for (const t of refused) {
    const [, need, left] = /needs ~([\d.]+) ms .*?, ([\d.]+) ms left/.exec(t.reason!)!.map(Number);
    expect(need!).toBeGreaterThanOrEqual(left!); // shown to 0.1 ms
  }
}
