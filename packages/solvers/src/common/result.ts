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
}

/** A fresh zeroed stats object. */
export function newStats(): SolverStats {
  return { matvecs: 0, precondApplies: 0, readbacks: 0, ms: 0 };
}
