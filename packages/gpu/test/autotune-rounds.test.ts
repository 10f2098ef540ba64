/**
 * The autotuner's interleaved rounds without a device (issue 16, robust timing): a fake round
 * timer simulates the H100's clock ramp (the first rounds 2–3× slower, and a compute-heavy
 * kernel hurt more by the low clock than a memory-bound one, so the ranking flips as the clock
 * rises), noisy near-ties, failures and a far slower kernel; the rounds must decide on the
 * hot-clock winner, flag overlapping spreads as uncertain (taking the cheaper to build), stop
 * early when the ranking is clear, and report median, spread and discarded rounds.
 */
import { describe, expect, it } from 'vitest';
import { clockIndex, decideRounds, firstStableRound, PROBE_DROP, type RoundsPlan, type RoundsRun, runRounds, SINGLE_ROUND_SPREAD, summarise } from '../src/autotune/rounds';
import { deviceRoundTimer } from '../src/autotune/round-timer';
import { BUDGET_RESERVE, budgetLeft, buildCostLeft, type Live, type TrialSession, timeRounds, verifyEstimateMs } from '../src/autotune/trials';
import { noKeptRound, verifyOrder } from '../src/autotune/decision';
import type { GpuContext } from '../src/device/context';

/** SM clock slowdown per round: 3× idle, then rising, hot from round 3 on (as the H100's 345 → 1 980 MHz). */
const ramp = (r: number) => [3, 2.2, 1.4][r] ?? 1;

/** Hot product times and how much of each kernel's time scales with the SM clock (1: all; 0.2: mostly memory-bound). */
interface FakeKernel {
  hotMs: number;
  clockShare: number;
}

/** A fake round timer: round r runs every kernel at clock slowdown `clock(r)`, times `noise(r, i)`; records the order. */
function fakeTimer(ks: FakeKernel[], clock: (r: number) => number, noise: (r: number, i: number) => number = () => 1) {
  const log: { order: number[]; reps: number }[] = [];
  const time = async (order: readonly number[], reps: number) => {
    const r = log.length;
    log.push({ order: [...order], reps });
    return order.map((i) => ks[i]!.hotMs * (1 + ks[i]!.clockShare * (clock(r) - 1)) * noise(r, i));
  };
  return { time, log };
}

const plan = (n: number, over: Partial<RoundsPlan> = {}): RoundsPlan => ({ rounds: 3, minRounds: 3, maxRounds: 12, reps: 5, products: 1000, base: Array(n).fill(0), fits: () => true, ...over });

