/**
 * Restarted refinement (the outer loop of {@link refinedSolve} for every inner method but
 * reliable CG): one independent correction solve per outer step, with its tolerance and the
 * stop rules (converged, non-finite, stagnation, limit, callback).
 * @module
 */
import type { VectorSpace } from '@gpusparse/formats';
import type { SolveResult, StopReason } from '../common/result';
import type { cg } from '../krylov/cg';
import type { GmresOptions } from '../krylov/gmres';
import type { OuterState } from './host-refinement';
import type { Book, InnerSolveOptions, RefinedSolveOptions } from './refined-types';

export type Solver = typeof cg;

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

/** The outer iteration: correction solves until the residual passes `tol` or a stop rule fires. */
export async function outerLoop<V, S>(
  o: RefinedSolveOptions<V, S>,
  state: OuterState<V>,
  res: Book,
  /** resume: go on from the state's current x (after reliable CG), counting outer steps on. */
  c: { solver: Solver; tol: number; resume?: boolean },
): Promise<{ reason: StopReason; rn: number; detail?: string }> {
  const space = o.innerSpace;
  const maxOuter = o.maxOuterIterations ?? 30;
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
      const inner = await correction(o, state, res, rs, c, rn);
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
      const verdict = await o.onOuterIteration?.({ outer, residual: rn, relativeResidual: rn / res.bNorm, innerIterations: inner.iterations });
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

/** One correction solve A·d = r/‖r‖ (into the caller's rs) with its tolerance; its counts go into res. */
async function correction<V, S>(o: RefinedSolveOptions<V, S>, state: OuterState<V>, res: Book, rs: V, c: { solver: Solver; tol: number }, rn: number): Promise<SolveResult<V>> {
  const { method: _m, ...rest } = o.inner ?? {};
  // correction equation A·d = r/‖r‖, scaled to unit norm so float32 neither under- nor overflows
  state.correctionRhs(1 / rn, rs);
  const inner = await c.solver(o.innerSpace as VectorSpace<V, unknown>, o.innerOperator, rs, {
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
  return inner;
}
