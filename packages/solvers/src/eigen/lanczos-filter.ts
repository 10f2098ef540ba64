/**
 * The Chebyshev start of a multiplicity-check run (./lanczos-check) on the one-pass host path.
 *
 * A check run must prove that its random start x₀ (a unit vector orthogonal to the found ones L)
 * has less weight on any missed copy than a random vector has with the miss chance. ./lanczos-check
 * CopyBound does it with the run's own Lanczos polynomial; here a fixed polynomial does the first
 * part without a basis: v_j = p_j(A)·x₀ with p_j(x) = T_j(ℓ(x)) / T_j(ℓ(μ₀)), T_j the Chebyshev
 * polynomial of the interval [α, β] that should hold the rest of the deflated spectrum (ℓ maps it
 * to [−1, 1]; μ₀ lies outside it, on the wanted side). A missed copy z (A·z = λ·z, z ⊥ L, λ on the
 * wanted side of μ₀) has ⟨z, v_j⟩ = p_j(λ)·⟨z, x₀⟩ with |p_j(λ)| ≥ |p_j(μ₀)| = 1 (|T_j| grows
 * monotonically outside [−1, 1]), so |⟨z, x₀⟩| ≤ ‖v_j‖: a small ‖v_j‖ is the same certificate as
 * CopyBound's ‖φ‖ = 1/‖v_j‖, whatever the interval — a wrong [α, β] costs steps, never soundness.
 * The same holds when only some steps project L out (I − LLᵀ leaves z alone), so the projection
 * runs every few steps, as often as the growth of the found directions' rounding asks.
 *
 * A step is one product, a three-term combination and, every few steps, a norm: no basis and no
 * Gram–Schmidt (a Lanczos check step orthogonalises against L and a 16-vector basis, ≈ 48 vector
 * passes on ExaSP2_trpcage_8K; here ≈ 4–6). Lanczos needs fewer products for the same
 * certificate (its polynomial adapts to the spectrum), the filter's are cheaper. When ‖v_j‖ stops
 * falling as the interval predicts (a missed copy, an eigenvalue outside [α, β]) the filter hands
 * v_j/‖v_j‖ to a Lanczos check run, which goes on from the certificate reached (CopyBound's
 * starting scale −ln ‖v_j‖) and converges a copy fast: v_j is rich in it.
 * @module
 */
import { readAndRelease } from './common';
import type { LanczosCtx } from './lanczos-step';
import { createForOverwrite, projectOutTwice } from './ortho';
import { returnedVoid } from '../common/operator-check';

/** What the main run knew of the spectrum beyond its answer (sign-free values, residual estimates). */
export interface SpectrumHint {
  /** The first Ritz value past the k wanted ones, and its residual estimate. */
  next?: { value: number; residual: number };
  /** The farthest Ritz value from the wanted end seen in the run, and its residual estimate then. */
  far?: { value: number; residual: number };
}

/** ln ‖v_j‖ more than this above the interval's bound −ln T_j(|τ|): the spectrum is not where assumed. */
export const FILTER_STALL = 3;

/**
 * The interval [α, β] (in wanted-side coordinates x̂ = sign·x: the wanted end is the smallest) for
 * a check at μ₀, or undefined when there is none worth filtering with. α: below the first value
 * known past μ₀ — the main run's next Ritz value θ (an upper bound of its eigenvalue) less its
 * residual estimate, at most halfway back to μ₀ — or a pair dropped by an earlier check; β: the
 * farthest Ritz value seen plus its residual estimate and 1 % of the width.
 */
export function filterInterval(hint: SpectrumHint, sign: 1 | -1, mu0: number, found: readonly number[], dropped: readonly number[], thr: number): FilterInterval | undefined {
  const m = sign * mu0;
  const candidates: { v: number; r: number }[] = dropped.map((x) => ({ v: sign * x, r: thr }));
  if (hint.next) candidates.push({ v: sign * hint.next.value, r: hint.next.residual });
  let lo = Number.POSITIVE_INFINITY;
  for (const { v, r } of candidates) if (v > m) lo = Math.min(lo, Math.max(m + 0.5 * (v - m), v - r));
  if (!hint.far || !Number.isFinite(lo)) return undefined;
  const far = sign * hint.far.value + hint.far.residual;
  const hi = far + 0.01 * (far - m);
  const lowest = Math.min(m, ...found.map((x) => sign * x));
  return hi > lo ? { lo, hi, lowest } : undefined;
}

/** A filter's interval [lo, hi] and the lowest found value (all in wanted-side coordinates). */
export interface FilterInterval {
  lo: number;
  hi: number;
  lowest: number;
}

/** ln T_j(t) for t ≥ 1 without overflow. */
function logCheb(j: number, a: number): number {
  return j * a + Math.log((1 + Math.exp(-2 * j * a)) / 2);
}

