/**
 * Replays the autotuner's short-list against a recorded `bench/tune.ts` run: for each matrix of
 * the JSON that has an exhaustive sweep, regenerate it (bench or validation set, scale 1, 0.1 or
 * 0.01, matched by name), short-list with the current model and say whether the sweep's best
 * (exact variant, and kernel) is on it — and what the recorded tuner did with it. No device
 * needed: this checks model and short-list changes against GPU sweeps already paid for.
 * Run: `pnpm tsx bench/tune-replay.ts tune-bench.json [--max-timed N, default the tuner's 8] [--products N] [--calibration FILE]`
 * (`--calibration`: a JSON file holding a calibration — `bench/tune.ts` writes the adapter's as the
 * `calibration` field of its output — so that the calibrated short-list is replayed: the CSR floor
 * and every candidate the model cannot separate from the predicted best by product time.)
 * (`--products` replaces the recorded expected products of the short-list; the sweep's objectives stay as recorded).
 *
 * A short-listed candidate the recorded sweep never timed (dia-tiled on sweeps older than issue
 * 20's kernel) has no time to replay: it is counted as reaching nothing (neither better nor
 * worse than the sweep's best) and listed as `untimed in the sweep`, so the figures are a lower
 * bound of what the short-list would reach. dia-tiled takes an extra slot (see shortlist.ts),
 * so the candidates the sweeps did time are short-listed as without it.
 */
import { readFileSync } from 'node:fs';
import type { CsrMatrix } from '@gpusparse/formats';
import { anchorPrediction, entryQuantileLength, type Candidate, DEFAULT_MAX_TIMED, defaultPruneRules, enumerateCandidates, predictMs, profileMatrix, shortList, termsOf } from '../packages/gpu/src/autotune/index';
import { kernels } from '../packages/gpu/src/kernels/registry';
import { loadCalibration } from './calibration-file';
import { benchMatrixSet } from './matrix-set';
import { validationMatrixSet } from './validation-set';

interface SweepTrial {
  kernel: string;
  params: Record<string, number>;
  status: string;
  ms?: number;
  objectiveMs?: number;
}

interface Row {
  name: string;
  exhaustiveReport?: { trials: SweepTrial[] };
  expectedProducts: number;
  ratio?: number;
  exhaustive?: { kernel: string; params: Record<string, number> };
  exhaustiveBestInTuner?: { status: string };
}

const file = process.argv[2];
if (!file) throw new Error('usage: pnpm tsx bench/tune-replay.ts <tune.json> [--max-timed N] [--products N]');
const i = process.argv.indexOf('--max-timed');
const maxTimed = i > 0 ? Number(process.argv[i + 1]) : DEFAULT_MAX_TIMED; // the tuner's own default
const j = process.argv.indexOf('--products');
const productsOverride = j > 0 ? Number(process.argv[j + 1]) : undefined;
const rows = (JSON.parse(readFileSync(file, 'utf8')) as { matrices: Row[] }).matrices;
const ci = process.argv.indexOf('--calibration');
const calibration = ci > 0 ? loadCalibration(process.argv[ci + 1]!) : undefined;

