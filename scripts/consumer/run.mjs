#!/usr/bin/env node
/**
 * The consumer check (.ci/run): pack every package (scripts/build/pack-all.mjs), install the
 * tarballs into a fresh project in the temporary folder (outside the workspace; pnpm, from the
 * store when it has everything, else from the registry), type-check main.ts there with
 * `moduleResolution: NodeNext` and `strict` (skipLibCheck off, so the shipped .d.ts are checked
 * too), run it with plain `node`, and run the installed `gpusparse` bin through npx.
 * Usage: node scripts/consumer/run.mjs [--packs <dir>] [--no-build] [--keep]
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const here = fileURLToPath(new URL('.', import.meta.url));
const args = process.argv.slice(2);
const packsArg = args.indexOf('--packs');

// npx as a consumer's shell runs it: without the npm_* variables `pnpm test:consumer` exports
// (npm warned "Unknown env config \"catalog\"" and five more for each call)
const shellEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k)));

function run(cmd, argv, cwd, opts = {}) {
  const t = performance.now();
  const r = spawnSync(cmd, argv, { cwd, encoding: 'utf8', stdio: opts.capture ? ['ignore', 'pipe', 'inherit'] : 'inherit', env: { ...(cmd === 'npx' ? shellEnv : process.env), ...opts.env } });
  if (r.status !== 0 && !opts.allowFail) throw new Error(`consumer: '${cmd} ${argv.join(' ')}' in ${cwd} exited ${r.status}`);
  return { ...r, ms: performance.now() - t };
}

const packs = resolve(packsArg >= 0 ? args[packsArg + 1] : join(root, '.ci-out', 'packs'));
if (packsArg < 0) {
  rmSync(packs, { recursive: true, force: true });
  run(process.execPath, [join(root, 'scripts/build/pack-all.mjs'), '--out', packs, ...(args.includes('--no-build') ? ['--no-build'] : [])], root);
}
const tarballs = Object.fromEntries(readdirSync(packs).filter((f) => f.endsWith('.tgz')).map((f) => [`@gpusparse/${f.replace(/^gpusparse-/, '').replace(/-\d+\.\d+\.\d+\.tgz$/, '')}`, `file:${join(packs, f)}`]));
const rootPkg = JSON.parse(readFileSync(join(root, 'node_modules/typescript/package.json'), 'utf8'));
const typesNode = JSON.parse(readFileSync(join(root, 'node_modules/@types/node/package.json'), 'utf8'));

const dir = mkdtempSync(join(tmpdir(), 'gpusparse-consumer-'));
writeFileSync(join(dir, 'package.json'), `${JSON.stringify({
  name: 'gpusparse-consumer', private: true, type: 'module',
  dependencies: tarballs,
  devDependencies: { typescript: rootPkg.version, '@types/node': typesNode.version },
  // the tarballs name each other by version (0.1.0): take those from the tarballs too
  pnpm: { overrides: tarballs },
}, null, 2)}\n`);
for (const f of ['main.ts', 'tsconfig.json']) copyFileSync(join(here, f), join(dir, f));
copyFileSync(join(root, 'testdata/matrices/bcsstk01.mtx'), join(dir, 'bcsstk01.mtx'));
console.log(`consumer project: ${dir} (${Object.keys(tarballs).join(', ')})`);

const offline = run('pnpm', ['install', '--offline', '--ignore-workspace'], dir, { allowFail: true });
if (offline.status !== 0) {
  console.log('consumer: the store lacks something; installing from the registry');
  // a registry hiccup (pnpm already retries each fetch) gets one more whole try, 10 s later
  const online = () => run('pnpm', ['install', '--prefer-offline', '--ignore-workspace'], dir, { allowFail: true });
  if (online().status !== 0) {
    console.log('consumer: the registry install failed; trying once more in 10 s');
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10_000);
    run('pnpm', ['install', '--prefer-offline', '--ignore-workspace'], dir);
  }
}
run(process.execPath, [join(dir, 'node_modules/typescript/bin/tsc'), '-p', '.'], dir);
console.log('consumer: tsc (NodeNext, strict, skipLibCheck off): no errors');
const main = run(process.execPath, ['out/main.js', 'bcsstk01.mtx'], dir);
console.log(`consumer: node out/main.js: ${(main.ms / 1000).toFixed(1)} s`);

const help = run('npx', ['--no-install', 'gpusparse', '--help'], dir, { capture: true });
console.log(help.stdout.split('\n').slice(0, 3).join('\n'));
if (!/gpusparse/.test(help.stdout)) throw new Error('consumer: npx gpusparse --help printed no usage');
// --json from the bin: stdout must be the JSON and nothing else; the path is relative to cwd
const info = run('npx', ['--no-install', 'gpusparse', 'info', 'bcsstk01.mtx', '--json', '--backend', 'cpu'], dir, { capture: true });
const j = JSON.parse(info.stdout);
console.log(`consumer: npx gpusparse info bcsstk01.mtx --json: clean JSON (${Object.keys(j).length} keys)`);
// --version reads the installed package.json (dist/main.js → ../package.json)
const version = run('npx', ['--no-install', 'gpusparse', '--version'], dir, { capture: true }).stdout.trim();
const expected = `gpusparse ${JSON.parse(readFileSync(join(root, 'packages/cli/package.json'), 'utf8')).version}`;
if (version !== expected) throw new Error(`consumer: npx gpusparse --version: expected '${expected}', got '${version}'`);
console.log(`consumer: npx gpusparse --version: ${version}`);
if (!args.includes('--keep')) rmSync(dir, { recursive: true, force: true });
console.log('consumer: passed');
