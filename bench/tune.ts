/**
 * Autotuner benchmark: per matrix of the bench set (bench/matrix-set.ts, shared with
 * bench/spmv.ts), or of the validation set (`--validation`: bench/validation-set.ts, parameters
 * and seeds the tuner was not developed on), plus Matrix Market files given on the command line,
 * run the tuner as the CLI does (cache off; `--products` unset = the CLI's default rule) and an
 * exhaustive sweep over the same candidates (soft prunes included, no budget, one sample each),
 * then report the tuned choice, its product time, the exhaustive best, the ratio (issue 16
 * target ≤ 1.10), the tuning overhead by stage and its target (≤ max(0.5 s, 10 % of expected
 * products × best product time)). Writes JSON to `--out` after every matrix.
 *
 * The ratio compares the tuned choice with the exhaustive best timed head to head: the sweep's
 * three fastest, its two best by objective and the tuned choice are uploaded together and timed
 * with the tuner's own method — interleaved rounds, every choice back to back in one stream of
 * GPU work, rounds taken while the GPU clock was still rising discarded, median and spread of
 * the kept rounds (`headToHeadMs`, `headToHeadRounds`) — so that both sides are measured in the
 * same rounds at one clock (the H100's SM clock moves between 345 and 1 980 MHz: a ranking taken
 * partly at each is not a ranking), and load changes and the sweep's winner's curse do not enter
 * it. The sweep itself times its candidates in interleaved groups too (the fastest three of the
 * earlier groups in every group).
 * `ratioInSweep` uses the sweep's single measurements, `ratioOwnRun` the tuner's own, and
 * `objectiveRatio` the tuner's criterion (conversion + upload + products · product time).
 *
 * Run locally (lavapipe): `pnpm tsx bench/tune.ts --validation --quick --out bench/out/tune-validation-quick.json`.
 * On the GPU machine: `bash ../shared/gpukit/pack.sh bench/tune.ts`, then
 * `bash .gpukit/enter.sh node .gpukit/app/tune.mjs --validation --out $OUT/tune-validation.json`.
 * Flags: --validation, --quick (small sizes), --recheck, --out FILE, --products N (default: the CLI's rule
 * with --validation, else 10^5; quick 10^4), --fraction F (default 0.1), --reps N (head to head),
 * --scale S (matrix sizes × S, e.g. 0.1 so that the exhaustive sweeps fit a 10-minute device
 * call; --quick is 0.01), --only name,name, --kernels id,id (restrict candidates), --max-per-kernel N (cap parameter
 * combinations per kernel), --no-exhaustive, --verbose, --unsafe, --decision-only (the tuned run
 * through `autotune()`, which returns a choice to build later, instead of `tunedOperator`, which
 * keeps the winner's upload as the operator — what `gpusparse solve` runs, and the default here),
 * --dump DIR (CSR triples for .gpukit/cusparse_anchor.py: the tuned format's ratio to cuSPARSE),
 * --static (no calibration: the static model's short-list), --calibration FILE (a recorded calibration — a
 * bench/tune.ts output's `calibration` field, e.g. an H100 run's — instead of measuring one: lavapipe then
 * short-lists as that adapter did, to profile the tuner's stages on its candidates), --overhead-products N (the tuner again at
 * N expected products per matrix, no sweep: its choice and overhead — the 10^5-product overhead check),
 * --in-solve (per symmetric matrix — the stencils and Poisson matrices: CG of --solve-iters
 * iterations, default 300, with in-solve tuning vs with its winner fixed from the start vs with
 * the tuner before the solve; wall time of operator build + solve; issue 16 target: in-solve
 * ≤ 1.10 × fixed), --solve-iters N, --passes N (default 2; 1 with --in-solve), --shuffle-seed S.
 *
 * --passes 2 (the default, session 11): after the first pass, the tuned runs again in a seeded
 * shuffled order on a fresh GPU context (bench/tune-passes.ts): the costs paid once per process
 * (pipeline compiles, the device's first allocations) fall on another matrix, and each matrix's
 * overhead, budget and product verdicts are taken on the worse of its two runs (`worstOfTwo`,
 * `pass2` in the JSON; the first pass's own figures are kept as before).
 *
 * --recheck: after tuning, the tuned choice re-timed in the same process on its own upload —
 * at once, after 1 s of idle GPU, right after 500 back-to-back products, and 100 products in one
 * submission by the host clock — with the product checked against the float64 host product over
 * every row (`maxRowErr`: max |y_i − ref_i| / Σ_j |a_ij x_j|, the kernel's error on the scale of
 * the row's terms, ~1e-7 for a correct float32 sum; relative to |ref_i| a stencil's cancelling
 * rows read 1e-1) (issue 16's 0.172 vs 0.47 ms question: the SM clock, see
 * docs/guides/autotuning.md; ISO times for a clock log).
 *
 * `overheadMs` is the tuner's own accounting: everything but the one CSR upload that the
 * operator reuses (a call without tuning uploads the matrix too); `tuningMs` is everything.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { type CsrMatrix, csrNnz, readMatrixMarket } from '@gpusparse/formats';
import { anchorPrediction, type AutotuneOptions, autotune, floorKernel, getKernel, profileMatrix, termsOf, type Calibration, calibrationFor, PROBE_LANES, PROBE_ROW_LENGTHS, clockIndex as clockIndexOf, deviceRoundTimer, rowScaledError, runRounds, createGpuContext, type GpuContext, GpuVectorSpace, gpuOperatorFromCsr, InSolveOperator, reportTable, type Trial, type TuningReport, timeGpu, tunedOperator, tuneVector, readF32, uploadF32 } from '@gpusparse/gpu';
import { cg } from '../packages/solvers/src/index';
import { loadCalibration } from './calibration-file';
import { dumpCsr } from './dump';
import { type PassRun, passSummary, shuffledOrder, worstOfTwo } from './tune-passes';
import { benchMatrixSet } from './matrix-set';
import { validationMatrixSet } from './validation-set';

const argv = process.argv.slice(2);
const flag = (name: string) => argv.includes(name);
const opt = (name: string): string | undefined => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
};
const quick = flag('--quick');
const scale = opt('--scale') ? Number(opt('--scale')) : undefined;
const validation = flag('--validation');
const out = opt('--out') ?? 'bench/out/tune.json';
const products: number | undefined = opt('--products') ? Number(opt('--products')) : validation ? undefined : quick ? 1e4 : 1e5;
const fraction = Number(opt('--fraction') ?? 0.1);
const reps = Number(opt('--reps') ?? (quick ? 5 : 20));
const onlyFilter = opt('--only')?.split(',');
const kernelFilter = opt('--kernels')?.split(',');
const maxPerKernel = opt('--max-per-kernel') ? Number(opt('--max-per-kernel')) : undefined;
const dumpDir = opt('--dump');
const inSolve = flag('--in-solve');
const solveIters = Number(opt('--solve-iters') ?? 300);
const passes = Number(opt('--passes') ?? (inSolve ? 1 : 2));
const shuffleSeed = Number(opt('--shuffle-seed') ?? 11);
const valueArgs = new Set(['--passes', '--shuffle-seed', '--overhead-products', '--scale', '--out', '--products', '--fraction', '--reps', '--only', '--kernels', '--max-per-kernel', '--dump', '--solve-iters', '--calibration'].flatMap((f) => (opt(f) ? [opt(f)!] : [])));
const staticModel = flag('--static');
/** `--calibration FILE`: a JSON holding a calibration (this bench's output, field `calibration`, e.g. an H100 run's) used instead of measuring one: lavapipe then short-lists as that adapter did, for profiling the tuner's stages on the same candidates. */
const calibrationFile = opt('--calibration');
const overheadProducts = opt('--overhead-products') ? Number(opt('--overhead-products')) : undefined;
/** The adapter's calibration, measured once at the start (`--static`: none, the static model's short-list). */
let calibration: Calibration | undefined;
const files = argv.filter((a) => !a.startsWith('--') && !valueArgs.has(a));

