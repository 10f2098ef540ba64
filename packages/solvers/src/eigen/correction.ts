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
 * projector (4·k dots and axpys) twice per step, GMRES's own orthogonalisation; uploads of X
 * (k vectors) and rᵢ, one download of t.
 * @module
 */
import type { LinearOperator, VectorSpace } from '@gpusparse/formats';
import { gmres } from '../krylov/gmres';
import type { DavidsonCorrector } from './davidson';
import { projectOutTwice } from './ortho';

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
  /** Most inner GMRES steps per correction (default 25, one restart cycle). */
  innerIterations?: number;
  /** Relative residual of the inner solve (default 1e-3, reachable in float32). */
  innerRtol?: number;
}

/**
 * y = (I − XXᵀ)(A − θI)(I − XXᵀ)·x on the fast space (the Jacobi–Davidson operator).
 * Cost per apply: one matvec, 4·|X| dots and axpys.
 */
function projectedShifted<V, S>(op: LinearOperator<V>, space: VectorSpace<V, S>, x: readonly V[], theta: number): LinearOperator<V> & { dispose(): void } {
  const n = op.rows;
  let tmp: V | undefined;
  const apply = (u: V, y: V): void => {
    const w = (tmp ??= space.create(n));
    space.copy(u, w);
    projectOutTwice(space, x, w); // w = (I − XXᵀ)·u
    op.apply(w, y); // y = A·w
    space.axpby(-theta, w, 1, y); // y ← y − θ·w
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
    dispose() {
      if (tmp) space.release(tmp);
      tmp = undefined;
    },
  };
}

/**
 * A {@link DavidsonCorrector} for a float64 host Davidson whose corrections come from the
 * Jacobi–Davidson correction equation solved by GMRES in (fastOp, fastSpace).
 * @example
 * const jd = fastCorrector(gpuOp, gpuSpace);
 * await davidsonWith(new HostVectorSpace(), hostOp, { k: 4, initialVectors: x0, corrector: jd.corrector });
 * jd.stats.matvecs; // fast-space matvecs spent on corrections
 */
export function fastCorrector<V, S>(
  fastOp: LinearOperator<V>,
  fastSpace: VectorSpace<V, S>,
  opts: FastCorrectorOptions = {},
): { corrector: DavidsonCorrector<Float64Array>; stats: CorrectorStats } {
  const stats: CorrectorStats = { matvecs: 0, solves: 0, readbacks: 0 };
  const inner = opts.innerIterations ?? 25;
  const rtol = opts.innerRtol ?? 1e-3;
  const corrector: DavidsonCorrector<Float64Array> = async ({ residuals, roots, theta, ritzVectors }) => {
    const x = ritzVectors().map((v) => fastSpace.fromArray(v)); // X in the fast space
    const out: Float64Array[] = [];
    for (let j = 0; j < residuals.length; j++) {
      const r = residuals[j]!;
      let rn = 0;
      for (let i = 0; i < r.length; i++) rn += r[i]! * r[i]!;
      rn = Math.sqrt(rn);
      if (!(rn > 0) || !Number.isFinite(rn)) continue;
      const scaled = new Float64Array(r.length);
      for (let i = 0; i < r.length; i++) scaled[i] = -r[i]! / rn;
      const b = fastSpace.fromArray(scaled); // b = −r/‖r‖ (typed: a JS array of 10^6 numbers cost ~0.1 s per correction)
      projectOutTwice(fastSpace, x, b); // b ⟂ X
      const a = projectedShifted(fastOp, fastSpace, x, theta[roots[j]!]!);
      const res = await gmres(fastSpace, a, b, { rtol, restart: inner, maxIterations: inner });
      stats.matvecs += res.stats.matvecs;
      stats.readbacks += res.stats.readbacks + 1;
      stats.solves++;
      if (res.reason !== 'non-finite') {
        const t = await fastSpace.toArray(res.x); // t ≈ (A − θI)⁻¹ on X⊥ applied to −r/‖r‖
        if (t.every(Number.isFinite)) out.push(t);
      }
      fastSpace.release(res.x);
      fastSpace.release(b);
      a.dispose();
    }
    for (const v of x) fastSpace.release(v);
    return out;
  };
  return { corrector, stats };
}
