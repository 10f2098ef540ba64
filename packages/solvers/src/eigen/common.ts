/**
 * Pieces shared by the eigensolvers: option types, validation, stop checks (callback and
 * AbortSignal) and the exit step that recomputes ‖A·v − λ·v‖ for every returned pair.
 * @module
 */
import type { LinearOperator, VectorSpace } from '@gpusparse/formats';
import { DimensionMismatchError, InvalidParameterError, type KernelMark, kernelMark, mulberry32, unverifiedKernelOf } from '@gpusparse/formats';
import type { EigenResult, EigenToleranceReport, SolverStats, StopReason } from '../common/result';
import { newStats } from '../common/result';
import { assertUsableOperator, returnedVoid } from '../common/operator-check';
import { float32ThresholdUnresolved } from '../common/f32-range';
import { asymmetryHint } from '../common/symmetry-probe';

/** What an eigensolver reports to `onIteration` after each outer iteration. */
export interface EigenIterationInfo {
  /** 1-based outer iteration count. */
  iteration: number;
  /** Current Ritz values of the wanted pairs, in the result order. */
  values: readonly number[];
  /** Their residual norms (estimated or explicit, in the solver's precision). */
  residualNorms: readonly number[];
  /** The residual threshold in force at this iteration (a pair below it counts as converged). */
  threshold?: number;
}

/** Options every eigensolver accepts. */
export interface EigenBaseOptions {
  /** Number of eigenpairs wanted (1 ≤ k ≤ n). */
  k: number;
  /** Upper bound on outer iterations. */
  maxIterations?: number;
  /**
   * Called after every outer iteration; return `false` to stop (reason 'stopped'); any other
   * return value continues. A Promise is awaited first (resolving to `false` stops); one that
   * rejects rejects the solve with its error.
   */
  onIteration?: (info: EigenIterationInfo) => unknown;
  /** Aborting it stops the solver at the next iteration boundary (reason 'stopped'). */
  signal?: AbortSignal;
}

/**
 * Throw on bad input: k outside 1..n, a non-square operator, a `maxIterations` that is not an
 * integer ≥ 0 (session 13: lanczos took −1 as 0 and lobpcg ran one iteration with it).
 * @example
 * checkEigenInput('lanczos', op, 4); // throws InvalidParameterError when op has fewer than 4 rows
 */
export function checkEigenInput<V>(where: string, op: LinearOperator<V>, k: number, maxIterations?: number): void {
  assertUsableOperator(where, op);
  if (op.rows !== op.cols) throw new DimensionMismatchError(`${where}: operator must be square`, op.rows, op.cols);
  if (!Number.isInteger(k) || k < 1 || k > op.rows) {
    throw new InvalidParameterError(`${where} k`, `an integer in 1..${op.rows}`, k);
  }
  if (maxIterations !== undefined && !(Number.isSafeInteger(maxIterations) && maxIterations >= 0)) throw new InvalidParameterError(`${where} maxIterations`, 'an integer ≥ 0', maxIterations);
}

/** Throw InvalidParameterError unless `x` is a finite number > 0 (when defined). */
export function checkPositive(where: string, x: number | undefined): void {
  if (x === undefined) return;
  if (!(Number.isFinite(x) && x > 0)) throw new InvalidParameterError(where, 'a finite number > 0', x);
}

/**
 * Bookkeeping of one eigensolver run: stats, history, the stop checks.
 * Cost: nothing on the device.
 * @example
 * const run = new EigenRun(opts); run.stats.matvecs++; if (run.shouldStop(info)) ...
 */
export class EigenRun {
  readonly stats: SolverStats = newStats();
  readonly history: EigenResult<unknown>['history'] = [];
  private readonly t0 = performance.now();
  /** The operator's kernel state at the start (its products may run unverified from then on). */
  readonly mark: KernelMark | undefined;
  constructor(
    private readonly opts: EigenBaseOptions,
    op?: LinearOperator<unknown>,
  ) {
    this.mark = op ? kernelMark(op) : undefined;
  }

  /** Record one iteration; resolves to true when the caller (callback, awaited when it returns a Promise, or signal) asked to stop. */
  async record(info: EigenIterationInfo): Promise<boolean> {
    this.history.push({ iteration: info.iteration, values: [...info.values], residualNorms: [...info.residualNorms] });
    if (this.opts.signal?.aborted) return true;
    if (this.opts.onIteration && (await this.opts.onIteration(info)) === false) return true;
    return this.opts.signal?.aborted === true; // the callback may have aborted it
  }

