/**
 * Mixed-precision iterative refinement (Wilkinson; Carson & Higham 2018): the residual
 * r = b − A·x and the update x = x + d are computed in extended precision — df64 on the device
 * when the inner operator offers it, else float64 on the host — and the correction equation
 * A·d = r is solved loosely in a (possibly float32, GPU) space by any Krylov solver.
 * Each outer step gains about −log10(inner rtol) digits until the residual reaches
 * max(rtol·‖b‖, atol), as long as the inner solver converges (κ(A)·ε_inner < 1 roughly).
 *
 * Per outer iteration: one extended-precision residual product, one inner solve, and either one
 * scalar readback (device path) or one upload of r and one download of d (host path).
 * With inner method 'cg' the inner solves are one CG recurrence with reliable updates
 * (reliable-cg.ts): the outer steps are its residual replacements and p is kept across them.
 * @module
 */
import {
  type DeviceSolution,
  DimensionMismatchError,
  type ExtendedPrecisionResidual,
  type ExtendedVector,
  extendedPrecisionOf,
  InvalidParameterError,
  type LinearOperator,
  type VectorSpace,
} from '@gpusparse/formats';
import { bicg } from '../krylov/bicg';
import { bicgstab } from '../krylov/bicgstab';
import { cg } from '../krylov/cg';
import { type GmresOptions, gmres } from '../krylov/gmres';
import { newStats, type SolveResult, type StopReason } from '../common/result';
import { HostRefinement, norm64, type OuterState } from './host-refinement';
import { type ReliableCgHooks, type ReliableCgInput, reliableCg } from './reliable-cg';

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
   * residual when it has one ({@link extendedPrecisionOf}), else the host; `false` forces the
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

/**
 * Solve A·x = b to float64 accuracy with correction solves in a lower-precision space.
 * Stops when ‖b − A·x‖₂ ≤ max(rtol·‖b‖₂, atol) (rtol down to ~1e-13 is meaningful on the host
 * path, ~1e-12 with df64 on the device). When an outer step fails to reduce the residual by
 * 10 % twice in a row, it stops with reason 'breakdown' and returns the best x seen.
 *
 * Where the outer residual is computed: when the inner operator offers an extended-precision
 * residual ({@link extendedPrecisionOf}: a GPU operator built from CSR gives df64), x, b and r
 * stay on the device and the host reads ‖r‖ once per outer step; otherwise on the host in
 * float64 with `hostOperator` (1 host product + 1 upload + 1 download per outer step).
 * @example
 * const res = await refinedSolve({
 *   hostOperator: HostOperator.fromCsr(a), innerOperator: gpuOp, innerSpace: gpuSpace, b,
 *   rtol: 1e-10, inner: { method: 'cg', rtol: 1e-4 },
 * });
 * res.trueResidual / res.bNorm; // ≤ 1e-10
 */
export async function refinedSolve<V, S>(o: RefinedSolveOptions<V, S> & { output: 'device' }): Promise<RefinedSolveDeviceResult>;
export async function refinedSolve<V, S>(o: RefinedSolveOptions<V, S>): Promise<RefinedSolveResult>;
export async function refinedSolve<V, S>(o: RefinedSolveOptions<V, S>): Promise<RefinedSolveResult | RefinedSolveDeviceResult> {
  const t0 = performance.now();
  const n = checkShapes(o);
  const ext = o.extended === false ? undefined : (o.extended ?? (await extendedPrecisionOf(o.innerOperator)));
  const rhs = await rhsOf(o, ext, n);
  // b outside [2^-60, 2^60]: solve for b/s (s a power of two: exact), then x·s. The df64 outer
  // state and the float32 corrections hold only float32's exponent range (b = 1e-300 was
  // "converged" with x = 0, b = 1e38 non-finite)
  const s = rhs.scale;
  if (s !== 1 && o.output === 'device') {
    throw new InvalidParameterError("refinedSolve output 'device'", 'max|b| within [2^-60, 2^60] (the df64 x on the device has float32\'s exponent range)', `max|b| ≈ ${s.toExponential(2)}; use output 'host'`);
  }
  const cb = o.onOuterIteration;
  const res = await refinedSolveInRange(
    {
      ...o,
      ...(o.x0 && s !== 1 ? { x0: o.x0.map((v) => v / s) } : {}),
      atol: (o.atol ?? 0) / s,
      ...(cb && s !== 1 ? { onOuterIteration: (info: OuterIterationInfo) => cb({ ...info, residual: info.residual * s }) } : {}),
    },
    { ...rhs, ext, t0 },
  );
  if (s === 1) return res;
  const x = res.x as Float64Array; // output 'device' was refused above when s ≠ 1
  for (let i = 0; i < x.length; i++) x[i]! *= s;
  for (const h of res.history) h.residual *= s;
  res.bNorm *= s;
  res.trueResidual *= s;
  const note = `solved for b/2^${Math.log2(s)} (max |b| outside float32's comfortable range), x scaled back`;
  res.detail = res.detail ? `${res.detail}; ${note}` : note;
  return res;
}

