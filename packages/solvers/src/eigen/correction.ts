/**
 * Jacobi–Davidson corrections computed in a fast (float32, GPU) space for a float64 Davidson
 * running on the host: for each unconverged root, solve the correction equation
 *
 *     (I − XXᵀ)(A − θᵢI)(I − XXᵀ)·t = −rᵢ/‖rᵢ‖,   t ⟂ X
 *
 * (Sleijpen & van der Vorst 1996; X = all current Ritz vectors, which keeps clustered and
 * degenerate roots apart) by a few GMRES steps with the fast operator. The residual is scaled
 * to unit norm before it goes to float32, so float32 only limits the relative accuracy of the
 * correction (≈ the inner tolerance), never the attainable accuracy of the float64 outer loop.
 *
 * Memory traffic per correction (m inner steps, k Ritz vectors, n rows): m fast matvecs, the
 * left projector (4·k dots and axpys) once per step (the right one is the identity on GMRES's
 * vectors, see projectedShifted), GMRES's own orthogonalisation; uploads of X (k vectors) and
 * rᵢ, one download of t.
 * @module
 */
import type { LinearOperator, VectorSpace } from '@gpusparse/formats';
import { gmres } from '../krylov/gmres';
import type { DavidsonCorrector } from './davidson';
import { projectOutTwice } from './ortho';
import { returnedVoid } from '../common/operator-check';

/** Work done by a {@link fastCorrector} so far. */
export interface CorrectorStats {
  /** Fast-space operator applications (inner GMRES steps and their residual checks). */
  matvecs: number;
  /** Correction equations solved. */
  solves: number;
  /** Fast-space synchronisations (GMRES checks, uploads are not counted). */
  readbacks: number;
}

/** Options of {@link fastCorrector}. */
export interface FastCorrectorOptions {
  /** Most inner GMRES steps per correction (default 25, one restart cycle; 40 with `targetResidual`). */
  innerIterations?: number;
  /**
   * Relative residual of the inner solve (default 1e-3, reachable in float32; 1e-4 with
   * `targetResidual`, so that one correction round takes a 1e-4 float32 residual past 1e-8). With
   * `targetResidual` this is the tightest inner tolerance; each root's own is looser when its
   * outer residual is already close to the target.
   */
  innerRtol?: number;
  /**
   * The outer loop's residual target ‖A·v − θ·v‖ (absolute). When given, root i's inner solve
   * stops at max(innerRtol, 0.1·targetResidual/‖rᵢ‖) (at most 0.5): one Jacobi–Davidson step
   * shrinks the residual by about the inner tolerance, so a root needs no more accuracy than
   * that to pass next iteration, and a root near the target costs a few steps, not 25. A root
   * whose residual is already ≤ targetResidual gets no correction: when no root gets one,
   * Davidson stops with the residual rule met (the energy-change rule is not waited for; the
   * energy's error is then ≲ ‖r‖²/gap, far below ‖r‖).
   */
  targetResidual?: number;
  /**
   * The target as a function of the current Ritz values (all roots, guards included), replacing
   * `targetResidual` per call: e.g. the residual at which a certified eigenvalue bound
   * (eigen/bounds.ts) meets its tolerance, √(tol·gap), far looser than a 1e-8 residual rule.
   */
  targetResidualOf?: (theta: readonly number[]) => number;
  /**
   * Whether a root already at or below the target gets no correction (default true, the CI
   * polish's rule). false: it still gets one, at the loosest inner tolerance (0.5: one GMRES
   * check), so the outer loop never runs out of corrections while its own acceptance rule
   * (e.g. eigsMixed's bound over all roots' residuals together) is not met yet.
   */
  skipBelowTarget?: boolean;
  /**
   * Roots with index ≥ guardFrom are guard roots (Davidson's nConverge): they get no correction
   * equation (the subspace keeps their Ritz vectors; they only keep the wanted roots apart),
   * which saves a whole inner solve per guard root and iteration. Default: none.
   */
  guardFrom?: number;
  /**
   * Inner GMRES steps between two convergence checks. GMRES's own default (32) exceeds the 25
   * inner steps, so every solve ran all of them whatever its tolerance; a check costs one small
   * readback (the Hessenberg column), a step one product. Default: 4, except that after a solve
   * that ran all its inner steps without meeting its tolerance, the following solves at the
   * floor tolerance check only at their end until one converges (see {@link checksFor}).
   */
  checkEvery?: number;
  /**
   * Gram–Schmidt of the inner GMRES (default 'cgs2': two passes per step, orthogonal to working
   * precision). 'cgs': one pass — where the fast space offers a device basis block (WebGPU) a
   * step is the product plus 4 dispatches and reads the basis twice, not four times; GMRES
   * recomputes the true residual at the end of the cycle, and a correction needs a relative
   * accuracy of about the inner tolerance only (1e-3), far above what a single pass can lose.
   */
  orthogonalization?: 'cgs2' | 'cgs';
  /**
   * The operator's main diagonal (float64). When given, the inner GMRES is right-preconditioned
   * by (I − XXᵀ)(D − θ + 10⁻³)⁻¹ (Davidson's level-shifted, clamped diagonal, then back into
   * X⊥): on diagonally dominant matrices (CI Hamiltonians) far fewer inner steps per solve.
   */
  diagonal?: Float64Array;
}