const same = (t: Trial, kernel: string, params: Record<string, number>) => t.kernel === kernel && JSON.stringify(t.params) === JSON.stringify(params);
const label = (kernel: string, params: Readonly<Record<string, number>>) => `${kernel}(${Object.entries(params).map(([k, v]) => `${k}=${v}`).join(',')})`;

/** The `k` smallest product times among timed trials, fastest first. */
function fastest(r: TuningReport, k: number): Trial[] {
  return r.trials.filter((t) => t.status === 'timed').sort((x, y) => x.ms! - y.ms!).slice(0, k);
}

/** What the head-to-head rounds measured: per choice the kept median and spread, and the rounds. */
interface HeadToHead {
  ms: number[];
  loMs: number[];
  hiMs: number[];
  rounds: number;
  discarded: number;
  stopped: string;
  clockIndex: number[];
}

/**
 * Product times (ms) of several choices timed head to head with the tuner's own method: all
 * uploaded, then interleaved rounds (every choice back to back in one stream of GPU work, one
 * readback per round, the start rotating), rounds taken while the clock was still rising
 * discarded (`runRounds`), at least 5 kept full rounds of `reps` products (up to 10 while the
 * best two overlap). Per choice the median and spread of the kept rounds.
 */
async function headToHead(ctx: GpuContext, a: CsrMatrix, choices: { kernel: string; params: Readonly<Record<string, number>> }[]): Promise<HeadToHead> {
  const ops = choices.map((c) => gpuOperatorFromCsr(ctx, a, { kernel: c.kernel, params: { ...c.params } }));
  const dx = uploadF32(ctx, tuneVector(a.cols));
  const dy = ctx.buffers.acquire(Math.max(1, a.rows) * 4);
  const timer = deviceRoundTimer(
    ctx,
    ops.map((op) => () => op.kernel.encode(ctx, op.handle, dx, dy)),
    reps,
  );
  try {
    const run = await runRounds(timer.time, { rounds: 5, minRounds: 7, maxRounds: 16, reps, products: 1, base: ops.map(() => 0), fits: () => true, dropOver: Number.POSITIVE_INFINITY, probeDrop: Number.POSITIVE_INFINITY });
    const s = run.summaries;
    return { ms: s.map((x) => x?.ms ?? Number.NaN), loMs: s.map((x) => x?.loMs ?? Number.NaN), hiMs: s.map((x) => x?.hiMs ?? Number.NaN), rounds: run.times.length, discarded: run.from, stopped: run.stopped, clockIndex: clockIndexOf(run.times) };
  } finally {
    timer.dispose();
    for (const op of ops) op.dispose();
    dx.dispose();
    dy.dispose();
  }
}

/** The JSON row of one tuned run (before the exhaustive comparison). */
function tunedRow(name: string, a: CsrMatrix, tuned: Awaited<ReturnType<typeof autotune>>, tuneWall: number): Record<string, unknown> {
  const tr = tuned.report;
  const mine = tr.trials.find((t) => t.verified);
  return {
    name,
    rows: a.rows,
    cols: a.cols,
    nnz: csrNnz(a),
    tuned: { kernel: tuned.kernel, params: tuned.params, productMs: mine?.ms, objectiveMs: mine?.objectiveMs, conversionMs: mine?.conversionMs, uploadMs: mine?.uploadMs, gflops: mine?.gflops },
    tuningMs: tr.spentMs,
    overheadMs: tr.overheadMs,
    csrUploadMs: tr.csrUploadMs,
    statsWhere: tr.statsWhere,
    statsSplit: tr.statsSplit,
    tuningWallMs: tuneWall,
    costs: tr.costs,
    budgetNote: tr.budgetNote,
    expectedProducts: tr.expectedProducts,
    decision: tr.decision,
    rounds: tr.rounds,
    budgetMs: tr.budgetMs,
    timed: tr.timed,
    pruned: tr.pruned,
    method: tr.method,
    tunedReport: tr,
  };
}