describe('the clock state read from the rounds', () => {
  it('clockIndex is each round over each candidate’s fastest; firstStableRound skips the rounds more than 10 % slower', () => {
    const times = [
      [3, 6],
      [1.3, 2.5],
      [1, 2],
      [1.02, 2.01],
    ];
    expect(clockIndex(times)).toEqual([3, expect.closeTo(1.275, 9), 1, expect.closeTo(1.0125, 9)]);
    expect(firstStableRound(times)).toBe(2);
    // a slow round later on (a host load burst) is kept: it widens the spread, it does not discard good rounds
    expect(firstStableRound([[1], [1.02], [1.5], [1.01]])).toBe(0);
    expect(summarise([1, 3, 2])).toEqual({ ms: 2, loMs: 1, hiMs: 3, samples: [1, 3, 2] });
  });

  it('on a clock ramp the decision is the hot-clock winner: the slow first rounds (where the other kernel led) are discarded', async () => {
    // A: memory-bound, 1.0 ms hot, 1.4 ms at the idle clock; B: clock-bound, 0.8 ms hot, 2.4 ms idle
    const ks = [
      { hotMs: 1.0, clockShare: 0.2 },
      { hotMs: 0.8, clockShare: 1 },
    ];
    const { time, log } = fakeTimer(ks, ramp);
    const run = await runRounds(time, plan(2));
    expect(run.from).toBeGreaterThanOrEqual(2); // rounds at 3× and 2.2× discarded (1.4× too: B at 1.12 is over 1.1× its hot 0.8)
    expect(run.decision.winner).toBe(1);
    expect(run.decision.uncertain).toBe(false);
    expect(run.summaries[1]!.ms).toBeCloseTo(0.8, 9);
    expect(run.summaries[0]!.ms).toBeCloseTo(1.0, 9);
    expect(run.times.length - run.from).toBeGreaterThanOrEqual(2);
    // at the low clock A led: a ranking from the first round alone would have chosen A
    expect(run.times[0]![0]!).toBeLessThan(run.times[0]![1]!);
    // interleaved: the start rotates (A B, B A, …), the first round is a one-repetition probe
    expect(log.map((l) => l.order.join(''))).toEqual(['01', '10', '01', '10', '01'].slice(0, log.length));
    expect(log[0]!.reps).toBe(1);
    expect(log.slice(1).every((l) => l.reps === 5)).toBe(true);
  });

  it('a constant clock: stops after the probe round and two full rounds when the ranking is clear ("clear"), not after 2 × rounds', async () => {
    const { time, log } = fakeTimer(
      [
        { hotMs: 1, clockShare: 1 },
        { hotMs: 1.5, clockShare: 1 },
      ],
      () => 1,
      (r, i) => 1 + 0.01 * ((r + i) % 3),
    );
    const run = await runRounds(time, plan(2));
    expect(log).toHaveLength(3);
    expect(run.stopped).toBe('clear');
    expect(run.from).toBe(0);
    expect(run.decision).toMatchObject({ winner: 0, runnerUp: 1, uncertain: false });
  });
});

describe('uncertain decisions', () => {
  /** Two kernels 1 % apart with ±5 % noise per round: the spreads overlap. */
  const noisy = () =>
    fakeTimer(
      [
        { hotMs: 1.0, clockShare: 1 },
        { hotMs: 1.01, clockShare: 1 },
      ],
      () => 1,
      (r, i) => [0.95, 1.05, 1.0, 1.04, 0.96, 1.02][(r + 3 * i) % 6]!,
    );

  it('overlapping spreads give uncertain; more rounds while the budget allows (2 × rounds kept), then the cheaper to build', async () => {
    const { time, log } = noisy();
    const run = await runRounds(time, plan(2));
    expect(run.decision.uncertain).toBe(true);
    expect(run.stopped).toBe('uncertain');
    expect(run.from).toBe(0);
    expect(log.length).toBe(7); // the probe round and 2 × 3 full rounds
    expect(run.decision.cheaper).toBe(false); // the same build cost: the best median stays
    // the faster one is dearer to build (0.5 ms against 0): the measurement cannot tell them apart, the build cost can
    const dear = await runRounds(noisy().time, plan(2, { base: [0.5, 0] }));
    expect(dear.decision.uncertain).toBe(true);
    expect(dear.summaries[0]!.ms).toBeLessThan(dear.summaries[1]!.ms);
    expect(dear.decision.winner).toBe(1);
    expect(dear.decision.runnerUp).toBe(0);
    expect(dear.decision.cheaper).toBe(true);
    // a build cost that the products cannot pay back separates them: certain, and the cheap one wins on objective
    const sure = await runRounds(noisy().time, plan(2, { base: [40, 0], products: 10 }));
    expect(sure.decision).toMatchObject({ winner: 1, uncertain: false, cheaper: false });
  });

  it('when the budget allows no more rounds, stops ("budget") and still decides, flagged uncertain', async () => {
    const { time, log } = noisy();
    let asked = 0;
    const run = await runRounds(time, plan(2, { fits: () => ++asked < 3 }));
    expect(log).toHaveLength(3);
    expect(run.stopped).toBe('budget');
    expect(run.decision.uncertain).toBe(true);
    expect(run.decision.winner).toBeDefined();
  });

  it(`decideRounds: a single kept round separates only past ±${SINGLE_ROUND_SPREAD * 100} % (no measured spread); apart spreads are certain`, () => {
    const s = (v: number[]) => summarise(v);
    expect(decideRounds([{ base: 0, summary: s([1]) }, { base: 0, summary: s([1.2, 1.3]) }], 1).uncertain).toBe(true); // up to 1.25 vs from 1.2
    expect(decideRounds([{ base: 0, summary: s([1]) }, { base: 0, summary: s([4]) }], 1)).toMatchObject({ winner: 0, uncertain: false }); // a 4× gap in one round
    // a close call in one round: uncertain, and the cheaper to build is taken
    expect(decideRounds([{ base: 5, summary: s([1]) }, { base: 0, summary: s([1.1]) }], 1000)).toMatchObject({ winner: 1, uncertain: true, cheaper: true });
    expect(decideRounds([{ base: 0, summary: s([1, 1.4]) }, { base: 0, summary: s([1.3, 1.5]) }], 1).uncertain).toBe(true);
    expect(decideRounds([{ base: 0, summary: s([1, 1.1, 1.05]) }, { base: 0, summary: s([1.5, 1.6, 1.5]) }], 1)).toEqual({ winner: 0, runnerUp: 1, uncertain: false, cheaper: false });
    expect(decideRounds([{ base: 0, summary: s([1]) }], 1)).toEqual({ winner: 0, uncertain: false, cheaper: false });
    expect(decideRounds([{ base: 0 }], 1)).toEqual({ uncertain: false, cheaper: false });
  });
});

