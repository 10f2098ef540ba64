#!/usr/bin/env node
// Headless test of the browser page (a plain node script, not vitest):
//   node examples/browser/browser.test.mjs
// Builds the bundle, serves examples/browser/ on 127.0.0.1 (random free port) with node:http,
// drives Debian's Chromium (/usr/bin/chromium, or $CHROMIUM) through playwright-core, and checks
// both branches of the page, and what a person would see (issue 23; each numbered point of the
// issue is named in brackets in the checks that cover it):
//   1. WebGPU on: the page autotunes the SpMV, checks the tuned product against the float64
//      reference it computes on the CPU, runs CG on the GPU vector space (must converge, true
//      residual recomputed in float64) and draws the plot; the progress bar named the stages;
//      the winner's GFLOP/s is 2·nnz / its time per product; the tuning time is told against the
//      budget (flagged when over); every numeric column is explained on the page; the software-
//      adapter note is there on SwiftShader; at 1280, 760, 420 and 360 px the page is no wider
//      than the window and no table or cell is clipped. Then a Matrix Market file through the
//      file input (symmetric storage, expanded by the parser); then a malformed file and no file
//      at all must each end in an error box (class "error", no doubled "Error:") with the
//      previous results gone.
//   2. WebGPU off (no flags): the page must say "no WebGPU adapter", the CPU fallback CG must
//      converge, and the CPU curve and rtol line keep the colours they had in leg 1.
// Both legs: no console error, no failed request (the favicon 404 of before), no uncaught error.
// Before the legs: the README's bundle size is within 10% of the built bundle.
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
// NODE_PATH. Screenshots (1280 and 420 px of each leg, and of the error) go to
// examples/browser/screenshots/ (git-ignored), or to $KEEP_SCREENSHOTS when set.
import { createReadStream, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
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
  check('page says "no WebGPU adapter"', /no WebGPU adapter/i.test(r.adapter), r.adapter);
  check('CPU fallback ran', r.summary?.backend === 'cpu' && r.summary?.hostCg !== undefined);
  const h = r.summary?.hostCg;
  check('CPU fallback CG converged (true residual ≤ rtol in float64)', h?.converged === true && h.relTrueResidual <= rtol, JSON.stringify(h && { reason: h.reason, rel: h.relTrueResidual }));
}