/** The tuner's options in this bench: the CLI's (cache off), the calibration measured at the start. */
const baseOptions = (): AutotuneOptions => ({
  cache: false,
  expectedProducts: products,
  fraction,
  candidates: kernelFilter,
  rules: maxPerKernel ? { maxPerKernel } : undefined,
  calibrate: calibration ?? false,
  warn: (m) => console.log(`  warning: ${m}`),
});

/** Milliseconds of a run's pipeline compiles (waited for ahead, or blocking): paid once per process. */
const compileMsOf = (tr: TuningReport): number => (tr.costs.compileMs ?? 0) + (tr.statsSplit?.blockingCompileMs ?? 0);

async function tuneMatrix(ctx: GpuContext, name: string, a: CsrMatrix): Promise<Record<string, unknown>> {
  const base = baseOptions();
  const t0 = performance.now();
  const tuned = flag('--decision-only') ? await autotune(ctx, a, base) : await asSolve(ctx, a, base);
  const tuneWall = performance.now() - t0;
  const tr = tuned.report;
  const mine = tr.trials.find((t) => t.verified);
  console.log(`  tuned: ${label(tuned.kernel, tuned.params)} ${mine?.ms?.toFixed(4)} ms; timed ${tr.timed}, pruned ${tr.pruned}; spent ${tr.spentMs.toFixed(0)} ms (overhead ${tr.overheadMs?.toFixed(0)} ms without the shared CSR upload ${tr.csrUploadMs?.toFixed(0)} ms; statistics on the ${tr.statsWhere}${tr.statsSplit ? `: passes ${tr.statsSplit.deviceMs.toFixed(0)}, estimates ${tr.statsSplit.estimatesMs.toFixed(0)} ms; ${tr.statsSplit.compiled} pipelines compiled in the run, ${(tr.statsSplit.blockingCompileMs ?? 0).toFixed(0)} ms of them blocking, ${tr.statsSplit.prewarmed ?? 0} asked for ahead of time, waited for ${compileMsOf(tr).toFixed(0)} ms of compiles in all` : ''}) of ${tr.budgetMs.toFixed(0)} ms (${Object.entries(tr.costs).map(([k, v]) => `${k.replace(/Ms$/, '')} ${v.toFixed(0)}`).join(', ')}); ${tr.rounds ? `rounds ${tr.rounds.run} (${tr.rounds.discarded} discarded for the clock, ${tr.rounds.stopped}; clock index ${tr.rounds.clockIndex.map((v) => v.toFixed(2)).join(' ')}); ` : ''}${tr.decision?.note ?? ''}`);
  if (flag('--verbose')) console.log(reportTable(tr, { maxRows: 30 }));
  const row = tunedRow(name, a, tuned, tuneWall);
  row.calibration = tr.calibration;
  if (flag('--recheck')) row.recheck = await recheck(ctx, a, tuned.kernel, tuned.params);
  if (overheadProducts) row.atProducts = await overheadAt(ctx, a, base, overheadProducts);
  if (flag('--no-exhaustive')) {
    summaryLine(row);
    return row;
  }
  Object.assign(row, await versusExhaustive(ctx, a, base, tuned));
  row.model = modelCheck(tr, row.exhaustiveReport as TuningReport, row.exhaustive as { kernel: string; params: Record<string, number> }, floorKernel(profileMatrix(a, 1024).stats));
  summaryLine(row);
  return row;
}

/**
 * The tuner as `gpusparse solve` runs it: `tunedOperator` (the winner's upload becomes the
 * operator, so the decision weighs only what is still to pay), the operator disposed at once;
 * its kernel, parameters and report in `autotune`'s shape.
 */
async function asSolve(ctx: GpuContext, a: CsrMatrix, base: AutotuneOptions): Promise<Awaited<ReturnType<typeof autotune>>> {
  const op = await tunedOperator(ctx, a, base);
  const report = op.tuning;
  op.dispose();
  const w = report.winner!;
  return { kernel: w.kernel, params: { ...w.params }, report, operator: () => gpuOperatorFromCsr(ctx, a, { kernel: getKernel(w.kernel), params: w.params }) };
}

/** One line per matrix (the GPU call's summary): choice vs exhaustive best, the model's check, the overheads. */
function summaryLine(r: Record<string, unknown>): void {
  const t = r.tuned as { kernel: string; productMs?: number };
  const ex = r.exhaustive as { kernel: string; productMs: number } | undefined;
  const m = r.model as { ratioMedian: number; bestOnShortList: boolean; interval?: number } | undefined;
  const at = r.atProducts as { kernel: string; productMs?: number; overheadMs?: number; overheadOk: boolean } | undefined;
  const f = (v: number | undefined, d = 4) => (v === undefined ? '—' : v.toFixed(d));
  console.log(
    `= ${r.name} | tuned ${t.kernel} ${f(t.productMs)} | best ${ex?.kernel ?? '—'} ${f(ex?.productMs)} | ratio ${f(r.ratio as number | undefined, 3)} obj ${f(r.objectiveRatioH2H as number | undefined, 3)} | model meas/pred ${f(m?.ratioMedian, 2)}, best listed ${m ? (m.bestOnShortList ? 'yes' : 'no') : '—'}, interval ${m?.interval ?? '—'} | ${r.expectedProducts} products: overhead ${f(r.overheadMs as number | undefined, 0)} ms ${r.overheadOk === undefined ? '' : r.overheadOk ? 'ok' : 'OVER'} (${Object.entries(r.costs as Record<string, number>).map(([k, v]) => `${k.replace(/Ms$/, '')} ${v.toFixed(0)}`).join(' ')})` +
      (at ? ` | 1e5: ${at.kernel} ${f(at.productMs)} overhead ${f(at.overheadMs, 0)} ms ${at.overheadOk ? 'ok' : 'OVER'}` : ''),
  );
}

