/**
 * Session 13 (CI stability): the tuner's rare timing paths, built deterministically with a fake
 * round timer (no device). On a loaded 2-core CI machine with lavapipe the rounds can be so noisy
 * that every one is discarded for the clock, or the first (probed) candidate can be dropped in a
 * discarded probe round; the report must still hold every field a caller or a test reads: each
 * ranked trial's median, spread and samples, objectives consistent with the ranking, a runner-up,
 * and no probe time passed off as a ranked measurement.
 */
import { describe, expect, it } from 'vitest';
import { describeDecision, noKeptRound, verifyOrder } from '../src/autotune/decision';
import { type RoundTimer, summarise } from '../src/autotune/rounds';
import { type Live, type TrialSession, timeRounds } from '../src/autotune/trials';

/** A session over fake live candidates (k0 probed: status 'timed' with its probe time), timed by `time`. */
function session(ids: readonly string[], probeMs: number, time: RoundTimer, products = 1000): TrialSession {
  const live = ids.map((id, i) => ({
    c: { kernel: { id } },
    t: { kernel: id, params: {}, status: i === 0 ? 'timed' : 'skipped', ...(i === 0 ? { ms: probeMs } : {}), conversionMs: i, uploadMs: 1 },
    m: {},
    h: { dispose() {} },
    samples: [],
    ...(i === 0 ? { probeMs } : {}),
  })) as unknown as Live[];
  const report = { budgetMs: Number.POSITIVE_INFINITY, costs: { timingMs: 0 }, nnz: 1000, timed: 0, failed: 0, method: 'timestamp' };
  return { ctx: { isLost: false }, live, reps: 5, rounds: 3, minRounds: 3, exhaustive: false, report, start: performance.now(), products, makeTimer: () => ({ time, method: 'timestamp', dispose() {} }) } as unknown as TrialSession;
}

describe('every round discarded for the clock: the trials and the decision record', () => {
  // round r: candidate r mod 3 at its own speed, the other two at twice theirs — each candidate's
  // fastest in another round, every round's clock index 2 (> 1 + tolerance): no round is kept
  const base = [0.8, 0.5, 0.6];
  const time: RoundTimer = async (order) => {
    const r = calls++;
    return order.map((i) => base[i]! * (r % 3 === i ? 1 : 2));
  };
  let calls = 0;

  it('each timed trial holds the all-rounds median, spread and samples it was ranked on; the winner has the least objective', async () => {
    calls = 0;
    const s = session(['k0', 'k1', 'k2'], 0.05, time);
    const timed = (await timeRounds(s))!;
    expect(noKeptRound(timed.run)).toBe(true);
    expect(timed.run.times).toHaveLength(12); // 4 × rounds: never separated, never kept
    for (const [i, f] of timed.live.entries()) {
      const all = summarise(timed.run.times.map((r) => r[i]!))!;
      expect(f.t).toMatchObject({ status: 'timed', ms: all.ms, loMs: all.loMs, hiMs: all.hiMs, samples: all.samples });
      expect(f.samples).toEqual(all.samples);
      expect(f.t.loMs!).toBeLessThanOrEqual(f.t.ms!);
      expect(f.t.hiMs!).toBeGreaterThanOrEqual(f.t.ms!);
    }
    // k0's probe time (0.05 ms, not a ranking sample) no longer stands in for its rounds
    expect(timed.live[0]!.t.ms).toBeCloseTo(1.6, 12);
    const order = verifyOrder(s, timed);
    expect(order.map((f) => f.t.kernel)).toEqual(['k1', 'k2', 'k0']); // all-round medians 1.0, 1.2, 1.6
    const objectives = order.map((f) => f.t.objectiveMs!);
    expect(objectives).toEqual([...objectives].sort((x, y) => x - y)); // the ranking and the objectives shown agree
    expect(objectives[0]).toBeCloseTo(1 + 1 + 1000 * 1.0, 9);
  });

  it('the decision record says so, is uncertain, keeps 0 rounds and names the runner-up with its spread', async () => {
    calls = 0;
    const s = session(['k0', 'k1', 'k2'], 0.05, time);
    const timed = (await timeRounds(s))!;
    const d = describeDecision(s, verifyOrder(s, timed), timed);
    expect(d).toMatchObject({ rounds: 0, discardedRounds: 12, uncertain: true, cheaperToBuild: false });
    expect(d.note).toMatch(/^every one of the 12 rounds was discarded for the clock .*: ranked on all of them, k1\(\) first; uncertain$/);
    expect(d.runnerUp).toEqual({ kernel: 'k2', params: {}, ms: 1.2, loMs: 0.6, hiMs: 1.2 });
    expect(s.report.rounds).toMatchObject({ run: 12, discarded: 12, stopped: 'max' });
  });
});

describe('the probed first candidate dropped in a discarded probe round', () => {
  it('is shown with its round time and the "not ranked" reason, not with its probe time as if ranked', async () => {
    // round 0 (the probe round) at a 3× slower clock; k0, 10× the others, is dropped there (over
    // PROBE_DROP × the fastest); the later rounds are at the settled clock, so round 0 is discarded
    let calls = 0;
    const hot = [10, 1, 1.1];
    const time: RoundTimer = async (order) => {
      const slow = calls++ === 0 ? 3 : 1;
      return order.map((i) => hot[i]! * slow);
    };
    const s = session(['k0', 'k1', 'k2'], 9, time);
    const timed = (await timeRounds(s))!;
    expect(timed.run.from).toBe(1);
    expect(timed.run.summaries[0]).toBeUndefined();
    const k0 = timed.live[0]!.t;
    expect(k0).toMatchObject({ status: 'timed', ms: 30, reason: 'timed only in rounds taken while the clock was rising (not ranked)' });
    expect(k0.loMs).toBeUndefined();
    // the ranked ones keep their kept-round spread and the winner is among them
    for (const f of timed.live.slice(1)) expect(f.t.samples!.length).toBeGreaterThanOrEqual(2);
    expect(verifyOrder(s, timed)[0]!.t.kernel).toBe('k1');
  });
});
