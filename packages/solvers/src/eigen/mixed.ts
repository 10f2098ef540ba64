/**
 * Mixed-precision eigensolver driver: a fast phase in the caller's (typically float32, GPU)
 * space runs to the accuracy that precision can reach, then a float64 polish on the host
 * (HostVectorSpace and a float64 host operator) starts from the fast Ritz vectors and takes the
 * few iterations needed to reach ~1e-10 relative eigenvalue error and ~1e-8 residual norms.
 *
 * Polish methods ('jd' by default): 'jd' is a float64 Davidson on the host whose corrections
 * solve the Jacobi–Davidson correction equation by GMRES in the fast space, so the fast space
 * still does most operator applications and the host needs a few k-matvec iterations (the
 * residual goes to float32 scaled to unit norm, so float32 limits only the correction's
 * relative accuracy). 'davidson' (diagonal preconditioner) and 'lobpcg' polish entirely on the
 * host and converge at their usual rate from the fast phase's accuracy: few iterations on
 * diagonally dominant matrices, hundreds on matrices with tiny relative gaps.
 * Memory traffic between the phases: k vector readbacks; per 'jd' iteration k vector uploads
 * and downloads.
 * @module
 */
import type { HostScalar, LinearOperator, VectorSpace } from '@gpusparse/formats';
import { HostVectorSpace, InvalidParameterError } from '@gpusparse/formats';
import type { EigenResult, StopReason } from '../common/result';
import type { EigenIterationInfo } from './common';
import { checkEigenInput, checkPositive } from './common';
import { fastCorrector } from './correction';
import { davidson, davidsonWith } from './davidson';
import { lanczos } from './lanczos';
import { lobpcg } from './lobpcg';

/** What one phase of {@link eigsMixed} did. */
export interface EigenPhaseReport {
  phase: 'fast' | 'polish';
  /** The space's name, e.g. 'webgpu-f32', 'host-f64'. */
  space: string;
  method: string;
  reason: StopReason;
  iterations: number;
  matvecs: number;
  readbacks: number;
  ms: number;
  /** The phase's eigenvalues and recomputed residual norms (in that phase's precision). */
  values: number[];
  residualNorms: number[];
  /** Polish 'jd' only: fast-space matvecs spent on its correction equations. */
  innerMatvecs?: number;
}

/** Result of {@link eigsMixed}: float64 host vectors, plus the per-phase report. */
export interface MixedEigenResult extends EigenResult<Float64Array> {
  phases: EigenPhaseReport[];
}

/** Options of {@link eigsMixed}. */
export interface MixedEigenOptions<V, S> {
  /** Fast-phase method ('davidson' needs `diagonal`). */
  method: 'davidson' | 'lanczos' | 'lobpcg';
  k: number;
  /** 'largest' only with method 'lanczos' (default 'smallest'). */
  which?: 'smallest' | 'largest';
  fastOperator: LinearOperator<V>;
  fastSpace: VectorSpace<V, S>;
  /** The same matrix in float64 on the host. */
  hostOperator: LinearOperator<Float64Array>;
  hostSpace?: VectorSpace<Float64Array, HostScalar>;
  /** The main diagonal (float64): Davidson's preconditioner in both phases. */
  diagonal?: Float64Array;
  /**
   * Polish method. 'jd' (default): float64 Davidson on the host whose corrections solve the
   * Jacobi–Davidson correction equation in the fast space (GMRES, `innerIterations` steps), so
   * the fast space keeps doing most matvecs and the host needs only a few. 'davidson': float64
   * Davidson with the diagonal preconditioner (good on diagonally dominant matrices).
   * 'lobpcg': float64 LOBPCG, no preconditioner. Without fast Ritz vectors (a non-finite fast
   * phase) 'jd' falls back to 'davidson' when a diagonal is given, else 'lobpcg'.
   */
  polish?: 'jd' | 'davidson' | 'lobpcg';
  /** Inner GMRES steps per correction of the 'jd' polish (default 25). */
  innerIterations?: number;
  /** Inner relative tolerance of the 'jd' polish (default 1e-3). */
  innerRtol?: number;
  /** Relative eigenvalue tolerance of the polish: |Δθ| < tol·max|θ| between iterations (default 1e-10). */
  tol?: number;
  /** Absolute residual tolerance of the polish, ‖A·v − θ·v‖ (default 1e-8 unless `rtol` is given). */
  residualTol?: number;
  /**
   * Relative residual tolerance of the polish: ‖A·v − θ·v‖ ≤ max(rtol·‖A‖est, atol), the rule of
   * Lanczos and LOBPCG (docs/guides/eigen-convergence.md). Replaces the absolute default; not
   * together with `residualTol`.
   */
  rtol?: number;
  /** Absolute floor of the relative rule (with `rtol`; default 0). */
  atol?: number;
  /** Relative residual target of the fast phase, ‖r‖ ≤ fastTol·‖A‖est (default 1e-4 in f32, 1e-8 in f64). */
  fastTol?: number;
  fastMaxIterations?: number;
  polishMaxIterations?: number;
  /** Lanczos basis / Davidson subspace size of the fast phase. */
  maxBasis?: number;
  onIteration?: (info: EigenIterationInfo & { phase: 'fast' | 'polish' }) => unknown;
  signal?: AbortSignal;
}