/** The right-hand side as refinedSolveInRange takes it: host values or a device vector, its norm and scale. */
interface Rhs {
  /** Host values (unscaled), or undefined for a device vector. */
  values?: ArrayLike<number>;
  vector?: ExtendedVector;
  /** ‖b/scale‖₂. */
  bNorm: number;
  /** 1 or the power of two b is divided by. */
  scale: number;
  /** Synchronisations spent on b (1 for the norm of a device vector). */
  readbacks: number;
}

async function rhsOf<V>(o: { b: ArrayLike<number> | ExtendedVector; output?: 'host' | 'device' }, ext: ExtendedPrecisionResidual<V> | undefined, n: number): Promise<Rhs> {
  if (o.output !== undefined && o.output !== 'host' && o.output !== 'device') throw new InvalidParameterError('refinedSolve output', "'host' | 'device'", String(o.output));
  if (o.output === 'device' && !ext?.acceptsVector) {
    throw new InvalidParameterError("refinedSolve output 'device'", 'an inner operator with a device extended-precision residual (a GPU operator built from CSR, df64)', ext ? ext.precision : 'none (x is kept on the host)');
  }
  if (!isHostArray(o.b)) {
    if (!ext?.acceptsVector?.(o.b) || !ext.vectorNorm) {
      throw new InvalidParameterError('refinedSolve b', "host values, or a device vector of the inner operator's extended-precision backend", ext ? `a vector that ${ext.precision} does not take` : 'a vector, but the inner operator has no extended-precision residual');
    }
    const norm = await ext.vectorNorm(o.b);
    const scale = norm > 0 && Number.isFinite(norm) && (norm < 2 ** -60 || norm > 2 ** 60) ? 2 ** Math.round(Math.log2(norm)) : 1;
    return { vector: o.b, bNorm: norm / scale, scale, readbacks: 1 };
  }
  const scale = rhsPowerOfTwo(o.b);
  const values = o.b;
  if (values.length !== n) throw new DimensionMismatchError('refinedSolve: b', n, values.length);
  const f64 = values instanceof Float64Array ? values : Float64Array.from(values);
  return { values: f64, bNorm: norm64(f64) / scale, scale, readbacks: 0 };
}

function isHostArray(b: ArrayLike<number> | ExtendedVector): b is ArrayLike<number> {
  return typeof (b as ArrayLike<number>).length === 'number';
}

/** 1, or the power of two nearest max|b| when that lies outside [2^-60, 2^60]. O(n). */
export function rhsPowerOfTwo(b: ArrayLike<number>): number {
  let m = 0;
  for (let i = 0; i < b.length; i++) m = Math.max(m, Math.abs(b[i]!));
  if (!(m > 0) || !Number.isFinite(m) || (m >= 2 ** -60 && m <= 2 ** 60)) return 1;
  return 2 ** Math.round(Math.log2(m));
}

/** The outer state for b/scale: on the extended backend (b split or copied there), else on the host. */
function startState<V, S>(o: RefinedSolveOptions<V, S>, rhs: Rhs, ext: ExtendedPrecisionResidual<V> | undefined): OuterState<V> {
  const b = rhs.vector ?? rhs.values!;
  if (ext) return ext.start(b, o.x0, { shift: -Math.log2(rhs.scale) });
  const v = rhs.values as Float64Array;
  return new HostRefinement(o.hostOperator!, rhs.scale === 1 ? v : v.map((t) => t / rhs.scale), o.x0, o.innerSpace);
}

