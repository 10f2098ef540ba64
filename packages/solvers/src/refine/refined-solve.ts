/**
 * Mixed-precision iterative refinement (Wilkinson; Carson & Higham 2018): the residual
 * r = b − A·x and the update x = x + d are computed on the host in float64, the correction
 * equation A·d = r is solved loosely in a (possibly float32, GPU) space by any Krylov solver.
 * Each outer step gains about −log10(inner rtol) digits until the float64 residual reaches
 * max(rtol·‖b‖, atol), as long as the inner solver converges (κ(A)·ε_inner < 1 roughly).
 *
 * Per outer iteration: 1 float64 host matvec, one inner solve, one vector upload (r) and one
 * download (d).
 * @module
 */
import { DimensionMismatchError, HostVectorSpace, InvalidParameterError, type LinearOperator, type VectorSpace } from '@gpusparse/formats';
import { bicg } from '../krylov/bicg';
import { bicgstab } from '../krylov/bicgstab';
import { cg } from '../krylov/cg';
import { type GmresOptions, gmres } from '../krylov/gmres';
import { newStats, type SolveResult, type StopReason } from '../common/result';

/** Inner solver choice and its options (its own rtol is the loose inner tolerance; the outer `signal` is passed on). */
export interface InnerSolveOptions<V> extends Omit<GmresOptions<V>, 'x0' | 'signal' | 'atol'> {
  /** Default 'gmres'. */
  method?: 'cg' | 'gmres' | 'bicgstab' | 'bicg';
  /**
   * Relative tolerance of each correction solve (default 1e-6: float32 Krylov recurrences reach it
   * by their own residual, and two outer steps then reach 1e-10; measured on an H200, CG on the
   * 2-D Poisson matrix to 1e-10: 10^6 rows 878 → 560 ms, 4·10^6 rows 3056 → 2257 ms against
   * 1e-4, with 1e-5 in between at 938 / 3156 ms — bench/RESULTS.md).
   */
  rtol?: number;
  /**
   * Most iterations of each correction solve (default 1000, not the solvers' 10·n: a correction
   * that stops early still reduces the residual, and the outer loop goes on).
   */
  maxIterations?: number;
}

/** What {@link refinedSolve} reports after each outer step. */
export interface OuterIterationInfo {
  outer: number;
  /** ‖b − A·x‖ in float64. */
  residual: number;
  relativeResidual: number;
  /** Inner iterations of this step's correction solve. */
  innerIterations: number;
}

/** Input of {@link refinedSolve}. */
export interface RefinedSolveOptions<V, S> {
  /** The float64 operator used for the outer residual (e.g. HostOperator.fromCsr(a)). */
  hostOperator: LinearOperator<Float64Array>;
  /** The same matrix in the inner space (e.g. a float32 GPU operator). */
  innerOperator: LinearOperator<V>;
  innerSpace: VectorSpace<V, S>;
  b: ArrayLike<number>;
  /** Initial guess in float64 (never mutated). */
  x0?: Float64Array;
  /** Outer relative tolerance (default 1e-10). */
  rtol?: number;
  /** Outer absolute tolerance (default 0). */
  atol?: number;
  /** Most outer steps (default 30). */
  maxOuterIterations?: number;
  inner?: InnerSolveOptions<V>;
  signal?: AbortSignal;
  /** Returning false stops with reason 'stopped'. */
  // biome-ignore lint/suspicious/noConfusingVoidType: callbacks that return nothing must be accepted
  onOuterIteration?: (info: OuterIterationInfo) => boolean | void;
}

/** {@link SolveResult} in float64 plus the outer/inner split. `iterations` counts outer steps. */
export interface RefinedSolveResult extends SolveResult<Float64Array> {
  outerIterations: number;
  /** Sum of the inner solvers' iterations. */
  innerIterations: number;
  /** One entry per correction solve. */
  inner: { method: string; reason: StopReason; iterations: number; relativeResidual: number }[];
}

function norm(v: Float64Array): number {
  let s = 0;
  for (let i = 0; i < v.length; i++) s += v[i]! * v[i]!;
  const r = Math.sqrt(s);
  if (Number.isFinite(r) && (r > 1e150 || (r < 1e-150 && r > 0))) {
    let scale = 0;
    for (let i = 0; i < v.length; i++) scale = Math.max(scale, Math.abs(v[i]!));
    let t = 0;
    for (let i = 0; i < v.length; i++) t += (v[i]! / scale) ** 2;
    return scale * Math.sqrt(t);
  }
  return r;
}

/**
 * Solve A·x = b to float64 accuracy with correction solves in a lower-precision space.
 * Stops when ‖b − A·x‖₂ ≤ max(rtol·‖b‖₂, atol) in float64 (rtol down to ~1e-13 is meaningful).
 * When an outer step fails to reduce the residual by 10 % twice in a row, it stops with reason
 * 'breakdown' and returns the best x seen.
 * Cost per outer step: 1 host matvec + 1 inner solve + 2 vector transfers.
 * @example
 * const res = await refinedSolve({
 *   hostOperator: HostOperator.fromCsr(a), innerOperator: gpuOp, innerSpace: gpuSpace, b,
 *   rtol: 1e-10, inner: { method: 'cg', rtol: 1e-4 },
 * });
 * res.trueResidual / res.bNorm; // ≤ 1e-10
 */