describe('failures and far slower kernels in the rounds', () => {
  it(`a kernel over ${PROBE_DROP}× the fastest of the probe round is not timed again; a failing one (NaN) neither, and never wins`, async () => {
    const ks = [
      { hotMs: 1, clockShare: 0 },
      { hotMs: 30, clockShare: 0 },
      { hotMs: 0.5, clockShare: 0 },
      { hotMs: 1.2, clockShare: 0 },
    ];
    const base = fakeTimer(ks, () => 1);
    const time = async (order: readonly number[], reps: number) => (await base.time(order, reps)).map((ms, k) => (order[k] === 2 ? Number.NaN : ms));
    const run = await runRounds(time, plan(4));
    expect(run.failed).toEqual([2]);
    expect(base.log[0]!.order.sort()).toEqual([0, 1, 2, 3]);
    for (const l of base.log.slice(1)) expect(l.order.sort()).toEqual([0, 3]);
    expect(run.decision.winner).toBe(0);
    expect(run.summaries[2]).toBeUndefined();
  });
});

/** A trial session over fake kernels `ks` (uploads of `uploadMs[i]`), timed by {@link fakeTimer} on the ramp, its budget clock started `spentMs` ago. */
function fakeSession(ks: FakeKernel[], budgetMs: number, uploadMs: readonly number[] = [], spentMs = 0): { s: TrialSession; live: Live[] } {
  const { time } = fakeTimer(ks, ramp);
  const live = ks.map((_, i) => ({ c: { kernel: { id: `k${i}` } }, t: { kernel: `k${i}`, params: {}, status: 'skipped', conversionMs: 0, uploadMs: uploadMs[i] ?? 0 }, m: {}, h: { dispose() {} }, samples: [] })) as unknown as Live[];
  const report = { budgetMs, costs: { timingMs: 0 }, nnz: 1000, timed: 0, failed: 0, method: 'none' };
  const s = { ctx: { isLost: false }, live, reps: 5, rounds: 3, minRounds: 3, exhaustive: false, report, start: performance.now() - spentMs, products: 1000, makeTimer: () => ({ time, method: 'timestamp', dispose() {} }) } as unknown as TrialSession;
  return { s, live };
}