/**
 * Inner GMRES steps between checks for the next correction solve (`checkEvery` not given): 4,
 * or only at the end (`inner`) while the last solve ran all `inner` steps without meeting its
 * tolerance and this one aims at the floor tolerance too — it would not stop early either, and
 * each check is a readback with the GPU idle (eigsMixed on the H100's poisson3d 100×110×120:
 * 22 solves of 25 steps, none converged, 7 checks each ≈ 0.8 ms apiece). A root whose tolerance
 * is loosened near its target, or any solve after one that converged, checks every 4 steps.
 */
export function checksFor(inner: number, lastFailedFull: boolean, tol: number, floor: number): number {
  return lastFailedFull && tol <= floor ? inner : 4;
}

/** Inner relative tolerance of one correction: loose when ‖r‖ is near the target (see options). */
export function innerTolerance(rtol: number, rn: number, targetResidual: number | undefined): number {
  if (targetResidual === undefined) return rtol;
  return Math.min(0.5, Math.max(rtol, (0.1 * targetResidual) / rn));
}

/**
 * y = (I − XXᵀ)(A − θI)(I − XXᵀ)·u on the fast space (the Jacobi–Davidson operator), for inputs
 * u ⟂ X: GMRES's right-hand side is projected (b ⟂ X) and every Krylov vector (and, with the
 * preconditioner, every M⁻¹·v, projected there) is a combination of the operator's projected
 * outputs, so the right projector is the identity on them up to rounding and is not applied —
 * an X-component ε of u (rounding, ≈ u₃₂) changes y by (I − XXᵀ)·R·ε only (R = AX − XΘ, the
 * outer residuals). Saves a copy and a projectOutTwice per product (s11: on the H100's
 * poisson3d polish, 572 correction products; lavapipe: 28 vector passes and 7 dispatches each).
 * Cost per apply: one matvec, one axpby, 2·|X| dots and axpys (the left projector).
 */
function projectedShifted<V, S>(op: LinearOperator<V>, space: VectorSpace<V, S>, x: readonly V[], theta: number): LinearOperator<V> & { dispose(): void } {
  const n = op.rows;
  const apply = (u: V, y: V): void => {
    returnedVoid(op.apply(u, y), 'davidson correction', 'apply', y); // y = A·u
    space.axpby(-theta, u, 1, y); // y ← y − θ·u
    projectOutTwice(space, x, y); // y ← (I − XXᵀ)·y
  };
  return {
    rows: n,
    cols: n,
    label: `jd(${op.label ?? 'A'} − ${theta.toPrecision(6)})`,
    apply,
    applyScaled(alpha, u, beta, y) {
      const t = space.create(n);
      apply(u, t);
      space.axpby(alpha, t, beta, y); // y = alpha·(JD operator)·u + beta·y
      space.release(t);
    },
    dispose() {},
  };
}

/**
 * M⁻¹·u = (I − XXᵀ)·(D − θ + shift)⁻¹·u on the fast space (u ∈ X⊥ in GMRES's Krylov space).
 * One shiftedDivide kernel where the space has it (d uploaded once), else a host-built inverse.
 */