/** The tuner again at `n` expected products (no exhaustive sweep): its choice, product time and overhead against max(0.5 s, 10 % of the work). */
async function overheadAt(ctx: GpuContext, a: CsrMatrix, base: AutotuneOptions, n: number): Promise<Record<string, unknown>> {
  const r = flag('--decision-only') ? await autotune(ctx, a, { ...base, expectedProducts: n }) : await asSolve(ctx, a, { ...base, expectedProducts: n });
  const tr = r.report;
  const mine = tr.trials.find((t) => t.verified);
  const target = Math.max(500, 0.1 * n * (mine?.ms ?? 0));
  console.log(`  at ${n} products: ${label(r.kernel, r.params)} ${mine?.ms?.toFixed(4)} ms; overhead ${tr.overheadMs?.toFixed(0)} ms (target ${target.toFixed(0)}; ${Object.entries(tr.costs).map(([k, v]) => `${k.replace(/Ms$/, '')} ${v.toFixed(0)}`).join(', ')}); timed ${tr.timed}, short-list interval ${tr.calibration?.interval ?? '—'}${tr.calibration?.truncated ? ' (truncated)' : ''}`);
  return { products: n, kernel: r.kernel, params: r.params, productMs: mine?.ms, overheadMs: tr.overheadMs, spentMs: tr.spentMs, costs: tr.costs, timed: tr.timed, targetMs: target, overheadOk: (tr.overheadMs ?? tr.spentMs) <= target, budgetMs: tr.budgetMs, budgetNote: tr.budgetNote, interval: tr.calibration?.interval };
}

/**
 * The predictions of the sweep's other candidates anchored on its timing of the CSR floor (as the
 * tuner's admission anchors them, `anchorPrediction`): median measured / anchored prediction, p90
 * of |log| of it, candidates inside the anchored interval; undefined when the floor was not timed.
 */
function anchoredFit(timed: readonly Trial[], floor: { kernel: string; lanes?: number }) {
  const f = timed.find((t) => t.kernel === floor.kernel && (floor.lanes === undefined || t.params.lanes === floor.lanes));
  if (!f) return undefined;
  const anchor = { prediction: { ms: f.predictedMs!, low: f.predictedLowMs!, high: f.predictedHighMs! }, passes: termsOf(getKernel(f.kernel)).passes, ms: f.ms! };
  const rest = timed.filter((t) => t !== f).map((t) => ({ t, p: anchorPrediction({ ms: t.predictedMs!, low: t.predictedLowMs!, high: t.predictedHighMs! }, termsOf(getKernel(t.kernel)).passes, anchor) }));
  const logs = rest.map(({ t, p }) => Math.log(t.ms! / p.ms)).sort((x, y) => x - y);
  const abs = logs.map(Math.abs).sort((x, y) => x - y);
  const q = (xs: number[], p: number) => xs[Math.min(xs.length - 1, Math.floor(p * xs.length))] ?? Number.NaN;
  return { floor: label(f.kernel, f.params), candidates: rest.length, ratioMedian: Math.exp(q(logs, 0.5)), absLogMedian: q(abs, 0.5), absLogP90: q(abs, 0.9), insideInterval: rest.filter(({ t, p }) => t.ms! >= p.low && t.ms! <= p.high).length };
}

/**
 * The calibrated model against the sweep: per timed candidate measured / predicted product ms
 * (median and spread of the ratio, the share inside the prediction interval), the exhaustive
 * best's prediction, and whether it was on the tuner's short-list (timed, or left out only by the
 * budget) — the calibrated model's own check, on matrices it was not fitted to.
 */
function modelCheck(tr: TuningReport, er: TuningReport, best: { kernel: string; params: Record<string, number> }, floor: { kernel: string; lanes?: number }): Record<string, unknown> | undefined {
  const timed = er.trials.filter((t) => t.status === 'timed' && t.ms !== undefined && t.predictedMs !== undefined);
  if (timed.length === 0) return undefined;
  const anchored = anchoredFit(timed, floor);
  const ratios = timed.map((t) => t.ms! / t.predictedMs!).sort((x, y) => x - y);
  const inside = timed.filter((t) => t.ms! >= t.predictedLowMs! && t.ms! <= t.predictedHighMs!).length;
  const b = er.trials.find((t) => same(t, best.kernel, best.params));
  const inTuner = tr.trials.find((t) => same(t, best.kernel, best.params));
  // on the calibrated short-list: timed, left out by the budget, or ruled out by the model only after the floor's measurement
  const ruledAfterFloor = inTuner?.status === 'skipped' && inTuner.reason?.startsWith('the calibrated model') === true;
  const onList = inTuner !== undefined && (!['skipped', 'pruned'].includes(inTuner.status) || ruledAfterFloor);
  const predictedBest = [...timed].sort((x, y) => x.predictedMs! - y.predictedMs!)[0]!;
  const q = (f: number) => ratios[Math.min(ratios.length - 1, Math.floor(f * ratios.length))]!;
  const out = { candidates: timed.length, ratioMedian: q(0.5), ratioP10: q(0.1), ratioP90: q(0.9), insideInterval: inside, bestPredictedMs: b?.predictedMs, bestMeasuredMs: b?.ms, bestOnShortList: onList, bestStatusInTuner: inTuner?.status, bestRuledOutAfterFloor: ruledAfterFloor, predictedBest: label(predictedBest.kernel, predictedBest.params), predictedBestMeasuredOverBest: b?.ms ? predictedBest.ms! / b.ms : undefined, interval: tr.calibration?.interval, anchored };
  const an = anchored ? `; anchored on the floor (${anchored.floor}): median ${anchored.ratioMedian.toFixed(2)} (p90 |log| ${anchored.absLogP90.toFixed(2)}), ${anchored.insideInterval}/${anchored.candidates} inside` : '';
  console.log(`  model: measured/predicted median ${out.ratioMedian.toFixed(2)} (p10 ${out.ratioP10.toFixed(2)}, p90 ${out.ratioP90.toFixed(2)}), ${inside}/${timed.length} inside the interval${an}; best predicted ${b?.predictedMs?.toFixed(4) ?? '—'} vs measured ${b?.ms?.toFixed(4) ?? '—'} ms, on the short-list: ${onList ? 'yes' : 'no'} (${inTuner?.status ?? '—'}${ruledAfterFloor ? ', ruled out after the floor was timed' : ''}); short-list interval ${out.interval ?? '—'}; predicted best ${out.predictedBest} at ${out.predictedBestMeasuredOverBest?.toFixed(2) ?? '—'}× the best`);
  return out;
}