describe('timeRounds on a session (injected timer)', () => {
  it('writes the kept median, spread and samples on each trial, and the rounds (discarded, why stopped, clock index) on the report', async () => {
    const { s, live } = fakeSession([{ hotMs: 1.0, clockShare: 0.2 }, { hotMs: 0.8, clockShare: 1 }], Number.POSITIVE_INFINITY, [0, 5]);
    const timed = (await timeRounds(s))!;
    const t1 = live[1]!.t;
    expect(t1).toMatchObject({ status: 'timed', ms: expect.closeTo(0.8, 9), loMs: expect.closeTo(0.8, 9), hiMs: expect.closeTo(0.8, 9) });
    expect(t1.samples!.length).toBeGreaterThanOrEqual(2);
    expect(s.report.rounds).toMatchObject({ discarded: timed.run.from, method: 'timestamp' });
    expect(s.report.rounds!.discarded).toBeGreaterThanOrEqual(2);
    expect(s.report.rounds!.clockIndex[0]).toBeGreaterThan(2);
    expect(s.report.costs.timingMs).toBeGreaterThan(0);
    // the verification order starts with the rounds' winner; objectives are set
    const order = verifyOrder(s, timed);
    expect(order[0]!.t.kernel).toBe('k1');
    expect(order[0]!.t.objectiveMs).toBeCloseTo(5 + 1000 * 0.8, 6);
  });
});

describe('the budget reserve (session 13: densrow planned its rounds to 500 ms of 500 and ended at 501–514)', () => {
  it('no round past the first is planned into the last BUDGET_RESERVE of the budget, whatever the load (spent time only grows)', async () => {
    const budgetMs = 10_000;
    // 96 % of the budget already spent: 4 % left is inside the reserve, so only the first round runs
    const { s } = fakeSession([{ hotMs: 1.0, clockShare: 0 }, { hotMs: 1.0, clockShare: 0 }], budgetMs, [], 0.96 * budgetMs);
    const timed = (await timeRounds(s))!;
    expect(timed.run.stopped).toBe('budget');
    expect(timed.run.times.length).toBe(1);
    // what the run may still plan: never more than the budget less the reserve and the verification to come
    expect(BUDGET_RESERVE).toBeGreaterThanOrEqual(0.05);
    expect(budgetLeft(s)).toBeLessThanOrEqual(budgetMs * (1 - BUDGET_RESERVE - 0.96) - verifyEstimateMs(1000));
    expect(budgetLeft({ start: performance.now(), report: { budgetMs, nnz: 2e6 } } as unknown as TrialSession)).toBeLessThanOrEqual(budgetMs * (1 - BUDGET_RESERVE) - verifyEstimateMs(2e6));
    expect(verifyEstimateMs(2e6)).toBeGreaterThan(30); // the H100 verified 1.8–3.2·10^6 non-zeros in 20–37 ms
  });
});

describe('the device round timer without timestamps (fake context)', () => {
  it('runs each candidate’s lead and repetitions together, candidates in the order asked (A B C, then B C A)', async () => {
    const order: string[] = [];
    const ctx = { isLost: false, caps: { timestampQuery: false }, async finish() {} } as unknown as GpuContext;
    const t = deviceRoundTimer(
      ctx,
      ['A', 'B', 'C'].map((id) => () => order.push(id)),
      2,
    );
    expect(t.method).toBe('wall');
    await t.time([0, 1, 2], 2);
    await t.time([1, 2, 0], 2);
    expect(order.join('')).toBe('AAABBBCCCBBBCCCAAA'); // a lead and 2 repetitions each
    t.dispose();
  });
});