async function screenshot(page, dir, name) {
  const file = join(dir, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  console.log(`  screenshot: ${file}`);
}

/**
 * What a person checks on the page at `width` px (issue 23, points 1 and 5): the page is not
 * wider than the window, no table is wider than its box and no cell is cut, the plot fits its
 * box. Resizes the window first and lets the plot redraw.
 */
async function checkLayout(page, width, tag) {
  await page.setViewportSize({ width, height: 900 });
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  const m = await page.evaluate(() => {
    // Unfold the folded lists (the untimed candidates) so that their tables are checked too.
    const folded = [...document.querySelectorAll('details:not([open])')];
    for (const d of folded) d.open = true;
    const visible = (el) => el.getClientRects().length > 0;
    const tables = [...document.querySelectorAll('table')].filter(visible);
    const clippedTables = tables.filter((t) => t.scrollWidth > t.clientWidth + 1 || t.getBoundingClientRect().right > document.documentElement.clientWidth + 1).map((t) => `${t.className} ${t.scrollWidth}>${t.clientWidth}`);
    const clippedCells = [...document.querySelectorAll('td, th, dd, p, pre')].filter(visible).filter((c) => c.scrollWidth > c.clientWidth + 1).map((c) => `${c.tagName}:${c.textContent.slice(0, 30)} ${c.scrollWidth}>${c.clientWidth}`);
    // A caption squeezed into a narrow column (one letter per line) is unreadable though not clipped.
    const squeezed = tables.filter((t) => t.caption && t.caption.getBoundingClientRect().width < 0.9 * t.getBoundingClientRect().width).map((t) => `caption of ${t.className}`);
    clippedCells.push(...squeezed);
    const svg = document.querySelector('#plot svg');
    const box = document.getElementById('plot');
    const scrollWidth = document.documentElement.scrollWidth;
    for (const d of folded) d.open = false;
    return {
      scrollWidth,
      viewport: window.innerWidth,
      tables: tables.length,
      clippedTables,
      clippedCells,
      plot: svg ? { svg: svg.getBoundingClientRect().width, box: box.clientWidth } : undefined,
    };
  });
  check(`${tag} @${width}px: no horizontal overflow (page ${m.scrollWidth} ≤ window ${m.viewport}) [points 1, 5]`, m.scrollWidth <= m.viewport);
  check(`${tag} @${width}px: no clipped table or cell (${m.tables} tables) [point 1]`, m.clippedTables.length === 0 && m.clippedCells.length === 0, [...m.clippedTables, ...m.clippedCells].slice(0, 5).join('; '));
  if (m.plot) check(`${tag} @${width}px: plot fits its box (${m.plot.svg.toFixed(0)} ≤ ${m.plot.box} px) [point 5]`, m.plot.svg <= m.plot.box + 1);
  return m;
}

/** Records every change of the stage line and the progress bar (installed before the page's script). */
function recordStages() {
  window.__stages = [];
  new MutationObserver(() => {
    const s = document.getElementById('stage');
    const p = document.getElementById('progress');
    if (!s || !p) return;
    const last = window.__stages.at(-1);
    const entry = { text: s.textContent, value: p.value, shown: !p.hidden };
    if (!last || last.text !== entry.text || last.value !== entry.value) window.__stages.push(entry);
  }).observe(document, { subtree: true, childList: true, characterData: true, attributes: true });
}

/** The page's results as a person sees them: which sections show, the error box, plot colours. */
function pageState(page) {
  return page.evaluate(() => {
    const shown = (el) => el !== null && el.getClientRects().length > 0;
    const err = document.getElementById('error');
    const strokes = {};
    for (const l of document.querySelectorAll('#plot polyline[data-role]')) strokes[l.dataset.role] = l.getAttribute('stroke');
    return {
      resultsShown: shown(document.getElementById('results')),
      tables: [...document.querySelectorAll('#results table')].filter(shown).length,
      plotLines: document.querySelectorAll('#plot polyline').length,
      errorShown: shown(err),
      errorClass: err.className,
      errorText: err.textContent,
      stage: document.getElementById('stage').textContent,
      legend: [...document.querySelectorAll('#plot .legend li')].map((li) => li.textContent),
      strokes,
      note: shown(document.getElementById('adapter-note')) ? document.getElementById('adapter-note').textContent : undefined,
    };
  });
}

/** Every numeric column of every shown table is explained in a glossary of the same section. */
function unexplainedColumns(page) {
  return page.evaluate(() => {
    const missing = [];
    for (const t of document.querySelectorAll('#results table')) {
      const section = t.closest('details') ?? t.parentElement;
      const terms = new Set([...section.querySelectorAll('dl.glossary dt')].map((d) => d.textContent.trim()));
      if (t.closest('details')) continue; // the untimed list repeats the kernel/status columns
      for (const th of t.querySelectorAll('th.num, th')) if (th.classList.contains('num') && !terms.has(th.textContent.trim())) missing.push(th.textContent.trim());
    }
    return missing;
  });
}

/** Numbers of the tuner summary as the page prints them (thin-space thousands separators removed). */
async function tunerFacts(page) {
  const facts = await page.evaluate(() => Object.fromEntries([...document.querySelectorAll('#tune dl.facts dt')].map((dt) => [dt.textContent, dt.nextElementSibling.textContent])));
  const n = (s) => (s === undefined ? Number.NaN : Number(s.replace(/\u202f/g, '')));
  const spent = /spent ([\d.\u202f]+) ms of a ([\d.\u202f]+) ms budget/.exec(facts['tuning time'] ?? '');
  return {
    facts,
    msPerProduct: n(/^([\d.e+-]+) ms/.exec(facts['time per product'] ?? '')?.[1]),
    gflops: n(/^([\d.e+-]+)/.exec(facts['GFLOP/s of the winner'] ?? '')?.[1]),
    spent: n(spent?.[1]),
    budget: n(spent?.[2]),
  };
}

async function leg(chromium, server, flags, label, body) {
  console.log(`\n${label} (${elapsed()})`);
  const userDir = mkdtempSync(join(tmpdir(), 'gpusparse-chromium-'));
  const ctx = await chromium.launchPersistentContext(userDir, {
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    headless: true,
    args: [...COMMON_FLAGS, ...flags],
    viewport: { width: 1280, height: 900 },
  });
  try {
    const page = ctx.pages()[0] ?? (await ctx.newPage());
    await page.addInitScript(recordStages);
    const problems = [];
    page.on('pageerror', (e) => problems.push(`uncaught: ${e}`));
    page.on('console', (m) => m.type() === 'error' && problems.push(`console: ${m.text()}`));
    page.on('response', (r) => r.status() >= 400 && problems.push(`HTTP ${r.status()} ${r.url()}`));
    page.on('requestfailed', (r) => problems.push(`request failed: ${r.url()}`));
    const resp = await page.goto(`http://127.0.0.1:${server.address().port}/index.html?grid=40&tune=300`);
    check('page loaded (HTTP 200, title)', resp?.status() === 200 && /gpusparse/.test(await page.title()));
    await body(page);
    // Point 7: the favicon 404 was the only console error; now there must be none at all.
    check('no console errors, failed requests (404) or uncaught errors [point 7]', problems.length === 0, problems.join('; '));
  } finally {
    await ctx.close();
    rmSync(userDir, { recursive: true, force: true });
  }
}

/** Point 7: a progress bar named the stages, rising from 0 to 1. */
async function checkProgress(page, stagesWanted) {
  const stages = await page.evaluate(() => window.__stages);
  const texts = stages.map((s) => s.text);
  const values = stages.filter((s) => s.shown).map((s) => s.value);
  const missing = stagesWanted.filter((re) => !texts.some((t) => re.test(t)));
  check(`progress bar shown with the stage named (${stages.length} updates) [point 7]`, missing.length === 0 && values.length >= 3, `missing ${missing.join(', ')}; saw ${texts.slice(0, 8).join(' | ')}`);
  check('progress bar rises from 0 to 1 [point 7]', values.length > 0 && values[0] < 0.1 && values.at(-1) === 1 && values.every((v, i) => i === 0 || v >= values[i - 1] - 1e-9), values.join(' '));
}

/** Points 2 and 6 on the WebGPU run: the winner's figures agree, the budget is told honestly, the software note. */
async function checkHonesty(page, s) {
  const t = await tunerFacts(page);
  const expect = (2 * s.matrix.nnz) / (t.msPerProduct * 1e6);
  check(`winner GFLOP/s shown (${t.gflops}) is 2·nnz / time per product (${t.msPerProduct} ms → ${expect.toPrecision(3)}) [point 2]`, t.gflops > 0 && Math.abs(t.gflops / expect - 1) < 0.02, JSON.stringify(t.facts['GFLOP/s of the winner']));
  const over = t.spent > t.budget;
  const flagged = /over budget by/.test(t.facts['tuning time'] ?? '');
  check(`tuning time told against the budget (spent ${t.spent} ms of ${t.budget} ms${over ? ', over budget flagged' : ''}) [point 2]`, Number.isFinite(t.spent) && Number.isFinite(t.budget) && over === flagged, t.facts['tuning time']);
  check('every numeric column is explained on the page (glossary, not a tooltip) [points 1, 2]', (await unexplainedColumns(page)).length === 0, (await unexplainedColumns(page)).join(', '));
  const st = await pageState(page);
  if (/swiftshader|lavapipe|llvmpipe/i.test(s.adapter ?? '')) {
    check('software adapter: the page says its timings are not GPU timings [point 6]', s.software !== undefined && /software renderer/.test(st.note ?? '') && /not GPU timings/.test(st.note ?? ''), st.note);
  } else {
    check('hardware adapter: no software-adapter note [point 6]', st.note === undefined, st.note);
  }
}

/** Point 3: after an error the old results are gone and the error box shows, styled as an error. */
async function checkCleared(page, tag, wantText) {
  const st = await pageState(page);
  check(`${tag}: old tables and plot gone [point 3]`, !st.resultsShown && st.tables === 0 && st.plotLines === 0, JSON.stringify({ shown: st.resultsShown, tables: st.tables, lines: st.plotLines }));
  check(`${tag}: error box visible with the error class, no doubled "Error:" [point 3]`, st.errorShown && /\berror\b/.test(st.errorClass) && wantText.test(st.errorText) && !/Error: Error/.test(st.errorText), st.errorText);
  return st;
}

/** The README's bundle size (kB) against the built one (point 7). */
function checkBundleSize() {
  const readme = readFileSync(join(here, 'README.md'), 'utf8');
  const claim = /bundle is about (\d+) kB/.exec(readme);
  const kb = statSync(join(here, 'dist', 'main.js')).size / 1000;
  check(`README's bundle size (${claim?.[1]} kB) within 10% of the built one (${kb.toFixed(0)} kB) [point 7]`, claim !== null && Math.abs(Number(claim[1]) / kb - 1) <= 0.1);
}

/** The WebGPU leg after the first run: layout, honesty, a file, a malformed file, no file. */
async function webgpuLeg(page, shotDir, rtol, colours) {
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
  check('tuner table shown with the winner row marked', (await page.locator('#tune table.timed tr.winner').count()) === 1);
  check('tuned SpMV matches the float64 product computed on the CPU (per-row bound)', s.spmv.ok === true && s.spmv.maxErrOverBound <= 1, JSON.stringify(s.spmv));
  const g = s.gpuCg;
  check('GPU CG converged; float64 true residual ≤ 10·rtol', g.converged && g.relTrueResidual <= 10 * rtol, JSON.stringify({ reason: g.reason, rel: g.relTrueResidual }));
  check('GPU CG history falls', g.history.length >= 2 && g.history.at(-1).relative < g.history[0].relative / 100);
  check('host CG converged too', s.hostCg?.converged === true && s.hostCg.relTrueResidual <= rtol);
  await checkProgress(page, [/^opening WebGPU/, /^autotuning the SpMV kernel: candidate \d+ of \d+/, /^CG on WebGPU/, /^CG on the CPU/]);
  await checkHonesty(page, s);
  const st = await pageState(page);
  check('plot: GPU, CPU and rtol curves, legend "rtol = 1e-5" as the input writes it [point 4]', st.plotLines === 3 && st.legend.includes('rtol = 1e-5'), JSON.stringify(st.legend));
  Object.assign(colours, st.strokes);
  await screenshot(page, shotDir, 'webgpu-poisson-1280');
  await checkLayout(page, 1280, 'WebGPU run');
  await checkLayout(page, 760, 'WebGPU run'); // just above the width where rows become cards
  await checkLayout(page, 360, 'WebGPU run');
  await checkLayout(page, 420, 'WebGPU run');
  await screenshot(page, shotDir, 'webgpu-poisson-420');
  await page.setViewportSize({ width: 1280, height: 900 });

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
  check('file run shows its tables and plot', (await pageState(page)).tables >= 2 && (await pageState(page)).plotLines >= 2);

  // A malformed file after the good one: an error on the page, no crash, no stale results.
  const bad = join(dir, 'bad.mtx');
  writeFileSync(bad, '%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1.0\n9 1 2.0\n');
  await page.setInputFiles('#mtx-file', bad);
  await page.click('#run');
  const e = await finishedRun(page, 3);
  check('malformed file → error state, naming the error class and the file', e.state === 'error' && /MatrixMarketError/.test(e.error ?? '') && /bad\.mtx/.test(e.error ?? ''), e.error);
  await checkCleared(page, 'malformed file', /MatrixMarketError: .*bad\.mtx/);
  await checkLayout(page, 420, 'error');
  await screenshot(page, shotDir, 'webgpu-error-420');
  await page.setViewportSize({ width: 1280, height: 900 });

  // No file chosen: the page's own message, once, without "Error: Error:".
  await page.setInputFiles('#mtx-file', []);
  await page.selectOption('#matrix-kind', 'file');
  await page.click('#run');
  const nf = await finishedRun(page, 4);
  check('no file chosen → error state', nf.state === 'error' && /^no \.mtx file chosen/.test(nf.error ?? ''), nf.error);
  await checkCleared(page, 'no file chosen', /The run failed:no \.mtx file chosen/);
  rmSync(dir, { recursive: true, force: true });
}

async function main() {
  const tb = performance.now();
  await buildBrowserExample({ quiet: true });
  console.log(`bundle built in ${((performance.now() - tb) / 1000).toFixed(2)} s`);
  checkBundleSize();
  const { chromium } = await loadPlaywright();
  const server = await serve();
  const shotDir = process.env.KEEP_SCREENSHOTS ?? join(here, 'screenshots');
  mkdirSync(shotDir, { recursive: true });
  const rtol = 1e-5;
  const colours = {};
  try {
    await leg(chromium, server, WEBGPU_FLAGS, 'WebGPU flags on', (page) => webgpuLeg(page, shotDir, rtol, colours));
    await leg(chromium, server, [], 'WebGPU flags off (CPU fallback)', async (page) => {
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
      const st = await pageState(page);
      check('the plot shows the host CG and the rtol line', st.plotLines === 2 && st.legend.includes('rtol = 1e-5'), JSON.stringify(st.legend));
      // Point 4: a colour means the same curve in both modes.
      const same = colours.host === undefined || (st.strokes.host === colours.host && st.strokes.rtol === colours.rtol);
      check(`plot colours as in the WebGPU run (CPU ${st.strokes.host}, rtol ${st.strokes.rtol}) [point 4]`, same && st.strokes.gpu === undefined, JSON.stringify({ webgpu: colours, cpu: st.strokes }));
      await checkProgress(page, [/^CG on the CPU \(float64 host backend\)/]);
      await screenshot(page, shotDir, 'cpu-fallback-1280');
      await checkLayout(page, 1280, 'CPU fallback');
      await checkLayout(page, 420, 'CPU fallback');
      await screenshot(page, shotDir, 'cpu-fallback-420');
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