/**
 * The exhaustive sweep of the same candidates and the head-to-head re-timing: the sweep's three
 * fastest, its two best by objective and the tuned choice, interleaved. Returns the row's
 * comparison fields: `ratio` by product time, `objectiveRatioH2H` by the tuner's criterion
 * (conversion + upload from the sweep, expected products × the head-to-head product time).
 */
async function versusExhaustive(ctx: GpuContext, a: CsrMatrix, base: AutotuneOptions, tuned: Awaited<ReturnType<typeof autotune>>): Promise<Record<string, unknown>> {
  const tr = tuned.report;
  const mine = tr.trials.find((t) => t.verified);
  const t1 = performance.now();
  // the sweep times in interleaved groups too (the tuner's rounds), so that its ranking is taken in one clock state per group
  // (two kept full rounds per group, up to four while uncertain: the head to head below re-times the contenders)
  const ex = await autotune(ctx, a, { ...base, exhaustive: true, rounds: 2 });
  const er = ex.report;
  const cost = (t: Trial) => (t.conversionMs ?? 0) + (t.uploadMs ?? 0);
  const byObjective = er.trials.filter((t) => t.status === 'timed').sort((x, y) => cost(x) + tr.expectedProducts * x.ms! - (cost(y) + tr.expectedProducts * y.ms!));
  const top: Trial[] = [];
  for (const t of [...fastest(er, 3), ...byObjective.slice(0, 2)]) if (!same(t, tuned.kernel, tuned.params) && !top.some((u) => same(u, t.kernel, t.params))) top.push(t);
  const hh = await headToHead(ctx, a, [{ kernel: tuned.kernel, params: tuned.params }, ...top.map((t) => ({ kernel: t.kernel, params: t.params }))]);
  const h2h = hh.ms.map((ms) => (Number.isFinite(ms) ? ms : Number.POSITIVE_INFINITY));
  const bi = h2h.indexOf(Math.min(...h2h));
  const best = bi === 0 ? { kernel: tuned.kernel, params: tuned.params as Readonly<Record<string, number>> } : top[bi - 1]!;
  const bestMs = h2h[bi]!;
  const sweepBest = fastest(er, 1)[0]!;
  const tunedThere = er.trials.find((t) => t.status === 'timed' && same(t, tuned.kernel, tuned.params));
  // objective head to head: the tuned choice's own conversion and upload, the contenders' from the sweep
  const objectives = h2h.map((ms, i) => (i === 0 ? (mine ? cost(mine) : 0) : cost(top[i - 1]!)) + tr.expectedProducts * ms);
  const oi = objectives.indexOf(Math.min(...objectives));
  const bestInTuner = tr.trials.find((t) => same(t, best.kernel, best.params as Record<string, number>));
  const ratio = h2h[0]! / bestMs;
  const objectiveRatioH2H = objectives[0]! / objectives[oi]!;
  const exObjective = er.trials.find((t) => t.verified)?.objectiveMs;
  console.log(
    `  exhaustive best: ${label(best.kernel, best.params)} ${bestMs.toFixed(4)} ms head to head (${er.timed} timed in ${((performance.now() - t1) / 1e3).toFixed(1)} s); ` +
      `ratio ${ratio.toFixed(3)} (head to head: ${hh.rounds} interleaved rounds, ${hh.discarded} discarded for the clock, ${hh.stopped}; tuned ${hh.loMs[0]?.toFixed(4)}–${hh.hiMs[0]?.toFixed(4)}, best ${hh.loMs[bi]?.toFixed(4)}–${hh.hiMs[bi]?.toFixed(4)} ms), in the sweep ${tunedThere?.ms !== undefined ? (tunedThere.ms / sweepBest.ms!).toFixed(3) : '—'}, objective ratio ${objectiveRatioH2H.toFixed(3)} (best by objective ${oi === 0 ? 'the tuned choice' : label(top[oi - 1]!.kernel, top[oi - 1]!.params)}); in the tuner: ${bestInTuner?.status}${bestInTuner?.reason ? ` (${bestInTuner.reason})` : ''}`,
  );
  const target = Math.max(500, 0.1 * tr.expectedProducts * bestMs);
  return {
    exhaustive: { kernel: best.kernel, params: best.params, productMs: bestMs, gflops: (2 * csrNnz(a)) / (bestMs * 1e6), objectiveWinner: ex.kernel, objectiveWinnerParams: ex.params },
    sweepFastest: { kernel: sweepBest.kernel, params: sweepBest.params, productMs: sweepBest.ms },
    exhaustiveMs: performance.now() - t1,
    exhaustiveTimed: er.timed,
    tunedProductMsInSweep: tunedThere?.ms,
    headToHeadMs: { tuned: h2h[0], tunedLoMs: hh.loMs[0], tunedHiMs: hh.hiMs[0], exhaustiveBest: bestMs, contenders: top.map((t, i) => ({ kernel: t.kernel, params: t.params, ms: h2h[i + 1], loMs: hh.loMs[i + 1], hiMs: hh.hiMs[i + 1], objectiveMs: objectives[i + 1] })) },
    headToHeadRounds: { run: hh.rounds, discarded: hh.discarded, stopped: hh.stopped, clockIndex: hh.clockIndex },
    ratio,
    ratioInSweep: tunedThere?.ms !== undefined ? tunedThere.ms / sweepBest.ms! : undefined,
    ratioOwnRun: mine?.ms !== undefined ? mine.ms / sweepBest.ms! : undefined,
    objectiveRatio: tunedThere?.objectiveMs !== undefined && exObjective ? tunedThere.objectiveMs / exObjective : undefined,
    objectiveRatioH2H,
    within10pct: ratio <= 1.1,
    objectiveWithin10pct: objectiveRatioH2H <= 1.1,
    overheadTargetMs: target,
    overheadOk: (tr.overheadMs ?? tr.spentMs) <= target,
    totalWithUploadOk: tr.spentMs <= target,
    budgetHonoured: (tr.overheadMs ?? tr.spentMs) <= 1.2 * tr.budgetMs || tr.budgetNote !== undefined,
    exhaustiveBestInTuner: bestInTuner ? { status: bestInTuner.status, reason: bestInTuner.reason } : undefined,
    exhaustiveReport: er,
  };
}

