/**
 * The CI driver's float64 phase after a float32 device Davidson: a Jacobi–Davidson polish whose
 * outer loop runs in float64 on the host (kept float64 row blocks or the whole CSR), or — when
 * the backend offers a float64-accurate device space (df64 on WebGPU) — on the device over the
 * device's own copy of H (float32 hi values shared with the float32 operator, plus lo arrays
 * where values are not exact in f32). Either way the correction equations are solved in the
 * float32 space, and the energies and residual norms are recomputed in float64 accuracy.
 * @module
 */
import type { CsrMatrix, LinearOperator, VectorSpace } from '@gpusparse/formats';
import { type DavidsonCorrector, davidsonWith, type EigenIterationInfo, type EigenResult, type FastCorrectorOptions, fastCorrector, ritzValueBounds, spaceBridge } from '@gpusparse/solvers';
import type { ChunkSink } from './hamiltonian/chunked';

/**
 * A float64-accurate space on the backend's device for the polish (see the module comment).
 * @typeParam V - the fast (float32) vector type
 * @typeParam P - the polish vector type (e.g. a df64 device vector)
 */
export interface CiDevicePolish<V, P = unknown> {
  readonly space: VectorSpace<P, unknown>;
  /** 'df64 (≈48 bits) on webgpu', for notes. */
  readonly precision: string;
  /**
   * Electronic H in the polish space: from the chunk sink's device blocks (chunked assembly;
   * the sink was opened with `keepLo`), else uploaded from the whole host CSR.
   */
  operator(matrix: CsrMatrix | undefined, sink: ChunkSink<V> | undefined, fast?: LinearOperator<V>): LinearOperator<P> | Promise<LinearOperator<P>>;
  /** Unit roundoff of the polish arithmetic, for the bounds' rounding allowance (default 2⁻⁴⁴, df64). */
  readonly unitRoundoff?: number;
  /**
   * Optional: get ready for a polish over `rows` rows (H with `nnz` non-zeros) while the float32
   * solve runs — compile the polish's pipelines without blocking and pool `vectors` polish
   * vectors — so that the float64 phase compiles and allocates (almost) nothing. Never rejects.
   */
  prewarm?(o: { rows: number; nnz: number; vectors: number }): Promise<void>;
  /** A new polish vector holding the fast vector v (on the device). */
  fromFast(v: V): P;
  /** A new fast vector fl(scale·p) (on the device). */
  toFast(p: P, scale: number): V;
}

/** What {@link polishCi} returns: the polish result and its float64 check. */
export interface CiPolishOutcome {
  values: number[];
  /** Normalised float64 host vectors, one per requested root. */
  vectors: Float64Array[];
  /** Milliseconds of the polish's Davidson (hand-over included) and of the final check. */
  stages: { davidson: number; check: number };
  /** ‖H·v − E·v‖ per root, recomputed (in the polish precision) after the polish. */
  residualNorms: number[];
  /** Rayleigh quotients v·H·v per root (electronic). */
  rayleigh: number[];
  /** ⟨S²⟩ per root from the normalised vectors in the polish space, when `spinSquared` was given and answered. */
  s2?: number[];
  /** Milliseconds of that ⟨S²⟩ evaluation (part of the check stage). */
  spinMs?: number;
  result: EigenResult<unknown>;
  /** float32 matvecs of the correction equations. */
  correctionMatvecs: number;
  /**
   * Certified bounds 0 ≤ Eᵢ − λᵢ ≤ bound[i] (Eh; eigen/bounds.ts, from the last iteration's df64
   * residuals and the gap to the guard root) and how each root was accepted: 'bound' (≤ tol),
   * 'residual' (‖r‖ ≤ tol) or 'none'.
   */
  bounds: { bound: number[]; acceptedBy: ('bound' | 'residual' | 'none')[] };
}

