#!/usr/bin/env node
// Runs every example in examples/ (each *.ts at the top level) as a smoke test, one after the
// other, with tsx. Fails on the first example that exits non-zero.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

const root = resolve(dirname(new URL(import.meta.url).pathname), '..');
const dir = join(root, 'examples');
const only = process.argv.slice(2);
const files = readdirSync(dir)
  .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts') && !f.startsWith('_'))
  .filter((f) => only.length === 0 || only.some((o) => f.includes(o)))
  .sort();
let failed = 0;
for (const f of files) {
  const t0 = Date.now();
  process.stdout.write(`\n--- example ${f} ---\n`);
  const r = spawnSync(process.execPath, ['--import', 'tsx', join(dir, f)], { stdio: 'inherit', cwd: root, env: { ...process.env, GPUSPARSE_EXAMPLE: '1' } });
  const s = ((Date.now() - t0) / 1000).toFixed(1);
  if (r.status !== 0) {
    failed++;
    process.stdout.write(`--- example ${f} FAILED (exit ${r.status}, ${s}s) ---\n`);
  } else process.stdout.write(`--- example ${f} ok (${s}s) ---\n`);
}
console.log(`\nexamples: ${files.length - failed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