async function refinedSolveInRange<V, S>(o: RefinedSolveOptions<V, S>, rhs: Rhs & { ext: ExtendedPrecisionResidual<V> | undefined; t0: number }): Promise<RefinedSolveResult | RefinedSolveDeviceResult> {
  const { ext, t0, bNorm } = rhs;
  const n = o.innerOperator.rows;
  const rtol = o.rtol ?? 1e-10;
  const atol = o.atol ?? 0;
  if (!(rtol >= 0) || !(atol >= 0)) throw new InvalidParameterError('refinedSolve rtol/atol', 'numbers ≥ 0', `${rtol}/${atol}`);
  const innerOpts = o.inner ?? {};
  const innerMethod = innerOpts.method ?? 'gmres';
  const solver = { cg, gmres, bicgstab, bicg }[innerMethod];
  if (!solver) throw new InvalidParameterError('refinedSolve inner.method', "'cg' | 'gmres' | 'bicgstab' | 'bicg'", innerMethod);
  if (!ext && !o.hostOperator) {
    throw new InvalidParameterError('refinedSolve hostOperator', 'a float64 host operator (the inner operator offers no extended-precision residual)', 'none');
  }
  const base: Book = {
    iterations: 0,
    bNorm,
    history: [],
    stats: newStats(),
    method: `refined(${innerMethod}, ${o.innerSpace.precision})`,
    outerIterations: 0,
    innerIterations: 0,
    inner: [],
    outerPrecision: ext ? ext.precision : 'f64 on the host',
    hostMatvecs: 0,
  };
  base.stats.readbacks += rhs.readbacks;
  const device = o.output === 'device';
  const finish = (x: Float64Array | DeviceSolution, reason: StopReason, trueResidual: number, detail?: string): RefinedSolveResult | RefinedSolveDeviceResult => {
    base.stats.ms = performance.now() - t0;
    const res = { ...base, x, converged: reason === 'converged', reason, trueResidual } as RefinedSolveResult | RefinedSolveDeviceResult;
    if (detail !== undefined) res.detail = detail;
    return res;
  };
  /** x without a solve (b = 0 or non-finite): on the host, or a device vector of it. */
  const early = (x: Float64Array | undefined): Float64Array | DeviceSolution => {
    if (!device) return x?.slice() ?? new Float64Array(n);
    const st = ext!.start(new Float64Array(n), x);
    try {
      return st.takeSolution!();
    } finally {
      st.dispose();
    }
  };
  if (!Number.isFinite(bNorm)) return finish(early(o.x0), 'non-finite', Number.NaN, `refinedSolve: b contains non-finite values (‖b‖ = ${bNorm})`);
  if (bNorm === 0) return finish(early(undefined), 'converged', 0, 'b = 0, so x = 0');
  const state = startState(o, rhs, ext);
  try {
    const tol = Math.max(rtol * bNorm, atol);
    const reliable = innerMethod === 'cg' && innerOpts.reliable !== false;
    if (reliable) base.method = `refined(cg reliable, ${o.innerSpace.precision})`;
    let out = reliable ? await reliableLoop(o, state, base, tol) : await outerLoop(o, state, base, { solver, tol });
    if (reliable && out.reason === 'breakdown' && !o.signal?.aborted) {
      // the one float32 recurrence stagnated (too inaccurate for this matrix, e.g. bcsstk01 at
      // 1e-10): go on from the best x with restarted refinement, whose fresh inner solves do not
      // carry the recurrence's drift
      const why = out.detail;
      base.method = `refined(cg reliable → restarted, ${o.innerSpace.precision})`;
      out = await outerLoop(o, state, base, { solver, tol, resume: true });
      if (out.reason !== 'converged' && why) out.detail = `${out.detail ? `${out.detail}; ` : ''}before: ${why}`;
    }
    const x = device ? state.takeSolution!() : await state.solution();
    base.stats.readbacks += state.readbacks; // outer-state synchronisations, the final x included
    base.hostMatvecs = state.hostMatvecs ?? 0;
    return finish(x, out.reason, out.rn, out.detail);
  } finally {
    state.dispose();
  }
}

function checkShapes<V, S>(o: RefinedSolveOptions<V, S>): number {
  const n = o.innerOperator.rows;
  if (o.innerOperator.cols !== n) throw new DimensionMismatchError('refinedSolve: square innerOperator, cols', n, o.innerOperator.cols);
  const A = o.hostOperator;
  if (A && (A.rows !== n || A.cols !== n)) throw new DimensionMismatchError('refinedSolve: hostOperator shape', `${n}x${n}`, `${A.rows}x${A.cols}`);
  const bn = isHostArray(o.b) ? o.b.length : o.b.n;
  if (bn !== n) throw new DimensionMismatchError('refinedSolve: b', n, bn);
  if (o.x0 && o.x0.length !== n) throw new DimensionMismatchError('refinedSolve: x0', n, o.x0.length);
  return n;
}