/** The tuned choice re-timed four ways in this process, and its product's largest error over all rows, relative to each row's Σ|a_ij x_j| (see --recheck). */
async function recheck(ctx: GpuContext, a: CsrMatrix, kernel: string, params: Readonly<Record<string, number>>): Promise<Record<string, unknown>> {
  const op = gpuOperatorFromCsr(ctx, a, { kernel, params: { ...params } });
  const x = tuneVector(a.cols);
  const dx = uploadF32(ctx, x);
  const dy = ctx.buffers.acquire(Math.max(1, a.rows) * 4);
  const enc = () => op.kernel.encode(ctx, op.handle, dx, dy);
  const out: Record<string, { at: string; ms: number }> = {};
  const time = async (name: string, t: () => Promise<{ medianMs: number }>) => {
    const at = new Date().toISOString();
    out[name] = { at, ms: (await t()).medianMs };
  };
  try {
    await time('immediate', () => timeGpu(ctx, enc, { reps: 5, warmup: 1 }));
    await new Promise((r) => setTimeout(r, 1000));
    await time('idle1s', () => timeGpu(ctx, enc, { reps: 5, warmup: 1 }));
    for (let i = 0; i < 500; i++) enc();
    await time('hot', () => timeGpu(ctx, enc, { reps: 5, warmup: 0 }));
    await time('wall100', () => timeGpu(ctx, enc, { reps: 100, batches: 1, forceWall: true }));
    const y = await readF32(ctx, dy, a.rows);
    // relative to each row's absolute scale Σ|a_ij x_j|, not |ref_i|: the stencils' rows cancel
    // (ref_i ≈ 0), where |ref_i| + 1e-6 read 1.7e-1 for a correct float32 sum
    const { worst, row } = rowScaledError(a, x, y);
    console.log(`  recheck ${label(kernel, params)}: ${Object.entries(out).map(([k, v]) => `${k} ${v.ms.toFixed(4)}`).join(', ')} ms; product max row error ${worst.toExponential(2)} of the row's Σ|a_ij x_j| (row ${row ?? '-'}) over ${a.rows} rows`);
    return { ...out, maxRowErr: Number.isFinite(worst) ? worst : String(worst), maxRowErrRow: row };
  } finally {
    op.dispose();
    dx.dispose();
    dy.dispose();
  }
}

/** Wall ms of building an operator and running CG for `solveIters` iterations (rtol 0: all of them, unless it breaks down). */
async function timedSolve(ctx: GpuContext, a: CsrMatrix, build: () => Promise<{ op: Parameters<typeof cg>[1]; dispose(): void }>): Promise<{ ms: number; iterations: number; reason: string }> {
  const space = new GpuVectorSpace(ctx);
  const b = space.fromArray(new Float64Array(a.rows).fill(1));
  await ctx.finish();
  const t0 = performance.now();
  const built = await build();
  const r = await cg(space, built.op, b, { rtol: 0, maxIterations: solveIters });
  await ctx.finish();
  const ms = performance.now() - t0;
  built.dispose();
  return { ms, iterations: r.iterations, reason: r.reason };
}

/** In-solve tuning vs the winner fixed vs tuning before the solve, on one symmetric matrix. */
async function inSolveMatrix(ctx: GpuContext, name: string, a: CsrMatrix): Promise<Record<string, unknown>> {
  const base = { cache: false as const, expectedProducts: products ?? solveIters, fraction, candidates: kernelFilter, rules: maxPerKernel ? { maxPerKernel } : undefined, warn: () => {} };
  let winner: { kernel: string; params: Record<string, number> } | undefined;
  let note = '';
  const tunedInSolve = () =>
    timedSolve(ctx, a, async () => {
      const op = await tunedOperator(ctx, a, { ...base, inSolve: true });
      return {
        op,
        dispose: () => {
          winner = op.tuning.winner;
          note = op.tuning.decision?.note ?? '';
          if (!(op instanceof InSolveOperator)) note = `not in-solve (one candidate or no timestamps): ${note}`;
          op.dispose();
        },
      };
    });
  await tunedInSolve(); // compiles every pipeline once, so that the runs below compare like with like
  const ins = await tunedInSolve();
  const fixed = await timedSolve(ctx, a, async () => {
    const op = gpuOperatorFromCsr(ctx, a, { kernel: winner!.kernel, params: { ...winner!.params } });
    return { op, dispose: () => op.dispose() };
  });
  const before = await timedSolve(ctx, a, async () => {
    const op = await tunedOperator(ctx, a, base);
    return { op, dispose: () => op.dispose() };
  });
  const ratio = ins.ms / fixed.ms;
  console.log(`  in-solve: ${ins.ms.toFixed(0)} ms (${ins.iterations} its, ${ins.reason}) vs winner ${label(winner!.kernel, winner!.params)} fixed ${fixed.ms.toFixed(0)} ms (${fixed.iterations} its): ratio ${ratio.toFixed(3)}; tuned before the solve ${before.ms.toFixed(0)} ms; ${note}`);
  return { name, rows: a.rows, nnz: csrNnz(a), solveIters, inSolve: ins, fixed, tunedBefore: before, winner, note, ratio, within10pct: ratio <= 1.1 };
}

