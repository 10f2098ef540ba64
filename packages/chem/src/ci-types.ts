/**
 * The CI driver's public types: the backend a run uses (vector space, operators, chunk sink,
 * device polish), the options of {@link ciEnergies}, its progress events and its result; and
 * the float64 host backend.
 * @module
 */
import { type CsrMatrix, getFormat, HostOperator, HostVectorSpace, type LinearOperator, type VectorSpace } from '@gpusparse/formats';
import type { CiMemoryOptions } from './ci-estimate';
import type { BuildSpaceOptions, SpaceSpec } from './determinants/build';
import type { Fcidump } from './fcidump/types';
import type { CiHamiltonian } from './ci-assembly';
import type { DeterminantSpace } from './determinants/space';
import type { ChunkSink } from './hamiltonian/chunked';
import type { AvailableMemory, CiEstimate } from './memory-estimate';
import type { CiDevicePolish } from './ci-polish';

/** Where the matrix lives and how vectors are stored: the host by default, the GPU later. */
export interface CiBackend<V, S = unknown> {
  readonly space: VectorSpace<V, S>;
  /** An operator over `matrix` stored in format `format` (a name of the format registry). */
  operator(matrix: CsrMatrix, format: string): LinearOperator<V> | Promise<LinearOperator<V>>;
  /** Device memory the backend can use, when known (checked before assembly). */
  readonly deviceMemory?: AvailableMemory;
  /**
   * A sink for H in row chunks (device backends): enables chunked assembly (CiOptions.assembly).
   * `keepLo`: also keep, on the device, the f32 low parts of values not exact in f32 (for the
   * device polish).
   */
  chunkSink?(rows: number, perRow: number, opts?: { keepLo?: boolean }): ChunkSink<V> | Promise<ChunkSink<V>>;
  /**
   * A float64-accurate device space for the polish after a float32 solve (df64 on WebGPU), or
   * undefined when the device fails its self-test; absent on host backends.
   */
  devicePolish?(): Promise<CiDevicePolish<V> | undefined>;
}

/**
 * The float64 host backend: HostVectorSpace and HostOperator (CSR fast path, other formats by
 * reference product). Cost: a copy of H when the format is not CSR.
 * @example
 * const r = await ciEnergies(fd, { backend: hostBackend(), format: 'sell' });
 */
export function hostBackend(): CiBackend<Float64Array> {
  return {
    space: new HostVectorSpace(),
    operator(matrix, format) {
      if (format === 'csr') return HostOperator.fromCsr(matrix);
      const desc = getFormat(format);
      return HostOperator.fromFormat(desc, desc.fromCsr(matrix));
    },
  };
}

/** A progress event of {@link ciEnergies}. */
export type CiProgress =
  | { stage: 'read' | 'space' | 'solve-start' }
  | { stage: 'estimate'; estimate: CiEstimate }
  | { stage: 'assembly'; rowsDone: number; rows: number }
  | { stage: 'solve' | 'polish'; iteration: number; values: readonly number[]; residualNorms: readonly number[] };