function diagonalPreconditioner<V, S>(space: VectorSpace<V, S>, d: { host: Float64Array; fast?: V }, x: readonly V[], theta: number): LinearOperator<V> & { dispose(): void } {
  const n = d.host.length;
  const shift = 1e-3;
  const clamp = 1e-8;
  let dinv: V | undefined;
  if (!space.shiftedDivide) {
    const inv = new Float64Array(n);
    for (let j = 0; j < n; j++) {
      let den = d.host[j]! - theta + shift;
      if (Math.abs(den) < clamp) den = den < 0 ? -clamp : clamp;
      inv[j] = 1 / den;
    }
    dinv = space.fromArray(inv);
  } else d.fast ??= space.fromArray(d.host);
  const apply = (u: V, y: V): void => {
    if (dinv) space.multiply(u, dinv, y);
    else space.shiftedDivide!(u, d.fast!, theta - shift, clamp, y); // y = u ∘ (d − θ + shift)⁻¹
    projectOutTwice(space, x, y);
  };
  return {
    rows: n,
    cols: n,
    label: `diag-jd(${theta.toPrecision(6)})`,
    apply,
    applyScaled(alpha, u, beta, y) {
      const t = space.create(n);
      apply(u, t);
      space.axpby(alpha, t, beta, y);
      space.release(t);
    },
    dispose() {
      if (dinv) space.release(dinv);
    },
  };
}

/**
 * How corrections move between the outer (float64-accurate) space P and the fast space V. The
 * default moves Float64Array host vectors through fromArray / toArray; a device pair (df64 and
 * float32 on one GPU, see {@link spaceBridge}) hands over without leaving the device.
 */
export interface CorrectorBridge<P, V> {
  /** ‖p‖₂ of each vector (one synchronisation for all). */
  norms(ps: readonly P[]): Promise<number[]>;
  /** A new fast vector fl(scale·p). */
  toFast(p: P, scale: number): V;
  /** A new outer vector holding the fast vector v, or undefined when v is not finite. */
  fromFast(v: V): Promise<P | undefined>;
}

/** The host bridge: Float64Array ↔ the fast space by upload and readback. */
export function hostBridge<V, S>(fastSpace: VectorSpace<V, S>): CorrectorBridge<Float64Array, V> {
  return {
    norms: async (ps) =>
      ps.map((r) => {
        let rn = 0;
        for (let i = 0; i < r.length; i++) rn += r[i]! * r[i]!;
        return Math.sqrt(rn);
      }),
    toFast(p, scale) {
      const scaled = new Float64Array(p.length);
      for (let i = 0; i < p.length; i++) scaled[i] = scale * p[i]!;
      return fastSpace.fromArray(scaled); // typed: a JS array of 10^6 numbers cost ~0.1 s per correction
    },
    async fromFast(v) {
      const t = await fastSpace.toArray(v);
      return t.every(Number.isFinite) ? t : undefined;
    },
  };
}

/**
 * A bridge between an outer space P and the fast space V given the two hand-over functions
 * (e.g. Df64VectorSpace's fromGpu / toNewGpu); norms and the finite check in the outer space.
 */
export function spaceBridge<P, S, V>(outer: VectorSpace<P, S>, toFast: (p: P, scale: number) => V, fromFast: (v: V) => P): CorrectorBridge<P, V> {
  return {
    norms: (ps) => outer.readMany(ps.map((p) => outer.norm2(p))),
    toFast,
    async fromFast(v) {
      const p = fromFast(v);
      if (Number.isFinite(await outer.read(outer.norm2(p)))) return p;
      outer.release(p);
      return undefined;
    },
  };
}

/**
 * A {@link DavidsonCorrector} for a float64 Davidson (on the host, or in `bridge.space` on the
 * device) whose corrections come from the Jacobi–Davidson correction equation solved by GMRES
 * in (fastOp, fastSpace).
 * @example
 * const jd = fastCorrector(gpuOp, gpuSpace);
 * await davidsonWith(new HostVectorSpace(), hostOp, { k: 4, initialVectors: x0, corrector: jd.corrector });
 * jd.stats.matvecs; // fast-space matvecs spent on corrections
 */
