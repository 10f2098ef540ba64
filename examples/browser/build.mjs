#!/usr/bin/env node
// Bundles examples/browser/main.ts (and the workspace packages it imports, straight from their
// TypeScript sources) into examples/browser/dist/main.js with esbuild's JS API.
//
//   node examples/browser/build.mjs          # one build (~0.3 s)
//   node examples/browser/build.mjs --watch  # rebuild on change
//
// esbuild is not a root dependency: it is resolved as a dependency of tsx (which is one), so no
// install is needed. The packages re-export a few node-only modules (`@gpusparse/formats`'
// mtx/node.ts: readMatrixMarket / writeMatrixMarket; `@gpusparse/gpu`'s autotune/cache-fs.ts,
// loaded only under node). The page never calls them, but they sit in the import graph, so
// every `node:*` import is mapped to an empty CommonJS stub (`module.exports = {}`): named
// imports from it are undefined, and calling one would throw "... is not a function" — only
// ever on those node-only paths. The npm `webgpu` import in the GPU context is a dynamic import
// of a variable name: esbuild leaves it alone, and a browser never reaches it when
// `navigator.gpu` exists.
import { statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

/** esbuild from the workspace when it is a dependency there, else tsx's own copy. */
async function loadEsbuild() {
  try {
    return await import('esbuild');
  } catch {
    const req = createRequire(import.meta.url);
    const fromTsx = createRequire(req.resolve('tsx/package.json'));
    return fromTsx('esbuild');
  }
}

/** Maps `node:*` (and bare node built-ins) to one empty CommonJS module. */
const nodeStubs = {
  name: 'node-stubs',
  setup(build) {
    build.onResolve({ filter: /^node:/ }, (args) => ({ path: args.path, namespace: 'node-stub' }));
    build.onLoad({ filter: /.*/, namespace: 'node-stub' }, (args) => ({
      contents: `// ${args.path} is not available in a browser (stubbed by examples/browser/build.mjs)\nmodule.exports = {};\n`,
      loader: 'js',
    }));
  },
};

/**
 * Build the bundle; returns esbuild's result (errors throw).
 * @param {{ watch?: boolean, quiet?: boolean }} opts
 */
export async function buildBrowserExample(opts = {}) {
  const esbuild = await loadEsbuild();
  const config = {
    entryPoints: [join(here, 'main.ts')],
    outfile: join(here, 'dist', 'main.js'),
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    sourcemap: true,
    logLevel: opts.quiet ? 'error' : 'info',
    plugins: [nodeStubs],
    metafile: true,
    keepNames: true, // error classes report their own names (MatrixMarketError, ...)
  };
  if (opts.watch) {
    const ctx = await esbuild.context(config);
    await ctx.watch();
    return undefined;
  }
  return esbuild.build(config);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const t0 = performance.now();
  const watch = process.argv.includes('--watch');
  await buildBrowserExample({ watch });
  if (!watch) {
    const kB = statSync(join(here, 'dist', 'main.js')).size / 1000;
    console.log(`examples/browser: bundle built in ${(performance.now() - t0).toFixed(0)} ms -> examples/browser/dist/main.js (${kB.toFixed(0)} kB)`);
  }
}
