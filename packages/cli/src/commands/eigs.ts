/**
 * `gpusparse eigs A.mtx --k 4 --method auto|lanczos|davidson|lobpcg [--which smallest|largest]`:
 * extreme eigenpairs of a symmetric matrix. Convergence is relative to the matrix's scale,
 * ‖A·v − λ·v‖ ≤ max(tol·‖A‖est, atol) (docs/guides/eigen-convergence.md). The smallest
 * eigenvalues of a symmetric matrix with a positive diagonal go to shift-invert Lanczos
 * (Lanczos on A⁻¹ with inner PCG solves, float64 on the host): plain Lanczos needs thousands of
 * steps for them on a stiff matrix (bcsstk13) and may stop at Ritz values that are not the
 * smallest. Otherwise, on WebGPU the fast phase runs in float32 and a float64 host polish brings
 * the residuals to the same rule (`eigsMixed`); on the CPU the method runs in float64 directly.
 * @module
 */
import { writeFileSync } from 'node:fs';
import { type CsrMatrix, csrDiagonal, csrTranspose, firstAsymmetry, HostOperator, InvalidMatrixError } from '@gpusparse/formats';
import { davidson, type EigenIterationInfo, type EigenvalueBoundReport, type EigenResult, eigsMixed, lanczos, lanczosShiftInvert, lobpcg, NotPositiveDefiniteError } from '@gpusparse/solvers';
import { eigsWithEngine, engineEigsOptions, parseEngineOptions } from '../engines/engine-eigs';
import { linePlot } from '../plots/svg';
import { openBackend } from '../util/backend';
import { type Command, ExitCode, info, numberOption, out, printJson, UsageError } from '../util/context';
import { intOption } from '../util/int-option';
import { loadMatrix, withInputWarnings } from '../util/load';
import { progressBar } from '../util/progress';
import { acceptColumns, parseAccept } from '../util/accept';
import { formatTable } from '../util/table';

/** True when a is symmetric (values within 1e-14 relative) and its diagonal is positive: shift-invert at σ = 0 may apply. */
export function looksSpd(a: CsrMatrix, storedSymmetric: boolean): boolean {
  const d = csrDiagonal(a);
  for (let i = 0; i < d.length; i++) if (!(d[i]! > 0)) return false;
  if (storedSymmetric) return true;
  const t = csrTranspose(a);
  for (let i = 0; i < a.rows; i++) {
    const [s, e] = [a.rowPtr[i]!, a.rowPtr[i + 1]!];
    if (t.rowPtr[i + 1]! - t.rowPtr[i]! !== e - s) return false;
    for (let k = s; k < e; k++) {
      const kt = t.rowPtr[i]! + (k - s); // both sorted by column
      if (t.colIdx[kt] !== a.colIdx[k] || Math.abs(t.values[kt]! - a.values[k]!) > 1e-14 * Math.abs(a.values[k]!)) return false;
    }
  }
  return true;
}

/** The first pair A(i, j) ≠ A(j, i) (relative difference above 1e-12), from @gpusparse/formats. */
export { firstAsymmetry };

/** Refuse what the symmetric eigensolvers cannot answer: a 0×0 or a non-symmetric matrix (InvalidMatrixError, exit 3). */
function checkEigsMatrix(name: string, a: CsrMatrix, symmetry: string): void {
  if (a.rows === 0) throw new InvalidMatrixError(name, 'expected a matrix of order ≥ 1, got 0×0 (no eigenvalues to compute)');
  if (symmetry === 'symmetric') return;
  const bad = firstAsymmetry(a);
  if (bad) {
    throw new InvalidMatrixError(
      name,
      `expected a symmetric matrix (lanczos, davidson and lobpcg are symmetric eigensolvers), got A(row ${bad.row + 1}, column ${bad.col + 1}) = ${bad.aij} but A(row ${bad.col + 1}, column ${bad.row + 1}) = ${bad.aji}`,
    );
  }
}

