/**
 * HTML for the page's result sections, as strings (no DOM): the autotuner's report (the
 * `TuningReport` object rendered as tables, a summary and a glossary of every column, not the
 * fixed-width text of `reportTable`, which does not fit a phone) and the CG results table.
 * Every figure shown is the report's own; the page adds units and explanations only.
 * On narrow screens the tables (class `stack`) turn into one card per row, each cell labelled
 * by its column (`data-label`), so nothing is clipped.
 * @module
 */
import type { Trial, TuningReport } from '@gpusparse/gpu';
import type { CgSummary } from './compute';

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/**
 * A number for people: 3 significant digits below 1000 (0.00174, 9.21, 144), whole numbers
 * with thousands separators above (144 614); '–' for a missing value.
 * @example fmt(0.0017432) // '0.00174'
 */
export function fmt(v: number | undefined): string {
  if (v === undefined || !Number.isFinite(v)) return '–';
  if (v === 0) return '0';
  if (Math.abs(v) >= 1000) return Math.round(v).toLocaleString('en-US').replace(/,/g, '\u202f');
  if (Math.abs(v) < 1e-4) return v.toExponential(2);
  return String(Number(v.toPrecision(3)));
}

const paramText = (p: Readonly<Record<string, number>>) =>
  Object.entries(p)
    .map(([k, v]) => `${k}=${v}`)
    .join(', ');

/** A table with column labels repeated on each cell (for the stacked layout). */
function table(cls: string, caption: string, head: readonly [string, boolean][], rows: readonly { cls?: string; cells: string[] }[]): string {
  const th = head.map(([h, num]) => `<th scope="col"${num ? ' class="num"' : ''}>${esc(h)}</th>`).join('');
  const body = rows
    .map((r) => {
      const tds = r.cells.map((c, i) => `<td data-label="${esc(head[i]![0])}"${head[i]![1] ? ' class="num"' : ''}><span>${c}</span></td>`).join('');
      return `<tr${r.cls ? ` class="${r.cls}"` : ''}>${tds}</tr>`;
    })
    .join('');
  return `<table class="stack ${cls}"><caption>${esc(caption)}</caption><thead><tr>${th}</tr></thead><tbody>${body}</tbody></table>`;
}

const statusOf = (t: Trial) => (t.verified === false ? 'rejected' : t.status);

function noteOf(t: Trial): string {
  if (t.error) return t.error;
  if (t.reason) return t.reason;
  if (t.verified) return `verified (max error/bound ${fmt(t.maxErrOverBound)})`;
  return '';
}

const isWinner = (r: TuningReport, t: Trial) => r.winner !== undefined && t.kernel === r.winner.kernel && paramText(t.params) === paramText(r.winner.params);

const TIMED_HEAD: [string, boolean][] = [
  ['kernel (parameters)', false],
  ['status', false],
  ['ms / product', true],
  ['GFLOP/s', true],
  ['MB', true],
  ['conv ms', true],
  ['upload ms', true],
  ['objective ms', true],
  ['note', false],
];

/** The timed (and failed) candidates, best objective first. */
function timedTable(r: TuningReport): string {
  const rows = r.trials
    .filter((t) => t.status === 'timed' || t.status === 'cached' || t.status === 'error')
    .sort((a, b) => (a.objectiveMs ?? Number.POSITIVE_INFINITY) - (b.objectiveMs ?? Number.POSITIVE_INFINITY))
    .map((t) => ({
      ...(isWinner(r, t) ? { cls: 'winner' } : {}),
      cells: [
        `${esc(t.kernel)}<span class="params">${esc(paramText(t.params))}</span>`,
        esc(statusOf(t)) + (isWinner(r, t) ? ' · winner' : ''),
        fmt(t.ms),
        fmt(t.gflops),
        fmt(t.bytes !== undefined ? t.bytes / 1e6 : undefined),
        fmt(t.conversionMs),
        fmt(t.uploadMs),
        fmt(t.objectiveMs),
        esc(noteOf(t)),
      ],
    }));
  return table('timed', `Candidates the tuner timed (${rows.length}), best objective first`, TIMED_HEAD, rows);
}

/** The candidates not timed (budget-skipped, pruned), with the reason, inside a <details>. */
function untimedTable(r: TuningReport): string {
  const rest = r.trials.filter((t) => t.status === 'budget' || t.status === 'pruned');
  if (rest.length === 0) return '';
  const rows = rest.sort((a, b) => a.predicted - b.predicted).map((t) => ({ cells: [`${esc(t.kernel)}<span class="params">${esc(paramText(t.params))}</span>`, esc(t.status), fmt(t.predicted), esc(t.reason ?? '')] }));
  const head: [string, boolean][] = [
    ['kernel (parameters)', false],
    ['status', false],
    ['predicted cost', true],
    ['why not timed', false],
  ];
  return `<details><summary>${rest.length} candidates not timed (${r.trials.filter((t) => t.status === 'budget').length} for lack of budget, ${r.trials.filter((t) => t.status === 'pruned').length} pruned)</summary>${table('untimed', 'Candidates not timed, most promising first', head, rows)}</details>`;
}

const METHOD = { timestamp: 'GPU timestamp queries around each product', wall: 'the host clock over batched repetitions', none: 'nothing timed' } as const;