type Solver = typeof cg;

/**
 * Defaults of the correction solve that differ from the solver's own. GMRES: one Gram–Schmidt
 * pass ('cgs', half the vector traffic of 'cgs2' — a correction only needs a few digits, and
 * the outer residual catches what a less orthogonal basis loses; measured with float32
 * emulation, power law 2·10^4 rows to 1e-8: 352 inner iterations against 351 with 'cgs2' and
 * 359 for float64 GMRES(30)) and the Hessenberg read once per restart cycle (`checkEvery` = m:
 * two readbacks per cycle instead of three).
 */
function innerDefaults<V>(inner: InnerSolveOptions<V> | undefined): Partial<GmresOptions<V>> {
  if ((inner?.method ?? 'gmres') !== 'gmres') return {};
  return { orthogonalization: 'cgs', checkEvery: inner?.restart ?? 30 };
}
/**
 * Share of the outer tolerance that the last correction solve aims at: the new residual is
 * ‖r‖ times the inner relative residual, so the inner solve needs only θ·tol/‖r‖; θ = 0.8
 * leaves room for the float32 residual the inner solver measures.
 */
export const LAST_STEP_MARGIN = 0.8;

/**
 * Relative tolerance of one correction solve: the configured inner rtol, loosened to
 * {@link LAST_STEP_MARGIN}·tol/‖r‖ when that is enough to pass the outer tolerance, so the last
 * outer step does not solve past what the answer needs (ExaSP2_poly_chain.512, GMRES(30) in
 * float32 emulation to 1e-8: the third correction needed a 0.77 reduction and spent its 1000
 * iterations on 1e-4).
 */
export function correctionTolerance(innerRtol: number, tol: number, rn: number): number {
  return rn > 0 ? Math.max(innerRtol, (LAST_STEP_MARGIN * tol) / rn) : innerRtol;
}
type Book = Omit<RefinedSolveResult, 'x' | 'converged' | 'reason' | 'trueResidual'>;

/** CG with reliable updates ({@link reliableCg}): one recurrence, the residual replaced in the outer precision. */
async function reliableLoop<V, S>(o: RefinedSolveOptions<V, S>, state: OuterState<V>, res: Book, tol: number): Promise<{ reason: StopReason; rn: number; detail?: string }> {
  const inner = o.inner ?? {};
  let rn = res.bNorm;
  if (o.x0) {
    res.stats.matvecs++;
    rn = await state.residualNorm();
  }
  res.history.push({ iteration: 0, residual: rn });
  state.saveBest();
  const hooks: ReliableCgHooks = {
    count: (kind) => {
      if (kind === 'matvec') res.stats.matvecs++;
      else if (kind === 'precond') res.stats.precondApplies++;
      else res.stats.readbacks++;
    },
    onReplacement: (info) => {
      res.stats.matvecs++; // r = b − A·x in the outer precision
      res.outerIterations = res.iterations = info.replacement;
      res.innerIterations += info.iterations;
      res.history.push({ iteration: info.replacement, residual: info.residual });
      res.inner.push({ method: 'cg (reliable)', reason: info.reason, iterations: info.iterations, relativeResidual: info.estimate / res.bNorm });
      return o.onOuterIteration?.({ outer: info.replacement, residual: info.residual, relativeResidual: info.residual / res.bNorm, innerIterations: info.iterations });
    },
  };
  const input: ReliableCgInput<V, S> = {
    space: o.innerSpace,
    op: o.innerOperator,
    state,
    tol,
    rn0: rn,
    delta: inner.rtol ?? RELIABLE_CG_DELTA,
    checkEvery: inner.checkEvery ?? RELIABLE_CG_CHECK_EVERY,
    checkLag: checkLagOf(inner.checkLag, o.innerSpace.name),
    maxSegment: inner.maxIterations ?? 1000,
    maxReplacements: o.maxOuterIterations ?? 30,
  };
  if (inner.preconditioner) input.preconditioner = inner.preconditioner;
  if (o.signal) input.signal = o.signal;
  const out = await reliableCg(input, hooks);
  const r: { reason: StopReason; rn: number; detail?: string } = { reason: out.reason, rn: out.rn };
  if (out.detail !== undefined) r.detail = out.detail;
  return r;
}

