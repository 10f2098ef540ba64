/**
 * The two contracts every solver is written against (HOUSE_STYLE.md, "central contracts").
 *
 * A {@link VectorSpace} owns vectors `V` and scalars `S`. On the host both are plain float64
 * values; on the GPU they are device buffers and slots of a device scalar buffer, so that a
 * Krylov loop never waits for the device except in {@link VectorSpace.read} /
 * {@link VectorSpace.readMany}, the only synchronisation points. Every other method only
 * records work (and may return at once).
 *
 * A {@link LinearOperator} maps V to V: a sparse matrix in any format, a preconditioner, a
 * user's own function.
 * @module
 */

/** A scalar that may live on the device, or a plain number. */
export type ScalarLike<S> = S | number;

/**
 * Vectors and scalars of one backend.
 * @typeParam V - the vector handle (Float64Array on the host, a GPU buffer wrapper on WebGPU)
 * @typeParam S - the scalar handle (a boxed number on the host, a device slot on WebGPU)
 */
export interface VectorSpace<V, S = unknown> {
  /** e.g. 'host-f64' or 'webgpu-f32'. */
  readonly name: string;
  /** The arithmetic precision of vectors and reductions. */
  readonly precision: 'f32' | 'f64';
  /** A new zero vector of length n. */
  create(n: number): V;
  /** A new vector holding `values` (rounded to the space's precision). */
  fromArray(values: ArrayLike<number>): V;
  /** Read a vector back as float64 (a synchronisation point on the GPU). */
  toArray(v: V): Promise<Float64Array>;
  /** Overwrite `v` with `values` (same length). */
  write(v: V, values: ArrayLike<number>): void;
  /** Length of a vector. */
  length(v: V): number;
  /** dst = src. */
  copy(src: V, dst: V): void;
  /** v[i] = value. */
  fill(v: V, value: number): void;
  /** y = alpha·x + beta·y (beta = 0 ignores y's old content, even NaN). */
  axpby(alpha: ScalarLike<S>, x: V, beta: ScalarLike<S>, y: V): void;
  /** z = x ∘ y (element-wise product; z may alias x or y). */
  multiply(x: V, y: V, z: V): void;
  /**
   * Optional: t = r ∘ (d − sigma)⁻¹ with |d_i − sigma| clamped below at `clamp` (sign kept) —
   * Davidson's diagonal preconditioner without building (d − θ)⁻¹ on the host. Spaces that
   * provide it spare a host vector and an upload per root and iteration.
   */
  shiftedDivide?(r: V, d: V, sigma: number, clamp: number, t: V): void;
  /** x·y. */
  dot(x: V, y: V): S;
  /** ‖x‖₂. */
  norm2(x: V): S;
  /** [x₀·y, x₁·y, ...] in one pass where the backend can. */
  multiDot(xs: readonly V[], y: V): S[];
  /** y = beta·y + Σ coeffs[j]·xs[j]. */
  combine(coeffs: readonly ScalarLike<S>[], xs: readonly V[], beta: ScalarLike<S>, y: V): void;
  /** A scalar holding `value`. */
  scalar(value: number): S;
  /** a / b; 0/0 and x/0 give non-finite values, detected when read. */
  div(a: ScalarLike<S>, b: ScalarLike<S>): S;
  /** a · b. */
  mul(a: ScalarLike<S>, b: ScalarLike<S>): S;
  /** a + b. */
  add(a: ScalarLike<S>, b: ScalarLike<S>): S;
  /** a − b. */
  sub(a: ScalarLike<S>, b: ScalarLike<S>): S;
  /** −a. */
  neg(a: ScalarLike<S>): S;
  /** √a. */
  sqrt(a: ScalarLike<S>): S;
  /** Read one scalar (a synchronisation point on the GPU). */
  read(s: ScalarLike<S>): Promise<number>;
  /** Read several scalars with one synchronisation. */
  readMany(s: readonly ScalarLike<S>[]): Promise<number[]>;
  /** Release a vector or scalar early (optional on the host). */
  release(x: V | S): void;
}

/**
 * A linear map y = A·x between vectors of one space.
 * Capabilities beyond apply are declared by their presence, never assumed.
 */