/** The adapter's calibration, measured here (not loaded: a benchmark shows what it costs), printed as its grid. */
/** The tuned run of pass 2 on one matrix (see bench/tune-passes.ts): its figures, and its ratio to pass 1's exhaustive best. */
async function secondRun(ctx: GpuContext, a: CsrMatrix, row: Record<string, unknown>, position: number): Promise<PassRun> {
  const tuned = flag('--decision-only') ? await autotune(ctx, a, baseOptions()) : await asSolve(ctx, a, baseOptions());
  const tr = tuned.report;
  const mine = tr.trials.find((t) => t.verified);
  const first = row.tuned as { kernel: string; params: Record<string, number> };
  const sameChoice = first.kernel === tuned.kernel && JSON.stringify(first.params) === JSON.stringify(tuned.params);
  const run: PassRun = { position, kernel: tuned.kernel, params: tuned.params, productMs: mine?.ms, spentMs: tr.spentMs, overheadMs: tr.overheadMs ?? tr.spentMs, csrUploadMs: tr.csrUploadMs ?? 0, budgetMs: tr.budgetMs, budgetNote: tr.budgetNote, compileMs: compileMsOf(tr), costs: { ...tr.costs }, sameChoice };
  const ex = row.exhaustive as { kernel: string; params: Readonly<Record<string, number>> } | undefined;
  if (ex && sameChoice) run.ratio = row.ratio as number | undefined;
  else if (ex) {
    const hh = await headToHead(ctx, a, [{ kernel: tuned.kernel, params: tuned.params }, ex]);
    run.ratio = hh.ms[0]! / Math.min(hh.ms[0]!, hh.ms[1]!);
  }
  return run;
}

/**
 * Pass 2: the tuned runs again in a shuffled order on a fresh context (a new pipeline cache, as
 * a new process has), each matrix's verdicts then on the worse of its two runs (`worstOfTwo`).
 */
async function secondPass(set: readonly [string, () => Promise<CsrMatrix> | CsrMatrix][], results: Record<string, unknown>[]): Promise<void> {
  const byName = new Map(results.filter((r) => r.error === undefined && r.tuned !== undefined).map((r) => [r.name as string, r]));
  const order = shuffledOrder(set.filter(([n]) => byName.has(n)), shuffleSeed);
  const ctx = await createGpuContext({ unsafe: flag('--unsafe') });
  console.log(`second pass on a fresh context (seed ${shuffleSeed}): ${order.map(([n]) => n).join(', ')}`);
  try {
    for (let k = 0; k < order.length; k++) {
      const [name, make] = order[k]!;
      const row = byName.get(name)!;
      try {
        const run = await secondRun(ctx, await make(), row, k);
        const target = (row.overheadTargetMs as number | undefined) ?? Math.max(500, 0.1 * (row.expectedProducts as number) * ((row.tuned as { productMs?: number }).productMs ?? 0));
        row.pass2 = run;
        row.worstOfTwo = worstOfTwo({ overheadMs: row.overheadMs as number, tuningMs: row.tuningMs as number, overheadTargetMs: target, ratio: row.ratio as number | undefined, budgetMs: row.budgetMs as number, budgetNote: row.budgetNote as string | undefined }, run);
        const w = row.worstOfTwo as { overheadMs: number; overheadOk: boolean; totalWithUploadOk: boolean };
        console.log(`  pass 2 #${k} ${name}: ${label(run.kernel, run.params)}${run.sameChoice ? ' (same)' : ''} ratio ${run.ratio?.toFixed(3) ?? '—'}; overhead ${run.overheadMs.toFixed(0)} ms (compiles ${run.compileMs.toFixed(0)}, CSR upload ${run.csrUploadMs.toFixed(0)}; ${Object.entries(run.costs).map(([c, v]) => `${c.replace(/Ms$/, '')} ${v.toFixed(0)}`).join(' ')}) vs pass 1 ${(row.overheadMs as number).toFixed(0)} (#${row.position}); worst ${w.overheadMs.toFixed(0)} of ${target.toFixed(0)} ${w.overheadOk ? 'ok' : 'OVER'}, with the upload ${w.totalWithUploadOk ? 'ok' : 'OVER'}`);
      } catch (e) {
        console.log(`  pass 2 ${name} failed: ${(e as Error).message}`);
        row.pass2 = { position: k, error: (e as Error).message };
        if (ctx.isLost) break;
      }
      writeOut(results);
    }
  } finally {
    ctx.dispose();
  }
}

/** Write the JSON (after every matrix: a cut run keeps its rows). */
function writeOut(results: Record<string, unknown>[]): void {
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, JSON.stringify({ date: new Date().toISOString(), calibration, quick, validation, products: products ?? 'cli default', fraction, reps, passes, shuffleSeed, device: deviceInfo, matrices: results }, null, 1));
}
let deviceInfo: unknown;

async function calibrateOnce(ctx: GpuContext): Promise<Calibration | undefined> {
  // a fresh cache path of this process: measured, never loaded from an earlier run
  const hit = await calibrationFor(ctx, true, join(tmpdir(), `gpusparse-bench-${process.pid}`, 'tune.json'), (m) => console.log(`  warning: ${m}`));
  if (!hit) return undefined;
  const c = hit.cal;
  const grid = PROBE_ROW_LENGTHS.map((r, i) => `rows of ${r}: ${PROBE_LANES.map((l, j) => `${l === 1 ? 'thread' : `L${l}`} ${(c.perEntryMs[i]![j]! * 1e6).toFixed(3)}`).join(' ')}`).join('; ');
  console.log(`calibration (${hit.source}, ${hit.ms.toFixed(0)} ms, probes of ${c.probeNnz} entries): launch ${(c.launchMs * 1e3).toFixed(1)} µs; ns per entry ${grid}; gather ×${c.gather.window.toFixed(2)} (window) ×${c.gather.random.toFixed(2)} (random)`);
  return c;
}

