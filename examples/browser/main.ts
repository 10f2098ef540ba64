/**
 * The browser page: wire the form of index.html to {@link runDemo} and draw what it returns —
 * the adapter (or why there is none), the autotuner's report table, the SpMV check and the CG
 * convergence plot (inline SVG from the CLI's `linePlot`, plain string code). The finished
 * run is also written as JSON into `#result[data-summary]` with `data-state` = `done` or
 * `error` and `data-run` = the run's number, which the headless test (browser.test.mjs) reads.
 *
 * Query parameters: `?autorun=0` waits for the button; `?grid=N` sets the Poisson grid;
 * `?tune=MS` the tuning time.
 * @module
 */
import { reportTable } from '@gpusparse/gpu';
import { linePlot, type Series } from '../../packages/cli/src/plots/svg';
import { type Backend, type CgSummary, type MatrixSource, makeMatrix, openBackend, type RunSummary, runDemo } from './compute';

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
  status: $('status'),
  adapter: $('adapter'),
  matrix: $('matrix-info'),
  tune: $('tune-table'),
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
/** Rows of the tuning report shown (timed trials come first; the rest are skips and prunes). */
const TABLE_ROWS = 24;

/** Show which group of inputs belongs to the chosen matrix kind. */
function syncKind(): void {
  for (const el of document.querySelectorAll<HTMLElement>('[data-kind]')) el.hidden = el.dataset.kind !== form.kind.value;
}

async function source(): Promise<MatrixSource> {
  const kind = form.kind.value;
  if (kind === 'poisson2d') return { kind, grid: Number(form.grid.value) };
  if (kind === 'banded') return { kind, n: Number(form.bandN.value), half: Number(form.bandHalf.value) };
  const f = form.file.files?.[0];
  if (!f) throw new Error('no .mtx file chosen: pick one with the file input (uncompressed Matrix Market text)');
  return { kind: 'file', name: f.name, bytes: new Uint8Array(await f.arrayBuffer()) };
}

const e3 = (v: number) => v.toExponential(3);

function cgLine(c: CgSummary): string {
  const verdict = c.converged ? 'converged' : `did not converge (${c.reason})`;
  return `${c.backend}: ${verdict} in ${c.iterations} iterations, ${c.ms.toFixed(1)} ms (${c.matvecs} products, ${c.readbacks} readbacks); true ‖b − A·x‖/‖b‖ = ${e3(c.relTrueResidual)} (float64)`;
}

function plotOf(s: RunSummary, rtol: number): string {
  const series: Series[] = [];
  for (const c of [s.gpuCg, s.hostCg]) {
    if (c) series.push({ name: c.backend.split(',')[0]!, x: c.history.map((h) => h.iteration), y: c.history.map((h) => h.relative) });
  }
  series.push({ name: `rtol ${rtol}`, x: [0, Math.max(1, ...series.flatMap((v) => v.x))], y: [rtol, rtol] });
  return linePlot(series, { title: `CG on ${s.matrix.label}`, xLabel: 'iteration', yLabel: '‖r‖ / ‖b‖', logY: true, width: 760, height: 400 });
}

function show(s: RunSummary, table: string | undefined, rtol: number): void {
  out.matrix.textContent = `${s.matrix.label}: ${s.matrix.rows}×${s.matrix.cols}, ${s.matrix.nnz} stored entries`;
  out.tune.textContent = table ?? 'no autotuning: it needs WebGPU';
  if (s.spmv) {
    const v = s.spmv;
    out.spmv.textContent = `tuned product ${s.tuning?.winner} vs float64 reference: max |error|/bound = ${v.maxErrOverBound.toFixed(3)} (row ${v.row}), max |error| = ${e3(v.maxAbsErr)} — ${v.ok ? 'OK' : 'FAILED'}`;
    out.spmv.className = v.ok ? 'ok' : 'bad';
  } else out.spmv.textContent = 'no device product to check (CPU fallback)';
  out.cg.textContent = [s.gpuCg, s.hostCg].filter((c): c is CgSummary => c !== undefined).map(cgLine).join('\n');
  out.plot.innerHTML = plotOf(s, rtol);
}

async function run(): Promise<void> {
  form.run.disabled = true;
  out.result.dataset.run = String(++runs);
  out.result.dataset.state = 'running';
  out.result.textContent = 'running…';
  const t0 = performance.now();
  try {
    backend ??= openBackend();
    const be = await backend;
    if (be.kind === 'webgpu') {
      out.adapter.textContent = `WebGPU adapter: ${be.adapter}`;
      out.adapter.className = 'ok';
    } else {
      out.adapter.textContent = `no WebGPU adapter: ${be.reason}. Falling back to the CPU (float64 host backend) for CG; no autotuning.`;
      out.adapter.className = 'bad';
    }
    const rtol = Number(form.rtol.value);
    const m = makeMatrix(await source());
    const settings = { tuneMs: Number(form.tune.value), rtol, hostToo: form.hostToo.checked };
    const { summary, report } = await runDemo(be, m, settings, (stage) => {
      out.status.textContent = stage;
    });
    const table = report ? reportTable(report, { maxRows: TABLE_ROWS }) : undefined;
    const more = report && report.trials.length > TABLE_ROWS ? `\n(the table shows the first ${TABLE_ROWS} of ${report.trials.length} trials: timed ones first, then budget-skipped and pruned)` : '';
    show(summary, table === undefined ? undefined : table + more, rtol);
    out.status.textContent = `done in ${((performance.now() - t0) / 1000).toFixed(2)} s`;
    out.result.dataset.summary = JSON.stringify(summary);
    out.result.dataset.state = 'done';
    out.result.textContent = summary.backend === 'webgpu' ? 'done on WebGPU' : 'done on the CPU fallback';
  } catch (e) {
    const msg = `${(e as Error).name}: ${(e as Error).message}`;
    out.status.textContent = `error: ${msg}`;
    out.result.dataset.error = msg;
    out.result.dataset.state = 'error';
    out.result.textContent = 'error';
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
syncKind();
if (params.get('autorun') !== '0') void run();
