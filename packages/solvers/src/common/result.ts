/**
 * Result types shared by every solver (HOUSE_STYLE.md): objects, never integer codes.
 * Breakdown and non-finite values are reasons, never exceptions.
 * @module
 */

/** Why a solver stopped. */
export type StopReason = 'converged' | 'max-iterations' | 'breakdown' | 'non-finite' | 'stopped';

/** Counters every solver fills. */
export interface SolverStats {
  /** Operator applications (A·x, and Aᵀ·x for BiCG). */
  matvecs: number;
  /** Preconditioner applications. */
  precondApplies: number;
  /** Synchronisations with the device (scalar or vector reads). */
  readbacks: number;
  /** Wall-clock milliseconds of the whole solve. */
  ms: number;
  /**
   * What went wrong on the way without ending the solve, e.g. the operator's tuned kernel
   * disagreeing with its verified one at the final check (the solve then went on with the
   * verified kernel). Absent when nothing did.
   */
  warnings?: string[];
}

/** One recorded point of a convergence history. */
export interface HistoryPoint {
  iteration: number;
  /** Residual norm (estimated in the solver's own precision unless noted). */
  residual: number;
}

/** Result of a linear solve A·x = b. */
export interface SolveResult<V> {
  /** The approximate solution (a vector of the space the solver ran in). */
  x: V;
  converged: boolean;
  reason: StopReason;
  iterations: number;
  /** ‖b − A·x‖₂ recomputed at exit (in float64 when the caller provided a host check). */
  trueResidual: number;
  /** ‖b‖₂, so that trueResidual / bNorm is the relative residual. */
  bNorm: number;
  history: HistoryPoint[];
  stats: SolverStats;
  /** Solver name, e.g. 'cg', 'gmres(30)'. */
  method: string;
  /** Free-form detail on breakdown (which scalar vanished, at which iteration). */
  detail?: string;
}

/** Result of a symmetric eigenproblem. */
export interface EigenResult<V> {
  /** Eigenvalues in the order asked for (ascending for 'smallest', descending for 'largest'). */
  values: number[];
  /** Eigenvectors, one per value (vectors of the solver's space). */
  vectors: V[];
  /** ‖A·v − λ·v‖₂ per pair, recomputed at exit. */
  residualNorms: number[];
  converged: boolean;
  reason: StopReason;
  iterations: number;
  history: { iteration: number; values: number[]; residualNorms: number[] }[];
  stats: SolverStats;
  method: string;
  detail?: string;
  /** The convergence rule the verdict was judged by (docs/guides/eigen-convergence.md). */
  tolerance?: EigenToleranceReport;
}

/**
 * How an eigensolver judged convergence: the rule in words and the numbers it used at exit.
 * The default rule of Lanczos and LOBPCG (and of Davidson given `rtol`) is relative to the
 * operator's scale, ‖A·v − λ·v‖ ≤ max(tol·‖A‖est, atol) (PRIMME's rule): a pair that passes is
 * an exact eigenpair of a matrix within tol·‖A‖ of A.
 */
export interface EigenToleranceReport {
  /** The rule, e.g. '‖A·v − λ·v‖ ≤ max(tol·‖A‖est, atol)' or 'absolute: ‖A·v − λ·v‖ ≤ residualTol'. */
  rule: string;
  /** Relative residual tolerance (absent under an absolute rule). */
  tol?: number;
  /** Absolute floor (0 when none). */
  atol: number;
  /** ‖A‖ estimate at exit (largest |Ritz value| seen; absent under an absolute rule). */
  normEstimate?: number;
  /** The residual threshold in force at exit. */
  threshold: number;
  /** Davidson only: the bound on the eigenvalue change between iterations. */
  energyTol?: number;
}

/** A fresh zeroed stats object. */
export function newStats(): SolverStats {
  return { matvecs: 0, precondApplies: 0, readbacks: 0, ms: 0 };
}
