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
 * falling as the interval predicts, something lies outside [α, β]. Where v_j's Rayleigh quotient
 * is on the wanted side of α (a missed copy, or a value below the interval) the filter goes on
 * until the interval's part is negligible in v_j's residual and hands v_j to a Lanczos check run,
 * which separates the few directions before α in a few steps (s13-eig13: before, the filter
 * converged the copy itself, at the slow rate that separates a copy of λ₂ from one of λ₃);
 * elsewhere (the far end past β) it hands v_j over at once. Either run goes on from the
 * certificate reached (CopyBound's starting scale −ln ‖v_j‖), and v_j stays as the attempt's
 * residue (./lanczos-residue), which may clear the next attempt.
 * @module
 */
import { readAndRelease } from './common';
import { type LanczosCtx, threshold } from './lanczos-step';
import { createForOverwrite, projectOutTwice } from './ortho';
import { returnedVoid } from '../common/operator-check';
import { type FilterPoly, logCheb, Residue } from './lanczos-residue';

/** What the main run knew of the spectrum beyond its answer (sign-free values, residual estimates). */
export interface SpectrumHint {
  /** The first Ritz value past the k wanted ones, and its residual estimate. */
  next?: { value: number; residual: number };
  /** The farthest Ritz value from the wanted end seen in the run, and its residual estimate then. */
  far?: { value: number; residual: number };
  /** (s13-eig13) The next few Ritz values past `next` (wanted order), with their residual estimates. */
  beyond?: { value: number; residual: number }[];
}

/**
 * (s13-eig13) No filter where an α placed past one of the next few Ritz values would make its
 * rate this many times faster: a few values just past μ₀ (a cluster) that the interval must
 * hold, where a Lanczos run's polynomial puts roots and goes on at the rate of the gap past them
 * (four copies of a tridiagonal spectrum shifted by 1e-4: check 888 filter products against
 * ≈ 185 Lanczos; by 1e-6: a 4 630-step filter ran into maxIterations). Poisson 3-D 40³ ≈ 1.3,
 * banded-spd-2000 ≈ 1.9: filtered.
 */
export const NEAR_CLUSTER = 3;

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
  if (!(hi > lo)) return undefined;
  const rate = (l: number) => Math.acosh((hi + l - 2 * m) / (hi - l)); // acosh(|ℓ(μ₀)|) on [l, hi]
  for (const b of hint.beyond ?? []) {
    const v = sign * b.value;
    if (v > lo && rate(Math.min(hi, Math.max(m + 0.5 * (v - m), v - b.residual))) >= NEAR_CLUSTER * rate(lo)) return undefined;
  }
  return { lo, hi, lowest };
}

/** A filter's interval [lo, hi] and the lowest found value (all in wanted-side coordinates). */
export interface FilterInterval {
  lo: number;
  hi: number;
  lowest: number;
}

/**
 * A stalled filter whose vector leans to a value before α goes on with the same polynomial until
 * the interval's part is predicted this far below the threshold in the residual it leaves, then a
 * short Lanczos check run extracts the copy. Later: fewer filter products, longer Lanczos runs
 * (≈ 50 vector passes a step). Poisson 3-D 40³, the handover at 1 / 3 / 10 / 30 / 100× the
 * threshold: check products 504 / 483 / 474 / 459 / 446, vector passes 4 070 / 3 910 / 5 067 /
 * 5 557 / 6 108; process CPU of the solve, 1 thread, same process, medians of 15, at 3 against 10:
 * 344 / 364 and 297 / 303 ms (two runs, load 7–9); SiH4 and Poisson 2-D 100² within 2 %.
 */
export const HANDOVER = 3;

/**
 * A stalled filter hands over at once when its observed rate predicts more steps than this
 * before {@link HANDOVER} (the Lanczos run's polynomial adapts; the filter's does not).
 */
export const CONVERGE_STEPS = 400;

/** The end of a filter: cleared (the certificate holds), or the start of a Lanczos check run, its log scale and (s13-eig13) the filtered start's residue. */
export type FilterOut<V, S> =
  | { kind: 'cleared'; steps: number }
  | { kind: 'lanczos'; steps: number; start: V; logStart: number; residue?: Residue<V, S> };

/**
 * The three-term recurrence v_{j+1} = (2ρ_j/ê)·(Â − ĉ)·v_j − ρ_j·ρ_{j−1}·v_{j−1} (Â = sign·A,
 * v_1 = (Â − ĉ)·v_0/(ê·τ), ρ_j = T_j(τ)/T_{j+1}(τ)), with (I − LLᵀ) on the new vector at two
 * steps in a row every `every` steps (the recurrence's two vectors both lose L's directions).
 * After a step, `prev` is v_j and `w` = A·v_j; `cur` is v_{j+1}. `logScale`: ln of the factor
 * the vectors were divided by (kept finite while a copy grows).
 */
class ChebyshevSteps<V, S> {
  prev: V;
  cur: V;
  readonly w: V;
  j = 0;
  logScale = 0;
  private rhoPrev: number;
  private rho: number;

