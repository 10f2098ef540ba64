/**
 * The outer loop of {@link refinedSolve} with inner method 'cg' (reliable updates, the default):
 * one CG recurrence ({@link reliableCg}) whose residual replacements are the outer steps.
 * @module
 */
import type { StopReason } from '../common/result';
import type { OuterState } from './host-refinement';
import { type ReliableCgHooks, type ReliableCgInput, reliableCg } from './reliable-cg';
import { type Book, RELIABLE_CG_CHECK_EVERY, RELIABLE_CG_DELTA, RELIABLE_CG_LAG, type RefinedSolveOptions } from './refined-types';
import { InvalidParameterError } from '@gpusparse/formats';

/** CG with reliable updates ({@link reliableCg}): one recurrence, the residual replaced in the outer precision. */
export async function reliableLoop<V, S>(o: RefinedSolveOptions<V, S>, state: OuterState<V>, res: Book, tol: number): Promise<{ reason: StopReason; rn: number; detail?: string }> {
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