/** The run's summary facts: winner, counts, time against budget. */
function summaryFacts(r: TuningReport, cgProducts: number | undefined): string {
  const w = r.winner;
  const count = (s: string) => r.trials.filter((t) => t.status === s).length;
  const over = r.spentMs - r.budgetMs;
  const budget = Number.isFinite(r.budgetMs)
    ? `spent ${fmt(r.spentMs)} ms of a ${fmt(r.budgetMs)} ms budget (matrix statistics ${fmt(r.statsMs)} ms)` +
      (over > 0 ? ` — <strong class="bad">over budget by ${fmt(over)} ms</strong>: the tuner decides before each candidate from an estimate of its cost and does not stop one midway` : '')
    : `spent ${fmt(r.spentMs)} ms (no budget)`;
  const facts: [string, string][] = [
    ['winner', w ? `${esc(w.kernel)} (${esc(paramText(w.params))})` : 'none'],
    ['time per product', w ? `${fmt(w.ms)} ms, timed with ${METHOD[r.method]}` : '–'],
    ['GFLOP/s of the winner', w ? `${fmt(w.gflops)} (2 floating-point operations per stored entry: 2·${r.nnz} / time per product)` : '–'],
    ['candidates', `${r.trials.length} in all: ${r.timed} timed, ${count('budget')} skipped for the budget, ${r.pruned} pruned, ${r.rejected} rejected by verification, ${count('error')} failed`],
    ['tuning time', budget],
    ['expected products', `${r.expectedProducts} (the page's guess, used in the objective)${cgProducts !== undefined ? `; the GPU CG below needed ${cgProducts}` : ''}`],
  ];
  for (const m of r.warnings) facts.push(['warning', esc(m)]);
  return `<dl class="facts">${facts.map(([k, v]) => `<dt>${esc(k)}</dt><dd>${v}</dd>`).join('')}</dl>`;
}

/** What each column and figure of the tuner's report means (shown on the page, not in a tooltip). */
function tuneGlossary(r: TuningReport): string {
  const items: [string, string][] = [
    ['status', 'timed: measured; rejected: measured but its product failed the float64 check; error: failed on the device; budget: not reached within the tuning budget; pruned: ruled out before timing (the reason is given)'],
    ['ms / product', 'median time of one product y = A·x with this kernel, in milliseconds'],
    ['GFLOP/s', 'billions of floating-point operations per second: 2·nnz (one multiply and one add per stored entry) divided by the time per product'],
    ['MB', 'storage of the matrix in this format (float32 values, 32-bit indices), in megabytes (10⁶ bytes)'],
    ['conv ms', 'time to convert the CSR matrix into this format, on the CPU'],
    ['upload ms', 'time from asking for the upload until the GPU has it: copying the converted arrays, and building the kernel’s pipeline (compiling its shader) when it is the first use of that kernel, which on a software renderer can take seconds'],
    ['objective ms', `what the tuner minimises: conv ms + upload ms + expected products × ms / product, with expected products = ${r.expectedProducts}; the predicted cost of setting up this format and running the solve's products with it`],
    ['budget', 'the tuning time you set above; “spent” is the wall time the tuning took (statistics, conversions, uploads, timing and verification of the winner)'],
  ];
  return `<dl class="glossary">${items.map(([k, v]) => `<dt>${esc(k)}</dt><dd>${esc(v)}</dd>`).join('')}</dl>`;
}

/**
 * The tuner's report as HTML: summary facts, the timed candidates, a glossary of the columns,
 * and the untimed candidates folded away. O(trials log trials).
 * @example el.innerHTML = tuningHtml(op.tuning, 120);
 */
export function tuningHtml(r: TuningReport, cgProducts?: number): string {
  return summaryFacts(r, cgProducts) + timedTable(r) + tuneGlossary(r) + untimedTable(r);
}

/**
 * The CG runs as a table with an explanation of each column. `rtolText` is rtol as the user
 * wrote it. O(runs).
 * @example el.innerHTML = cgHtml([gpuCg, hostCg], '1e-5');
 */
export function cgHtml(runs: readonly CgSummary[], rtolText: string): string {
  const head: [string, boolean][] = [
    ['solver', false],
    ['outcome', false],
    ['iterations', true],
    ['time ms', true],
    ['products', true],
    ['readbacks', true],
    ['true ‖b − A·x‖/‖b‖', true],
  ];
  const rows = runs.map((c) => ({
    cells: [
      esc(c.backend),
      c.converged ? '<span class="ok">converged</span>' : `<span class="bad">did not converge (${esc(c.reason)})</span>`,
      String(c.iterations),
      fmt(c.ms),
      String(c.matvecs),
      String(c.readbacks),
      c.relTrueResidual.toExponential(2),
    ],
  }));
  const onGpu = runs.some((c) => c.backend.startsWith('webgpu'));
  const gloss: [string, string][] = [
    ['solver', onGpu ? '“webgpu f32” runs CG on the GPU in float32 with the tuned kernel; “host f64” runs it on the CPU in float64' : '“host f64” runs CG on the CPU in float64'],
    ['iterations', 'CG iterations done (one product each)'],
    ['time ms', 'wall time of the whole solve in milliseconds (products, vector operations and readbacks)'],
    ['products', 'matrix–vector products A·x done'],
    ['readbacks', onGpu ? 'residual norms the solver copied back to decide whether to stop: GPU → CPU copies for the GPU solver (one every 4 iterations), plain reads for the host one' : 'residual norms the solver read to decide whether to stop (one per iteration)'],
    ['true ‖b − A·x‖/‖b‖', `the relative residual of the returned x, recomputed in float64 on the CPU; CG stops when its own estimate falls below rtol = ${rtolText}`],
  ];
  return (
    table('cg-runs', `CG on A·x = b, rtol = ${rtolText}`, head, rows) +
    `<dl class="glossary">${gloss.map(([k, v]) => `<dt>${esc(k)}</dt><dd>${esc(v)}</dd>`).join('')}</dl>`
  );
}