function report<V>(phase: 'fast' | 'polish', space: string, r: EigenResult<V>, sign = 1): EigenPhaseReport {
  return {
    phase,
    space,
    method: r.method,
    reason: r.reason,
    iterations: r.iterations,
    matvecs: r.stats.matvecs,
    readbacks: r.stats.readbacks,
    ms: r.stats.ms,
    values: r.values.map((x) => sign * x),
    residualNorms: r.residualNorms,
  };
}

/** −A as an operator (to polish the largest eigenpairs with a lowest-eigenpair method). */
function negated(a: LinearOperator<Float64Array>): LinearOperator<Float64Array> {
  return {
    rows: a.rows,
    cols: a.cols,
    label: `-(${a.label ?? 'A'})`,
    apply(x, y) {
      a.apply(x, y);
      for (let i = 0; i < y.length; i++) y[i] = -y[i]!; // y = −A·x
    },
    applyScaled(alpha, x, beta, y) {
      a.applyScaled(-alpha, x, beta, y); // y = −alpha·A·x + beta·y
    },
  };
}

/** −A on the fast space (for the 'jd' polish of the largest eigenpairs). */
function negatedFast<V, S>(a: LinearOperator<V>, space: VectorSpace<V, S>): LinearOperator<V> {
  return {
    rows: a.rows,
    cols: a.cols,
    label: `-(${a.label ?? 'A'})`,
    apply(x, y) {
      a.apply(x, y);
      space.axpby(0, x, -1, y); // y = −A·x
    },
    applyScaled(alpha, x, beta, y) {
      a.applyScaled(-alpha, x, beta, y); // y = −alpha·A·x + beta·y
    },
  };
}

/**
 * Eigenpairs to float64 accuracy from a fast low-precision space: runs `method` in
 * (fastOperator, fastSpace), then polishes in float64 on the host from its Ritz vectors.
 * Cost: the fast solve, k vector readbacks, and a few host float64 iterations (k matvecs each).
 * @example
 * const r = await eigsMixed({ method: 'davidson', k: 3, fastOperator: gpuOp, fastSpace: gpu,
 *   hostOperator: HostOperator.fromCsr(h), diagonal: csrDiagonal(h) });
 * r.values; r.phases; // [{ phase: 'fast', matvecs: 180, ... }, { phase: 'polish', matvecs: 12, ... }]
 */