async function main(): Promise<void> {
  const ctx = await createGpuContext({ unsafe: flag('--unsafe') });
  console.log(ctx.describeText());
  if (calibrationFile) calibration = loadCalibration(calibrationFile);
  else if (!staticModel && !inSolve) calibration = await calibrateOnce(ctx);
  const set: [string, () => Promise<CsrMatrix> | CsrMatrix][] = validation ? validationMatrixSet(scale ?? quick) : benchMatrixSet(scale ?? quick);
  for (const f of files) set.push([basename(f).replace(/\.mtx(\.gz)?$/, ''), async () => (await readMatrixMarket(f, { strictCount: false })).matrix]);
  const results: Record<string, unknown>[] = [];
  deviceInfo = ctx.describe();
  for (const [name, make] of set) {
    if (onlyFilter && !onlyFilter.some((o) => name.startsWith(o))) continue;
    const a = await make();
    console.log(`${name}: ${a.rows}×${a.cols}, ${csrNnz(a)} nnz`);
    if (dumpDir) dumpCsr(dumpDir, name, a); // for .gpukit/cusparse_anchor.py in the same call
    try {
      if (inSolve && !/stencil|poisson|2-D|3-D/i.test(name)) continue; // CG needs a symmetric positive definite matrix
      const row = inSolve ? await inSolveMatrix(ctx, name, a) : await tuneMatrix(ctx, name, a);
      row.position = results.length;
      results.push(row);
    } catch (e) {
      console.log(`  failed: ${(e as Error).message}`);
      results.push({ name, error: (e as Error).message });
      if (ctx.isLost) break;
    }
    writeOut(results);
  }
  ctx.dispose();
  if (passes >= 2 && !inSolve) await secondPass(set, results);
  const ratios = inSolve ? [] : results.map((r) => r.ratio as number | undefined).filter((r): r is number => r !== undefined);
  if (ratios.length) console.log(`ratio tuned/exhaustive: max ${Math.max(...ratios).toFixed(3)}, within 10 %: ${ratios.filter((r) => r <= 1.1).length}/${ratios.length}`);
  const objectives = inSolve ? [] : results.map((r) => r.objectiveRatioH2H as number | undefined).filter((r): r is number => r !== undefined);
  const listed = results.filter((r) => r.exhaustiveBestInTuner !== undefined || r.ratio === 1);
  if (listed.length) console.log(`exhaustive best short-listed (timed, or left out only by the budget): ${listed.filter((r) => r.ratio === 1 || !['skipped', 'pruned'].includes((r.exhaustiveBestInTuner as { status: string }).status)).length}/${listed.length}`);
  if (objectives.length) console.log(`objective (conversion + upload + products × product ms) tuned/exhaustive: max ${Math.max(...objectives).toFixed(3)}, within 10 %: ${objectives.filter((r) => r <= 1.1).length}/${objectives.length}`);
  const decided = results.filter((r) => r.decision !== undefined);
  if (decided.length) {
    const disc = (r: Record<string, unknown>) => (r.rounds as { discarded?: number } | undefined)?.discarded ?? 0;
    const hhDisc = (r: Record<string, unknown>) => (r.headToHeadRounds as { discarded?: number } | undefined)?.discarded ?? 0;
    console.log(`tuner decisions flagged uncertain (spreads overlap): ${decided.filter((r) => (r.decision as { uncertain: boolean }).uncertain).length}/${decided.length}; rounds discarded for a rising clock: tuner ${decided.reduce((n, r) => n + disc(r), 0)} in ${decided.filter((r) => disc(r) > 0).length} matrices, head to head ${decided.reduce((n, r) => n + hhDisc(r), 0)}`);
  }
  const overheads = results.map((r) => r.overheadMs as number | undefined).filter((v): v is number => v !== undefined);
  if (overheads.length) console.log(`tuning overhead without the shared CSR upload (ms): ${results.filter((r) => r.overheadMs !== undefined).map((r) => `${r.name} ${(r.overheadMs as number).toFixed(0)}`).join(', ')}`);
  const over = results.filter((r) => r.overheadOk !== undefined);
  if (over.length) {
    console.log(`tuning overhead (without the shared CSR upload) within max(0.5 s, 10 % of the work): ${over.filter((r) => r.overheadOk).length}/${over.length}; with it: ${over.filter((r) => r.totalWithUploadOk).length}/${over.length}`);
    console.log(`budget honoured within 20 % (or the report says which fixed cost exceeded it): ${over.filter((r) => r.budgetHonoured).length}/${over.length}`);
  }
  const models = results.map((r) => r.model as { bestOnShortList: boolean; insideInterval: number; candidates: number; anchored?: { insideInterval: number; candidates: number } } | undefined).filter((m) => m !== undefined);
  if (models.length) console.log(`calibrated model: exhaustive best on the short-list ${models.filter((m) => m.bestOnShortList).length}/${models.length}; sweep candidates inside their prediction interval ${models.reduce((n, m) => n + m.insideInterval, 0)}/${models.reduce((n, m) => n + m.candidates, 0)}, anchored on the floor ${models.reduce((n, m) => n + (m.anchored?.insideInterval ?? 0), 0)}/${models.reduce((n, m) => n + (m.anchored?.candidates ?? 0), 0)}`);
  const at = results.map((r) => r.atProducts as { overheadOk: boolean } | undefined).filter((x) => x !== undefined);
  if (at.length) console.log(`overhead at ${overheadProducts} products within max(0.5 s, 10 % of the work): ${at.filter((x) => x.overheadOk).length}/${at.length}`);
  if (inSolve) console.log(`in-solve tuned solve within 10 % of the winner fixed: ${results.filter((r) => r.within10pct).length}/${results.length}`);
  for (const line of passSummary(results)) console.log(line);
  console.log(`wrote ${out}`);
}

await main();