/**
 * Progress for long solves: the TTY bar, or off a terminal one line every `everyMs`
 * (iteration, pairs below the threshold, best and worst residual, elapsed), so logs are not silent.
 */
export function eigsProgress(method: string, enabled: boolean, everyMs = 5000): { update(info: EigenIterationInfo, note?: string): void; finish(): void } {
  const bar = progressBar(method, { enabled });
  const tty = Boolean(process.stderr.isTTY);
  const t0 = Date.now();
  let last = t0;
  return {
    update(it, note = '') {
      const res = it.residualNorms;
      const best = Math.min(...res);
      const worst = Math.max(...res);
      const conv = it.threshold === undefined ? undefined : res.filter((x) => x <= it.threshold!).length;
      const label = `iter ${it.iteration}${conv === undefined ? '' : `, ${conv}/${res.length} converged`}, residual best ${best.toExponential(2)} worst ${worst.toExponential(2)}${note}`;
      if (tty) {
        bar.update(it.iteration, it.iteration + 10, label);
        return;
      }
      const now = Date.now();
      if (!enabled || now - last < everyMs) return;
      last = now;
      info(`eigs ${method}: ${label}, ${((now - t0) / 1000).toFixed(0)} s`);
    },
    finish: () => bar.finish(),
  };
}

