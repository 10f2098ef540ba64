#!/usr/bin/env node
// Headless test of the browser page (a plain node script, not vitest):
//   node examples/browser/browser.test.mjs
// Builds the bundle, serves examples/browser/ on 127.0.0.1 (random free port) with node:http,
// drives Debian's Chromium (/usr/bin/chromium, or $CHROMIUM) through playwright-core, and checks
// both branches of the page:
//   1. WebGPU on: the page autotunes the SpMV, checks the tuned product against the float64
//      reference it computes on the CPU, runs CG on the GPU vector space (must converge, true
//      residual recomputed in float64) and draws the plot; then the same with a Matrix Market
//      file given through the file input (symmetric storage, expanded by the parser); then a
//      malformed file must end in an error shown on the page, not a crash.
//   2. WebGPU off (no flags): the page must say "no WebGPU adapter" and the CPU fallback CG
//      must converge.
// If leg 1 gets no adapter (another machine, another Chromium), it passes only when the page
// says so and its CPU fallback converged — the same rule as leg 2.
//
// WebGPU in headless Chromium 156 (Debian 12 package) on this machine (no GPU; Mesa lavapipe
// installed at /usr/share/vulkan/icd.d/lvp_icd.json), tried on 2026-11-22 from an http://127.0.0.1
// page (navigator.gpu needs a secure context; about:blank has none):
//   - no WebGPU flags:                                            navigator.gpu present, requestAdapter() → null
//   - --enable-unsafe-webgpu --ignore-gpu-blocklist:              adapter "google swiftshader" (subgroups, timestamp-query)
//   - + --enable-features=Vulkan --use-vulkan=native --use-angle=vulkan --disable-vulkan-surface: SwiftShader again
//   - + --enable-features=Vulkan,WebGPU --use-vulkan=swiftshader: SwiftShader
//   - + --use-webgpu-adapter=swiftshader:                         SwiftShader
//   - + VK_ICD_FILENAMES=lvp_icd.json --use-vulkan=native:        SwiftShader (lavapipe is never offered to WebGPU)
// So the GPU leg runs on SwiftShader (Chromium's own CPU Vulkan), not on lavapipe.
//
// playwright-core resolves from the workspace (examples/package.json devDependencies) or from
// NODE_PATH. Set KEEP_SCREENSHOTS=dir to keep the screenshots; they go to a temp dir otherwise.
import { createReadStream, existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, extname, join, normalize, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildBrowserExample } from './build.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const t0 = performance.now();
const elapsed = () => `${((performance.now() - t0) / 1000).toFixed(1)} s`;

/** playwright-core from the workspace, else from NODE_PATH (createRequire honours it). */
async function loadPlaywright() {
  try {
    return await import('playwright-core');
  } catch {
    return createRequire(import.meta.url)('playwright-core');
  }
}

const COMMON_FLAGS = [
  '--headless=new',
  '--no-sandbox',
  '--disable-dev-shm-usage',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
  '--disable-default-apps',
];
const WEBGPU_FLAGS = ['--enable-unsafe-webgpu', '--enable-features=Vulkan', '--use-vulkan=native', '--disable-vulkan-surface', '--ignore-gpu-blocklist'];

let passed = 0;
let failed = 0;
const failures = [];
function check(name, cond, detail = '') {
  if (cond) {
    passed++;
    console.log(`  ok   ${name}`);
  } else {
    failed++;
    failures.push(name);
    console.log(`  FAIL ${name}${detail ? ` — ${detail}` : ''}`);
  }
}

const TYPES = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.map': 'application/json', '.mtx': 'text/plain' };

/** Serve examples/browser/ read-only on 127.0.0.1 at a free port. */
function serve() {
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const rel = normalize(decodeURIComponent(url.pathname === '/' ? '/index.html' : url.pathname)).replace(/^([/\\])+/, '');
    const file = join(here, rel);
    if (!file.startsWith(here + sep) || !existsSync(file) || !statSync(file).isFile()) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end(`not found: ${url.pathname}`);
      return;
    }
    res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream', 'cache-control': 'no-store' });
    createReadStream(file).pipe(res);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