export interface LinearOperator<V> {
  readonly rows: number;
  readonly cols: number;
  /** y = A·x. */
  apply(x: V, y: V): void;
  /** y = alpha·A·x + beta·y. */
  applyScaled(alpha: number, x: V, beta: number, y: V): void;
  /** y = Aᵀ·x, when the operator has a transpose (BiCG needs it). */
  applyTranspose?(x: V, y: V): void;
  /** The main diagonal in float64, when known (Jacobi, Davidson). */
  diagonal?(): Float64Array;
  /** Optional label for reports, e.g. 'csr-vector(lanes=4)'. */
  readonly label?: string;
}

/**
 * One refinement's extended-precision state on an inner space's backend: x, b and r live there
 * (on the GPU in df64), and only norms and the final x come back. Made by
 * {@link ExtendedPrecisionResidual.start}; `refinedSolve` drives it.
 * @typeParam V - the inner space's vector type (the correction d and its right-hand side)
 */
export interface ExtendedRefinement<V> {
  /** r = b − A·x in extended precision; resolves to ‖r‖₂ (one synchronisation). */
  residualNorm(): Promise<number>;
  /** out = scale·r rounded to the inner precision (records only). */
  correctionRhs(scale: number, out: V): void;
  /** x = x + alpha·d, accumulated in extended precision (records only). */
  update(alpha: number, d: V): void;
  /** Remember the current x as the best one (records only). */
  saveBest(): void;
  /** Go back to the remembered x (records only). */
  restoreBest(): void;
  /** x as float64 (one synchronisation). */
  solution(): Promise<Float64Array>;
  /**
   * x left on the backend instead (no transfer): the refinement hands it over and no longer
   * frees it. Absent on backends that keep x on the host.
   */
  takeSolution?(): DeviceSolution;
  /** Synchronisations (readbacks) so far. */
  readonly readbacks: number;
  /**
   * Resolve once the backend's allocations so far are known to have succeeded; reject with the
   * out-of-memory (ResourceLimitError) otherwise. For paths that hand a solution back without a
   * synchronisation (b = 0 with output 'device'): the error belongs to that call, not to the
   * caller's next use of the vector. Optional: backends that allocate synchronously omit it.
   */
  settle?(): Promise<void>;
  /** Free the backend's buffers. */
  dispose(): void;
}

/**
 * Capability: extended-precision residuals r = b − A·x on the backend of an inner space, so that
 * iterative refinement never moves vectors to the host. Solvers ask for it through
 * {@link extendedPrecisionOf}; the GPU operator built from CSR offers df64 (about 48 bits).
 */
export interface ExtendedPrecisionResidual<V> {
  /** What the extended precision is, e.g. 'df64 (≈48 bits) on webgpu'. */
  readonly precision: string;
  readonly rows: number;
  /**
   * Start a refinement with b and x0 (zero when absent): float64 values on the host, or for b a
   * vector of this backend that {@link acceptsVector} takes (it is copied, never changed).
   * `shift`: solve for b·2^shift instead, exactly (default 0; x0 is taken as given).
   */
  start(b: ArrayLike<number> | ExtendedVector, x0?: ArrayLike<number>, opts?: { shift?: number }): ExtendedRefinement<V>;
  /** Whether `b` is a vector on this backend that {@link start} takes as the right-hand side. */
  acceptsVector?(b: unknown): b is ExtendedVector;
  /** ‖b‖₂ of such a vector in the extended precision (one synchronisation). */
  vectorNorm?(b: ExtendedVector): Promise<number>;
}

/** A vector on an extended-precision backend (e.g. a df64 or float32 GPU vector): `n` elements, opaque to the solvers. */
export interface ExtendedVector {
  readonly n: number;
}

/** A solution left on the device by `refinedSolve({ ..., output: 'device' })`. */
export interface DeviceSolution {
  /** The vector (on the GPU backend a Df64Vector: interleaved (hi, lo) float32 pairs). */
  readonly vector: ExtendedVector;
  /** x as float64 on the host (one transfer; the vector stays valid). */
  read(): Promise<Float64Array>;
  /** Free the vector. */
  dispose(): void;
}