export const eigsCommand: Command = {
  summary: 'extreme eigenpairs of a symmetric matrix',
  usage: [
    'usage: gpusparse eigs <A.mtx | gen:...> [--k 4] [--method auto|lanczos|davidson|lobpcg] [--which smallest|largest]',
    '                      [--tol 1e-8] [--atol 0] [--residual-tol r] [--maxit N] [--shift-invert auto|on|off]',
    '                      [--kernel id] [--plot history.svg] [--accept residual|bound]',
    '',
    'Converged when ‖A v − λ v‖ ≤ max(tol·‖A‖est, atol) for every pair (‖A‖est: the largest |Ritz value| seen);',
    '--residual-tol replaces that rule by an absolute threshold. --maxit: most outer iterations (an integer ≥ 1).',
    "--method auto (default) is lanczos. With --which smallest, lanczos on a symmetric matrix with a positive",
    'diagonal runs shift-invert (Lanczos on A⁻¹, inner PCG(Jacobi) solves in float64 on the host; the rule then',
    "applies to A⁻¹, which makes the smallest λ accurate relative to themselves); --shift-invert off forces plain",
    "Lanczos. Davidson uses the diagonal preconditioner. 'largest' is available with lanczos.",
    '--accept (WebGPU: the float64 polish after the float32 phase): residual (default, the rule above) or bound: a pair',
    'is also accepted when its certified bound 0 ≤ λ̃ − λ ≤ ε²/gap (from a guard Ritz value above the wanted ones) is',
    '≤ 1e-10·|λ̃|: eigenvalues certified, often with no correction solve; residuals are reported as they are (≈ 1e-6·‖A‖).',
    'The bound assumes no eigenvalue was missed below the guard (docs/guides/precision.md). The table and JSON (bounds)',
    'show per pair how it was accepted and its bound. No effect on the CPU backend or shift-invert (a note says so).',
    'Off a terminal a progress line goes to stderr every 5 s.',
    '--engine slepc --np N [--eps-type krylovschur|gd|jd|lobpcg|lanczos] [--petsc-option "-eps_..."]: SLEPc under mpiexec (docs/guides/scaling-out.md).',
  ].join('\n'),
  options: {
    k: { type: 'string' },
    method: { type: 'string' },
    which: { type: 'string' },
    tol: { type: 'string' },
    atol: { type: 'string' },
    'residual-tol': { type: 'string' },
    maxit: { type: 'string' },
    'shift-invert': { type: 'string' },
    kernel: { type: 'string' },
    plot: { type: 'string' },
    accept: { type: 'string' },
    ...engineEigsOptions,
  },
  async run(pos, v, common) {
    if (pos.length !== 1) throw new UsageError(`eigs: expected one matrix argument, got ${pos.length}`);
    const o = parseEigsOptions(v);
    const engine = parseEngineOptions(v, ['slepc', 'petsc']);
    const m = await loadMatrix(pos[0]!);
    const a = m.matrix;
    if (a.rows !== a.cols) throw new InvalidMatrixError(m.name, `expected a square (symmetric) matrix for eigs, got ${a.rows}×${a.cols}`);
    checkEigsMatrix(m.name, a, m.symmetry);
    // the default k = 4 on a matrix of order < 4 blamed a --k nobody gave: all its eigenvalues instead
    if (o.k > a.rows && v.k === undefined) o.k = a.rows;
    if (o.k > a.rows) throw new UsageError(`--k: expected an integer in 1..${a.rows} (the matrix order), got ${o.k}`);
    // --engine slepc: SLEPc's EPS under mpiexec, same result table and JSON (docs/guides/scaling-out.md)
    if (engine) return eigsWithEngine({ name: m.name, a, ...o, epsType: v['eps-type'] as string | undefined, plot: v.plot as string | undefined }, engine, common);
    const absolute = o.abs.atol !== undefined || o.abs.residualTol !== undefined; // thresholds in A's units: plain methods only
    const shiftInvert = o.shiftInvert === 'on' || (o.shiftInvert === 'auto' && !absolute && o.which === 'smallest' && o.method === 'lanczos' && looksSpd(a, m.symmetry === 'symmetric'));
    const backend = await openBackend(common.backend);
    if (backend.fallbackReason) info(`WebGPU unavailable (${backend.fallbackReason}): using the CPU backend`);
    const progress = eigsProgress(shiftInvert ? 'shift-invert lanczos' : o.method, common.progress);
    try {
      // the backend's operator (tuned on WebGPU) only when a plain method runs: shift-invert works on the host CSR
      let setupMs = 0;
      let built: { op: unknown; label: string } = { op: undefined, label: 'host CSR (float64) for shift-invert' };
      const buildOperator = async () => {
        const t0 = performance.now();
        built = await backend.operator(a, { kernel: v.kernel as string | undefined, expectedProducts: 500 });
        setupMs = performance.now() - t0;
        return built.op;
      };
      const notes: string[] = [];
      if (!shiftInvert || v.kernel !== undefined) await buildOperator(); // --kernel is checked even when shift-invert will not use it
      if (shiftInvert && v.kernel !== undefined) notes.push('--kernel: not used by shift-invert (float64 on the host)');
      if (o.accept === 'bound' && (shiftInvert || backend.kind !== 'webgpu')) notes.push(`--accept bound: applies to the float64 polish after a float32 phase (WebGPU); ${shiftInvert ? 'shift-invert' : 'the CPU backend'} runs in float64 to the residual rule`);
      const t1 = performance.now();
      let r: EigenResult<unknown> & { phases?: unknown[]; inner?: unknown };
      if (shiftInvert) {
        if (backend.kind === 'webgpu') notes.push('shift-invert runs in float64 on the host: float32 inner solves cannot resolve stiff matrices');
        try {
          r = await lanczosShiftInvert(a, { k: o.k, tol: o.tol, maxIterations: o.maxIterations, onIteration: (it) => progress.update(it, ' (of A⁻¹)') });
        } catch (e) {
          if (!(e instanceof NotPositiveDefiniteError)) throw e;
          notes.push(`shift-invert abandoned: ${e.message}; plain Lanczos instead`);
          r = await solvePlain(a, await buildOperator(), backend, o, progress);
        }
      } else r = await solvePlain(a, built.op, backend, o, progress);
      const solveMs = performance.now() - t1 - (shiftInvert ? setupMs : 0);
      progress.finish();
      if (!r.converged && o.which === 'smallest' && o.method !== 'davidson' && !shiftInvert) {
        notes.push('the smallest eigenvalues of a stiff matrix converge slowly with plain Lanczos or unpreconditioned LOBPCG: on a symmetric positive definite matrix, --method lanczos with --shift-invert auto (the default) solves with A⁻¹');
      }
      if (typeof v.plot === 'string') writePlot(v.plot, m.name, r);
      const bounds = (r as { bounds?: EigenvalueBoundReport }).bounds; // eigsMixed's polish: how each pair was accepted
      const summary = { matrix: m.name, rows: a.rows, nnz: a.rowPtr[a.rows], backend: backend.description, operator: built.label, method: r.method, which: o.which, converged: r.converged, reason: r.reason, detail: r.detail, tolerance: r.tolerance, iterations: r.iterations, values: r.values, residualNorms: r.residualNorms, accept: o.accept, bounds, setupMs, solveMs, stats: withInputWarnings(r.stats, m.warnings), inner: r.inner, phases: r.phases, notes };
      if (common.json) printJson(summary);
      else {
        out(`${m.name}: ${a.rows}×${a.cols}, nnz ${a.rowPtr[a.rows]}; backend: ${backend.description}; operator: ${built.label}`);
        out(`${r.method}: ${r.converged ? 'converged' : `not converged (${r.reason})`} in ${r.iterations} iterations, ${solveMs.toFixed(1)} ms, ${r.stats.matvecs} matvecs`);
        if (r.tolerance) out(`rule: ${r.tolerance.rule}; threshold ${r.tolerance.threshold.toExponential(3)}${r.tolerance.normEstimate === undefined ? '' : ` (‖·‖est ${r.tolerance.normEstimate.toExponential(3)})`}`);
        const extra = bounds ? ['accepted by', 'bound'] : [];
        out(formatTable(['#', 'eigenvalue', '‖A v − λ v‖', ...extra], r.values.map((x, j) => [j, x.toPrecision(15), r.residualNorms[j]!, ...(bounds ? acceptColumns(bounds, j) : [])])));
        if (r.detail) out(`detail: ${r.detail}`);
        for (const w of r.stats.warnings ?? []) out(`warning: ${w}`);
        for (const n of notes) out(`note: ${n}`);
      }
      return r.converged ? ExitCode.ok : ExitCode.notConverged;
    } finally {
      progress.finish();
      backend.dispose();
    }
  },
};

