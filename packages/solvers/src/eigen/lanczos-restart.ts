/**
 * Thick restart of Lanczos (Wu & Simon 2000) and the schedule of the Ritz estimates between
 * restarts. A restart keeps nKeep Ritz vectors y_i = Q·s_i and continues with q_{m+1}; H becomes
 * diag(θ) with the arrow β·s_i(m). On the one-pass host path it keeps fewer vectors than Wu and
 * Simon's half (k + 1 plus one per nearly converged wanted pair, ARPACK's rule): restarts
 * recombine fewer vectors and the basis the steps orthogonalise against is smaller on average
 * (k = 4, SiH4 / ExaSP2_trpcage_8K: vector passes 15 391 / 22 737 → 9 930 / 13 423, products
 * 181 / 279 → 175 / 259; 2-D Poisson 200²: products 1 906 with k + 4 → 1 100).
 * @module
 */
import { readAndRelease } from './common';
import { zeros } from './dense';
import { type KrylovState, type LanczosCtx, wantedOrder } from './lanczos-step';
import { type EstimatePoint, estimateGap } from './ritz-estimates';

/**
 * Ritz vectors kept at a thick restart: in a multiplicity-check run on the one-pass host path 5,
 * whatever `keep` says (one wanted pair, basis CHECK_BASIS; it stops on ./lanczos-check
 * CopyBound — see CHECK_BASIS there); else the given `keep`; on the one-pass host path k + 1
 * plus one per wanted pair whose residual estimate is within 1000× the threshold
 * (`nearlyConverged`: as ARPACK widens its kept space by the converged count, so the nearly
 * converged pairs do not stall the others); elsewhere (the batched CGS2 path: GPU, float32, check
 * runs included) half the basis.
 */
export function keepCount<V, S>(c: LanczosCtx<V, S>, nWant: number, mMax: number, nearlyConverged: number, check = false): number {
  const wanted = check && c.icgs ? nWant + 4 : (c.keep ?? (c.icgs ? nWant + 1 + nearlyConverged : nWant + Math.floor((mMax - nWant) / 2)));
  return Math.max(nWant, Math.min(mMax - 1, wanted));
}

/**
 * When the next Ritz estimates are due (one-pass host path without `onIteration`): every step
 * near convergence, at most every 4th far from it (./ritz-estimates estimateGap; ExaSP2_trpcage_8K,
 * k = 4: 73 estimates in 251 steps, the same 259 products). Disabled, every batch is estimated.
 */
export class EstimateSchedule {
  private next = 0;
  private last: EstimatePoint | undefined;

  constructor(private readonly enabled: boolean) {}

  /** Whether the estimates of the step ending at `iteration` may be skipped. */
  skips(iteration: number): boolean {
    return iteration < this.next;
  }

  /** Plan the next estimate from the worst residual estimate against the threshold aimed at. */
  update(iteration: number, est: readonly number[], nWant: number, aim: number): void {
    if (!this.enabled) return;
    const now = { iteration, logRatio: est.length >= nWant ? Math.log(Math.max(...est) / aim) : 0 };
    this.next = iteration + estimateGap(now, this.last);
    this.last = now;
  }
}

/**
 * Thick restart (Wu–Simon): keep nKeep Ritz vectors of the full basis (m = mMax vectors), continue
 * with `next` = q_{m+1} (β = betaEff); H becomes diag(θ) with the arrow β·s_i(m), and the Ritz
 * pairs in the new basis are θ_r with unit coefficient vectors e_r. Returns the kept coefficient
 * vectors s_i (for ./lanczos-check CopyBound), undefined when H's eigenvectors are not finite
 * (nothing changed then).
 */
export async function thickRestart<V, S>(c: LanczosCtx<V, S>, st: KrylovState<V, S>, nWant: number, nearlyConverged: number, check: boolean, next: V, betaEff: number, locked: readonly V[]): Promise<number[][] | undefined> {
  const e = st.fullEig();
  if (!e) return undefined;
  const m = st.mMax;
  const order = wantedOrder(e.values, c.sign);
  const nKeep = keepCount(c, nWant, m, nearlyConverged, check);
  const keep = order.slice(0, nKeep);
  const y = st.combine(keep.map((i) => e.vectors[i]!)); // y_i = Q·s_i (from the basis block where there is one)
  for (const v of st.q) c.space.release(v);
  st.q = [...y, next];
  // the bound of the old basis passes to y = Q·S; measured, it is usually far lower
  // (with locked vectors, of [L Q] — a check run's steps then take one pass as the first run's do:
  // ExaSP2_trpcage_8K, k = 4, the check's vector passes 7 610 → 5 239, the same 107 products)
  if (c.icgs) await remeasureWithLocked(c, c.icgs, locked, st.q);
  const h = zeros(m);
  keep.forEach((i, r) => {
    h[r]![r] = e.values[i]!; // H = diag(θ) ...
    const s = betaEff * e.vectors[i]![m - 1]!; // ... with arrow β·s_i(m)
    h[r]![nKeep] = s;
    h[nKeep]![r] = s;
  });
  st.h = h;
  // Ritz pairs in the new basis: θ_r with unit coefficient vectors e_r (ascending θ)
  const kept = keep.map((i, r) => ({ theta: e.values[i]!, r })).sort((a, b) => a.theta - b.theta);
  st.eig = { values: kept.map((x) => x.theta), vectors: kept.map((x) => Array.from({ length: nKeep }, (_, t) => (t === x.r ? 1 : 0))) };
  st.hm = undefined;
  return keep.map((i) => e.vectors[i]!);
}

/**
 * The measured loss of the basis [L Q] after a thick restart: Q's own Gram matrix (IcgsBasis
 * remeasure) and the cross terms LᵀQ (|L|·|Q| dots, one read), not LᵀL — the locked vectors are
 * taken as orthonormal, as a run's start assumes (IcgsBasis reset): |L|·|Q| + |Q|²/2 dots rather
 * than (|L| + |Q|)²/2, which matters when many pairs are locked.
 */
async function remeasureWithLocked<V, S>(c: LanczosCtx<V, S>, icgs: NonNullable<LanczosCtx<V, S>['icgs']>, locked: readonly V[], q: readonly V[]): Promise<void> {
  const own = await icgs.remeasure(q);
  if (locked.length === 0) return;
  const cross = await readAndRelease(c.space, q.flatMap((v) => c.space.multiDot(locked, v)), c.run.stats);
  const worst = cross.reduce((m, x) => Math.max(m, Math.abs(x)), 0);
  icgs.reset(Number.isFinite(worst) ? Math.max(own, worst + (locked.length + q.length) * c.eps) : Number.POSITIVE_INFINITY);
}
