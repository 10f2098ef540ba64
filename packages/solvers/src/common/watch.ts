/**
 * The watched scalars of the short-recurrence driver (./recurrence.ts): the {@link Watch} a step
 * hands its denominators to, the near-breakdown limit of a cosine, and the check of the scalars
 * read together with the residual estimate.
 * @module
 */
import type { SolveContext } from './context';

/** What a step hands its denominators to. */
export interface Watch<S> {
  /**
   * Watch the scalar `s` named `name` (e.g. '⟨p, A·p⟩'). Normal mode: queue it, return true.
   * Guarded mode: read it now; return false when it is 0 or non-finite, in which case the step
   * must return at once without using it. The watch never takes ownership of `s` (it queues
   * its own alias, `space.mul(s, 1)`, which on the GPU shares the slot without a dispatch).
   */
  ok(name: string, s: S): Promise<boolean>;
  /**
   * Watch a ratio that must stay above `limit` in magnitude (a near-breakdown test, e.g. cos² of
   * the angle between t and s in BiCGStab, whose ω is rounding noise below it). As {@link ok},
   * but |s| ≤ limit also fails (reported as a near-breakdown naming the value and the limit).
   */
  near(name: string, s: S, limit: number): Promise<boolean>;
}

/**
 * The magnitude below which a cosine of two length-n vectors of a space with unit roundoff u
 * carries no correct digit: 16·max(1, log₂ n)·u (reductions sum pairwise or in blocks; the
 * vectors' own rounding makes the 16). 3.5e-14 for n = 10^6 in float64, 1.9e-5 in float32.
 * @example nearZeroCosine(2, 2 ** -53); // 1.8e-15
 */
export function nearZeroCosine(n: number, u: number): number {
  return 16 * Math.max(1, Math.log2(Math.max(1, n))) * u;
}


/** A watched scalar that failed: its name, value and — for a near-breakdown ratio — its limit. */
export interface Failure {
  name: string;
  value: number;
  /** Set for a {@link Watch.near} ratio: the limit it fell below. */
  limit?: number;
}

export interface Pending<S> {
  name: string;
  k: number;
  s: S;
  limit?: number;
}

export class WatchList<V, S> implements Watch<S> {
  failure: Failure | undefined;
  constructor(
    private readonly ctx: SolveContext<V, S>,
    private readonly guarded: boolean,
    private readonly k: number,
    /** Shared by all iterations since the last check; emptied by the check. */
    private readonly pending: Pending<S>[],
  ) {}
  async ok(name: string, s: S): Promise<boolean> {
    if (!this.guarded) {
      this.pending.push({ name, k: this.k, s: this.ctx.space.mul(s, 1) });
      return true;
    }
    const value = await this.ctx.readOne(s);
    if (value !== 0 && Number.isFinite(value)) return true;
    this.failure = { name, value };
    return false;
  }
  async near(name: string, s: S, limit: number): Promise<boolean> {
    if (!this.guarded) {
      this.pending.push({ name, k: this.k, s: this.ctx.space.mul(s, 1), limit });
      return true;
    }
    const value = await this.ctx.readOne(s);
    if (Math.abs(value) > limit && Number.isFinite(value)) return true;
    this.failure = { name, value, limit };
    return false;
  }
}

/** True when a queued scalar read at a check is non-finite, or 0 (or, for a near-breakdown ratio, not above its limit) while the estimate has not passed. */
export function badScalar(vals: readonly number[], limits: readonly number[], converging: boolean): boolean {
  for (let i = 1; i < vals.length; i++) {
    const v = vals[i]!;
    const limit = limits[i - 1]!;
    // a near-breakdown ratio only matters before convergence (s = 0 after an exact half step makes cos² 0/0)
    if (limit > 0 ? !converging && !(Math.abs(v) > limit) : !Number.isFinite(v) || (v === 0 && !converging)) return true;
  }
  return false;
}