  constructor(
    private readonly c: LanczosCtx<V, S>,
    readonly locked: readonly V[],
    x0: V,
    readonly iv: { cen: number; half: number; tau: number; every: number },
  ) {
    this.prev = x0;
    this.cur = createForOverwrite(c.space, c.op.rows);
    this.w = createForOverwrite(c.space, c.op.rows);
    this.rhoPrev = 1 / iv.tau;
    this.rho = 1 / (2 * iv.tau - this.rhoPrev);
  }

  async step(): Promise<void> {
    const { space, op, run, sign } = this.c;
    const { cen, half, tau, every } = this.iv;
    const src = this.j === 0 ? this.prev : this.cur;
    returnedVoid(op.apply(src, this.w), 'lanczos', 'apply', this.w);
    run.stats.matvecs++;
    this.c.iterations++;
    const scale = this.j === 0 ? 1 / (half * tau) : (2 * this.rho) / half;
    const coeffs = [sign * scale, -cen * scale];
    if (this.j === 0) space.combine(coeffs, [this.w, src], 0, this.cur);
    else {
      space.combine(coeffs, [this.w, src], -this.rho * this.rhoPrev, this.prev); // prev ← v_{j+1}
      [this.prev, this.cur] = [this.cur, this.prev];
      this.rhoPrev = this.rho;
      this.rho = 1 / (2 * tau - this.rho);
    }
    this.j++;
    if (this.locked.length > 0 && (this.j % every === 0 || this.j % every === 1)) {
      const h = await readAndRelease(space, space.multiDot(this.locked, this.cur), run.stats);
      space.combine(h.map((x) => -x), this.locked, 1, this.cur);
    }
  }

  async logNorm(): Promise<number> {
    return Math.log((await readAndRelease(this.c.space, [this.c.space.norm2(this.cur)], this.c.run.stats))[0]!) + this.logScale;
  }

  /** Divide both vectors by e^s (the recurrence is linear: the same polynomials, scaled; logNorm stays the true norm's). */
  rescale(s: number): void {
    this.c.space.axpby(Math.exp(-s), this.prev, 0, this.prev);
    this.c.space.axpby(Math.exp(-s), this.cur, 0, this.cur);
    this.logScale += s;
  }

  /** Rayleigh quotient and relative residual of v_j (`prev`) from w = A·v_j (w is overwritten). */
  async rayleigh(): Promise<{ theta: number; residual: number }> {
    const { space, run } = this.c;
    const [pw, pp] = await readAndRelease(space, space.multiDot([this.w, this.prev], this.prev), run.stats);
    const theta = pw! / pp!;
    space.axpby(-theta, this.prev, 1, this.w);
    const [r] = await readAndRelease(space, [space.norm2(this.w)], run.stats);
    return { theta, residual: r! / Math.sqrt(pp!) };
  }

  release(keep?: V): void {
    for (const v of [this.prev, this.cur, this.w]) if (v !== keep) this.c.space.release(v);
  }
}

/**
 * Filter x₀ (a unit vector orthogonal to `locked`; consumed) with the Chebyshev polynomial of
 * `iv` normalised to 1 at μ₀, until ‖v_j‖ ≤ missChance·√(π/(2·dim)) (cleared) or until it stalls
 * ({@link FILTER_STALL}) or passes 1.3× the steps the interval predicts (+ 8); a stalled filter
 * whose vector's Rayleigh quotient lies before α first grows that part ({@link growCopy}); then
 * v_j, orthogonal to L and normalised, starts a Lanczos run with logStart = −ln of its norm.
 */
export async function chebyshevFilter<V, S>(c: LanczosCtx<V, S>, locked: readonly V[], x0: V, iv: FilterInterval, mu0: number, missChance: number): Promise<FilterOut<V, S>> {
  const { op, run, sign } = c;
  const dim = op.rows - locked.length;
  const target = -Math.log(Math.sqrt((2 * dim) / Math.PI) / missChance); // ln ‖v‖ to reach
  const cen = (iv.lo + iv.hi) / 2;
  const half = (iv.hi - iv.lo) / 2;
  const tau = (sign * mu0 - cen) / half; // < −1
  const a = Math.acosh(-tau);
  const cap = Math.min(Math.ceil((1.3 * -target) / a) + 8, c.maxIterations - c.iterations);
  const every = projectionGap(cen, half, iv.lowest, a);
  if (cap < 1) return { kind: 'lanczos', steps: 0, start: x0, logStart: 0 }; // no step left: the Lanczos run ends at its cap
  const x0Copy = createForOverwrite(c.space, op.rows);
  c.space.copy(x0, x0Copy); // (s13-eig13) for the leak term of a later residue certificate
  const f = new ChebyshevSteps(c, locked, x0, { cen, half, tau, every });
  const poly: FilterPoly<V> & { missChance: number } = { cen, half, a, lo: iv.lo, x0: x0Copy, missChance };
  let nextLook = Math.min(8, cap);
  for (;;) {
    await f.step();
    if (f.j < nextLook && f.j < cap && !run.aborted()) continue;
    const logNorm = await f.logNorm();
    if (logNorm <= target) {
      f.release();
      c.space.release(x0Copy);
      return { kind: 'cleared', steps: f.j };
    }
    const stalled = !(logNorm + logCheb(f.j, a) <= FILTER_STALL);
    if (stalled && !run.aborted() && c.iterations < c.maxIterations) {
      const { theta } = await f.rayleigh();
      if (sign * theta < iv.lo) {
        await growCopy(c, f, { width: iv.hi - sign * theta, a });
        break;
      }
    }
    if (stalled || f.j >= cap || run.aborted()) break;
    // the next look where the interval's rate would reach the target, at most 8 steps on
    nextLook = Math.min(cap, f.j + Math.max(1, Math.min(8, Math.ceil((logNorm - target) / a))));
  }
  return lanczosStart(c, locked, f, poly);
}