/** The end of a filter: `cleared` (the certificate holds), else the start for a Lanczos check run and its log scale. */
export type FilterOut<V> = { cleared: true; steps: number } | { cleared: false; steps: number; start: V; logStart: number };

/**
 * Filter x₀ (a unit vector orthogonal to `locked`; consumed) with the Chebyshev polynomial of
 * `iv` normalised to 1 at μ₀, until ‖v_j‖ ≤ missChance·√(π/(2·dim)) (cleared) or until it stalls
 * ({@link FILTER_STALL}) or passes 1.3× the steps the interval predicts (+ 8): then v_j made
 * orthogonal to L and normalised, with logStart = −ln of its norm, for the Lanczos run.
 */
export async function chebyshevFilter<V, S>(c: LanczosCtx<V, S>, locked: readonly V[], x0: V, iv: FilterInterval, mu0: number, missChance: number): Promise<FilterOut<V>> {
  const { space, op, run, sign } = c;
  const dim = op.rows - locked.length;
  const target = -Math.log(Math.sqrt((2 * dim) / Math.PI) / missChance); // ln ‖v‖ to reach
  const cen = (iv.lo + iv.hi) / 2;
  const half = (iv.hi - iv.lo) / 2;
  const tau = (sign * mu0 - cen) / half; // < −1
  const a = Math.acosh(-tau);
  const need = Math.ceil(-target / a);
  const cap = Math.min(Math.ceil(1.3 * need) + 8, c.maxIterations - c.iterations);
  // the found directions' rounding grows by at most e^(j·(a_L − a)) between projections: ≤ e^4
  const far = Math.acosh(Math.max(1, (cen - iv.lowest) / half));
  const every = far > a ? Math.max(1, Math.min(8, Math.floor(4 / (far - a)))) : 8;
  let prev = x0;
  let cur = createForOverwrite(space, op.rows);
  const w = createForOverwrite(space, op.rows);
  // ρ_j = T_j(τ)/T_{j+1}(τ): ρ_0 = 1/τ, ρ_j = 1/(2τ − ρ_{j−1})
  let rhoPrev = 1 / tau;
  let rho = 1 / (2 * tau - rhoPrev);
  let j = 0;
  let logNorm = 0;
  let nextLook = Math.min(8, cap);
  for (;;) {
    // v_{j+1} = (2ρ_j/ê)·(Â − ĉ)·v_j − ρ_j·ρ_{j−1}·v_{j−1}; v_1 = (Â − ĉ)·v_0 / (ê·τ); Â = sign·A
    const src = j === 0 ? x0 : cur;
    returnedVoid(op.apply(src, w), 'lanczos', 'apply');
    run.stats.matvecs++;
    c.iterations++;
    const scale = j === 0 ? 1 / (half * tau) : (2 * rho) / half;
    const coeffs = [sign * scale, -cen * scale];
    const xs = [w, src];
    if (j === 0) space.combine(coeffs, xs, 0, cur);
    else {
      space.combine(coeffs, xs, -rho * rhoPrev, prev); // prev ← v_{j+1}
      [prev, cur] = [cur, prev];
      rhoPrev = rho;
      rho = 1 / (2 * tau - rho);
    }
    if (locked.length > 0 && ((j + 1) % every === 0 || (j + 1) % every === 1)) {
      // v_{j+1} ← (I − LLᵀ)·v_{j+1}, two steps in a row: the recurrence's two vectors both lose L's directions
      const h = await readAndRelease(space, space.multiDot(locked, cur), run.stats);
      space.combine(h.map((x) => -x), locked, 1, cur);
    }
    j++;
    if (j < nextLook && j < cap && !run.aborted()) continue;
    logNorm = Math.log((await readAndRelease(space, [space.norm2(cur)], run.stats))[0]!);
    if (logNorm <= target) {
      space.release(w);
      space.release(prev);
      space.release(cur);
      return { cleared: true, steps: j };
    }
    const stalled = !(logNorm + logCheb(j, a) <= FILTER_STALL);
    if (stalled || j >= cap || run.aborted()) break;
    // the next look where the interval's rate would reach the target, at most 8 steps on
    nextLook = Math.min(cap, j + Math.max(1, Math.min(8, Math.ceil((logNorm - target) / a))));
  }
  space.release(w);
  space.release(prev);
  projectOutTwice(space, locked, cur);
  const n = (await readAndRelease(space, [space.norm2(cur)], run.stats))[0]!;
  if (!(n > 0 && Number.isFinite(n))) {
    space.release(cur);
    // nothing left (or not finite): the Lanczos run starts afresh from a random vector (startVector), no head start
    return { cleared: false, steps: j, start: space.create(op.rows), logStart: 0 };
  }
  space.axpby(1 / n, cur, 0, cur);
  return { cleared: false, steps: j, start: cur, logStart: -Math.log(n) };
}
