/**
 * `gpusparse tune A.mtx`: choose the SpMV format and parameters for a matrix by measurement
 * (the autotuner of @gpusparse/gpu), print its TuningReport as a table or JSON. The choice is
 * cached (a second run is a hit and times nothing) unless --no-cache.
 * @module
 */
import type { TuningReport } from '@gpusparse/gpu';
import { checkKernelIds, openGpuContext } from '../util/backend';
import { type Command, ExitCode, info, integerOption, numberOption, out, UsageError } from '../util/context';
import { loadMatrix } from '../util/load';
import { progressBar } from '../util/progress';

export const tuneCommand: Command = {
  summary: 'pick the best format and parameters by measurement',
  usage: [
    'usage: gpusparse tune <A.mtx | gen:...> [--products 1000] [--budget-ms N] [--fraction 0.1] [--kernels id,id]',
    '                      [--exhaustive] [--no-cache] [--cache path] [--rows 40] [--all] [--json]',
    '',
    'Prunes candidates with cheap statistics (row lengths, RSDP, diagonals, padding), times the',
    'survivors within a budget (a fraction of the expected products · product time), verifies the',
    'winner against the float64 reference, and caches the choice per matrix fingerprint and adapter.',
    'The table lists the candidates that were measured (at most --rows) and counts the others by reason;',
    '--all lists every candidate with its reason, --json holds the whole report.',
  ].join('\n'),
  options: {
    products: { type: 'string' },
    'budget-ms': { type: 'string' },
    fraction: { type: 'string' },
    kernels: { type: 'string' },
    exhaustive: { type: 'boolean' },
    'no-cache': { type: 'boolean' },
    cache: { type: 'string' },
    rows: { type: 'string' },
    all: { type: 'boolean' },
  },
  async run(pos, v, common) {
    if (pos.length !== 1) throw new UsageError(`tune: expected one matrix argument, got ${pos.length}`);
    if (common.backend === 'cpu') throw new UsageError('tune: the autotuner measures WebGPU kernels; --backend cpu has nothing to tune');
    const gpu = await import('@gpusparse/gpu');
    const kernelIds = typeof v.kernels === 'string' ? v.kernels.split(',') : undefined;
    if (kernelIds) await checkKernelIds(kernelIds, '--kernels');
    const expectedProducts = v.products === undefined ? undefined : integerOption('products', v.products as string, 1000, 1);
    const budgetMs = v['budget-ms'] === undefined ? undefined : numberOption('budget-ms', v['budget-ms'] as string, 0, { min: 0 });
    // checked here too: the tuner's own check (InvalidParameterError) would not name the --option
    if (budgetMs === 0) throw new UsageError(`--budget-ms: expected a number > 0, got '${String(v['budget-ms'])}'`);
    const fraction = numberOption('fraction', v.fraction as string | undefined, 0.1, { min: 0 });
    if (fraction === 0 || fraction > 1) throw new UsageError(`--fraction: expected a number in (0, 1], got '${String(v.fraction)}'`);
    const maxRows = integerOption('rows', v.rows as string | undefined, 40, 1);
    const m = await loadMatrix(pos[0]!);
    const ctx = await openGpuContext();
    const bar = progressBar('tuning', { enabled: common.progress });
    try {
      gpu.checkVectorBindings(ctx, m.matrix, 'tune');
      const kernels = kernelIds?.map((id) => gpu.getKernel(id));
      const r = await gpu.autotune(ctx, m.matrix, {
        expectedProducts,
        budgetMs,
        fraction,
        exhaustive: Boolean(v.exhaustive),
        cache: v['no-cache'] ? false : typeof v.cache === 'string' ? v.cache : true,
        ...(kernels ? { kernels } : {}),
        warn: (msg) => info(`warning: ${msg}`),
        onProgress: (p) => bar.update(p.done, p.total, `${p.phase} ${p.spentMs.toFixed(0)}/${p.budgetMs.toFixed(0)} ms`),
      });
      bar.finish();
      if (common.json) out(gpu.reportJson(r.report));
      else {
        out(`${m.name}: ${m.matrix.rows}×${m.matrix.cols}, nnz ${m.matrix.rowPtr[m.matrix.rows]} on ${ctx.describe().adapter.device || ctx.describe().adapter.description}`);
        out(v.all ? gpu.reportTable(r.report) : measuredTable(gpu, r.report, maxRows));
      }
      return ExitCode.ok;
    } finally {
      bar.finish();
      ctx.dispose();
    }
  },
};

/** Why candidates were not timed, in words, by trial status. */
const NOT_TIMED: Record<string, string> = {
  budget: 'short-listed but left out by the budget',
  skipped: 'not short-listed (the model predicts them slower)',
  pruned: 'pruned by statistics (padding, diagonals, bindings)',
};

/**
 * The report's table with only the measured candidates (timed, cached, failed), then one line
 * counting the others by reason instead of a row each (what --all shows).
 */
export function measuredTable(gpu: typeof import('@gpusparse/gpu'), report: TuningReport, maxRows: number): string {
  const measured = report.trials.filter((t) => !(t.status in NOT_TIMED));
  const text = gpu.reportTable({ ...report, trials: measured }, { maxRows });
  const counts = Object.keys(NOT_TIMED)
    .map((s) => [s, report.trials.filter((t) => t.status === s).length] as const)
    .filter(([, n]) => n > 0)
    .map(([s, n]) => `${n} ${NOT_TIMED[s]}`);
  if (counts.length === 0) return text;
  const cut = text.indexOf('\n\n');
  const line = `not timed: ${counts.join('; ')} (--all lists them with their reasons)`;
  return cut < 0 ? `${text}\n${line}` : `${text.slice(0, cut)}\n${line}${text.slice(cut)}`;
}
