/**
 * The public types of {@link eigsMixed} (./mixed): its options, the device-polish hook, the
 * per-phase report, the eigenvalue-bound report and the result.
 * @module
 */
import type { HostScalar, LinearOperator, VectorSpace } from '@gpusparse/formats';
import type { EigenResult, StopReason } from '../common/result';
import type { EigenIterationInfo } from './common';

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
  /** The corrections' own readbacks (their GMRES checks and hand-overs), not in `readbacks`. */
  innerReadbacks?: number;
}

/**
 * How each eigenvalue of {@link eigsMixed} was accepted, and its certified error bound
 * (eigen/bounds.ts; docs/guides/precision.md, "Accepting eigenvalues by a bound").
 */
export interface EigenvalueBoundReport {
  /** 0 ≤ θᵢ − λᵢ ≤ bound[i] (Infinity where no guard Ritz value certifies root i). */
  bound: number[];
  /**
   * 'bound': bound[i] ≤ tol·|θᵢ| (no residual rule needed); 'residual': the residual and
   * energy-change rules (the bound alone did not reach tol); 'none': not converged.
   */
  acceptedBy: ('bound' | 'residual' | 'none')[];
  /** The relative tolerance the bound was held to. */
  tol: number;
  /** Guard Ritz values (and their residual norms) that gave the gaps. */
  guardValues: number[];
  guardResidualNorms: number[];
  /** Rounding allowance added to every residual and bound (64·u·‖A‖est, ‖A‖est from both ends of the spectrum: see normLowerBound). */
  allowance: number;
}

/** Result of {@link eigsMixed}: float64 host vectors, plus the per-phase report. */
export interface MixedEigenResult extends EigenResult<Float64Array> {
  phases: EigenPhaseReport[];
  /** Error bounds of the eigenvalues and how each was accepted (absent after a stopped fast phase). */
  bounds?: EigenvalueBoundReport;
  /**
   * Lanczos fast phase with `fastCheckMultiplicity` on: whether its multiplicity check ran to
   * the end. false when `fastMaxIterations` (or a non-converged fast phase) cut it short: a
   * missed copy of a multiple eigenvalue is then not excluded, whatever `reason` says of the
   * polished pairs, and `stats.warnings` says so. Absent when no check was asked for.
   */
  multiplicityChecked?: boolean;
}

/**
 * A float64-accurate space on the fast space's device for the polish of {@link eigsMixed}: the
 * matrix there and the hand-over in both directions (no host round trip).
 */
export interface DevicePolish<V, P, PS> {
  readonly space: VectorSpace<P, PS>;
  readonly operator: LinearOperator<P>;
  /** A new polish vector holding the fast vector v. */
  fromFast(v: V): P;
  /** A new fast vector fl(scale·p). */
  toFast(p: P, scale: number): V;
  /** Unit roundoff of the polish space's arithmetic (default 2⁻⁴⁴, conservative for df64). */
  readonly unitRoundoff?: number;
  /**
   * The polish operator multiplies by scale·A, a power of two (default 1: by A). eigsMixed then
   * solves the problem scaled by it — the fast operator's products × scale, the diagonal and
   * the absolute tolerances too — and reports the eigenvalues, residual norms and bounds of A.
   * A df64 operator of a tiny A (A·1e-30) needs it: its parts would fall below float32's normal
   * range, which NVIDIA flushes (Df64CsrOperator's `scale: 'auto'`; Df64VectorSpace.polish
   * passes it on).
   */
  readonly scale?: number;
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
  /** The same matrix in float64 on the host (needed unless `devicePolish` is given). */
  hostOperator?: LinearOperator<Float64Array>;
  /**
   * Polish in a float64-accurate device space (e.g. df64 on the same GPU) instead of the host:
   * the fast Ritz vectors and the 'jd' corrections move between the spaces on the device, and
   * only the final k vectors come back. `hostOperator` is then not used.
   */
  devicePolish?: DevicePolish<V, unknown, unknown>;
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
  /**
   * How the polish accepts an eigenvalue (default 'residual'). 'residual': the energy-change and
   * residual rules below, for every root (eigenpairs to `residualTol`). 'bound': the fast phase
   * also finds `guard` more pairs, and a root is accepted as soon as its certified bound
   * 0 ≤ θ − λ ≤ ε²/(σ − θ) (eigen/bounds.ts, from the polish-precision residuals and the gap σ
   * to the guard) is ≤ tol·|θ|: often every root after the first Rayleigh–Ritz step, without a
   * correction solve. Roots the bound cannot settle (e.g. a wanted eigenvalue degenerate with
   * the guard) are corrected and fall back to the residual rules; `bounds.acceptedBy` says which
   * rule accepted each. 'bound' needs a Davidson-based polish ('jd' or 'davidson').
   */
  accept?: 'residual' | 'bound';
  /**
   * Read the k eigenvectors back (default true). false: `vectors` is empty and a device polish
   * ends without k vector readbacks (values, bounds and residual norms only; CuPy's `eigsh`
   * leaves its vectors on the GPU, which this matches for timing).
   */
  returnVectors?: boolean;
  /** Guard pairs with `accept: 'bound'` (default 1; they bound the gap of the wanted roots). */
  guard?: number;
  /** Inner GMRES steps per correction of the 'jd' polish (default 25). */
  innerIterations?: number;
  /** Inner relative tolerance of the 'jd' polish (default 1e-3). */
  innerRtol?: number;
  /**
   * Gram–Schmidt of the 'jd' polish's inner GMRES (FastCorrectorOptions.orthogonalization):
   * 'cgs' (the default since session 11) — one pass, on a GPU space in the device basis block
   * (a step = product + 4 dispatches, half the vector passes): a correction needs ~1e-3 accuracy
   * only and the outer float64 Davidson decides the answer's; 'cgs2' — two passes (before).
   * lavapipe poisson3d 16×18×20 / 30×33×36, 4 lowest: the same polish iterations, products,
   * values and residuals; dispatches 3 761 → 3 090 / 7 070 → 5 710 for the whole solve.
   */
  innerOrthogonalization?: 'cgs2' | 'cgs';
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
  /**
   * Relative residual target of the fast phase, ‖r‖ ≤ fastTol·‖A‖est (default 1e-4 in f32,
   * 1e-8 in f64; with `accept: 'bound'` 1e-6 in f32: the bound is quadratic in the residual).
   */
  fastTol?: number;
  fastMaxIterations?: number;
  polishMaxIterations?: number;
  /**
   * Most vectors of the 'jd' polish's Davidson subspace (default 4·(k + guards) + 8: 28 for
   * k = 4 with one guard). A restart keeps the k + guards Ritz vectors only; a larger subspace
   * restarts less often for 2 df64 vectors of n per extra column (V and A·V).
   */
  polishMaxSubspace?: number;
  /**
   * Lanczos fast phase: look for missed copies of multiple eigenvalues (default true; false is
   * CuPy's / ARPACK's algorithm and about halves the fast phase's products, see `lanczos`).
   */
  fastCheckMultiplicity?: boolean;
  /**
   * Lanczos basis / Davidson subspace size of the fast phase. Lanczos default: {@link fastLanczosBasis}
   * (40 up to 6.7 M rows in float32, else the Lanczos default max(20, 2k + 10)).
   */
  maxBasis?: number;
  onIteration?: (info: EigenIterationInfo & { phase: 'fast' | 'polish' }) => unknown;
  signal?: AbortSignal;
}
