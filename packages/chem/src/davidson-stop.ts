/**
 * Stop rules for the CI Davidson besides the residual rule (`CiOptions.tol`): the energy-change
 * rule of OpenMolcas-style CASCI runs (`CiOptions.energyChange`, `gpusparse ci --energy-change`).
 * @module
 */
import { InvalidParameterError } from '@gpusparse/formats';

/**
 * The energy-change rule as a Davidson `acceptRoots` test: a root counts as converged when its
 * Ritz value moved by less than `energyChange` Eh since the previous iteration and its residual
 * norm is at most √energyChange (a loose guard against a stalled subspace, where the energy stops
 * moving far from an eigenvalue; 1e-4 at 1e-8).
 *
 * What it guarantees: the Ritz value θ is an upper bound of an eigenvalue (Davidson is a
 * Rayleigh–Ritz method) and some eigenvalue λ lies within ‖r‖ ≤ √energyChange of θ. What it does
 * not: that θ − λ ≤ energyChange. The error is ≈ ‖r‖²/δ (δ the gap to the next eigenvalue of the
 * same symmetry, Kato–Temple), which is below energyChange only when ‖r‖ ≤ √(energyChange·δ);
 * a small energy change between two iterations is evidence, not a bound. The residual rule
 * (‖r‖ ≤ tol) is what bounds the error by tol without knowing δ.
 * @example davidson(space, op, { k: 1, diagonal: d, acceptRoots: energyChangeAccept(1e-8) });
 */
export function energyChangeAccept(energyChange: number): (theta: readonly number[], residualNorms: readonly number[], previous: readonly number[] | undefined) => boolean[] {
  if (!(Number.isFinite(energyChange) && energyChange > 0 && energyChange < 1)) throw new InvalidParameterError('energyChange', 'a number in (0, 1) Eh', energyChange);
  const guard = Math.sqrt(energyChange);
  return (theta, residualNorms, previous) =>
    theta.map((t, i) => previous !== undefined && previous[i] !== undefined && Math.abs(t - previous[i]!) < energyChange && residualNorms[i]! <= guard);
}
