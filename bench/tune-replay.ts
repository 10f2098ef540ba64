/**
 * Replays the autotuner's short-list against a recorded `bench/tune.ts` run: for each matrix of
 * the JSON that has an exhaustive sweep, regenerate it (bench or validation set, scale 1, 0.1 or
 * 0.01, matched by name), short-list with the current model and say whether the sweep's best
 * (exact variant, and kernel) is on it — and what the recorded tuner did with it. No device
 * needed: this checks model and short-list changes against GPU sweeps already paid for.
 * Run: `pnpm tsx bench/tune-replay.ts tune-bench.json [--max-timed 6]`.
 */
import { readFileSync } from 'node:fs';
import type { CsrMatrix } from '@gpusparse/formats';
import { type Candidate, defaultPruneRules, enumerateCandidates, profileMatrix, shortList } from '../packages/gpu/src/autotune/index';
import { kernels } from '../packages/gpu/src/kernels/registry';
import { benchMatrixSet } from './matrix-set';
import { validationMatrixSet } from './validation-set';

interface Row {
  name: string;
  expectedProducts: number;
  ratio?: number;
  exhaustive?: { kernel: string; params: Record<string, number> };
  exhaustiveBestInTuner?: { status: string };
}

const file = process.argv[2];
if (!file) throw new Error('usage: pnpm tsx bench/tune-replay.ts <tune.json> [--max-timed N]');
const i = process.argv.indexOf('--max-timed');
const maxTimed = i > 0 ? Number(process.argv[i + 1]) : 6;
const rows = (JSON.parse(readFileSync(file, 'utf8')) as { matrices: Row[] }).matrices;
const sets: [string, () => Promise<CsrMatrix> | CsrMatrix][] = [1, 0.1, 0.01].flatMap((s) => [...benchMatrixSet(s), ...validationMatrixSet(s)]);
const same = (c: Candidate, k: string, q: Record<string, number>) => c.kernel.id === k && JSON.stringify(c.params) === JSON.stringify(q);
let exact = 0;
let kernel = 0;
let n = 0;
for (const m of rows) {
  const make = sets.find(([name]) => name === m.name)?.[1];
  if (!make || !m.exhaustive) continue;
  const a = await make();
  const p = profileMatrix(a, 1024);
  const list = enumerateCandidates(a, p, kernels, { ...defaultPruneRules, maxPerKernel: 3 }, m.expectedProducts);
  const { picks } = shortList(list, p.stats, { maxTimed, exhaustive: false });
  const best = m.exhaustive;
  const hit = picks.some((k) => same(list[k]!, best.kernel, best.params));
  const fam = picks.some((k) => list[k]!.kernel.id === best.kernel);
  n++;
  exact += hit ? 1 : 0;
  kernel += fam ? 1 : 0;
  const recorded = m.ratio === 1 ? 'chosen' : (m.exhaustiveBestInTuner?.status ?? '?');
  console.log(`${m.name.padEnd(26)} best ${best.kernel}${JSON.stringify(best.params)}; recorded tuner: ${recorded}; now on the short-list: ${hit ? 'yes' : fam ? 'its kernel' : 'no'} (${picks.map((k) => list[k]!.kernel.id).join(', ')})`);
}
console.log(`exhaustive best on the current short-list: ${exact}/${n} (its kernel: ${kernel}/${n})`);