/** A 2-D Poisson matrix on a g×g grid as symmetric Matrix Market text (lower triangle only). */
function poissonMtx(g) {
  const lines = [];
  for (let p = 0; p < g * g; p++) {
    lines.push(`${p + 1} ${p + 1} 4`);
    if (p % g > 0) lines.push(`${p + 1} ${p} -1`);
    if (p >= g) lines.push(`${p + 1} ${p - g + 1} -1`);
  }
  return `%%MatrixMarket matrix coordinate real symmetric\n% poisson ${g}x${g}, written by browser.test.mjs\n${g * g} ${g * g} ${lines.length}\n${lines.join('\n')}\n`;
}

/** Wait until run number `n` has finished; returns { state, summary, error }. */
async function finishedRun(page, n, timeout = 180_000) {
  await page.waitForFunction(
    (want) => {
      const r = document.getElementById('result');
      return r && Number(r.dataset.run) >= want && (r.dataset.state === 'done' || r.dataset.state === 'error');
    },
    n,
    { timeout, polling: 200 },
  );
  return page.evaluate(() => {
    const r = document.getElementById('result');
    return { state: r.dataset.state, summary: r.dataset.summary ? JSON.parse(r.dataset.summary) : undefined, error: r.dataset.error, adapter: document.getElementById('adapter').textContent };
  });
}

/** The CPU-fallback rule: the page says there is no adapter and the host CG converged. */
function checkFallback(r, rtol) {
  check('page says "no WebGPU adapter"', /no WebGPU adapter/.test(r.adapter), r.adapter);
  check('CPU fallback ran', r.summary?.backend === 'cpu' && r.summary?.hostCg !== undefined);
  const h = r.summary?.hostCg;
  check('CPU fallback CG converged (true residual ≤ rtol in float64)', h?.converged === true && h.relTrueResidual <= rtol, JSON.stringify(h && { reason: h.reason, rel: h.relTrueResidual }));
}