/** inner.checkLag, checked: an integer ≥ 0, by default {@link RELIABLE_CG_LAG} on device spaces and 0 on host spaces. */
function checkLagOf(lag: number | undefined, spaceName: string): number {
  if (lag === undefined) return spaceName.startsWith('host') ? 0 : RELIABLE_CG_LAG;
  if (!Number.isInteger(lag) || lag < 0) throw new InvalidParameterError('refinedSolve inner.checkLag', 'an integer ≥ 0', String(lag));
  return lag;
}

/** The outer iteration: correction solves until the residual passes `tol` or a stop rule fires. */
async function outerLoop<V, S>(
  o: RefinedSolveOptions<V, S>,
  state: OuterState<V>,
  res: Omit<RefinedSolveResult, 'x' | 'converged' | 'reason' | 'trueResidual'>,
  /** resume: go on from the state's current x (after reliable CG), counting outer steps on. */
  c: { solver: Solver; tol: number; resume?: boolean },
): Promise<{ reason: StopReason; rn: number; detail?: string }> {
  const space = o.innerSpace;
  const maxOuter = o.maxOuterIterations ?? 30;
  const { method: _m, ...rest } = o.inner ?? {};
  const residual = (): Promise<number> => {
    res.stats.matvecs++; // r = b − A·x in the outer precision
    return state.residualNorm();
  };
  let rn = o.x0 || c.resume ? await residual() : res.bNorm;
  let bestRn = rn;
  let slow = 0;
  res.history.push({ iteration: res.outerIterations, residual: rn });
  state.saveBest();
  const rs = space.create(o.innerOperator.rows);
  try {
    for (;;) {
      if (!Number.isFinite(rn)) return { reason: 'non-finite', rn, detail: `refinedSolve: ‖b − A·x‖ = ${rn} at outer iteration ${res.outerIterations}` };
      if (rn <= c.tol) return { reason: 'converged', rn };
      if (res.outerIterations >= maxOuter) return { reason: 'max-iterations', rn };
      if (o.signal?.aborted) return { reason: 'stopped', rn, detail: 'signal aborted' };
      const outer = ++res.outerIterations;
      res.iterations = outer;
      // correction equation A·d = r/‖r‖, scaled to unit norm so float32 neither under- nor overflows
      state.correctionRhs(1 / rn, rs);
      const inner = await c.solver(space as VectorSpace<V, unknown>, o.innerOperator, rs, {
        ...innerDefaults(o.inner),
        ...(Object.fromEntries(Object.entries(rest).filter(([, v]) => v !== undefined)) as typeof rest),
        rtol: correctionTolerance(o.inner?.rtol ?? 1e-6, c.tol, rn),
        maxIterations: o.inner?.maxIterations ?? 1000,
        signal: o.signal,
      });
      res.stats.matvecs += inner.stats.matvecs;
      res.stats.precondApplies += inner.stats.precondApplies;
      res.stats.readbacks += inner.stats.readbacks;
      res.innerIterations += inner.iterations;
      res.inner.push({ method: inner.method, reason: inner.reason, iterations: inner.iterations, relativeResidual: inner.trueResidual / inner.bNorm });
      await state.update(rn, inner.x); // x = x + ‖r‖·d
      space.release(inner.x);
      const rnNew = await residual();
      res.history.push({ iteration: outer, residual: rnNew });
      slow = rnNew < 0.9 * rn ? 0 : slow + 1;
      if (rnNew < bestRn) {
        bestRn = rnNew;
        state.saveBest();
      }
      rn = rnNew;
      const verdict = o.onOuterIteration?.({ outer, residual: rn, relativeResidual: rn / res.bNorm, innerIterations: inner.iterations });
      if (verdict === false) return { reason: 'stopped', rn, detail: 'onOuterIteration returned false' };
      if (slow >= 2 && rn > c.tol) {
        state.restoreBest();
        const trueBest = await residual();
        const detail =
          `refinedSolve: stagnation at outer iteration ${outer}: ‖b − A·x‖ = ${rn.toExponential(2)} did not drop 10 % twice ` +
          `(last inner solve: ${inner.reason}${inner.detail ? `, ${inner.detail}` : ''}); the inner ${space.precision} solve is too inaccurate ` +
          'for this matrix: tighten inner.rtol, add a preconditioner, or raise the inner precision';
        return { reason: 'breakdown', rn: trueBest, detail };
      }
    }
  } finally {
    space.release(rs);
  }
}