interface EigsOptions {
  k: number;
  method: 'lanczos' | 'davidson' | 'lobpcg';
  which: 'smallest' | 'largest';
  tol: number;
  /** atol (floor) or residualTol (absolute rule), as given. */
  abs: { atol?: number; residualTol?: number };
  maxIterations: number | undefined;
  shiftInvert: 'auto' | 'on' | 'off';
  /** How the float64 polish accepts a pair (eigsMixed accept). */
  accept: 'residual' | 'bound';
}

/** Parse and check the options (usage errors name the option, what was expected and what came). */
export function parseEigsOptions(v: Record<string, unknown>): EigsOptions {
  const k = intOption('k', v.k as string | undefined, 4, 1);
  let method = (v.method as string | undefined) ?? 'auto';
  if (!['auto', 'lanczos', 'davidson', 'lobpcg'].includes(method)) throw new UsageError(`--method: expected auto, lanczos, davidson or lobpcg, got '${method}'`);
  if (method === 'auto') method = 'lanczos';
  const which = (v.which as string | undefined) ?? 'smallest';
  if (which !== 'smallest' && which !== 'largest') throw new UsageError(`--which: expected smallest or largest, got '${which}'`);
  if (which === 'largest' && method !== 'lanczos') throw new UsageError('--which largest: only with --method lanczos');
  const shiftInvert = (v['shift-invert'] as string | undefined) ?? 'auto';
  if (shiftInvert !== 'auto' && shiftInvert !== 'on' && shiftInvert !== 'off') throw new UsageError(`--shift-invert: expected auto, on or off, got '${shiftInvert}'`);

  const positive = (name: string, fallback: number | undefined, min0 = false): number | undefined => {
    const x = v[name] === undefined ? fallback : numberOption(name, v[name] as string, 0);
    if (x !== undefined && !(min0 ? x >= 0 : x > 0)) throw new UsageError(`--${name}: expected a number ${min0 ? '≥ 0' : '> 0'}, got ${x}`);
    return x;
  };
  const tol = positive('tol', 1e-8)!;
  // a relative tolerance ≥ 1 accepts any vector (the solvers refuse it too; here it is the flag's usage error)
  if (tol >= 1) throw new UsageError(`--tol: expected a relative tolerance below 1 (--residual-tol is the absolute rule), got ${tol}`);
  const atol = positive('atol', undefined, true);
  const residualTol = positive('residual-tol', undefined);
  if (atol !== undefined && residualTol !== undefined) throw new UsageError('--atol and --residual-tol: give one (--residual-tol replaces the relative rule, --atol is its floor)');
  const abs = residualTol !== undefined ? { residualTol } : atol !== undefined ? { atol } : {};
  if (shiftInvert === 'on' && (which !== 'smallest' || method !== 'lanczos' || residualTol !== undefined || atol !== undefined)) {
    throw new UsageError('--shift-invert on: only with --which smallest, --method lanczos (or auto) and the relative rule (no --atol or --residual-tol: the rule applies to A⁻¹)');
  }
  return { k, method: method as EigsOptions['method'], which, tol, abs, maxIterations: intOption('maxit', v.maxit as string | undefined, undefined, 1), shiftInvert, accept: parseAccept(v.accept as string | undefined) };
}