export async function eigsMixed<V, S>(opts: MixedEigenOptions<V, S>): Promise<MixedEigenResult> {
  const { k, fastOperator, fastSpace, hostOperator } = opts;
  checkEigenInput('eigsMixed fastOperator', fastOperator, k);
  checkEigenInput('eigsMixed hostOperator', hostOperator, k);
  if (hostOperator.rows !== fastOperator.rows) {
    throw new InvalidParameterError('eigsMixed hostOperator', `${fastOperator.rows} rows like fastOperator`, hostOperator.rows);
  }
  checkPositive('eigsMixed tol', opts.tol);
  checkPositive('eigsMixed residualTol', opts.residualTol);
  checkPositive('eigsMixed fastTol', opts.fastTol);
  const which = opts.which ?? 'smallest';
  if (which === 'largest' && opts.method !== 'lanczos') {
    throw new InvalidParameterError('eigsMixed which', `'smallest' with method '${opts.method}' ('largest' needs 'lanczos')`, which);
  }
  if (opts.method === 'davidson' && !opts.diagonal) throw new InvalidParameterError('eigsMixed diagonal', "a Float64Array with method 'davidson'", opts.diagonal);
  if (opts.polish === 'davidson' && !opts.diagonal) throw new InvalidParameterError('eigsMixed diagonal', "a Float64Array with polish 'davidson'", opts.diagonal);
  const tol = opts.tol ?? 1e-10;
  if (opts.rtol !== undefined && opts.residualTol !== undefined) {
    throw new InvalidParameterError('eigsMixed residualTol', 'undefined when rtol is given (rtol replaces the absolute rule)', opts.residualTol);
  }
  checkPositive('eigsMixed rtol', opts.rtol);
  // the polish's residual rule: relative with rtol, else absolute (default 1e-8)
  const rule = opts.rtol !== undefined ? { rtol: opts.rtol, ...(opts.atol === undefined ? {} : { atol: opts.atol }) } : { residualTol: opts.residualTol ?? 1e-8 };
  const fastTol = opts.fastTol ?? (fastSpace.precision === 'f32' ? 1e-4 : 1e-8);
  const hostSpace = opts.hostSpace ?? new HostVectorSpace();
  const t0 = performance.now();
  const tag =
    (phase: 'fast' | 'polish') =>
    (info: EigenIterationInfo): unknown =>
      opts.onIteration?.({ ...info, phase });
  const common = { k, signal: opts.signal };

  // phase 1: fast space
  let fast: EigenResult<V>;
  if (opts.method === 'davidson') {
    const d = opts.diagonal!;
    let scale = 0;
    for (let i = 0; i < d.length; i++) scale = Math.max(scale, Math.abs(d[i]!));
    scale = scale > 0 ? scale : 1;
    fast = await davidson(fastOperator, fastSpace, { ...common, onIteration: tag('fast'), diagonal: d, tol: fastTol * scale, residualTol: fastTol * scale, maxIterations: opts.fastMaxIterations, maxSubspace: opts.maxBasis });
  } else if (opts.method === 'lanczos') {
    fast = await lanczos(fastOperator, fastSpace, { ...common, onIteration: tag('fast'), which, tol: fastTol, maxIterations: opts.fastMaxIterations, maxBasis: opts.maxBasis });
  } else {
    fast = await lobpcg(fastOperator, fastSpace, { ...common, onIteration: tag('fast'), tol: fastTol, maxIterations: opts.fastMaxIterations, guard: k > 1 ? 2 : 0 });
  }
  const phases = [report('fast', fastSpace.name, fast)];
  const start: Float64Array[] = [];
  if (fast.reason !== 'non-finite') {
    for (const v of fast.vectors) {
      const a = await fastSpace.toArray(v);
      fast.stats.readbacks++;
      if (a.every(Number.isFinite) && a.some((x) => x !== 0)) start.push(a);
    }
  }
  fast.vectors.forEach((v) => { fastSpace.release(v); });
  const sign = which === 'largest' ? -1 : 1;
  const polishOp = sign === 1 ? hostOperator : negated(hostOperator);
  let innerMatvecs: number | undefined; // fast-space matvecs of the 'jd' polish
  const combineResult = (polish: EigenResult<Float64Array> | undefined): MixedEigenResult => {
    const src = polish ?? { ...fast, vectors: start, values: fast.values, residualNorms: fast.residualNorms };
    const history = [...fast.history, ...(polish?.history ?? []).map((h) => ({ ...h, iteration: h.iteration + fast.iterations, values: h.values.map((x) => sign * x) }))];
    const out: MixedEigenResult = {
      values: polish ? polish.values.map((x) => sign * x) : src.values,
      vectors: src.vectors as Float64Array[],
      residualNorms: src.residualNorms,
      converged: polish ? polish.converged : false,
      reason: polish ? polish.reason : fast.reason,
      iterations: fast.iterations + (polish?.iterations ?? 0),
      history,
      stats: {
        matvecs: fast.stats.matvecs + (polish?.stats.matvecs ?? 0) + (innerMatvecs ?? 0),
        precondApplies: fast.stats.precondApplies + (polish?.stats.precondApplies ?? 0),
        readbacks: fast.stats.readbacks + (polish?.stats.readbacks ?? 0),
        ms: performance.now() - t0,
      },
      method: `mixed(${fast.method} → ${polish?.method ?? 'none'})`,
      phases,
    };
    if (polish?.tolerance) out.tolerance = polish.tolerance;
    const detail = [fast.detail, polish?.detail].filter(Boolean).join('; ');
    if (detail) out.detail = detail;
    return out;
  };
  if (fast.reason === 'stopped') return combineResult(undefined);

  // phase 2: float64 polish on the host from the fast Ritz vectors
  // scale of the eigenvalues for the relative energy tolerance: the fast values, else the diagonal, else 1
  let lamScale = Math.max(0, ...fast.values.filter(Number.isFinite).map(Math.abs));
  if (!(lamScale > 0) && opts.diagonal) for (const x of opts.diagonal) lamScale = Math.max(lamScale, Math.abs(x));
  if (!(lamScale > 0)) lamScale = 1;
  const initialVectors = start.length >= k ? start : undefined;
  let polish: EigenResult<Float64Array>;
  if (opts.polish === 'davidson' && !opts.diagonal) throw new InvalidParameterError('eigsMixed diagonal', "a Float64Array with polish 'davidson'", opts.diagonal);
  let polishMethod = opts.polish ?? 'jd';
  if (polishMethod === 'jd' && !initialVectors) polishMethod = opts.diagonal ? 'davidson' : 'lobpcg';
  if (polishMethod === 'jd') {
    const jd = fastCorrector(sign === 1 ? fastOperator : negatedFast(fastOperator, fastSpace), fastSpace, { innerIterations: opts.innerIterations, innerRtol: opts.innerRtol });
    polish = await davidsonWith(polishOp, hostSpace, { ...common, onIteration: tag('polish'), corrector: jd.corrector, initialVectors, tol: tol * lamScale, ...rule, maxIterations: opts.polishMaxIterations ?? 50, maxSubspace: Math.min(hostOperator.rows, 4 * k + 8), name: 'jd-davidson' });
    innerMatvecs = jd.stats.matvecs;
  } else if (polishMethod === 'davidson') {
    const d = sign === 1 ? opts.diagonal! : opts.diagonal!.map((x) => -x);
    polish = await davidson(polishOp, hostSpace, { ...common, onIteration: tag('polish'), diagonal: d, tol: tol * lamScale, ...rule, maxIterations: opts.polishMaxIterations ?? 100, initialVectors });
  } else {
    polish = await lobpcg(polishOp, hostSpace, { ...common, onIteration: tag('polish'), ...('rtol' in rule ? { tol: rule.rtol, ...(rule.atol === undefined ? {} : { atol: rule.atol }) } : rule), maxIterations: opts.polishMaxIterations ?? 300, initialVectors, guard: k > 1 ? 2 : 0 });
  }
  const polishReport = report('polish', hostSpace.name, polish, sign);
  if (innerMatvecs !== undefined) polishReport.innerMatvecs = innerMatvecs;
  phases.push(polishReport);
  return combineResult(polish);
}