/** Options of {@link polishCi}. */
export interface CiPolishOptions<V, P> {
  fastOp: LinearOperator<V>;
  fastSpace: VectorSpace<V, unknown>;
  /** The fast Ritz vectors (kSolve of them; released by the caller). */
  fastVectors: readonly V[];
  kSolve: number;
  nroots: number;
  diagonal: Float64Array;
  tol: number;
  maxIterations: number;
  onIteration: (info: EigenIterationInfo) => unknown;
  signal?: AbortSignal;
  device: CiDevicePolish<V, P>;
  operator: LinearOperator<P>;
  /**
   * ⟨S²⟩ of the final normalised vectors in the polish space (e.g. the device direct σ's
   * spinSquared: one pass, one readback), before they are released; undefined: the driver
   * computes ⟨S²⟩ from the host vectors.
   */
  spinSquared?: (vs: readonly P[]) => Promise<number[] | undefined>;
  /**
   * 'residual' (default): every wanted root to ‖r‖ ≤ tol. 'bound': a root is also accepted when
   * its certified energy bound (eigen/bounds.ts) is ≤ tol, so the corrections aim at
   * ‖r‖ ≈ √(tol·gap) instead of tol and often no correction runs (energies to tol, vectors less
   * converged).
   */
  accept?: 'residual' | 'bound';
}

/**
 * The correction equations' settings of the CI polish (host or device): each root's inner
 * tolerance tied to its residual against the target `tol` (a root already below it gets no
 * correction, so the polish ends when every wanted root passes), and no correction for the
 * guard roots; GMRES right-preconditioned by the diagonal (CI Hamiltonians are diagonally
 * dominant). A CI-like test case: one round of 14 float32 products per wanted root instead of
 * two rounds of 26 for every root (docs/guides/precision.md).
 */
export function polishCorrection(tol: number, nroots: number, diagonal: Float64Array): FastCorrectorOptions {
  return { targetResidual: tol, guardFrom: nroots, diagonal };
}

/**
 * The device polish's correction target when roots are accepted by the bound: a residual at
 * which ε² = Σ‖rᵢ‖² ≤ ¼·tol·gap over the nroots wanted roots, so ε²/gap ≤ tol with room for the
 * guard's own residual (gap = θ_guard − θ_{nroots−1}); never below the residual rule's tol.
 */
export function boundTarget(tol: number, nroots: number): (theta: readonly number[]) => number {
  return (theta) => {
    const gap = theta.length > nroots ? theta[nroots]! - theta[nroots - 1]! : 0;
    return gap > 0 && Number.isFinite(gap) ? Math.max(tol, 0.5 * Math.sqrt((tol * gap) / nroots)) : tol;
  };
}

/**
 * Davidson's per-root verdict for the CI polish with accept 'bound', and the float64 host solve's
 * default stop (./ci-solve.ts): the certified bound (ε²/gap plus a rounding allowance of
 * 64·u·‖H‖est) ≤ tol with ‖r‖ ≤ `residualFloor`, or the residual rule ‖r‖ ≤ tol; guard roots
 * never decide. The floor (default none) keeps the vectors usable and bounds the error when the
 * bound's assumption fails: whatever Davidson missed, an eigenvalue lies within ‖r‖ of θ. Its
 * report (bounds, how each root passes) is given in both modes; with `byBound` false (accept
 * 'residual') a root counts as accepted by the residual rule only, its bound is reported for
 * information. Used by the device polish (polishCi), the host float64 polish of ci.ts (u = 2⁻⁵³
 * there) and the float64 Davidson of ci-solve.ts.
 */
export function ciJudge(tol: number, nroots: number, unitRoundoff: number, byBound = true, residualFloor = Number.POSITIVE_INFINITY) {
  let normA = 0;
  const verdict = (theta: readonly number[], rn: readonly number[]) => {
    for (const t of theta) if (Number.isFinite(t)) normA = Math.max(normA, Math.abs(t));
    const b = ritzValueBounds(theta, rn, 64 * unitRoundoff * normA);
    const how = theta.map((_, i): 'bound' | 'residual' | 'none' => (i >= nroots ? 'none' : byBound && b.bound[i]! <= tol && rn[i]! <= residualFloor ? 'bound' : rn[i]! <= tol ? 'residual' : 'none'));
    return { bound: b.bound.slice(0, nroots), how };
  };
  return {
    accept: (theta: readonly number[], rn: readonly number[]) => verdict(theta, rn).how.map((h) => h !== 'none'),
    report: (theta: readonly number[], rn: readonly number[]) => {
      const v = verdict(theta, rn);
      return { bound: v.bound, acceptedBy: v.how.slice(0, nroots) };
    },
  };
}

/**
 * Jacobi–Davidson polish in the device space from the float32 Ritz vectors (handed over on the
 * device), then E = v·Hv and ‖Hv − Ev‖ per root in the same space, and the normalised vectors
 * read back once. Host memory: the nroots vectors at the end; no float64 H on the host.
 */