/** Options of {@link ciEnergies}. */
export interface CiOptions<V = Float64Array, S = unknown> extends BuildSpaceOptions {
  /** Determinant space (default 'fci'). */
  space?: SpaceSpec;
  /** Number of roots (lowest eigenvalues), default 1. */
  nroots?: number;
  /**
   * Extra roots Davidson converges and drops, against skipped roots (default 1 when
   * nroots > 1, else 0; the start vectors carry a small random part in any case).
   */
  extraRoots?: number;
  /**
   * Only states of this multiplicity: H + penalty·(S² − S(S+1))² (penalty default 0.2 Eh, as
   * PySCF's fix_spin; larger values slow Davidson's diagonal preconditioner down).
   */
  spin?: { multiplicity: number; penalty?: number };
  /** Storage format of H: 'csr' (default), 'auto', or a registry name. */
  format?: string;
  /** Backend factory (default: the host). */
  backend?: CiBackend<V, S>;
  /** 'davidson', 'dense' (all eigenpairs, n ≤ 4000), or 'auto' (default: dense up to 64 determinants, else Davidson). */
  solver?: 'davidson' | 'dense' | 'auto';
  /**
   * Tolerance in Eh, absolute (default 1e-8): energies are in the user's unit. Under `accept:
   * 'bound'` (the default on a float64 backend) the energy error a root is certified to
   * (0 ≤ E − λ ≤ tol, see `accept`); under 'residual' the residual ‖Hv − λv‖. Judged on the
   * `nroots` requested roots only; extra (guard) roots do not hold the verdict.
   */
  tol?: number;
  /**
   * How a root is accepted. 'bound': when its certified Lehmann–Temple bound 0 ≤ E − λ ≤ ε²/gap
   * (docs/guides/precision.md, "Accepting eigenvalues by a bound"; gap from a guard root Davidson
   * carries above the wanted ones, one is added for `nroots: 1` too) is ≤ tol Eh and its residual
   * is ≤ `residualFloor`, or when ‖Hv − Ev‖ ≤ tol. 'residual': only the latter.
   * Default: 'bound' for the Davidson of a float64 backend (`--backend cpu`), 'residual' for the
   * float64 polish after a float32 solve (device or host). The bound assumes Davidson missed no
   * eigenvalue below its guard root (docs/guides/ci.md says when that is safe and what the floor
   * guarantees without it). Not with a spin penalty (the residual rule then, and a note) nor with
   * `energyChange`.
   */
  accept?: 'residual' | 'bound';
  /**
   * Under accept 'bound' on a float64 backend: a root accepted by its bound must also have
   * ‖Hv − Ev‖ ≤ residualFloor (default max(tol, √tol): 1e-4 at 1e-8), which keeps ⟨S²⟩ and the
   * vectors converged to ≈ ‖r‖/gap and bounds the error by the residual should the bound's assumption fail.
   */
  residualFloor?: number;
  /**
   * Stop on the energy change instead of the residual (OpenMolcas-style): every requested root's
   * energy moved by < energyChange Eh since the previous Davidson iteration and ‖r‖ ≤ √energyChange.
   * Not a certified energy error (./davidson-stop.ts says what it guarantees); float64 backends only.
   */
  energyChange?: number;
  /** Most Davidson iterations (default 200; 50 for the float64 polish after a float32 phase). */
  maxIterations?: number;
  /** Worker threads of the assembly (see AssembleOptions.workers). */
  workers?: number | 'auto';
  /** Integral symmetry for a path input (default 'auto'). */
  symmetry?: 8 | 4 | 'auto';
  /**
   * Progress events (a notification: it cannot stop the run — use `signal`). A Promise it returns
   * is not awaited; if one rejects, ciEnergies rejects with that error once the run is over.
   */
  onProgress?: (p: CiProgress) => unknown;
  signal?: AbortSignal;
  /** Memory limits: the run is sized before the space is built and refused when it cannot fit. */
  memory?: CiMemoryOptions;
  /**
   * 'chunked': H goes to the backend's chunk sink in row chunks (float32 on the device, float64
   * row blocks kept for the polish), never as one host CSR; 'whole': one float64 CSR, then the
   * backend's operator; 'auto' (default): chunked when the backend has a sink, the solver is
   * Davidson, the format is 'csr'/'auto' and H has ≥ 5·10^7 estimated non-zeros.
   */
  assembly?: 'auto' | 'chunked' | 'whole';
  /** Non-zeros per chunk of the chunked assembly (default 2^24). */
  chunkNnz?: number;
  /**
   * Where the float64 polish after a float32 backend runs: 'device' (df64 on the GPU: H's
   * float32 values shared with the solve plus 4 bytes per non-zero not exact in f32; no float64
   * H on the host), 'host' (float64 on the host), 'auto' (default: 'device' when the backend
   * offers it and no spin penalty is asked for, else 'host').
   */
  polish?: 'auto' | 'device' | 'host';
  /**
   * Build H's operator instead of assembling H, e.g. `directHamiltonian()` (the matrix-free σ of
   * ./direct): no stored matrix, so no memory check on H's non-zeros. On a float32 backend the
   * factory must give a device operator (Davidson) and a float64 host operator (the polish), e.g.
   * `gpuDirectHamiltonian(ctx)`; a `polishOperator(space)` on its result gives H in the device
   * polish's space (else the polish runs on the host). The factory may push notes, or decline
   * (resolve undefined: H is then assembled as without it, e.g. a cost model that chose the
   * explicit H — still without the memory check, which `hamiltonian` turns off).
   */
  hamiltonian?: (fd: Fcidump, space: DeterminantSpace, notes: string[]) => Promise<CiHamiltonian<V> | undefined>;
}

