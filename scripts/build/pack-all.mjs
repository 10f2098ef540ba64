#!/usr/bin/env node
/**
 * Build and pack every package of packages/ (dependencies first) into one folder, then check
 * each tarball: dist/index.js and dist/index.d.ts, LICENSE and README.md present, no tests and no
 * sources, no `workspace:` range left, and `exports` pointing into dist/.
 * Usage: node scripts/build/pack-all.mjs [--out <dir>] [--no-build]   (prints the tarball paths)
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const args = process.argv.slice(2);
const outIdx = args.indexOf('--out');
const out = resolve(outIdx >= 0 ? args[outIdx + 1] : join(root, '.ci-out', 'packs'));
mkdirSync(out, { recursive: true });

function run(cmd, argv, cwd) {
  const r = spawnSync(cmd, argv, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  if (r.status !== 0) throw new Error(`${cmd} ${argv.join(' ')} (in ${cwd}) exited ${r.status}: ${r.stdout}`);
  return r.stdout;
}

/** Package folders ordered so that every @gpusparse dependency comes before its user. */
function ordered() {
  const pkgs = readdirSync(join(root, 'packages')).map((name) => {
    const dir = join(root, 'packages', name);
    const json = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    return { dir, json, deps: Object.keys(json.dependencies ?? {}).filter((d) => d.startsWith('@gpusparse/')) };
  });
  const done = [];
  while (done.length < pkgs.length) {
    const next = pkgs.find((p) => !done.includes(p) && p.deps.every((d) => done.some((q) => q.json.name === d)));
    if (!next) throw new Error('pack-all: dependency cycle between packages');
    done.push(next);
  }
  return done;
}

/** What a tarball must and must not contain. */
function checkTarball(file, name) {
  const list = run('tar', ['-tzf', file], root).split('\n').filter(Boolean);
  const problems = [];
  for (const must of ['package/dist/index.js', 'package/dist/index.d.ts', 'package/LICENSE', 'package/README.md']) {
    if (!list.includes(must)) problems.push(`missing ${must}`);
  }
  const extra = list.filter((f) => /(^package\/(src|test)\/)|\.test\.|\.ts$/.test(f) && !f.endsWith('.d.ts'));
  if (extra.length > 0) problems.push(`ships sources or tests: ${extra.slice(0, 3).join(', ')}${extra.length > 3 ? ', …' : ''}`);
  const manifest = run('tar', ['-xzOf', file, 'package/package.json'], root);
  if (manifest.includes('workspace:')) problems.push('package.json still has a workspace: range');
  const exp = JSON.stringify(JSON.parse(manifest).exports ?? {});
  if (exp.includes('./src/') || !exp.includes('./dist/')) problems.push(`exports do not point into dist/: ${exp}`);
  if (problems.length > 0) throw new Error(`pack-all: ${name}: ${problems.join('; ')}`);
  return list.length;
}

for (const p of ordered()) {
  if (!args.includes('--no-build')) run(process.execPath, [join(root, 'scripts/build/build-package.mjs'), p.dir], root);
  const tgz = run('pnpm', ['pack', '--pack-destination', out], p.dir).trim().split('\n').pop();
  const file = resolve(p.dir, tgz);
  const n = checkTarball(file, p.json.name);
  console.log(`${p.json.name}@${p.json.version}: ${file} (${n} files)`);
}
