#!/usr/bin/env node
// The `gpusparse` command. Installed from the package it runs the built dist/main.js in this
// process (paths stay relative to the caller's working directory, output is only the CLI's own).
// In the workspace before `pnpm build` it runs the TypeScript sources through tsx instead.
import { existsSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const built = join(here, '..', 'dist', 'main.js');
const argv = process.argv.slice(2);
if (existsSync(built)) {
  const { main, reportError } = await import('../dist/main.js');
  try {
    process.exitCode = await main(argv);
  } catch (e) {
    process.exitCode = reportError(e, argv.includes('--debug'));
  }
} else {
  const tsxCli = createRequire(import.meta.url).resolve('tsx/cli');
  const r = spawnSync(process.execPath, [tsxCli, join(here, '..', 'src', 'main.ts'), ...argv], { stdio: 'inherit' });
  process.exit(r.status ?? 1);
}