export function fastCorrector<V, S>(fastOp: LinearOperator<V>, fastSpace: VectorSpace<V, S>, opts?: FastCorrectorOptions): { corrector: DavidsonCorrector<Float64Array>; stats: CorrectorStats; dispose(): void };
export function fastCorrector<V, S, P>(fastOp: LinearOperator<V>, fastSpace: VectorSpace<V, S>, opts: FastCorrectorOptions, bridge: CorrectorBridge<P, V>): { corrector: DavidsonCorrector<P>; stats: CorrectorStats; dispose(): void };
export function fastCorrector<V, S, P>(
  fastOp: LinearOperator<V>,
  fastSpace: VectorSpace<V, S>,
  opts: FastCorrectorOptions = {},
  bridge?: CorrectorBridge<P, V>,
): { corrector: DavidsonCorrector<P>; stats: CorrectorStats; dispose(): void } {
  const stats: CorrectorStats = { matvecs: 0, solves: 0, readbacks: 0 };
  const targeted = opts.targetResidual !== undefined || opts.targetResidualOf !== undefined;
  const inner = opts.innerIterations ?? (targeted ? 40 : 25);
  const rtol = opts.innerRtol ?? (targeted ? 1e-4 : 1e-3);
  const br = bridge ?? (hostBridge(fastSpace) as unknown as CorrectorBridge<P, V>);
  const guardFrom = opts.guardFrom ?? Number.POSITIVE_INFINITY;
  let lastFailedFull = false; // the last solve ran every inner step without converging ({@link checksFor})
  const diag = opts.diagonal ? { host: opts.diagonal } as { host: Float64Array; fast?: V } : undefined;
  const corrector: DavidsonCorrector<P> = async ({ residuals, roots, theta, ritzVectors }) => {
    const rns = await br.norms(residuals);
    const target = opts.targetResidualOf ? opts.targetResidualOf(theta) : opts.targetResidual;
    // guard roots, roots already below the target and zero or non-finite residuals: no solve
    const skip = opts.skipBelowTarget ?? true;
    const todo = rns.map((rn, j) => (rn > 0 && Number.isFinite(rn) && roots[j]! < guardFrom && !(skip && target !== undefined && rn <= target) ? j : -1)).filter((j) => j >= 0);
    const out: P[] = [];
    if (todo.length === 0) return out;
    const x = ritzVectors().map((v) => br.toFast(v, 1)); // X in the fast space
    for (const j of todo) {
      const rn = rns[j]!;
      const b = br.toFast(residuals[j]!, -1 / rn); // b = −r/‖r‖
      projectOutTwice(fastSpace, x, b); // b ⟂ X
      const a = projectedShifted(fastOp, fastSpace, x, theta[roots[j]!]!);
      const m = diag ? diagonalPreconditioner(fastSpace, diag, x, theta[roots[j]!]!) : undefined;
      const tol = innerTolerance(rtol, rn, target);
      const checkEvery = opts.checkEvery ?? checksFor(inner, lastFailedFull, tol, rtol);
      const res = await gmres(fastSpace, a, b, { rtol: tol, restart: inner, maxIterations: inner, checkEvery, ...(opts.orthogonalization ? { orthogonalization: opts.orthogonalization } : {}), ...(m ? { preconditioner: m } : {}) });
      m?.dispose();
      lastFailedFull = res.reason === 'max-iterations' && res.iterations >= inner;
      stats.matvecs += res.stats.matvecs;
      stats.readbacks += res.stats.readbacks + 1;
      stats.solves++;
      // t ≈ (A − θI)⁻¹ on X⊥ applied to −r/‖r‖ (GMRES checks its residual: a finite x)
      if (res.reason !== 'non-finite') {
        const t = await br.fromFast(res.x);
        if (t !== undefined) out.push(t);
      }
      fastSpace.release(res.x);
      fastSpace.release(b);
      a.dispose();
    }
    for (const v of x) fastSpace.release(v);
    return out;
  };
  // the diagonal's fast copy lives as long as the corrector
  const dispose = () => {
    if (diag?.fast !== undefined) fastSpace.release(diag.fast);
    if (diag) delete diag.fast;
  };
  return { corrector, stats, dispose };
}