  /** True when the signal is already aborted (checked before expensive steps). */
  aborted(): boolean {
    return this.opts.signal?.aborted === true;
  }

  /** Milliseconds since the run started. */
  elapsed(): number {
    return performance.now() - this.t0;
  }
}

/**
 * Recompute ‖A·vᵢ − λᵢ·vᵢ‖₂ for every pair (k operator applications, one readback) and build
 * the result. Vectors are expected normalised. A non-finite residual turns a 'converged'
 * reason into 'non-finite'.
 * @example
 * return finishEigen(op, space, run, { values, vectors, reason: 'converged', iterations, method: 'lanczos' });
 */
export async function finishEigen<V, S>(
  op: LinearOperator<V>,
  space: VectorSpace<V, S>,
  run: EigenRun,
  r: { values: number[]; vectors: V[]; reason: StopReason; iterations: number; method: string; detail?: string; tolerance?: EigenToleranceReport; judged?: number },
): Promise<EigenResult<V>> {
  const norms: S[] = [];
  const n = op.rows;
  const tmp = space.create(n);
  // products on a tuned kernel (in-solve tuning switched): the residuals come from the verified one
  const chk = unverifiedKernelOf(op, run.mark);
  for (let i = 0; i < r.vectors.length; i++) {
    if (chk) chk.applyVerified(r.vectors[i]!, tmp);
    else returnedVoid(op.apply(r.vectors[i]!, tmp), 'eigen residual', 'apply', tmp); // tmp = A·v
    run.stats.matvecs++;
    space.axpby(-r.values[i]!, r.vectors[i]!, 1, tmp); // tmp = A·v − λ·v
    norms.push(space.norm2(tmp));
  }
  const residualNorms = norms.length > 0 ? await readAndRelease(space, norms, run.stats) : [];
  space.release(tmp);
  let reason = r.reason;
  let detail = r.detail;
  const threshold = r.tolerance?.threshold;
  if (chk && reason === 'converged' && threshold !== undefined && !residualNorms.every((x) => x <= CONFIRM_SLACK * threshold)) {
    // the tuned kernel's products passed the run's checks but the verified kernel's do not
    const worst = Math.max(...residualNorms.map((x) => (Number.isNaN(x) ? Infinity : x)));
    const active = chk.activeLabel;
    const why = `gave Ritz pairs whose residual ‖A·v − λ·v‖ on the verified kernel ${chk.verifiedLabel} is ${worst.toExponential(2)}, over ${CONFIRM_SLACK}× the threshold ${threshold.toExponential(2)}`;
    chk.fallBackToVerified(why);
    (run.stats.warnings ??= []).push(`${r.method}: the operator's tuned kernel ${active} ${why}; the operator fell back to the verified kernel`);
    reason = 'breakdown';
    detail = `${detail ? `${detail}; ` : ''}the tuned kernel ${active} disagreed with the verified kernel at the final check (stats.warnings)`;
    fellBack.add(run.stats);
  }
  const unresolved = reason === 'converged' ? float32ThresholdUnresolved(space.precision, n, threshold, r.method) : undefined;
  if (unresolved) {
    reason = 'breakdown';
    detail = `${detail ? `${detail}; ` : ''}${unresolved}`;
  }
  if (reason === 'converged' && !residualNorms.every(Number.isFinite)) {
    reason = 'non-finite';
    detail = `${detail ? `${detail}; ` : ''}non-finite residual recomputed at exit`;
  } else if (reason === 'converged' && threshold !== undefined && !residualNorms.slice(0, r.judged ?? residualNorms.length).every((x) => x <= CONFIRM_SLACK * threshold)) {
    // the run's own residuals passed, the products at exit do not (an operator whose products
    // changed during the run: lobpcg said 'converged' with ‖A·v − λ·v‖ = 1e300 recomputed)
    reason = 'breakdown';
    detail = `${detail ? `${detail}; ` : ''}the residual recomputed at exit, ${Math.max(...residualNorms.slice(0, r.judged ?? residualNorms.length)).toExponential(2)}, exceeds ${CONFIRM_SLACK}× the threshold ${threshold.toExponential(2)} the run converged to (did the operator's products change during the run?)`;
  }
  if ((reason === 'breakdown' || reason === 'max-iterations') && r.iterations > 0) {
    const hint = await asymmetryHint(op, space, run.stats, 'an eigensolver for general matrices'); // s14-harden-e: a non-symmetric A was never named
    if (hint) detail = `${detail ? `${detail}; ` : ''}${hint}`;
  }
  run.stats.ms = run.elapsed();
  const out: EigenResult<V> = {
    values: r.values,
    vectors: r.vectors,
    residualNorms,
    converged: reason === 'converged',
    reason,
    iterations: r.iterations,
    history: run.history,
    stats: run.stats,
    method: r.method,
  };
  if (detail !== undefined) out.detail = detail;
  if (r.tolerance !== undefined) out.tolerance = r.tolerance;
  return out;
}