describe('the decision when the winner\'s upload becomes the operator (tunedOperator)', () => {
  /**
   * The session-9 H100 trials of the 9-point stencil 379² (prev/s9-dev/final3/tune-val.json):
   * product ms and conversion + upload ms; ±1.5 % noise per round so that the spreads overlap.
   */
  const stencil9 = [
    { id: 'csr-scalar', ms: 0.0393, conv: 0, up: 1.3 },
    { id: 'ell', ms: 0.0351, conv: 3.2, up: 1.4 },
    { id: 'csr-vec4', ms: 0.0352, conv: 11.5, up: 0 },
  ];
  const session = (sunkBuild: boolean) => {
    const { time } = fakeTimer(
      stencil9.map((k) => ({ hotMs: k.ms, clockShare: 0 })),
      () => 1,
      (r, i) => [0.985, 1.015, 1.0, 1.01, 0.99, 1.005][(r + 2 * i) % 6]!,
    );
    const live = stencil9.map((k) => ({ c: { kernel: { id: k.id } }, t: { kernel: k.id, params: {}, status: 'skipped', conversionMs: k.conv, uploadMs: k.up }, m: {}, h: { dispose() {} }, samples: [] })) as unknown as Live[];
    const report = { budgetMs: Number.POSITIVE_INFINITY, costs: { timingMs: 0 }, nnz: 1000, timed: 0, failed: 0, method: 'none' };
    return { ctx: { isLost: false }, live, reps: 5, rounds: 3, minRounds: 3, exhaustive: false, report, start: performance.now(), products: 1000, sunkBuild, makeTimer: () => ({ time, method: 'timestamp', dispose() {} }) } as unknown as TrialSession;
  };

  it('buildCostLeft: the measured conversion + upload, or 0 when the builds are spent', () => {
    const f = { t: { conversionMs: 3.2, uploadMs: 1.4 } } as unknown as Live;
    expect(buildCostLeft({ sunkBuild: false }, f)).toBeCloseTo(4.6, 12);
    expect(buildCostLeft({}, f)).toBeCloseTo(4.6, 12);
    expect(buildCostLeft({ sunkBuild: true }, f)).toBe(0);
  });

  it('ranks by product time: ELL (1.12× faster), not the cheaper-to-build csr-scalar whose objective overlapped', async () => {
    const s = session(true);
    const timed = (await timeRounds(s))!;
    const order = verifyOrder(s, timed);
    expect(['ell', 'csr-vec4']).toContain(order[0]!.t.kernel);
    expect(order[order.length - 1]!.t.kernel).toBe('csr-scalar');
    expect(timed.run.decision.cheaper).toBe(false);
    // the objective shown still counts the build (what the run spent on the candidate)
    expect(order.find((f) => f.t.kernel === 'ell')!.t.objectiveMs).toBeCloseTo(4.6 + 1000 * order.find((f) => f.t.kernel === 'ell')!.t.ms!, 6);
  });

  it('a choice to build later (autotune) still weighs the build: csr-vec4\'s 11.5 ms conversion is not worth 0.1 µs × 1000 products', async () => {
    const s = session(false);
    const timed = (await timeRounds(s))!;
    expect(verifyOrder(s, timed)[0]!.t.kernel).not.toBe('csr-vec4');
  });
});

describe('every round discarded for the clock (session 11)', () => {
  it('ranks the candidates on all rounds instead of none: two working kernels never end in a TuningError', () => {
    // each candidate's fastest in another round and every round > 1 + tolerance off: lavapipe under load (1.7 vs 12 ms for one kernel)
    const times = [
      [1.7, 0.4],
      [12, 0.23],
      [2.4, 0.33],
    ];
    expect(firstStableRound(times)).toBe(times.length);
    const live = (['k0', 'k1'] as const).map((id, i) => ({ c: { kernel: { id } }, t: { kernel: id, params: {}, status: 'timed', ms: [2.4, 0.33][i], conversionMs: 1, uploadMs: 2 }, m: {}, h: { dispose() {} }, samples: [] })) as unknown as Live[];
    const run = { times, from: times.length, summaries: [undefined, undefined], decision: { uncertain: false, cheaper: false }, stopped: 'max', failed: [] } as unknown as RoundsRun;
    expect(noKeptRound(run)).toBe(true);
    const s = { live, products: 1000, sunkBuild: true } as unknown as TrialSession;
    const order = verifyOrder(s, { run, live });
    expect(order.map((f) => f.t.kernel)).toEqual(['k1', 'k0']); // medians 0.33 vs 2.4
    // session 13 (a CI failure): the report's objective is set on every timed trial on this path too
    expect(live.map((f) => f.t.objectiveMs)).toEqual([3 + 1000 * 2.4, 3 + 1000 * 0.33]);
    // a failed candidate stays out
    expect(verifyOrder(s, { run: { ...run, failed: [1] }, live }).map((f) => f.t.kernel)).toEqual(['k0']);
  });
});
