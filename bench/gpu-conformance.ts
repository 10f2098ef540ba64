/**
 * The conformance tier outside vitest, for the GPU machine (no npm there; this file is bundled
 * by ../shared/gpukit/pack.sh).
 *
 * Default: every registered kernel and parameter variant × the small generators × seeds against
 * the float64 reference with the per-row bound of HOUSE_STYLE.md; one line per variant, then
 * 'N passed, N failed'; JSON to --out.
 *
 * --large (the GPU machine; issue 14): every kernel (default parameters) on matrices at scale —
 * power-law rows up to 10^4 (2·10^6 rows), CI-like rows of ~10^3, and a 2^24-row matrix of 2^28
 * entries whose CSR passes 2^31 bytes — passes the float64 per-row check or is declared
 * unsupported (conversion or supports(), with the reason). One failure never stops the run.
 * --medium: the same on lavapipe-sized matrices with bindings capped at --cap bytes (default
 * 262144), so that every kernel's splitting runs. Both write --out (JSON) and the same path with
 * .md (a markdown table); --cases a,b keeps the cases whose names start so (uniform, powerlaw,
 * cilike, longrow); --scale F shrinks the large tier's row counts (rehearsal); --budget-s S stops starting new runs after S seconds (default 420 for
 * --large: the GPU machine allows 8 minutes a command).
 *
 *   node .gpukit/app/gpu-conformance.mjs --out $OUT/conformance.json [--only id,id]
 *   node .gpukit/app/gpu-conformance.mjs --large --out $OUT/conformance-large.json
 *   pnpm tsx bench/gpu-conformance.ts --medium --out bench/out/conformance-medium.json
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { createGpuContext } from '../packages/gpu/src/index';
import { runConformance } from '../packages/gpu/src/testing/conformance';
import { largeCases, mediumCases, runScaleTier, scaleTable } from '../packages/gpu/src/testing/scale-tier';

const argv = process.argv.slice(2);
const opt = (n: string) => (argv.includes(n) ? argv[argv.indexOf(n) + 1] : undefined);
const only = opt('--only')?.split(',');
const filter = only ? (k: { id: string }) => only.includes(k.id) : undefined;
const tier = argv.includes('--large') ? 'large' : argv.includes('--medium') ? 'medium' : 'small';
const out = opt('--out') ?? `bench/out/conformance${tier === 'small' ? '' : `-${tier}`}.json`;

/** The small tier: every variant × the generator cases. */
async function small(): Promise<number> {
  const ctx = await createGpuContext();
  console.log(ctx.describeText().split('\n').slice(0, 3).join('\n'));
  const t0 = performance.now();
  const outcomes = await runConformance(ctx, {
    filter,
    onOutcome: (o) => console.log(`${o.failures.length ? 'FAIL' : 'ok  '} ${o.kernel} ${JSON.stringify(o.params)}: ${o.passed} passed, ${o.unsupported} unsupported${o.failures.length ? `\n     ${o.failures.slice(0, 3).join('\n     ')}` : ''}`),
  });
  const failed = outcomes.filter((o) => o.failures.length > 0).length;
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, JSON.stringify({ date: new Date().toISOString(), device: ctx.describe(), seconds: (performance.now() - t0) / 1e3, outcomes }, null, 1));
  console.log(`conformance: ${outcomes.length - failed} passed, ${failed} failed`);
  ctx.dispose();
  return failed;
}

/** The medium / large tiers: default parameters × matrices at scale. */
async function scale(): Promise<number> {
  const cap = tier === 'medium' ? Number(opt('--cap') ?? 262_144) : undefined;
  const ctx = await createGpuContext({ maxBindingBytes: cap });
  console.log(ctx.describeText().split('\n').slice(0, 3).join('\n'));
  console.log(`${tier} tier; bindings planned at ${ctx.limits.maxStorageBufferBindingSize} bytes (device: ${ctx.deviceLimits.maxStorageBufferBindingSize})`);
  const t0 = performance.now();
  const budgetS = Number(opt('--budget-s') ?? (tier === 'large' ? 420 : Number.POSITIVE_INFINITY));
  const pick = opt('--cases')?.split(',');
  const cases = (tier === 'large' ? largeCases(Number(opt('--scale') ?? 1)) : mediumCases(ctx.limits.maxStorageBufferBindingSize)).filter((c) => !pick || pick.some((p) => c.name.startsWith(p)));
  const results = await runScaleTier(ctx, cases, {
    filter,
    budgetS,
    onMatrix: (name, a, ms) => console.log(`${name}: ${a.rows}×${a.cols}, ${a.rowPtr[a.rows]} nnz, CSR ${((a.rowPtr[a.rows]! * 8 + (a.rows + 1) * 4) / 2 ** 30).toFixed(2)} GiB (f32 values, i32 indices); built + reference in ${(ms / 1e3).toFixed(1)} s`),
    onResult: (r) => {
      const times = r.convertMs === undefined ? '' : ` [convert ${(r.convertMs / 1e3).toFixed(1)} s${r.uploadMs === undefined ? '' : `, upload ${(r.uploadMs / 1e3).toFixed(1)} s, run ${((r.runMs ?? 0) / 1e3).toFixed(2)} s`}]`;
      const what = r.status === 'pass' ? `max err/bound ${r.maxErrOverBound!.toFixed(3)}, ${r.blocks} binding block(s)` : r.detail;
      console.log(`  ${r.status.padEnd(11)} ${r.kernel}: ${what}${times}  (t = ${((performance.now() - t0) / 1e3).toFixed(0)} s)`);
    },
  });
  const failed = results.filter((r) => r.status === 'FAIL').length;
  const notRun = results.filter((r) => r.status === 'not run').length;
  const seconds = (performance.now() - t0) / 1e3;
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, JSON.stringify({ date: new Date().toISOString(), tier, device: ctx.describe(), plannedBindingBytes: ctx.limits.maxStorageBufferBindingSize, seconds, cases: cases.map((c) => ({ name: c.name, why: c.why })), results }, null, 1));
  const md = `# Conformance, ${tier} tier\n\n${ctx.describeText().split('\n')[0]}; bindings planned at ${ctx.limits.maxStorageBufferBindingSize} bytes; ${seconds.toFixed(0)} s.\n\n${cases.map((c) => `- ${c.name}: ${c.why}`).join('\n')}\n\n${scaleTable(results)}`;
  writeFileSync(out.replace(/\.json$/, '') + '.md', md);
  const pass = results.filter((r) => r.status === 'pass').length;
  console.log(`conformance (${tier}): ${pass} passed, ${results.filter((r) => r.status === 'unsupported').length} unsupported, ${failed} failed, ${notRun} not run, in ${seconds.toFixed(0)} s`);
  ctx.dispose();
  return failed + notRun;
}

const bad = tier === 'small' ? await small() : await scale();
process.exit(bad ? 1 : 0);
