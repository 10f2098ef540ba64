/**
 * A-posteriori error bounds for the lowest Ritz values of a symmetric operator from residual
 * norms alone (derivation: docs/guides/precision.md, "Accepting eigenvalues by a bound").
 * Host-only, O(m³) for m Ritz values (a few): no device work, no products.
 *
 * Setting: orthonormal Ritz vectors x₀..x_{m−1} of one Rayleigh–Ritz step, ascending Ritz values
 * θ₀ ≤ … ≤ θ_{m−1}, residual norms rⱼ = ‖A·xⱼ − θⱼ·xⱼ‖. Upper side (Poincaré): λⱼ ≤ θⱼ. Lower
 * side (Lehmann 1949, in Temple quotient form): for a cut c and σ = θ_c − r_c, if A has exactly c
 * eigenvalues below σ (σ ≤ λ_c: the guard value θ_c approximates λ_c and no eigenvalue was
 * missed — the assumption of every Krylov eigensolver), then for S = {j, …, c−1} and
 * ε² = Σ_{l∈S} r_l² (‖R_S‖₂² ≤ ε²), τ_l = (θ_l − σ)/((θ_l − σ)² + ε²) and
 *
 *     λⱼ ≥ σ + 1/max_{l∈S} τ_l   (= θⱼ − ε²/(σ − θⱼ) when every σ − θ_l > ε).
 *
 * Clustered or degenerate wanted roots do not spoil it: only the gap σ − θⱼ to the first
 * unwanted eigenvalue enters. The top Ritz value(s) only serve as cuts (guards).
 * @module
 */

/** Per-root bounds of {@link ritzValueBounds}. */
export interface RitzBounds {
  /** 0 ≤ θᵢ − λᵢ ≤ bound[i] (up to `allowance`); Infinity where no cut certifies root i. */
  bound: number[];
  /** The cut (index of the guard Ritz value) that gave each bound; −1 when none did. */
  cut: number[];
}

/**
 * Bounds on θᵢ − λᵢ for the lowest eigenvalues λ₀ ≤ λ₁ ≤ … of a symmetric operator, from
 * ascending Ritz values θ and their residual norms r (length m), taking for each root the best
 * cut c > i (see the module notes; the top Ritz value is never certified). `allowance` (≥ 0)
 * is added to every residual and to every bound: the rounding of the computed residuals and
 * Ritz values (e.g. 64·u·‖A‖ with u the unit roundoff of the space they were computed in).
 * @example
 * ritzValueBounds([1, 1, 3], [1e-6, 1e-6, 1e-3]).bound; // [≈1e-12, ≈1e-12, Infinity]
 */
export function ritzValueBounds(theta: readonly number[], rho: readonly number[], allowance = 0): RitzBounds {
  const m = theta.length;
  const r = rho.map((x) => (Number.isFinite(x) ? Math.abs(x) + allowance : Number.POSITIVE_INFINITY));
  const bound = new Array<number>(m).fill(Number.POSITIVE_INFINITY);
  const cut = new Array<number>(m).fill(-1);
  const sorted = theta.length === rho.length && theta.every((t, i) => Number.isFinite(t) && (i === 0 || t >= theta[i - 1]!));
  if (!sorted) return { bound, cut };
  for (let c = 1; c < m; c++) {
    const sigma = theta[c]! - r[c]!; // ≤ λ_c by assumption
    let eps2 = 0;
    for (let j = c - 1; j >= 0; j--) {
      eps2 += r[j]! * r[j]!;
      if (!(theta[j]! < sigma) || !Number.isFinite(eps2)) break; // a root at or above σ: no lower cut for it or below
      // the largest τ_l over S = {j..c−1} with this ε² (ε² grew, so recompute all of S)
      let tauMax = Number.NEGATIVE_INFINITY;
      let best = j;
      for (let l = j; l < c; l++) {
        const s = theta[l]! - sigma;
        const tau = s / (s * s + eps2);
        if (tau > tauMax) {
          tauMax = tau;
          best = l;
        }
      }
      if (!(tauMax < 0)) break;
      // λ_j ≥ σ + 1/τ_best = θ_best − ε²/(σ − θ_best); θ_j − that, without cancelling digits
      const e = theta[j]! - theta[best]! + eps2 / (sigma - theta[best]!) + allowance;
      if (e < bound[j]!) {
        bound[j] = Math.max(allowance, e);
        cut[j] = c;
      }
    }
  }
  return { bound, cut };
}