export async function refinedSolve<V, S>(o: RefinedSolveOptions<V, S>): Promise<RefinedSolveResult> {
  const t0 = performance.now();
  const A = o.hostOperator;
  const n = A.rows;
  if (A.cols !== n) throw new DimensionMismatchError('refinedSolve: square hostOperator, cols', n, A.cols);
  if (o.innerOperator.rows !== n || o.innerOperator.cols !== n) {
    throw new DimensionMismatchError('refinedSolve: innerOperator shape', `${n}x${n}`, `${o.innerOperator.rows}x${o.innerOperator.cols}`);
  }
  if (o.b.length !== n) throw new DimensionMismatchError('refinedSolve: b', n, o.b.length);
  if (o.x0 && o.x0.length !== n) throw new DimensionMismatchError('refinedSolve: x0', n, o.x0.length);
  const rtol = o.rtol ?? 1e-10;
  const atol = o.atol ?? 0;
  if (!(rtol >= 0) || !(atol >= 0)) throw new InvalidParameterError('refinedSolve rtol/atol', 'numbers ≥ 0', `${rtol}/${atol}`);
  const maxOuter = o.maxOuterIterations ?? 30;
  const innerOpts = o.inner ?? {};
  const innerMethod = innerOpts.method ?? 'gmres';
  const solver = { cg, gmres, bicgstab, bicg }[innerMethod];
  if (!solver) throw new InvalidParameterError('refinedSolve inner.method', "'cg' | 'gmres' | 'bicgstab' | 'bicg'", innerMethod);

  const b = Float64Array.from(o.b);
  const x = o.x0 ? o.x0.slice() : new Float64Array(n);
  const best = x.slice();
  const r = new Float64Array(n);
  const d = new Float64Array(n);
  const stats = newStats();
  const history: { iteration: number; residual: number }[] = [];
  const inner: RefinedSolveResult['inner'] = [];
  const bNorm = norm(b);
  const tol = Math.max(rtol * bNorm, atol);
  let innerIterations = 0;
  let outer = 0;

  const residual = (): number => {
    stats.matvecs++;
    A.apply(x, r);
    for (let i = 0; i < n; i++) r[i] = b[i]! - r[i]!; // r = b − A·x (float64)
    return norm(r);
  };
  const done = (reason: StopReason, trueResidual: number, detail?: string): RefinedSolveResult => {
    stats.ms = performance.now() - t0;
    const res: RefinedSolveResult = {
      x,
      converged: reason === 'converged',
      reason,
      iterations: outer,
      trueResidual,
      bNorm,
      history,
      stats,
      method: `refined(${innerMethod}, ${o.innerSpace.precision})`,
      outerIterations: outer,
      innerIterations,
      inner,
    };
    if (detail !== undefined) res.detail = detail;
    return res;
  };

  if (!Number.isFinite(bNorm)) return done('non-finite', Number.NaN, `refinedSolve: b contains non-finite values (‖b‖ = ${bNorm})`);
  if (bNorm === 0) {
    x.fill(0);
    return done('converged', 0, 'b = 0, so x = 0');
  }
  let rn = bNorm;
  if (o.x0) rn = residual();
  else r.set(b); // r = b − A·0
  let bestRn = rn;
  let slow = 0;
  history.push({ iteration: 0, residual: rn });
  const space = new HostVectorSpace();
  for (;;) {
    if (!Number.isFinite(rn)) return done('non-finite', rn, `refinedSolve: ‖b − A·x‖ = ${rn} at outer iteration ${outer}`);
    if (rn <= tol) return done('converged', rn);
    if (outer >= maxOuter) return done('max-iterations', rn);
    if (o.signal?.aborted) return done('stopped', rn, 'signal aborted');
    outer++;
    // correction equation A·d = r/‖r‖, scaled to unit norm so float32 neither under- nor overflows
    const rs = o.innerSpace.fromArray(r.map((v) => v / rn));
    const { method: _m, ...rest } = innerOpts;
    const res = await solver(o.innerSpace, o.innerOperator, rs, {
      ...rest,
      rtol: innerOpts.rtol ?? 1e-6,
      maxIterations: innerOpts.maxIterations ?? 1000,
      signal: o.signal,
    });
    stats.matvecs += res.stats.matvecs;
    stats.precondApplies += res.stats.precondApplies;
    stats.readbacks += res.stats.readbacks + 1;
    innerIterations += res.iterations;
    inner.push({ method: res.method, reason: res.reason, iterations: res.iterations, relativeResidual: res.trueResidual / res.bNorm });
    d.set(await o.innerSpace.toArray(res.x));
    o.innerSpace.release(rs);
    o.innerSpace.release(res.x);
    space.axpby(rn, d, 1, x); // x = x + ‖r‖·d (float64)
    const rnNew = residual();
    history.push({ iteration: outer, residual: rnNew });
    if (!(rnNew < 0.9 * rn)) slow++;
    else slow = 0;
    if (rnNew < bestRn) {
      bestRn = rnNew;
      best.set(x);
    }
    rn = rnNew;
    const verdict = o.onOuterIteration?.({ outer, residual: rn, relativeResidual: rn / bNorm, innerIterations: res.iterations });
    if (verdict === false) return done('stopped', rn, 'onOuterIteration returned false');
    if (slow >= 2 && rn > tol) {
      x.set(best);
      const trueBest = residual();
      return done(
        'breakdown',
        trueBest,
        `refinedSolve: stagnation at outer iteration ${outer}: ‖b − A·x‖ = ${rn.toExponential(2)} did not drop 10 % twice ` +
          `(last inner solve: ${res.reason}${res.detail ? `, ${res.detail}` : ''}); the inner ${o.innerSpace.precision} solve is too inaccurate ` +
          'for this matrix: tighten inner.rtol, add a preconditioner, or raise the inner precision',
      );
    }
  }
}