/**
 * A converged pair's residual on the verified kernel may exceed the threshold the run met on the
 * tuned kernel by float32 rounding between the two kernels (far below the threshold); past twice
 * the threshold the tuned kernel's products were wrong.
 */
const CONFIRM_SLACK = 2;

/** The stats of runs whose final check made the operator fall back to its verified kernel ({@link confirmedEigen} runs them again). */
const fellBack = new WeakSet<SolverStats>();

/**
 * Run an eigensolver; when its final check found the operator's tuned kernel disagreeing with
 * the verified one ({@link finishEigen}: the operator fell back), run it once more, now on the
 * verified kernel, and return that result with both runs' counts and the warning. Cost: nothing
 * unless that happened, then a second solve.
 * @example return confirmedEigen(space, () => lanczosRun(space, op, opts));
 */
export async function confirmedEigen<V, S>(space: VectorSpace<V, S>, solve: () => Promise<EigenResult<V>>): Promise<EigenResult<V>> {
  const first = await solve();
  if (!fellBack.has(first.stats)) return first;
  for (const v of first.vectors) space.release(v);
  const second = await solve();
  const s = second.stats;
  s.matvecs += first.stats.matvecs;
  s.precondApplies += first.stats.precondApplies;
  s.readbacks += first.stats.readbacks;
  s.ms += first.stats.ms;
  s.warnings = [...(first.stats.warnings ?? []), ...(s.warnings ?? []), `the solve was run again on the verified kernel after ${first.iterations} iterations on the tuned one`];
  return { ...second, iterations: second.iterations + first.iterations };
}

/**
 * Read device scalars with one synchronisation, then release them (the GPU space keeps scalars
 * in a bounded slot pool). Counts one readback.
 * @example
 * const [a, b] = await readAndRelease(space, [space.dot(x, y), space.norm2(x)], stats);
 */
export async function readAndRelease<V, S>(space: VectorSpace<V, S>, scalars: readonly S[], stats: SolverStats): Promise<number[]> {
  const got = await space.readMany(scalars);
  stats.readbacks++;
  releaseScalars(space, scalars);
  return got;
}

/**
 * The result of `maxIterations: 0` (as cg, gmres and lanczos read it: no iteration): the first
 * k start vectors, no Ritz values (NaN), reason 'max-iterations' — never "converged", even when
 * the start happens to be an eigenvector. The other start vectors are released.
 */
export function noIteration<V, S>(op: LinearOperator<V>, space: VectorSpace<V, S>, run: EigenRun, start: V[], k: number, method: string): Promise<EigenResult<V>> {
  for (const v of start.slice(k)) space.release(v);
  const detail = 'maxIterations = 0: no iteration run; the start vectors are returned without Ritz values';
  return finishEigen(op, space, run, { values: new Array(k).fill(Number.NaN), vectors: start.slice(0, k), reason: 'max-iterations', iterations: 0, method, detail });
}

/** Release device scalars no longer needed (a no-op on the host). */
export function releaseScalars<V, S>(space: VectorSpace<V, S>, scalars: readonly S[]): void {
  for (const x of scalars) space.release(x);
}

/** True when every entry is a finite number. */
export function allFinite(xs: ArrayLike<number>): boolean {
  for (let i = 0; i < xs.length; i++) if (!Number.isFinite(xs[i]!)) return false;
  return true;
}

/**
 * A reproducible pseudo-random vector with entries in [−1, 1) (mulberry32), used for start
 * vectors. Cost: n host operations and one upload.
 * @example
 * const v0 = randomVector(space, 100, 7);
 */
export function randomVector<V, S>(space: VectorSpace<V, S>, n: number, seed: number): V {
  const r = mulberry32(seed);
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) out[i] = r() * 2 - 1;
  return space.fromArray(out);
}
