#!/usr/bin/env node
/**
 * Build one workspace package to dist/: tsc emits JavaScript and .d.ts file for file (the layout
 * of src/ is kept, so paths computed from import.meta.url still hold), then every relative import
 * specifier is made explicit (`./x` → `./x.js` or `./x/index.js`), which Node's ESM loader and
 * TypeScript's `moduleResolution: NodeNext` require. The sources stay extensionless (Bundler
 * resolution in the workspace); nothing is bundled, so no new dependency is needed.
 * Usage: node scripts/build/build-package.mjs packages/<name>
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';

const pkgDir = resolve(process.argv[2] ?? '.');
const dist = join(pkgDir, 'dist');
const require = createRequire(join(pkgDir, 'package.json'));

rmSync(dist, { recursive: true, force: true });
const tsc = require.resolve('typescript/bin/tsc');
const r = spawnSync(process.execPath, [tsc, '-p', join(pkgDir, 'tsconfig.build.json')], { stdio: 'inherit' });
if (r.status !== 0) {
  console.error(`build: tsc failed for ${relative(process.cwd(), pkgDir) || '.'} (exit ${r.status})`);
  process.exit(1);
}

/** Every emitted .js and .d.ts under dir. */
function* emitted(dir) {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) yield* emitted(p);
    else if (p.endsWith('.js') || p.endsWith('.d.ts')) yield p;
  }
}

/** Every .ts source under dir. */
function* sources(dir) {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) yield* sources(p);
    else if (p.endsWith('.ts')) yield p;
  }
}

/** The explicit form of a relative specifier in `file`, or an error naming both. */
function explicit(file, spec) {
  if (/\.(m?js|json|wasm)$/.test(spec)) return spec;
  const ext = file.endsWith('.d.ts') ? '.d.ts' : '.js';
  const target = resolve(dirname(file), spec);
  if (existsSync(target + ext)) return `${spec}.js`;
  if (existsSync(join(target, `index${ext}`))) return `${spec.replace(/\/$/, '')}/index.js`;
  throw new Error(`build: ${relative(pkgDir, file)} imports '${spec}', which matches no emitted file`);
}

// from '…', import '…', import('…'), export … from '…' with a relative specifier.
const SPEC = /(\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)(['"])(\.{1,2}\/[^'"]*)\2/g;
let files = 0;
for (const file of emitted(dist)) {
  const text = readFileSync(file, 'utf8');
  const out = text.replace(SPEC, (_m, pre, q, spec) => `${pre}${q}${explicit(file, spec)}${q}`);
  if (out !== text) writeFileSync(file, out);
  files++;
}

// `import type {} from 'webgpu'` (global GPU* types) is elided from the .d.ts; without it a
// consumer's compiler knows no GPUDevice. Keep it as a reference in the entry's declarations.
const globalTypes = new Set();
for (const file of sources(join(pkgDir, 'src'))) {
  for (const m of readFileSync(file, 'utf8').matchAll(/^import type \{\} from '([^'.][^']*)';/gm)) globalTypes.add(m[1]);
}
if (globalTypes.size > 0) {
  const entry = join(dist, 'index.d.ts');
  const refs = [...globalTypes].map((t) => `/// <reference types="${t}" />\n`).join('');
  writeFileSync(entry, refs + readFileSync(entry, 'utf8'));
}
console.log(`build: ${relative(process.cwd(), dist) || 'dist'}: ${files} files${globalTypes.size ? `, global types from ${[...globalTypes].join(', ')}` : ''}`);