/** An operator that can hand out an {@link ExtendedPrecisionResidual} (it may decline: undefined). */
export interface ExtendedPrecisionSource<V> {
  extendedPrecision(): Promise<ExtendedPrecisionResidual<V> | undefined>;
}

/**
 * The operator's extended-precision residual, when it offers one (a GPU operator built from
 * CSR on a device that passes the df64 self-test); undefined for host and user operators.
 * @example const ext = await extendedPrecisionOf(gpuOp); // undefined on the CPU backend
 */
export async function extendedPrecisionOf<V>(op: LinearOperator<V>): Promise<ExtendedPrecisionResidual<V> | undefined> {
  const src = op as Partial<ExtendedPrecisionSource<V>>;
  return typeof src.extendedPrecision === 'function' ? src.extendedPrecision() : undefined;
}

/**
 * Capability of an operator whose products may run on a kernel other than the one verified
 * against the float64 reference (in-solve tuning switches to the fastest candidate after its
 * tuning products passed the check; a fault that shows only later, for some x or after a
 * driver hiccup, would then give a wrong x labelled converged). Solvers ask for it through
 * {@link unverifiedKernelOf} before a 'converged' verdict and recompute the residual on the
 * verified kernel; on a mismatch they call {@link VerifiedKernelSource.fallBackToVerified}
 * and go on with the verified kernel.
 */
export interface VerifiedKernelSource<V> {
  /** True when the products run on a kernel other than the verified one now. */
  runsUnverified(): boolean;
  /** y = A·x on the verified kernel (one product; records only). */
  applyVerified(x: V, y: V): void;
  /** Every later product runs on the verified kernel; `why` goes into the operator's report. */
  fallBackToVerified(why: string): void;
  /** The verified kernel's label, e.g. 'csr-vector(lanes=8)'. */
  readonly verifiedLabel: string;
  /** The label of the kernel the products run on now. */
  readonly activeLabel: string;
  /**
   * How many times the products have switched to an unverified kernel (monotonic). Optional: with
   * it, {@link unverifiedKernelOf} given a run's {@link kernelMark} also answers for a run whose
   * products ran unverified although none runs now (a concurrent solve's check made the operator
   * fall back in between; session 12 found BiCGStab 'converged' at true residual 0.09 that way).
   * Undefined when the verified kernel cannot be used (nothing to check against).
   */
  readonly unverifiedSwitches?: number | undefined;
}

/** The kernel state of an operator when a run starts ({@link kernelMark}). */
export interface KernelMark {
  readonly switches: number;
  readonly unverified: boolean;
}

/**
 * The operator's kernel state now, for {@link unverifiedKernelOf} at the end of a run; undefined
 * for operators without a {@link VerifiedKernelSource}. O(1).
 * @example const mark = kernelMark(op); … const chk = unverifiedKernelOf(op, mark);
 */
export function kernelMark<V>(op: LinearOperator<V>): KernelMark | undefined {
  const src = op as Partial<VerifiedKernelSource<V>>;
  if (typeof src.runsUnverified !== 'function') return undefined;
  return { switches: src.unverifiedSwitches ?? 0, unverified: src.runsUnverified() };
}

/**
 * The operator's verified-kernel source when its products run on an unverified kernel now — or,
 * given the `mark` taken at a run's start, when they may have at any time since (unverified then,
 * or switched since: another run on the same operator may have made it fall back meanwhile);
 * undefined otherwise (host and plain GPU operators, or in-solve tuning still on the verified one).
 * @example const chk = unverifiedKernelOf(op, mark); if (chk) chk.applyVerified(x, r);
 */
export function unverifiedKernelOf<V>(op: LinearOperator<V>, mark?: KernelMark): VerifiedKernelSource<V> | undefined {
  const src = op as Partial<VerifiedKernelSource<V>>;
  if (typeof src.runsUnverified !== 'function') return undefined;
  if (src.runsUnverified()) return src as VerifiedKernelSource<V>;
  const switches = src.unverifiedSwitches;
  const ran = mark !== undefined && switches !== undefined && (mark.unverified || switches !== mark.switches);
  return ran ? (src as VerifiedKernelSource<V>) : undefined;
}
