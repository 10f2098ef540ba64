/**
 * When reliable-update CG (reliable-cg.ts) checks its residual, and how a check's readback is
 * judged: the plan of the next check from the observed reduction rate, and the scan of the
 * watched scalars for a vanishing or non-finite one.
 * @module
 */
import type { CheckResult, ReliableCgInput, Watched } from './reliable-cg-work';

/** Fewest iterations between two checks planned from the observed rate. */
const MIN_GAP = 2;

/** The next-check plan of one reliable-CG run: the last check and the log-reduction per iteration seen. */
export class CheckPlanner {
  /** The last check (k, ‖r‖ in units of the scale). */
  private lastCheck = { k: 0, rel: 1 };
  private rate = 0;

  constructor(private readonly inp: Pick<ReliableCgInput<unknown, unknown>, 'delta' | 'tol' | 'checkEvery'>) {}

  /** A replacement at iteration k: the residual is 1 in the new units. */
  reset(k: number): void {
    this.lastCheck = { k, rel: 1 };
  }

  /**
   * The iteration of the next check: `checkEvery` after the check at `k`, or earlier when the
   * reduction rate seen between the last two checks predicts that the residual reaches δ or the
   * tolerance sooner — so that the solve stops (or replaces) near where it should instead of up
   * to checkEvery − 1 iterations late. A wrong prediction only costs one more readback.
   */
  plan(rel: number, k: number, scale: number): number {
    const gap = k - this.lastCheck.k;
    if (gap > 0 && rel > 0 && rel < this.lastCheck.rel) this.rate = Math.log(rel / this.lastCheck.rel) / gap;
    this.lastCheck = { k, rel };
    return k + this.gap(rel, scale);
  }

  /** Iterations to the next check from a residual `rel` (units of `scale`) at the current rate. */
  gap(rel: number, scale: number): number {
    const { inp } = this;
    // the nearer of the two events: a replacement at δ or the stop at tol (min() planned for the
    // later one, so the recursion ran past δ to float32's floor and drifted: stencil27 40³ took
    // 99 inner iterations instead of 78, and the drift restarted the direction)
    const target = Math.max(inp.delta, inp.tol / scale);
    let n = inp.checkEvery;
    if (this.rate < 0 && target > 0 && rel > target) {
      const need = Math.log(target / rel) / this.rate;
      if (need < n) n = Math.max(MIN_GAP, Math.ceil(need));
    }
    return n;
  }
}

/**
 * Judge a check's readback: vals[0] is ‖r‖ in units of `scale`, the others the watched scalars
 * of `list`; a non-finite one, or a zero one while the residual has not reached `tol`, is bad.
 */
export function judgeCheck<S>(vals: readonly number[], list: readonly Watched<S>[], k: number, scale: number, tol: number): CheckResult {
  const rel = vals[0]!;
  const tiny = rel * scale <= tol;
  for (let i = 1; i < vals.length; i++) {
    const v = vals[i]!;
    if (!Number.isFinite(v) || (v === 0 && !tiny)) return { bad: true, rel, name: list[i - 1]!.name, value: v, k: list[i - 1]!.k };
  }
  if (!Number.isFinite(rel)) return { bad: true, rel, name: '‖r‖', value: rel, k };
  return { bad: false, rel, name: '', value: 0, k };
}
