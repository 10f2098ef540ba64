/**
 * The browser page: wire the form of index.html to {@link runDemo} and draw what it returns —
 * the adapter (or why there is none, and a warning when it is a software renderer whose
 * timings are CPU timings), a progress bar naming the stage, the autotuner's report
 * (views.ts), the SpMV check, the CG results and the convergence plot (plot.ts, drawn at the
 * width of its box). A failed run shows its error in the error box and leaves no results of an
 * earlier run on the page. The finished run is also written as JSON into
 * `#result[data-summary]` with `data-state` = `done` or `error` and `data-run` = the run's
 * number, which the headless test (browser.test.mjs) reads.
 *
 * Query parameters: `?autorun=0` waits for the button; `?grid=N` sets the Poisson grid;
 * `?tune=MS` the tuning time.
 * @module
 */
import type { TuningReport } from '@gpusparse/gpu';
import { type Backend, type CgSummary, gunzipIfNeeded, type MatrixSource, makeMatrix, openBackend, type RunSummary, runDemo } from './compute';
import { type Curve, convergencePlot, legendHtml } from './plot';
import { cgHtml, fmt, tuningHtml } from './views';

const $ = <T extends HTMLElement>(id: string): T => {
  const el = document.getElementById(id);
  if (!el) throw new Error(`examples/browser/main.ts: index.html has no element #${id}`);
  return el as T;
};

const form = {
  kind: $<HTMLSelectElement>('matrix-kind'),
  grid: $<HTMLInputElement>('grid'),
  bandN: $<HTMLInputElement>('band-n'),
  bandHalf: $<HTMLInputElement>('band-half'),
  file: $<HTMLInputElement>('mtx-file'),
  tune: $<HTMLInputElement>('tune-ms'),
  rtol: $<HTMLInputElement>('rtol'),
  hostToo: $<HTMLInputElement>('host-too'),
  run: $<HTMLButtonElement>('run'),
};
const out = {
  progress: $<HTMLProgressElement>('progress'),
  stage: $('stage'),
  status: $('status'),
  error: $('error'),
  adapter: $('adapter'),
  adapterNote: $('adapter-note'),
  results: $('results'),
  matrix: $('matrix-info'),
  tune: $('tune'),
  spmv: $('spmv'),
  cg: $('cg'),
  plot: $('plot'),
  result: $('result'),
};

const params = new URLSearchParams(location.search);
if (params.has('grid')) form.grid.value = params.get('grid')!;
if (params.has('tune')) form.tune.value = params.get('tune')!;

let backend: Promise<Backend> | undefined;
let runs = 0;
/** What the plot was last drawn from, to redraw it at a new width. */
let lastPlot: { curves: Curve[]; title: string; width: number } | undefined;

/** Show which group of inputs belongs to the chosen matrix kind. */
function syncKind(): void {
  for (const el of document.querySelectorAll<HTMLElement>('[data-kind]')) el.hidden = el.dataset.kind !== form.kind.value;
}

async function source(): Promise<MatrixSource> {
  const kind = form.kind.value;
  if (kind === 'poisson2d') return { kind, grid: Number(form.grid.value) };
  if (kind === 'banded') return { kind, n: Number(form.bandN.value), half: Number(form.bandHalf.value) };
  const f = form.file.files?.[0];
  if (!f) throw new Error('no .mtx file chosen: pick one with the file input (Matrix Market text, or .mtx.gz)');
  return { kind: 'file', name: f.name, bytes: await gunzipIfNeeded(new Uint8Array(await f.arrayBuffer()), f.name) };
}

/** An error as one line: the class name when it says something ("MatrixMarketError: …"), never "Error: Error: …". */
export function errorText(e: unknown): string {
  if (!(e instanceof Error)) return String(e);
  const name = e.name && e.name !== 'Error' && !e.message.startsWith(`${e.name}:`) ? `${e.name}: ` : '';
  return name + e.message;
}

function showBackend(be: Backend): void {
  out.adapterNote.hidden = true;
  if (be.kind === 'cpu') {
    out.adapter.textContent = `No WebGPU adapter: ${be.reason}. Falling back to the CPU (float64 host backend) for CG; no autotuning.`;
    out.adapter.className = 'bad';
    return;
  }
  out.adapter.textContent = `WebGPU adapter: ${be.adapter}`;
  out.adapter.className = 'ok';
  if (be.software) {
    out.adapterNote.textContent = `This adapter is ${be.software}, a software renderer: the GPU is emulated on the CPU. Its timings (ms, GFLOP/s, the WebGPU CG time) are not GPU timings and say nothing about how a real GPU compares with the CPU. The correctness checks (the SpMV check, the residuals) still hold.`;
    out.adapterNote.hidden = false;
  }
}

function drawPlot(): void {
  if (!lastPlot) return;
  const width = out.plot.clientWidth || 600;
  lastPlot.width = width;
  const opts = { width, title: lastPlot.title, xLabel: 'iteration', yLabel: '‖r‖ / ‖b‖ (log scale)' };
  out.plot.innerHTML = convergencePlot(lastPlot.curves, opts) + legendHtml(lastPlot.curves);
}