/**
 * Milliseconds of the float64 phase on the device: waiting for the prewarm and for H in the
 * polish space (both started before the float32 solve; what was not done by its end is waited
 * for here), the polish's Davidson and its final check — these four are the phase. The
 * `operatorBuild` host time (the low parts' scan and upload in slices, when H was built so) ran
 * during the float32 solve: it is part of `solve`, not of the phase.
 */
export interface PolishStages {
  prewarmWait: number;
  operatorWait: number;
  davidson: number;
  check: number;
  operatorBuild?: { scan: number; upload: number; slices: number; yields: number };
}

/** Result of {@link ciEnergies}. */
export interface CiResult {
  /** Total energies (constant included), ascending. */
  energies: number[];
  /** ‖H v − E v‖₂ per root (electronic H, normalised v). */
  residualNorms: number[];
  /** ⟨S²⟩ per root. */
  s2: number[];
  /**
   * Milliseconds per stage; `polish`: the float64 phase (part of `solve`; 0 without one);
   * `spin`: ⟨S²⟩ of the final vectors (on the device with the device direct σ — inside the
   * polish's final check when the polish ran there —, else on the host; 0 when the spin filter
   * had them); `polishStages`: the device phase's parts (present when it ran).
   */
  timings: { read: number; space: number; assembly: number; solve: number; polish: number; spin?: number; polishStages?: PolishStages };
  determinants: number;
  nnz: number;
  /** Format H was stored in for the solve ('dense' for the dense solver). */
  format: string;
  /** The space's description. */
  space: string;
  /** Solver used and whether it converged. */
  solver: { method: string; converged: boolean; iterations: number; matvecs: number };
  /** Assembly rate (non-zeros/s) and CSR bytes per non-zero. */
  assembly: { rate: number; bytesPerNnz: number; workers: number };
  /** Host eigenvectors (float64), one per root. */
  vectors: Float64Array[];
  /**
   * After a float64 polish (float32 backend): how it accepted each requested root and the
   * certified bounds 0 ≤ E − λ ≤ bound[i] Eh (Infinity where no guard root gives one; valid
   * only if no eigenvalue was missed below the guard). Absent without a polish.
   */
  bounds?: { accept: 'residual' | 'bound'; bound: number[]; acceptedBy: ('bound' | 'residual' | 'none')[] };
  /**
   * With `spin`: present (and `solver.converged` false) when the roots returned do not answer the
   * request — `otherSpin`: indices of roots whose ⟨S²⟩ is not S(S+1) (within 1e-3), `missing`: how
   * many roots of the multiplicity are absent from the result (fewer returned than `nroots`).
   * More roots than the space holds states of the multiplicity is refused before the solve
   * (InvalidParameterError 'nroots'); this field is the last safety net when Davidson misses some.
   */
  spinShortfall?: { otherSpin: number[]; missing: number };
  notes: string[];
}