/** The calibrated rule of autotune: predictions on every candidate not hard-pruned, preparation by the recorded CSR upload rate. */
function calibrated(list: Candidate[], p: ReturnType<typeof profileMatrix>, products: number) {
  if (!calibration) return { list, interval: undefined };
  const withP = list.map((c) => (c.pruned?.hard ? c : { ...c, prediction: predictMs(calibration, p, c.kernel, c.params, c.slots, c.factor) }));
  // as autotune: the interval by product time (the preparation is the admission's and the decision's)
  return { list: withP, interval: { products, prepMs: () => 0 } };
}
const sets: [string, () => Promise<CsrMatrix> | CsrMatrix][] = [1, 0.1, 0.01].flatMap((s) => [...benchMatrixSet(s), ...validationMatrixSet(s)]);
/** Candidate `c` is the recorded (`k`, `q`): a parameter the kernel gained after the recording (dia-tiled's `skew`) matches at 0, its off value. */
const same = (c: Candidate, k: string, q: Record<string, number>) => c.kernel.id === k && Object.keys(q).every((n) => c.params[n] === q[n]) && Object.keys(c.params).every((n) => n in q || c.params[n] === 0);
let exact = 0;
let kernel = 0;
let n = 0;
let within = 0;
let withinObjective = 0;
/** The fastest (and best-objective) short-listed candidate in the recorded sweep over the sweep's best: what the tuner would reach if it timed its whole short-list as the sweep did. */
function fromSweep(m: Row, list: Candidate[], picks: number[]): { ratio: number; objective: number } | undefined {
  const timed = (m.exhaustiveReport?.trials ?? []).filter((t) => t.status === 'timed' && t.ms !== undefined);
  if (timed.length === 0) return undefined;
  const listed = timed.filter((t) => picks.some((k) => same(list[k]!, t.kernel, t.params)));
  if (listed.length === 0) return undefined;
  const min = (ts: SweepTrial[], f: (t: SweepTrial) => number) => Math.min(...ts.map(f));
  const obj = (t: SweepTrial) => t.objectiveMs ?? Number.POSITIVE_INFINITY;
  return { ratio: min(listed, (t) => t.ms!) / min(timed, (t) => t.ms!), objective: min(listed, obj) / min(timed, obj) };
}
/** Per timed sweep candidate: the current model's prediction against the recorded time, raw and anchored on the CSR floor (as admission.ts rescales). */
interface FitPoint {
  readonly logRaw: number;
  readonly insideRaw: boolean;
  readonly logAnchored?: number;
  readonly insideAnchored?: boolean;
}
const fit: FitPoint[] = [];
function collectFit(m: Row, list: Candidate[], floorIndex: number | undefined): void {
  const timed = (m.exhaustiveReport?.trials ?? []).filter((t) => t.status === 'timed' && t.ms !== undefined && t.ms > 0);
  const find = (t: SweepTrial) => list.find((c) => same(c, t.kernel, t.params) && c.prediction);
  const floor = floorIndex === undefined ? undefined : list[floorIndex];
  const floorMs = floor ? timed.find((t) => same(floor, t.kernel, t.params))?.ms : undefined;
  for (const t of timed) {
    const c = find(t);
    if (!c?.prediction) continue;
    const p = c.prediction;
    const a = floor?.prediction && floorMs && c !== floor ? anchorPrediction(p, termsOf(c.kernel).passes, { prediction: floor.prediction, passes: termsOf(floor.kernel).passes, ms: floorMs }) : undefined;
    fit.push({ logRaw: Math.log(t.ms! / p.ms), insideRaw: t.ms! >= p.low && t.ms! <= p.high, logAnchored: a && Math.log(t.ms! / a.ms), insideAnchored: a && t.ms! >= a.low && t.ms! <= a.high });
  }
}
function printFit(): void {
  if (!fit.length) return;
  const q = (xs: number[], f: number) => [...xs].sort((x, y) => x - y)[Math.min(xs.length - 1, Math.floor(f * xs.length))]!;
  const line = (label: string, logs: number[], inside: number) => console.log(`${label}: ${logs.length} sweep candidates, median measured/predicted ${Math.exp(q(logs, 0.5)).toFixed(2)}, |log| median ${q(logs.map(Math.abs), 0.5).toFixed(2)} p90 ${q(logs.map(Math.abs), 0.9).toFixed(2)}, inside the interval ${inside}/${logs.length}`);
  line('model, raw', fit.map((f) => f.logRaw), fit.filter((f) => f.insideRaw).length);
  const an = fit.filter((f) => f.logAnchored !== undefined);
  line('model, anchored on the timed CSR floor', an.map((f) => f.logAnchored!), an.filter((f) => f.insideAnchored).length);
}

for (const m of rows) {
  const make = sets.find(([name]) => name === m.name)?.[1];
  if (!make || !m.exhaustive) continue;
  const a = await make();
  const p = profileMatrix(a, 1024);
  const c0 = calibrated(enumerateCandidates(a, p, kernels, { ...defaultPruneRules, maxPerKernel: 3 }, productsOverride ?? m.expectedProducts), p, productsOverride ?? m.expectedProducts);
  const list = c0.list;
  // as autotune: dia-tiled's extra slot only when no --max-timed is stated
  const { picks } = shortList(list, { ...p.stats, entryTail: entryQuantileLength(p, 0.9) }, { maxTimed, exhaustive: false, diagonalSlot: i < 0, interval: c0.interval });
  const best = m.exhaustive;
  const hit = picks.some((k) => same(list[k]!, best.kernel, best.params));
  const fam = picks.some((k) => list[k]!.kernel.id === best.kernel);
  n++;
  exact += hit ? 1 : 0;
  kernel += fam ? 1 : 0;
  const recorded = m.ratio === 1 ? 'chosen' : (m.exhaustiveBestInTuner?.status ?? '?');
  const sw = fromSweep(m, list, picks);
  within += sw && sw.ratio <= 1.1 ? 1 : 0;
  withinObjective += sw && sw.objective <= 1.1 ? 1 : 0;
  const swept = (m.exhaustiveReport?.trials ?? []).filter((t) => t.status === 'timed');
  const untimed = picks.map((k) => list[k]!).filter((c) => !swept.some((t) => same(c, t.kernel, t.params)));
  const untimedText = untimed.length ? `; untimed in the sweep: ${untimed.map((c) => `${c.kernel.id}${JSON.stringify(c.params)}`).join(', ')}` : '';
  const swText = (sw ? `; in the sweep: short-list best ${sw.ratio.toFixed(3)}× product, ${sw.objective.toFixed(3)}× objective` : '') + untimedText;
  if (calibration) collectFit(m, list, picks[0]);
  console.log(`${m.name.padEnd(26)} best ${best.kernel}${JSON.stringify(best.params)}; recorded tuner: ${recorded}; now on the short-list: ${hit ? 'yes' : fam ? 'its kernel' : 'no'} (${picks.map((k) => `${list[k]!.kernel.id}${list[k]!.kernel.id === 'csr-vec4' ? `/${list[k]!.params.lanes}` : ''}`).join(', ')})${swText}`);
}
printFit();
console.log(`exhaustive best on the current short-list: ${exact}/${n} (its kernel: ${kernel}/${n})`);
console.log(`fastest short-listed within 10 % of the sweep's best (recorded sweep times): product ${within}/${n}, objective ${withinObjective}/${n}`);