export async function polishCi<V, P>(o: CiPolishOptions<V, P>): Promise<CiPolishOutcome> {
  const { space } = o.device;
  const t0 = performance.now();
  const start = o.fastVectors.map((v) => o.device.fromFast(v));
  const bridge = spaceBridge(
    space,
    (p: P, s: number) => o.device.toFast(p, s),
    (v: V) => o.device.fromFast(v),
  );
  // roots settle on the certified bound (a looser residual than tol) or on the residual rule
  const byBound = o.accept === 'bound';
  const judge = ciJudge(o.tol, o.nroots, o.device.unitRoundoff ?? 2 ** -44, byBound);
  const jd = fastCorrector(o.fastOp, o.fastSpace, { ...polishCorrection(o.tol, o.nroots, o.diagonal), ...(byBound ? { targetResidualOf: boundTarget(o.tol, o.nroots) } : {}) }, bridge);
  const n = o.operator.rows;
  const result = await davidsonWith(o.operator, space, {
    k: o.kSolve,
    nConverge: o.nroots,
    diagonal: o.diagonal,
    initialVectors: start,
    corrector: jd.corrector as DavidsonCorrector<P>,
    residualTol: o.tol,
    maxIterations: o.maxIterations,
    maxSubspace: Math.min(n, 4 * o.kSolve + 8),
    name: 'jd-davidson',
    recomputeResiduals: false, // recomputed below from the normalised vectors
    ...(byBound ? { acceptRoots: judge.accept } : {}),
    onIteration: o.onIteration,
    ...(o.signal ? { signal: o.signal } : {}),
  });
  jd.dispose();
  for (const v of start) space.release(v);
  const t1 = performance.now();
  const bounds = judge.report(result.values, result.residualNorms);
  const check = await rayleighCheck(space, o.operator, result.vectors.slice(0, o.nroots), o.spinSquared);
  for (const v of result.vectors) space.release(v);
  const stages = { davidson: t1 - t0, check: performance.now() - t1 };
  return { values: result.values.slice(0, o.nroots), ...check, result: result as EigenResult<unknown>, correctionMatvecs: jd.stats.matvecs, bounds, stages };
}

/**
 * Per vector c: c ← c/‖c‖, E = c·Hc, ‖Hc − E·c‖, all in `space` with the scalars kept there
 * (one product per vector), then one scalar readback for all energies and residual norms and
 * one for the vectors as float64 (`toArrays` when the space has it, else one per vector); with
 * `spin`, ⟨S²⟩ of the normalised vectors in the same space first (its own readback).
 */
export async function rayleighCheck<P, S>(
  space: VectorSpace<P, S> & { toArrays?(vs: readonly P[]): Promise<Float64Array[]> },
  op: LinearOperator<P>,
  vs: readonly P[],
  spin?: (vs: readonly P[]) => Promise<number[] | undefined>,
): Promise<{ vectors: Float64Array[]; residualNorms: number[]; rayleigh: number[]; s2?: number[]; spinMs?: number }> {
  const temps: S[] = [];
  const keep = (x: S) => {
    temps.push(x);
    return x;
  };
  const c = vs.map((v) => {
    const u = space.create(op.rows);
    space.axpby(keep(space.div(1, keep(space.norm2(v)))), v, 0, u); // c = v/‖v‖
    return u;
  });
  const hc = c.map((u) => {
    const y = space.create(op.rows);
    op.apply(u, y);
    return y;
  });
  const e = c.map((u, j) => keep(space.dot(u, hc[j]!)));
  hc.forEach((y, j) => { space.axpby(keep(space.neg(e[j]!)), c[j]!, 1, y); }); // hc ← Hc − E·c
  const rn = hc.map((y) => keep(space.norm2(y)));
  const got = await space.readMany([...e, ...rn]);
  for (const x of temps) space.release(x); // device scalar slots back to the pool
  const t = performance.now();
  // a failed device ⟨S²⟩ leaves it to the driver (from the host vectors), never the energies
  const s2 = spin ? await spin(c).catch(() => undefined) : undefined;
  const spinMs = performance.now() - t;
  const vectors = space.toArrays ? await space.toArrays(c) : await Promise.all(c.map((u) => space.toArray(u)));
  for (const u of [...c, ...hc]) space.release(u);
  return { vectors, residualNorms: got.slice(vs.length), rayleigh: got.slice(0, vs.length), ...(s2 ? { s2, spinMs } : {}) };
}
