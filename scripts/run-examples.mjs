#!/usr/bin/env node
// Runs every example in examples/ (each *.ts at the top level) as a smoke test, one after the
// other, with tsx. Fails when an example exits non-zero, except 77: an example that needs a
// WebGPU adapter and found none (or was told to use the CPU) says so and counts as skipped.
// Usage: node scripts/run-examples.mjs [--backend cpu|auto] [name-part …]
//   --backend cpu: every example on the CPU backend (GPUSPARSE_EXAMPLES_BACKEND=cpu), as without a GPU.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

const root = resolve(dirname(new URL(import.meta.url).pathname), '..');
const dir = join(root, 'examples');
const args = process.argv.slice(2);
const at = args.indexOf('--backend');
const backend = at >= 0 ? args[at + 1] : 'auto';
if (!['cpu', 'auto'].includes(backend ?? '')) {
  console.error(`run-examples: --backend: expected cpu or auto, got '${backend}'`);
  process.exit(2);
}
const only = args.filter((_, i) => at < 0 || (i !== at && i !== at + 1));
const files = readdirSync(dir)
  .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts') && !f.startsWith('_'))
  .filter((f) => only.length === 0 || only.some((o) => f.includes(o)))
  .sort();
const EXIT_SKIPPED = 77; // examples/_backend.ts
let failed = 0;
let skipped = 0;
for (const f of files) {
  const t0 = Date.now();
  process.stdout.write(`\n--- example ${f} ---\n`);
  const env = { ...process.env, GPUSPARSE_EXAMPLE: '1', ...(backend === 'cpu' ? { GPUSPARSE_EXAMPLES_BACKEND: 'cpu' } : {}) };
  const r = spawnSync(process.execPath, ['--import', 'tsx', join(dir, f)], { stdio: 'inherit', cwd: root, env });
  const s = ((Date.now() - t0) / 1000).toFixed(1);
  if (r.status === EXIT_SKIPPED) {
    skipped++;
    process.stdout.write(`--- example ${f} skipped (needs WebGPU, ${s}s) ---\n`);
  } else if (r.status !== 0) {
    failed++;
    process.stdout.write(`--- example ${f} FAILED (exit ${r.status}, ${s}s) ---\n`);
  } else process.stdout.write(`--- example ${f} ok (${s}s) ---\n`);
}
console.log(`\nexamples (backend ${backend}): ${files.length - failed - skipped} passed, ${skipped} skipped, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