/** Lanczos, Davidson or LOBPCG on A itself (float64 on the CPU, float32 + float64 polish on WebGPU). */
// biome-ignore lint/suspicious/noExplicitAny: either backend
async function solvePlain(a: CsrMatrix, op: any, backend: any, o: EigsOptions, progress: ReturnType<typeof eigsProgress>): Promise<EigenResult<unknown> & { phases?: unknown[] }> {
  const { k, which, tol, maxIterations } = o;
  const diagonal = csrDiagonal(a);
  const onIteration = (it: EigenIterationInfo) => progress.update(it);
  if (backend.kind === 'webgpu') {
    const polishRule = o.abs.residualTol !== undefined ? { residualTol: o.abs.residualTol } : { rtol: tol, ...(o.abs.atol === undefined ? {} : { atol: o.abs.atol }) };
    return eigsMixed({ method: o.method, k, which, fastOperator: op, fastSpace: backend.space, hostOperator: HostOperator.fromCsr(a), diagonal, ...polishRule, accept: o.accept, fastMaxIterations: maxIterations, onIteration });
  }
  const space = backend.space; // the CPU backend's space: vectors where its operator's product runs
  if (o.method === 'lanczos') return lanczos(space, op, { k, which, tol, ...o.abs, maxIterations, onIteration });
  if (o.method === 'davidson') {
    const rule = o.abs.residualTol !== undefined ? { residualTol: o.abs.residualTol } : { rtol: tol, ...(o.abs.atol === undefined ? {} : { atol: o.abs.atol }) };
    return davidson(space, op, { k, diagonal, ...rule, maxIterations, onIteration });
  }
  return lobpcg(space, op, { k, tol, ...o.abs, maxIterations, onIteration });
}

/** The residual history of every pair as an SVG line plot. */
function writePlot(path: string, name: string, r: EigenResult<unknown>): void {
  const series = Array.from({ length: r.values.length }, (_, j) => ({
    name: `λ${j}`,
    x: r.history.map((h) => h.iteration),
    y: r.history.map((h) => h.residualNorms[j] ?? Number.NaN),
  }));
  const yLabel = r.method.startsWith('shift-invert') ? '‖A⁻¹v − μv‖ (shift-invert)' : '‖A v − λ v‖';
  writeFileSync(path, linePlot(series, { title: `${name}: ${r.method}`, xLabel: 'iteration', yLabel, logY: true }));
  info(`residual history written to ${path}`);
}
