/**
 * The public option and result types of {@link refinedSolve} (refined-solve.ts) and the
 * defaults of its reliable-update CG.
 * @module
 */
import type { DeviceSolution, ExtendedPrecisionResidual, ExtendedVector, LinearOperator, VectorSpace } from '@gpusparse/formats';
import type { SolveResult, StopReason } from '../common/result';
import type { GmresOptions } from '../krylov/gmres';

/** Inner solver choice and its options (its own rtol is the loose inner tolerance; the outer `signal` is passed on). */
export interface InnerSolveOptions<V> extends Omit<GmresOptions<V>, 'x0' | 'signal' | 'atol'> {
  /** Default 'gmres'. */
  method?: 'cg' | 'gmres' | 'bicgstab' | 'bicg';
  /**
   * Relative tolerance of each correction solve (default 1e-6: float32 Krylov recurrences reach it
   * by their own residual, and two outer steps then reach 1e-10; measured on an H200, CG on the
   * 2-D Poisson matrix to 1e-10: 10^6 rows 878 → 560 ms, 4·10^6 rows 3056 → 2257 ms against
   * 1e-4, with 1e-5 in between at 938 / 3156 ms — bench/RESULTS.md). For CG with reliable
   * updates (the default for 'cg') it is the residual reduction between two replacements,
   * default {@link RELIABLE_CG_DELTA} (1e-3); values far below 1e-4 gain nothing there, as the
   * float32 recurrence drifts from the true residual.
   */
  rtol?: number;
  /**
   * Most iterations of each correction solve (default 1000, not the solvers' 10·n: a correction
   * that stops early still reduces the residual, and the outer loop goes on).
   */
  maxIterations?: number;
  /**
   * CG only (default true): one CG recurrence for the whole solve with *reliable updates* — the
   * residual is replaced by the extended-precision one whenever the recursive residual has fallen
   * by `rtol` (default 1e-3 here), and the search direction is kept, so CG keeps its Krylov space
   * across outer steps instead of restarting (see reliable-cg.ts). false: restarted refinement,
   * one independent CG solve per outer step. `maxIterations` then bounds the CG iterations
   * between two replacements, and every replacement counts as one outer iteration.
   */
  reliable?: boolean;
  /**
   * Reliable CG only: iterations recorded after a check before its readback is awaited
   * (default {@link RELIABLE_CG_LAG} on device spaces, 0 on host spaces, whose results are those
   * of the synchronous check). With k > 0 the host never waits for the GPU between
   * replacements, and each iteration after the product is one fused pass (3 dispatches on
   * WebGPU); a replacement or the stop comes up to k iterations later.
   */
  checkLag?: number;
}

/** Default check lag of reliable CG on device spaces (see {@link InnerSolveOptions.checkLag}). */
export const RELIABLE_CG_LAG = 4;

/**
 * Default most iterations between two convergence checks of reliable-update CG (the checks are
 * planned sooner from the observed rate). 16, not 32: CG's rate speeds up, so a plan made from
 * the early rate checked late — inner iterations to 1e-8 (lavapipe, lag 4): stencil27 40³ 78 →
 * 66 (float64 CG 59), poisson7 40³ 115 → 109 (101), bcsstk09 272 → 266 (208). With a check lag
 * a check costs one small readback that the GPU does not wait for.
 */
export const RELIABLE_CG_CHECK_EVERY = 16;

/** Default reduction of the recursive residual between two replacements of reliable-update CG. */
export const RELIABLE_CG_DELTA = 1e-3;

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
  /**
   * The float64 operator for the outer residual on the host (e.g. HostOperator.fromCsr(a)).
   * Optional when the inner operator offers an extended-precision residual (then unused).
   */
  hostOperator?: LinearOperator<Float64Array>;
  /**
   * Where the outer residual comes from: default, the inner operator's extended-precision
   * residual when it has one (`extendedPrecisionOf` of @gpusparse/formats), else the host; `false` forces the
   * host path; an object uses that capability.
   */
  extended?: ExtendedPrecisionResidual<V> | false;
  /** The same matrix in the inner space (e.g. a float32 GPU operator). */
  innerOperator: LinearOperator<V>;
  innerSpace: VectorSpace<V, S>;
  /**
   * The right-hand side: float64 values on the host, or a vector already on the device of the
   * extended-precision backend (on WebGPU a Df64Vector or a float32 GpuVector of the operator's
   * context; it is copied, never changed), so that no host transfer of b is paid.
   */
  b: ArrayLike<number> | ExtendedVector;
  /**
   * Where x comes back: 'host' (default: `x` a Float64Array, one transfer of n·8 bytes) or
   * 'device' (`x` a {@link DeviceSolution} left on the GPU in df64, read only when asked;
   * needs an extended-precision backend and max|b| within [2^-60, 2^60]).
   */
  output?: 'host' | 'device';
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
  /** Returning false stops with reason 'stopped'; a Promise is awaited first (its rejection rejects the solve). */
  // biome-ignore lint/suspicious/noConfusingVoidType: callbacks that return nothing must be accepted
  onOuterIteration?: (info: OuterIterationInfo) => boolean | void | Promise<boolean | void>;
}

/** {@link SolveResult} in float64 plus the outer/inner split. `iterations` counts outer steps. */
export interface RefinedSolveResult extends SolveResult<Float64Array> {
  outerIterations: number;
  /** Sum of the inner solvers' iterations. */
  innerIterations: number;
  /** One entry per correction solve. */
  inner: { method: string; reason: StopReason; iterations: number; relativeResidual: number }[];
  /** Where x and r were kept: 'f64 on the host' or the capability's precision (e.g. df64 on webgpu). */
  outerPrecision: string;
  /** Float64 products on the host (0 on the device path). */
  hostMatvecs: number;
}

/** {@link RefinedSolveResult} with x left on the device (`output: 'device'`). */
export interface RefinedSolveDeviceResult extends Omit<RefinedSolveResult, 'x'> {
  /** The solution on the device: `await x.read()` for the float64 values, `x.dispose()` when done. */
  x: DeviceSolution;
}

/** The result under construction: everything but x and the stop. */
export type Book = Omit<RefinedSolveResult, 'x' | 'converged' | 'reason' | 'trueResidual'>;

/** How an outer loop ended. */
export interface LoopEnd {
  reason: StopReason;
  rn: number;
  detail?: string;
}
