/**
 * Session 8: the interleaved timing rounds (autotune/rounds.ts) fed hostile timer values by a
 * fake timer (no device): a negative time (timestamps whose end precedes their begin) used to
 * make its candidate the winner; it now counts as a failed measurement, like NaN and Infinity.
 * Also checked: one candidate, all failing, zero and huge times.
 */
import { describe, expect, it } from 'vitest';
import { type RoundTimer, runRounds } from '../src/autotune/rounds';

const plan = (n: number) => ({ rounds: 3, minRounds: 3, maxRounds: 12, reps: 5, products: 1000, base: new Array<number>(n).fill(0), fits: () => true });
const timer =
  (f: (i: number) => number): RoundTimer =>
  async (order) =>
    order.map(f);

describe('timing rounds with hostile timer values', () => {
  it('a negative time is a failed measurement, not the winner', async () => {
    const r = await runRounds(
      timer((i) => (i === 2 ? -5 : 1 + i)),
      plan(3),
    );
    expect(r.decision.winner).toBe(0);
    expect(r.failed).toEqual([2]);
    expect(r.summaries[2]).toBeUndefined();
  });
  it('NaN and Infinity are failed measurements; with all failing there is no winner and the rounds stop', async () => {
    const all = await runRounds(
      timer(() => Number.NaN),
      plan(3),
    );
    expect(all.decision.winner).toBeUndefined();
    expect(all.failed).toEqual([0, 1, 2]);
    expect(all.times).toHaveLength(1);
    const inf = await runRounds(
      timer((i) => (i === 0 ? Number.POSITIVE_INFINITY : 1)),
      plan(2),
    );
    expect(inf.decision.winner).toBe(1);
    expect(inf.failed).toEqual([0]);
  });
  it('one candidate wins after its rounds; a huge time loses; a zero time (quantised) is kept', async () => {
    expect((await runRounds(timer(() => 1), plan(1))).decision.winner).toBe(0);
    expect((await runRounds(timer((i) => (i === 0 ? 1e300 : 1)), plan(2))).decision.winner).toBe(1);
    const zero = await runRounds(
      timer((i) => (i === 1 ? 0 : 1)),
      plan(2),
    );
    expect(zero.failed).toEqual([]);
    expect(zero.decision.winner).toBe(1);
  });
});
