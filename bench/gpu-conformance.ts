/**
 * The conformance tier outside vitest, for the GPU machine (no npm there; this file is bundled
 * by ../shared/gpukit/pack.sh): every registered kernel and parameter variant × generators ×
 * seeds against the float64 reference with the per-row bound of HOUSE_STYLE.md. Prints one line
 * per variant, then a closing 'N passed, N failed' line; writes JSON to --out.
 *
 *   node .gpukit/app/gpu-conformance.mjs --out $OUT/conformance.json [--only id,id]
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { createGpuContext } from '../packages/gpu/src/index';
import { runConformance } from '../packages/gpu/src/testing/conformance';

const argv = process.argv.slice(2);
const opt = (n: string) => (argv.includes(n) ? argv[argv.indexOf(n) + 1] : undefined);
const out = opt('--out') ?? 'bench/out/conformance.json';
const only = opt('--only')?.split(',');

const ctx = await createGpuContext();
console.log(ctx.describeText().split('\n').slice(0, 3).join('\n'));
const t0 = performance.now();
const outcomes = await runConformance(ctx, {
  filter: only ? (k) => only.includes(k.id) : undefined,
  onOutcome: (o) => console.log(`${o.failures.length ? 'FAIL' : 'ok  '} ${o.kernel} ${JSON.stringify(o.params)}: ${o.passed} passed, ${o.unsupported} unsupported${o.failures.length ? `\n     ${o.failures.slice(0, 3).join('\n     ')}` : ''}`),
});
const failed = outcomes.filter((o) => o.failures.length > 0).length;
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, JSON.stringify({ date: new Date().toISOString(), device: ctx.describe(), seconds: (performance.now() - t0) / 1e3, outcomes }, null, 1));
console.log(`conformance: ${outcomes.length - failed} passed, ${failed} failed`);
ctx.dispose();
process.exit(failed ? 1 : 0);
