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
 * is on the wanted side of α (a missed copy, or a value below the interval) the filter goes on,
 * now converging that direction — the interval's components fall by T_j against it — until its
 * explicit residual is below COPY_AIM·threshold, and returns it as a found pair; elsewhere (the
 * far end past β), or when the residual stops falling, it hands v_j/‖v_j‖ to a Lanczos check run,
 * which goes on from the certificate reached (CopyBound's starting scale −ln ‖v_j‖).
 * @module
 */
import { readAndRelease } from './common';
import { type LanczosCtx, threshold } from './lanczos-step';
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

/**
 * A converging filter hands over to Lanczos when its residual's rate predicts more steps than
 * this (a filter step costs a product and ≈ 5 vector passes, a Lanczos check step the product and
 * ≈ 50: poisson3d 40³'s copies, ≈ 150 filter steps from the stall, against ≈ 115 Lanczos steps).
 */
export const CONVERGE_STEPS = 400;

/**
 * A converging filter confirms its vector once the residual of v_j is below this fraction of the
 * threshold (the acceptance rule stays the threshold: the margin covers the final projection
 * against L). Not ./lanczos-check COPY_EARLY's 0.1, which is for eigsMixed's bound on the batched
 * path: on the host, 0.1 cost poisson3d 40³'s two copies ≈ 95 more filter steps (check 227 → 205
 * main-step equivalents at 0.5).
 */
export const COPY_AIM = 0.5;

/** ln T_j(t) for t ≥ 1 without overflow. */
function logCheb(j: number, a: number): number {
  return j * a + Math.log((1 + Math.exp(-2 * j * a)) / 2);
}

/** The end of a filter: cleared (the certificate holds), a found pair, or the start of a Lanczos check run and its log scale. */
export type FilterOut<V> =
  | { kind: 'cleared'; steps: number }
  | { kind: 'found'; steps: number; value: number; vector: V }
  | { kind: 'lanczos'; steps: number; start: V; logStart: number };

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
 * whose vector's Rayleigh quotient lies before α converges it ({@link convergeCopy}); else v_j,
 * orthogonal to L and normalised, starts a Lanczos run with logStart = −ln of its norm.
 */
export async function chebyshevFilter<V, S>(c: LanczosCtx<V, S>, locked: readonly V[], x0: V, iv: FilterInterval, mu0: number, missChance: number): Promise<FilterOut<V>> {
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
  const f = new ChebyshevSteps(c, locked, x0, { cen, half, tau, every });
  let nextLook = Math.min(8, cap);
  for (;;) {
    await f.step();
    if (f.j < nextLook && f.j < cap && !run.aborted()) continue;
    const logNorm = await f.logNorm();
    if (logNorm <= target) {
      f.release();
      return { kind: 'cleared', steps: f.j };
    }
    const stalled = !(logNorm + logCheb(f.j, a) <= FILTER_STALL);
    if (stalled && !run.aborted() && c.iterations < c.maxIterations) {
      const { theta } = await f.rayleigh();
      if (sign * theta < iv.lo) return convergeCopy(c, f, { theta, mu0, iv });
    }
    if (stalled || f.j >= cap || run.aborted()) break;
    // the next look where the interval's rate would reach the target, at most 8 steps on
    nextLook = Math.min(cap, f.j + Math.max(1, Math.min(8, Math.ceil((logNorm - target) / a))));
  }
  return lanczosStart(c, locked, f);
}

/** v_j (`cur`) orthogonal to L and normalised, for a Lanczos check run, with its certificate's log scale. */
async function lanczosStart<V, S>(c: LanczosCtx<V, S>, locked: readonly V[], f: ChebyshevSteps<V, S>): Promise<FilterOut<V>> {
  const { space, run, op } = c;
  const v = f.cur;
  f.release(v);
  projectOutTwice(space, locked, v);
  const n = (await readAndRelease(space, [space.norm2(v)], run.stats))[0]!;
  if (!(n > 0 && Number.isFinite(n))) {
    space.release(v);
    // nothing left (or not finite): the Lanczos run starts afresh from a random vector (startVector), no head start
    return { kind: 'lanczos', steps: f.j, start: space.create(op.rows), logStart: 0 };
  }
  space.axpby(1 / n, v, 0, v);
  return { kind: 'lanczos', steps: f.j, start: v, logStart: -(Math.log(n) + f.logScale) };
}

/**
 * A stalled filter whose vector leans to a value θ before the interval: converge that direction
 * to a found pair (residual below COPY_AIM·threshold, then one explicit confirmation). When θ is
 * already past the found values (θ < μ₀: a missed copy) the filter restarts from v_j with an
 * interval that begins halfway from θ to μ₀ — copies of found values between θ and μ₀ (3-D
 * Poisson: λ₃'s while λ₂'s converge) then fall with the rest instead of slowing the convergence
 * (poisson3d 40³: check 205 → 177 main-step equivalents) — normalised at θ; its roots lie before
 * μ₀, so the certificate does not carry over and a failure goes on as a Lanczos check run from a
 * fresh random start. Otherwise the same filter goes on, and a failure hands v_j, with the
 * certificate reached, to a Lanczos check run.
 */
async function convergeCopy<V, S>(c: LanczosCtx<V, S>, old: ChebyshevSteps<V, S>, at: { theta: number; mu0: number; iv: FilterInterval }): Promise<FilterOut<V>> {
  const { run, space, op, sign } = c;
  const th = sign * at.theta;
  const m = sign * at.mu0;
  if (!(th < m)) {
    old.iv.every = Math.min(CONVERGE_EVERY, old.iv.every);
    return (await converge(c, old)) ?? lanczosStart(c, old.locked, old);
  }
  const lo = th + 0.5 * (m - th);
  const cen = (lo + at.iv.hi) / 2;
  const half = (at.iv.hi - lo) / 2;
  const tau = (th - cen) / half;
  const x = old.cur;
  old.release(x);
  const [n] = await readAndRelease(space, [space.norm2(x)], run.stats);
  const f = new ChebyshevSteps(c, old.locked, x, { cen, half, tau, every: Math.min(CONVERGE_EVERY, projectionGap(cen, half, at.iv.lowest, Math.acosh(-tau))) });
  if (n! > 0 && Number.isFinite(n!)) {
    space.axpby(1 / n!, x, 0, x);
    for (let t = 0; t < 8 && c.iterations < c.maxIterations; t++) await f.step();
    const found = await converge(c, f);
    if (found) return found;
  }
  f.release();
  return { kind: 'lanczos', steps: old.j + f.j, start: space.create(op.rows), logStart: 0 };
}

/**
 * Filter on until the residual of v_{j−1} is below COPY_AIM·threshold and its explicit check
 * passes (the found pair), or until the residual's rate predicts more than CONVERGE_STEPS steps
 * (undefined: the caller goes on another way).
 */
async function converge<V, S>(c: LanczosCtx<V, S>, f: ChebyshevSteps<V, S>): Promise<FilterOut<V> | undefined> {
  const { run } = c;
  let last: { j: number; log: number } | undefined;
  for (;;) {
    const aim = COPY_AIM * threshold(c);
    const { residual } = await f.rayleigh(); // of v_{j−1}, w = A·v_{j−1} from the last step
    if (residual <= aim) {
      const found = await confirmCopy(c, f);
      if (found) return found;
    }
    const log = Math.log(residual / aim);
    // the rate of the last window, and the steps it predicts: give up when far beyond
    const rate = last ? (last.log - log) / (f.j - last.j) : Number.POSITIVE_INFINITY;
    if (!(rate > 0) || log / rate > CONVERGE_STEPS || c.iterations >= c.maxIterations || run.aborted()) return undefined;
    last = { j: f.j, log };
    const stored = (await f.logNorm()) - f.logScale;
    if (Math.abs(stored) > 100) f.rescale(stored); // keep the vectors' entries finite
    const steps = Math.max(1, Math.min(8, Number.isFinite(rate) ? Math.ceil(log / rate) : 8));
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

/** v_{j−1} orthogonal to L and normalised, its explicit residual (one product): the found pair when it passes the threshold. */
async function confirmCopy<V, S>(c: LanczosCtx<V, S>, f: ChebyshevSteps<V, S>): Promise<FilterOut<V> | undefined> {
  const { space, op, run } = c;
  const y = createForOverwrite(space, op.rows);
  space.copy(f.prev, y);
  projectOutTwice(space, f.locked, y);
  const [n] = await readAndRelease(space, [space.norm2(y)], run.stats);
  if (!(n! > 0 && Number.isFinite(n!))) {
    space.release(y);
    return undefined;
  }
  space.axpby(1 / n!, y, 0, y);
  const ay = createForOverwrite(space, op.rows);
  returnedVoid(op.apply(y, ay), 'lanczos', 'apply', ay);
  run.stats.matvecs++;
  c.iterations++;
  const [value] = await readAndRelease(space, [space.dot(y, ay)], run.stats);
  space.axpby(-value!, y, 1, ay); // A·y − θ·y
  const [r] = await readAndRelease(space, [space.norm2(ay)], run.stats);
  space.release(ay);
  if (r! <= threshold(c)) {
    f.release();
    return { kind: 'found', steps: f.j, value: value!, vector: y };
  }
  space.release(y);
  return undefined;
}
