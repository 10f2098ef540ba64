#!/usr/bin/env node
// The `gpusparse` command. Installed from the package it runs the built dist/main.js in this
// process (paths stay relative to the caller's working directory, output is only the CLI's own).
// In the pnpm workspace the packages' `exports` name their TypeScript sources (for tsx, vitest and
// the type checker) and, under the condition `gpusparse-dist`, their built dist/ files. After
// `pnpm build`, while no package's src/ is newer than its dist/index.js, this runs the built
// JavaScript under that condition (re-started with `--conditions=gpusparse-dist` unless the
// caller passed it, as the root `pnpm gpusparse` / `pnpm start` scripts do); otherwise it runs the
// TypeScript sources through tsx (≈ 1.5 CPU s more start-up), so a stale build never runs.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const pkgRoot = join(here, '..');
const built = join(pkgRoot, 'dist', 'main.js');
const argv = process.argv.slice(2);

/** Newest modification time (ms) of the files under dir, 0 when none. */
function newest(dir) {
  let t = 0;
  for (const e of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (e.isFile()) t = Math.max(t, statSync(join(e.parentPath ?? e.path, e.name)).mtimeMs);
  }
  return t;
}

/** In the workspace: true when every workspace package has a dist/ at least as new as its src/. */
function workspaceBuildFresh() {
  const packages = join(pkgRoot, '..');
  for (const name of readdirSync(packages)) {
    const dir = join(packages, name);
    if (!existsSync(join(dir, 'package.json')) || !existsSync(join(dir, 'src'))) continue;
    const stamp = join(dir, 'dist', 'index.js');
    if (!existsSync(stamp) || newest(join(dir, 'src')) > statSync(stamp).mtimeMs) return false;
  }
  return true;
}

const own = JSON.parse(readFileSync(join(pkgRoot, 'package.json'), 'utf8'));
const inWorkspace = typeof own.exports?.['.'] === 'object' && 'gpusparse-dist' in own.exports['.'];
const useDist = existsSync(built) && (!inWorkspace || workspaceBuildFresh());
// the workspace packages resolve to dist/ only under the condition (a published install: always)
const distResolved = !inWorkspace || import.meta.resolve('@gpusparse/formats').endsWith('/dist/index.js');
if (useDist && distResolved) {
  const { main, reportError } = await import('../dist/main.js');
  try {
    process.exitCode = await main(argv);
  } catch (e) {
    process.exitCode = reportError(e, argv.includes('--debug'));
  }
} else {
  const script = fileURLToPath(import.meta.url);
  // sources: `node --import tsx` (one node process; tsx's own CLI starts a second one)
  const args = useDist ? ['--conditions=gpusparse-dist', script, ...argv] : ['--import', import.meta.resolve('tsx'), join(pkgRoot, 'src', 'main.ts'), ...argv];
  const r = spawnSync(process.execPath, args, { stdio: 'inherit' });
  process.exit(r.status ?? 1);
}
