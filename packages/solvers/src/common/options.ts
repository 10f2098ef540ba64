/**
 * Options shared by every Krylov solver, with ONE convergence rule for all of them:
 *
 *     ‖b − A·x‖₂ ≤ max(rtol·‖b‖₂, atol)
 *
 * (SciPy's rule). The loop watches a residual estimate (the recursively updated residual, or
 * GMRES's least-squares residual); when the estimate passes, the true residual b − A·x is
 * recomputed (one matvec) and only that verdict counts.
 * @module
 */
import { DimensionMismatchError, InvalidParameterError, type LinearOperator, type VectorSpace } from '@gpusparse/formats';
import { assertUsableOperator } from './operator-check';

/** What a solver tells `onIteration` at every check (every `checkEvery` iterations). */
export interface IterationInfo {
  /** Iterations done so far (matvec-iterations; one GMRES inner step counts as one). */
  iteration: number;
  /** Residual norm estimate in the solver's precision. */
  residual: number;
  /** residual / ‖b‖. */
  relativeResidual: number;
  /** The tolerance max(rtol·‖b‖, atol) the estimate is compared with. */
  tolerance: number;
}

/**
 * Options of {@link cg}, {@link gmres}, {@link bicgstab}, {@link bicg}.
 * @typeParam V - the vector type of the space the solver runs in
 * @example
 * const res = await cg(space, op, b, { rtol: 1e-8, maxIterations: 500, checkEvery: 8 });
 */
export interface SolveOptions<V> {
  /** Relative tolerance (default 1e-6). */
  rtol?: number;
  /** Absolute tolerance (default 0). */
  atol?: number;
  /** Most iterations (default 10·n, at least 100). One matvec-iteration each. */
  maxIterations?: number;
  /** Initial guess (never mutated; default 0). */
  x0?: V;
  /** z = M⁻¹·r as a LinearOperator (CG, BiCGStab, GMRES right-preconditioned; BiCG also needs applyTranspose). */
  preconditioner?: LinearOperator<V>;
  /**
   * Read the residual estimate back every `checkEvery` iterations (default 32; 1 on host spaces,
   * whose name starts with 'host'), plus at iteration 1,
   * at the last iteration and when `signal` is aborted. A readback costs ~0.8 ms on the GPU and
   * stalls the queue, while an iteration records ~0.1–0.3 ms of work. Measured (H200,
   * Dawn/Vulkan, CG on poisson2d in float32, ms per iteration for checkEvery = 16 / 32 / 64 / 128,
   * each twice in interleaved order, bench/RESULTS.md): 10^6 rows 0.22 / 0.17 / 0.16 / 0.15,
   * 4·10^6 rows 0.38 / 0.21 / 0.30 / 0.18 (first pass) and 0.23 / 0.21 / 0.20 / 0.18 (second);
   * 32 keeps synchronisation to a small share while stopping at most 31 iterations late.
   * On the host reads are free and 1 costs nothing.
   */
  checkEvery?: number;
  /**
   * Called at every check; returning `false` stops the solve with reason 'stopped' (nothing or
   * true: go on). A Promise is awaited before the solve goes on (resolving to `false` stops it);
   * one that rejects rejects the solve with its error, after the solve's work vectors are released.
   */
  // biome-ignore lint/suspicious/noConfusingVoidType: callbacks that return nothing must be accepted
  onIteration?: (info: IterationInfo) => boolean | void | Promise<boolean | void>;
  /** Aborting stops the solve at the next iteration with reason 'stopped'. */
  signal?: AbortSignal;
  /** Record the residual estimate at every check in `history` (default true). */
  recordHistory?: boolean;
}

/** Options after defaults and validation. */
export interface ResolvedOptions<V> {
  rtol: number;
  atol: number;
  maxIterations: number;
  checkEvery: number;
  x0: V | undefined;
  preconditioner: LinearOperator<V> | undefined;
  onIteration: SolveOptions<V>['onIteration'];
  signal: AbortSignal | undefined;
  recordHistory: boolean;
}

function nonNegative(name: string, v: number): number {
  if (!(v >= 0) || !Number.isFinite(v)) throw new InvalidParameterError(name, 'a finite number ≥ 0', v);
  return v;
}

function positiveInt(name: string, v: number, min: number): number {
  if (!Number.isInteger(v) || v < min) throw new InvalidParameterError(name, `an integer ≥ ${min}`, v);
  return v;
}

/**
 * Check shapes and fill defaults. Throws DimensionMismatchError when the operator is not square,
 * or b, x0 or the preconditioner do not match it; InvalidParameterError for bad numbers. O(1).
 * @example
 * const o = resolveOptions('cg', space, op, b, { rtol: 1e-8 });
 */
export function resolveOptions<V, S>(
  method: string,
  space: VectorSpace<V, S>,
  op: LinearOperator<V>,
  b: V,
  options: SolveOptions<V>,
): ResolvedOptions<V> {
  const where = `${method} (operator ${op.label ?? 'unlabelled'})`;
  assertUsableOperator(method, op);
  if (options.preconditioner) assertUsableOperator(`${method} preconditioner`, options.preconditioner);
  if (op.rows !== op.cols) throw new DimensionMismatchError(`${where}: square operator, cols`, op.rows, op.cols);
  const n = op.rows;
  const bn = space.length(b);
  if (bn !== n) throw new DimensionMismatchError(`${where}: right-hand side b`, n, bn);
  if (options.x0 !== undefined) {
    const xn = space.length(options.x0);
    if (xn !== n) throw new DimensionMismatchError(`${where}: initial guess x0`, n, xn);
  }
  const m = options.preconditioner;
  if (m && (m.rows !== n || m.cols !== n)) {
    throw new DimensionMismatchError(`${where}: preconditioner ${m.label ?? ''} shape`, `${n}x${n}`, `${m.rows}x${m.cols}`);
  }
  return {
    rtol: nonNegative(`${method} rtol`, options.rtol ?? 1e-6),
    atol: nonNegative(`${method} atol`, options.atol ?? 0),
    maxIterations: positiveInt(`${method} maxIterations`, options.maxIterations ?? Math.max(100, 10 * n), 0),
    // host spaces ('host-…') read scalars for free: check every iteration and stop as soon as converged
    checkEvery: positiveInt(`${method} checkEvery`, options.checkEvery ?? (space.name.startsWith('host') ? 1 : 32), 1),
    x0: options.x0,
    preconditioner: m,
    onIteration: options.onIteration,
    signal: options.signal,
    recordHistory: options.recordHistory ?? true,
  };
}