/**
 * v_j (`cur`) orthogonal to L and normalised, for a Lanczos check run, with its certificate's log
 * scale and (s13-eig13) a copy of it as the residue of this start ({@link Residue}).
 */
async function lanczosStart<V, S>(c: LanczosCtx<V, S>, locked: readonly V[], f: ChebyshevSteps<V, S>, poly: FilterPoly<V> & { missChance: number }): Promise<FilterOut<V, S>> {
  const { space, run, op } = c;
  const v = f.cur;
  f.release(v);
  projectOutTwice(space, locked, v);
  const n = (await readAndRelease(space, [space.norm2(v)], run.stats))[0]!;
  if (!(n > 0 && Number.isFinite(n))) {
    space.release(v);
    space.release(poly.x0);
    // nothing left (or not finite): the Lanczos run starts afresh from a random vector (startVector), no head start
    return { kind: 'lanczos', steps: f.j, start: space.create(op.rows), logStart: 0 };
  }
  space.axpby(1 / n, v, 0, v);
  const logStart = -(Math.log(n) + f.logScale);
  const u = createForOverwrite(space, op.rows);
  space.copy(v, u);
  return { kind: 'lanczos', steps: f.j, start: v, logStart, residue: new Residue(c, { ...poly, j: f.j }, u, logStart) };
}

/**
 * (s13-eig13) A stalled filter whose vector leans to a value θ before the interval: copies of
 * found values (and values between μ₀ and α) grow against the interval's part at the filter's
 * rate, but separate from each other only at the difference of theirs (poisson3d 40³: λ₂'s copy
 * from λ₃'s at 0.036 a step against 0.098 from the interval), where a Lanczos run separates the
 * few directions that stand out in a few steps. So the same polynomial goes on (the certificate
 * carries over) until the interval's part — at most 1/T_j(|τ|) of the unit start — leaves a
 * residual of at most width·e^(−ln T_j(|τ|))/‖v_j‖ ≤ {@link HANDOVER}·threshold, or until its
 * observed rate predicts more than {@link CONVERGE_STEPS} steps; the caller hands v_j to a
 * Lanczos check run (poisson3d 40³ at 10× the threshold: check 827 → 605 products before the
 * residue's clear of the third attempt; SiH4 and poisson2d 100² converge their copies in 9 and 17
 * Lanczos steps).
 */
async function growCopy<V, S>(c: LanczosCtx<V, S>, f: ChebyshevSteps<V, S>, at: { width: number; a: number }): Promise<void> {
  f.iv.every = Math.min(CONVERGE_EVERY, f.iv.every);
  let last: { j: number; log: number } | undefined;
  for (;;) {
    const logNorm = await f.logNorm();
    const stored = logNorm - f.logScale;
    if (Math.abs(stored) > 100) f.rescale(stored); // keep the vectors' entries finite
    const log = Math.log(at.width) - logCheb(f.j, at.a) - logNorm - Math.log(HANDOVER * threshold(c));
    if (log <= 0 || c.iterations >= c.maxIterations || c.run.aborted()) return;
    const rate = last ? (last.log - log) / (f.j - last.j) : at.a;
    if (!(rate > 0) || log / rate > CONVERGE_STEPS) return;
    last = { j: f.j, log };
    const steps = Math.max(1, Math.min(16, Math.ceil(log / rate)));
    for (let t = 0; t < steps && c.iterations < c.maxIterations; t++) await f.step();
  }
}

/**
 * Steps between projections against L (at most 32): the found directions' rounding grows by at
 * most e^4 in between (e^(j·(a_L − a))) against the certificate's scale. 32 rather than 8: the
 * same products, check vector passes trpcage 907 → 687, poisson3d 40³ 6 113 → 4 390.
 */
function projectionGap(cen: number, half: number, lowest: number, a: number): number {
  const far = Math.acosh(Math.max(1, (cen - lowest) / half));
  return far > a ? Math.max(1, Math.min(32, Math.floor(4 / (far - a)))) : 32;
}

/** While a copy converges its residual is watched: L's directions are taken out at least every 8 steps so they stay far below it. */
const CONVERGE_EVERY = 8;