async function screenshot(page, dir, name) {
  const file = join(dir, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  console.log(`  screenshot: ${file}`);
}

async function leg(chromium, server, flags, label, shotDir, body) {
  console.log(`\n${label} (${elapsed()})`);
  const userDir = mkdtempSync(join(tmpdir(), 'gpusparse-chromium-'));
  const ctx = await chromium.launchPersistentContext(userDir, {
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    headless: true,
    args: [...COMMON_FLAGS, ...flags],
    viewport: { width: 1100, height: 900 },
  });
  try {
    const page = ctx.pages()[0] ?? (await ctx.newPage());
    const pageErrors = [];
    page.on('pageerror', (e) => pageErrors.push(String(e)));
    const resp = await page.goto(`http://127.0.0.1:${server.address().port}/index.html?grid=40&tune=300`);
    check('page loaded (HTTP 200, title)', resp?.status() === 200 && /gpusparse/.test(await page.title()));
    await body(page);
    await screenshot(page, shotDir, label.replace(/\W+/g, '-').toLowerCase());
    check('no uncaught page errors', pageErrors.length === 0, pageErrors.join('; '));
  } finally {
    await ctx.close();
    rmSync(userDir, { recursive: true, force: true });
  }
}

async function main() {
  const tb = performance.now();
  await buildBrowserExample({ quiet: true });
  console.log(`bundle built in ${((performance.now() - tb) / 1000).toFixed(2)} s`);
  const { chromium } = await loadPlaywright();
  const server = await serve();
  const shotDir = process.env.KEEP_SCREENSHOTS ?? mkdtempSync(join(tmpdir(), 'gpusparse-shots-'));
  mkdirSync(shotDir, { recursive: true });
  const rtol = 1e-5;
  try {
    await leg(chromium, server, WEBGPU_FLAGS, 'WebGPU flags on', shotDir, async (page) => {
      const r = await finishedRun(page, 1);
      check('first run finished', r.state === 'done', r.error);
      if (r.summary?.backend !== 'webgpu') {
        console.log(`  no adapter with the WebGPU flags: ${r.adapter}`);
        checkFallback(r, rtol);
        return;
      }
      const s = r.summary;
      console.log(`  ${r.adapter}`);
      console.log(`  tuned: ${s.tuning.winner}, ${s.tuning.timed} timed, ${s.tuning.pruned} pruned, ${s.tuning.spentMs.toFixed(0)} ms (${s.tuning.method})`);
      console.log(`  spmv: max err/bound ${s.spmv.maxErrOverBound.toFixed(3)}; gpu CG: ${s.gpuCg.iterations} it, ${s.gpuCg.ms.toFixed(0)} ms, rel ${s.gpuCg.relTrueResidual.toExponential(2)}`);
      check('matrix is poisson2d 40×40 (1600 rows, 7840 entries)', s.matrix.rows === 1600 && s.matrix.nnz === 7840, JSON.stringify(s.matrix));
      check('autotuner timed at least one kernel and picked a winner', s.tuning.timed >= 1 && typeof s.tuning.winner === 'string');
      check('report table shown with a winner line', /winner: \S+/.test(await page.textContent('#tune-table')));
      check('tuned SpMV matches the float64 product computed on the CPU (per-row bound)', s.spmv.ok === true && s.spmv.maxErrOverBound <= 1, JSON.stringify(s.spmv));
      const g = s.gpuCg;
      check('GPU CG converged; float64 true residual ≤ 10·rtol', g.converged && g.relTrueResidual <= 10 * rtol, JSON.stringify({ reason: g.reason, rel: g.relTrueResidual }));
      check('GPU CG history falls', g.history.length >= 2 && g.history.at(-1).relative < g.history[0].relative / 100);
      check('host CG converged too', s.hostCg?.converged === true && s.hostCg.relTrueResidual <= rtol);
      check('convergence plot drawn (SVG with lines)', (await page.locator('#plot svg polyline').count()) >= 2);
      await screenshot(page, shotDir, 'webgpu-poisson');

      // A Matrix Market file through the file input.
      const dir = mkdtempSync(join(tmpdir(), 'gpusparse-mtx-'));
      const good = join(dir, 'poisson16.mtx');
      writeFileSync(good, poissonMtx(16));
      await page.setInputFiles('#mtx-file', good);
      await page.click('#run');
      const f = await finishedRun(page, 2);
      check('file run finished', f.state === 'done', f.error);
      const fs = f.summary;
      check('file parsed: 256 rows, 1216 entries after symmetric expansion', fs?.matrix.rows === 256 && fs.matrix.nnz === 1216 && /poisson16\.mtx/.test(fs.matrix.label), JSON.stringify(fs?.matrix));
      check('file: tuned SpMV verified and GPU CG converged', fs?.spmv.ok === true && fs.gpuCg.converged && fs.gpuCg.relTrueResidual <= 10 * rtol, JSON.stringify(fs && { spmv: fs.spmv, rel: fs.gpuCg.relTrueResidual }));
      await screenshot(page, shotDir, 'webgpu-file');

      // A malformed file: an error on the page, no crash.
      const bad = join(dir, 'bad.mtx');
      writeFileSync(bad, '%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1.0\n9 1 2.0\n');
      await page.setInputFiles('#mtx-file', bad);
      await page.click('#run');
      const e = await finishedRun(page, 3);
      check('malformed file → error shown, naming the file', e.state === 'error' && /MatrixMarketError/.test(e.error ?? '') && /bad\.mtx/.test(e.error ?? ''), e.error);
      rmSync(dir, { recursive: true, force: true });
    });

    await leg(chromium, server, [], 'WebGPU flags off (CPU fallback)', shotDir, async (page) => {
      const r = await finishedRun(page, 1);
      check('run finished', r.state === 'done', r.error);
      if (r.summary?.backend === 'webgpu') {
        // This Chromium offers WebGPU without flags: the page took the GPU path, which leg 1 checks.
        console.log(`  WebGPU is on even without flags here (${r.adapter}); fallback not reachable`);
        check('GPU CG converged', r.summary.gpuCg.converged === true);
        return;
      }
      console.log(`  ${r.adapter}`);
      checkFallback(r, rtol);
      check('the plot shows the host CG', (await page.locator('#plot svg polyline').count()) >= 1);
    });
  } finally {
    server.close();
  }
  console.log(`\nscreenshots in ${shotDir}; total ${elapsed()}`);
  console.log(`browser: ${passed} passed, ${failed} failed`);
  if (failed > 0) console.log(`failed: ${failures.join('; ')}`);
  process.exit(failed === 0 ? 0 : 1);
}

main().catch((e) => {
  console.error(e);
  console.log(`browser: ${passed} passed, ${failed + 1} failed`);
  process.exit(1);
});