function plotCurves(s: RunSummary, rtol: number, rtolText: string): Curve[] {
  const curves: Curve[] = [];
  const of = (c: CgSummary) => ({ x: c.history.map((h) => h.iteration), y: c.history.map((h) => h.relative) });
  if (s.gpuCg) curves.push({ role: 'gpu', name: `CG on WebGPU (float32, ${s.gpuCg.backend.split(', ')[1] ?? 'tuned kernel'})`, ...of(s.gpuCg) });
  if (s.hostCg) curves.push({ role: 'host', name: 'CG on the CPU (float64)', ...of(s.hostCg) });
  const xmax = Math.max(1, ...curves.flatMap((c) => c.x));
  curves.push({ role: 'rtol', name: `rtol = ${rtolText}`, x: [0, xmax], y: [rtol, rtol] });
  return curves;
}

function show(s: RunSummary, report: TuningReport | undefined, rtol: number, rtolText: string): void {
  out.results.hidden = false;
  out.matrix.textContent = `Matrix ${s.matrix.label}: ${s.matrix.rows} × ${s.matrix.cols}, ${s.matrix.nnz} stored entries (nnz).`;
  out.tune.innerHTML = report ? tuningHtml(report, s.gpuCg?.matvecs) : '<p>No autotuning: it needs WebGPU.</p>';
  if (s.spmv) {
    const v = s.spmv;
    out.spmv.textContent = `One product of the tuned kernel (${s.tuning?.winner}) against the float64 product on the CPU, row by row: the largest error is ${fmt(v.maxErrOverBound)} × the float32 rounding bound 2·nnzᵢ·ε·Σ|aᵢⱼxⱼ| (row ${v.row}; ≤ 1 passes), largest absolute error ${v.maxAbsErr.toExponential(2)} — ${v.ok ? 'OK' : 'FAILED'}.`;
    out.spmv.className = v.ok ? 'ok' : 'bad';
  } else {
    out.spmv.textContent = `No device product to check (CPU fallback${s.noWebGpuReason ? `: ${s.noWebGpuReason}` : ''}).`;
    out.spmv.className = '';
  }
  out.cg.innerHTML = cgHtml([s.gpuCg, s.hostCg].filter((c): c is CgSummary => c !== undefined), rtolText);
  lastPlot = { curves: plotCurves(s, rtol, rtolText), title: `CG on ${s.matrix.label}`, width: 0 };
  drawPlot();
}

/** Take every result of an earlier run off the page (and any earlier error). */
function clearResults(): void {
  out.results.hidden = true;
  for (const el of [out.matrix, out.tune, out.spmv, out.cg, out.plot]) el.replaceChildren();
  lastPlot = undefined;
  out.error.hidden = true;
  out.error.replaceChildren();
  delete out.result.dataset.summary;
  delete out.result.dataset.error;
}

function showError(e: unknown): void {
  const msg = errorText(e);
  clearResults();
  const head = document.createElement('strong');
  head.textContent = 'The run failed:';
  out.error.append(head, msg);
  out.error.hidden = false;
  out.progress.hidden = true;
  out.stage.textContent = 'stopped by an error';
  out.status.textContent = '';
  out.result.dataset.error = msg;
  out.result.dataset.state = 'error';
  out.result.textContent = 'error';
}

function progress(stage: string, fraction: number): void {
  out.progress.hidden = false;
  out.progress.value = fraction;
  out.stage.textContent = `${stage}…`;
}

async function run(): Promise<void> {
  form.run.disabled = true;
  clearResults();
  out.result.dataset.run = String(++runs);
  out.result.dataset.state = 'running';
  out.result.textContent = 'running…';
  out.status.textContent = '';
  const t0 = performance.now();
  try {
    progress('opening WebGPU', 0);
    backend ??= openBackend();
    const be = await backend;
    showBackend(be);
    const rtolText = form.rtol.value.trim();
    const rtol = Number(rtolText);
    progress('building the matrix', 0.02);
    const m = makeMatrix(await source());
    const settings = { tuneMs: Number(form.tune.value), rtol, hostToo: form.hostToo.checked };
    const { summary, report } = await runDemo(be, m, settings, progress);
    show(summary, report, rtol, rtolText);
    out.progress.value = 1;
    out.stage.textContent = 'done';
    out.status.textContent = `in ${((performance.now() - t0) / 1000).toFixed(2)} s`;
    out.result.dataset.summary = JSON.stringify(summary);
    out.result.dataset.state = 'done';
    out.result.textContent = summary.backend === 'webgpu' ? `done on WebGPU${summary.software ? ` (${summary.software}, a software renderer)` : ''}` : 'done on the CPU fallback';
  } catch (e) {
    showError(e);
  } finally {
    form.run.disabled = false;
  }
}

form.kind.addEventListener('change', syncKind);
form.file.addEventListener('change', () => {
  if (form.file.files?.length) form.kind.value = 'file';
  syncKind();
});
form.run.addEventListener('click', () => void run());
let resizeQueued = false;
window.addEventListener('resize', () => {
  if (resizeQueued) return;
  resizeQueued = true;
  requestAnimationFrame(() => {
    resizeQueued = false;
    if (lastPlot && out.plot.clientWidth !== lastPlot.width) drawPlot();
  });
});
syncKind();
out.stage.textContent = 'ready';
out.progress.hidden = true;
if (params.get('autorun') !== '0') void run();
