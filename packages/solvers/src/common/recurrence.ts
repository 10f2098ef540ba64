/**
 * The driver shared by the short-recurrence solvers (CG, BiCG, BiCGStab).
 *
 * Scalars stay on the device. Every denominator a step divides by is *watched*: in the normal
 * mode it is only queued, and all queued scalars are read together with the residual estimate
 * at the next check (one synchronisation every `checkEvery` iterations). When a check finds a
 * zero or non-finite scalar, the iterates since the last clean check may be garbage, so the
 * driver rolls x back to the checkpoint taken at that check (one vector copy per check),
 * restarts the recurrence from r = b − A·x and replays up to `checkEvery` iterations in the
 * *guarded* mode, where each watched scalar is read before it is used. A breakdown is then
 * caught exactly where it happens and reported as a reason with its scalar and iteration,
 * never as NaN in x and never as an exception.
 * @module
 */
import type { VectorSpace } from '@gpusparse/formats';
import type { SolveResult } from './result';
import type { SolveContext } from './context';
import { assertFloat32Resolves } from './f32-range';
import { Slot } from './snapshot';
import { badScalar, type Failure, type Pending, type Watch, WatchList } from './watch';

export { nearZeroCosine, type Watch } from './watch';

/**
 * Release device scalars that are no longer needed (undefined entries skipped). Solvers release
 * every scalar once the work that reads it is recorded: the GPU space has a finite slot pool.
 * Cost: O(count), no device work.
 * @example
 * release(space, alpha, beta);
 */
export function release<V, S>(space: VectorSpace<V, S>, ...scalars: (S | undefined)[]): void {
  for (const s of scalars) if (s !== undefined) space.release(s);
}

/** A short-recurrence Krylov method bound to one solve. */
export interface RecurrenceMethod<V, S> {
  /** The iterate, updated in place by {@link RecurrenceMethod.step}. */
  readonly x: V;
  /**
   * Restart from the current x: r = b − A·x (one matvec, or r = b when `xIsZero`), directions
   * reset at the next step. Returns ‖r‖ as a scalar (the true residual in the space's precision).
   */
  restart(xIsZero: boolean): S;
  /**
   * Iteration k (1-based): one pass of the recurrence. `nearExit`: the driver expects the
   * residual estimate to pass the tolerance at this step's check (a method may then compute the
   * true residual with the step's own work: {@link RecurrenceMethod.trueResidualNorm}).
   */
  step(k: number, watch: Watch<S>, nearExit?: boolean): Promise<void>;
  /** ‖r‖ of the recursively updated residual (may record one reduction). */
  residualNorm(): S;
  /**
   * ‖b − A·x‖ of the current x when the last step computed the residual from products of the
   * current vectors rather than by the recurrence (and its square stayed in float64's safe
   * range), else undefined: the driver's check that the estimate passed then takes it instead of
   * a product of its own.
   */
  trueResidualNorm?(): S | undefined;
  /** Release the work vectors (everything but x). */
  dispose(): void;
}


/** Consecutive false convergences (estimate passed, true residual did not improve 2×) before giving up. */
const STAGNATION_LIMIT = 3;

/** After a false convergence, check every step while the true residual is within this factor of the tolerance. */
const DENSE_NEAR = 8;

/** Stop as diverged when the residual estimate exceeds this factor times max(‖r₀‖, ‖b‖) (PETSc's dtol). */
const DIVERGENCE = 1e4;

/**
 * Run a short-recurrence method to completion under the shared convergence rule.
 * Besides convergence it stops on stagnation (the estimate passed but the true residual did not
 * follow, three times: the space's precision is exhausted) and on divergence (estimate above
 * 1e4·max(‖r₀‖, ‖b‖)), both as reason 'breakdown' with the cause in `detail`. An exit without
 * convergence returns the better of the last iterate and the best checked one.
 * Cost: the method's own cost per iteration, plus one readback per check, one vector
 * copy per check (the rollback checkpoint, or the best iterate, which then serves as the checkpoint:
 * two copies only at a check that is not the best so far; up to two extra vectors of memory, each
 * made on its first save: common/snapshot.ts) and one matvec at exit for the true residual (two
 * when the best iterate is compared; none when the method's last step computed it: CG on the
 * host wasm operator, {@link RecurrenceMethod.trueResidualNorm}).
 * @example
 * return runRecurrence(ctx, new CgMethod(ctx));
 */
export async function runRecurrence<V, S>(ctx: SolveContext<V, S>, m: RecurrenceMethod<V, S>): Promise<SolveResult<V>> {
  // both start as the start iterate without a vector (common/snapshot.ts): made on their first save
  const checkpoint = new Slot(ctx.space, ctx.n, ctx.opts.x0);
  const best = new Slot(ctx.space, ctx.n, ctx.opts.x0);
  try {
    return await new RecurrenceLoop(ctx, m, checkpoint, best).run();
  } finally {
    m.dispose();
    checkpoint.dispose();
    best.dispose();
  }
}

/**
 * One solve's loop state (checkpoint, best iterate, guarded replay window, false-convergence
 * count) and its steps: the start, a watched scalar that failed, a check. A step returns the
 * result when the solve ends there, undefined when the iteration goes on.
 */
class RecurrenceLoop<V, S> {
  private readonly x: V;
  private r0 = 0;
  private bestEstimate = 0;
  // a check that improves on the best iterate copies x into `best` only, which is then the
  // rollback point too: one vector copy per check instead of two (host spaces check every step)
  private bestIsCheckpoint = false;
  private bestK = 0;
  private kCheck = 0;
  private guardedUntil = -1;
  private falseConvergences = 0;
  /**
   * After a false convergence (the estimate passed, the true residual did not), check every
   * iteration: the true residual drifts from the estimate by each step's rounding, so the
   * `checkEvery − 1` steps a sparse check runs past the tolerance only widen the gap (session 13:
   * float32 CG, poisson2d 30², rtol 1e-5, checkEvery 32 stalled at 2.1e-5 and ended 'breakdown'
   * where checkEvery 1 converged at 8.3e-6). Only while the true residual is within
   * {@link DENSE_NEAR}× the tolerance: near the exit, so a few readbacks.
   */
  private denseChecks = false;
  private lastTrue = Number.POSITIVE_INFINITY;
  private k = 0;
  private readonly pending: Pending<S>[] = [];
  /** The estimates of the last two checks, older first (for {@link nearExit}). */
  private lastEstimates: number[] = [Number.NaN, Number.NaN];

  constructor(
    private readonly ctx: SolveContext<V, S>,
    private readonly m: RecurrenceMethod<V, S>,
    private readonly checkpoint: Slot<V, S>,
    private readonly best: Slot<V, S>,
  ) {
    this.x = m.x;
  }

  async run(): Promise<SolveResult<V>> {
    const { ctx, m } = this;
    const { opts } = ctx;
    const early = await this.start();
    if (early) return early;
    for (;;) {
      if (this.k >= opts.maxIterations) return this.final('max-iterations');
      const k = ++this.k;
      const guarded = k <= this.guardedUntil;
      const watch = new WatchList(ctx, guarded, k, this.pending);
      await m.step(k, watch, this.nearExit());
      if (watch.failure) {
        const done = await this.failed(watch.failure);
        if (done) return done;
        continue;
      }
      const isCheck = guarded || this.denseChecks || k === 1 || k % opts.checkEvery === 0 || k >= opts.maxIterations || ctx.aborted();
      if (!isCheck) continue;
      const done = await this.check(guarded);
      if (done) return done;
    }
  }

  /**
   * True when the next step's estimate is expected to pass the tolerance (checks every step
   * only): the last estimate times the last reduction factor ρ (a one-step geometric
   * prediction) is below min(2, 1/√ρ)·tol — slack where convergence is fast (banded SPD, ρ ≈
   * 0.09: from 2·tol), little where it is slow (ρ = 0.97: 1.015·tol, the last step or two). A
   * missed prediction costs one product (of a short solve: 1/7 of it), a wrong one a fraction of
   * a product (cg's pair product).
   */
  private nearExit(): boolean {
    const [a, b] = this.lastEstimates;
    if (this.ctx.opts.checkEvery !== 1 || !(a! > 0) || !(b! > 0)) return false;
    const rho = Math.min(1, b! / a!);
    return b! * rho * Math.max(0.5, Math.sqrt(rho)) <= this.ctx.tol;
  }

  /** ‖b‖, r₀ = b − A·x0, the exits before the first iteration; then the first checkpoint. */
  private async start(): Promise<SolveResult<V> | undefined> {
    const { ctx, m, x } = this;
    const { space, opts } = ctx;
    const bNorm = await ctx.take(space.norm2(ctx.b));
    ctx.setBNorm(bNorm);
    await assertFloat32Resolves(ctx, bNorm); // s11-harden-a: ‖b‖ underflowed to 0 read as b = 0
    if (!Number.isFinite(bNorm)) {
      return ctx.finish(x, 'non-finite', 0, Number.NaN, `${ctx.method}: b contains non-finite values (‖b‖ = ${bNorm})`);
    }
    if (bNorm === 0) {
      space.fill(x, 0);
      return ctx.finish(x, 'converged', 0, 0, 'b = 0, so x = 0');
    }
    const xIsZero = opts.x0 === undefined;
    let rn = bNorm;
    if (xIsZero) space.release(m.restart(true)); // r = b
    else rn = await ctx.take(m.restart(false));
    if (!Number.isFinite(rn)) {
      return ctx.finishExit(x, 'non-finite', 0, rn, `${ctx.method}: initial residual ‖b − A·x0‖ = ${rn} (x0 or A holds non-finite values)`);
    }
    if (opts.recordHistory) ctx.history.push({ iteration: 0, residual: rn });
    if (rn <= ctx.tol) {
      if (await ctx.confirm(x, rn)) return ctx.finish(x, 'converged', 0, rn);
      rn = await ctx.take(m.restart(false)); // on the verified kernel now
      if (rn <= ctx.tol) return ctx.finish(x, 'converged', 0, rn);
    }
    if (ctx.aborted()) return ctx.finishExit(x, 'stopped', 0, rn, 'signal aborted before the first iteration');
    // x is still the start iterate, which both slots hold without a copy; a verified-kernel restart above left it so too
    this.r0 = rn;
    this.bestEstimate = rn;
    return undefined;
  }

  /** Exit without convergence: return the better of the current and the best-checked iterate. */
  private async final(reason: SolveResult<V>['reason'], detail?: string): Promise<SolveResult<V>> {
    const { ctx, m, x, checkpoint, best, k, bestK } = this;
    let tr = await ctx.take(m.restart(false));
    if (bestK !== k && !(tr <= this.bestEstimate)) {
      checkpoint.save(x);
      best.restore(x);
      const trBest = await ctx.take(m.restart(false));
      if (trBest < tr || !Number.isFinite(tr)) {
        tr = trBest;
        detail = `${detail ? `${detail}; ` : ''}x is the best checked iterate, from iteration ${bestK}`;
      } else checkpoint.restore(x);
    }
    return ctx.finishExit(x, reason, k, tr, detail); // on the verified kernel where a tuned one runs
  }

  /** A watched scalar read in guarded mode was 0 or non-finite. */
  private async failed(f: Failure): Promise<SolveResult<V> | undefined> {
    const { ctx, m, x, k } = this;
    const { space } = ctx;
    if (f.value === 0 || f.limit !== undefined) {
      // a vanishing scalar may just mean r = 0: look at the residual before calling it a breakdown
      const rn = await ctx.take(m.residualNorm());
      if (rn <= ctx.tol) {
        const tr = await ctx.take(m.restart(false));
        if (tr <= ctx.tol) {
          if (await ctx.confirm(x, tr)) return ctx.finish(x, 'converged', k, tr);
          // the operator runs on its verified kernel now: restart the recurrence from this x
          space.release(m.restart(false));
          this.checkpoint.save(x);
          this.bestIsCheckpoint = false;
          this.kCheck = k;
          return undefined;
        }
      }
      if (f.limit !== undefined) {
        return this.final('breakdown', `${ctx.method}: near-breakdown at iteration ${k}: ${f.name} = ${f.value.toExponential(2)}, not above ${f.limit.toExponential(2)} (rounding noise in the ${space.precision} space: the step would divide by it)`);
      }
      return this.final('breakdown', `${ctx.method}: ${f.name} = 0 at iteration ${k}${rangeHint(ctx.bNorm)}`);
    }
    this.rollback(); // the step may have written non-finite values into x
    return this.final('non-finite', `${ctx.method}: ${f.name} = ${f.value} at iteration ${k}${rangeHint(ctx.bNorm)}`);
  }

  /** Restore x from the last clean check (the best iterate when that check was the best). */
  private rollback(): void {
    (this.bestIsCheckpoint ? this.best : this.checkpoint).restore(this.x);
  }

  /** A check: read the estimate and the queued scalars together, roll back or judge the estimate, take a checkpoint. */
  private async check(guarded: boolean): Promise<SolveResult<V> | undefined> {
    const { ctx, m, x, k } = this;
    const { space, opts } = ctx;
    const vals = await ctx.takeMany([m.residualNorm(), ...this.pending.map((w) => w.s)]);
    const limits = this.pending.map((w) => w.limit ?? 0);
    this.pending.length = 0;
    const rn = vals[0]!;
    const converging = rn <= ctx.tol;
    if (badScalar(vals, limits, converging) || !Number.isFinite(rn)) {
      if (guarded) {
        this.rollback();
        return this.final('non-finite', `${ctx.method}: residual estimate ${rn} at iteration ${k}`);
      }
      // roll back to the last clean check and replay with every scalar read before use
      this.rollback();
      this.k = this.kCheck;
      this.guardedUntil = this.k + opts.checkEvery;
      space.release(m.restart(false));
      return undefined;
    }
    if (await ctx.report(k, rn)) return this.final('stopped', ctx.aborted() ? 'signal aborted' : 'onIteration returned false');
    this.lastEstimates = [this.lastEstimates[1]!, rn];
    if (rn > DIVERGENCE * Math.max(this.r0, ctx.bNorm)) {
      return this.final(
        'breakdown',
        `${ctx.method}: divergence at iteration ${k}: the residual estimate ${rn.toExponential(2)} exceeds ${DIVERGENCE.toExponential(0)}·max(‖r₀‖, ‖b‖)${ctx.method.startsWith('bicg') ? ' (in BiCG and BiCGStab: a denominator small against its vectors, though above rounding noise — a near-breakdown of the biorthogonal recurrence; gmres has none)' : ''}`,
      );
    }
    let current = rn;
    if (converging) {
      const passed = await this.estimatePassed();
      if (typeof passed !== 'number') return passed;
      current = passed;
    }
    this.bestIsCheckpoint = current < this.bestEstimate;
    if (this.bestIsCheckpoint) {
      this.best.save(x);
      this.bestEstimate = current;
      this.bestK = k;
    } else this.checkpoint.save(x);
    this.kCheck = k;
    return undefined;
  }

  /** The estimate passed: recompute r = b − A·x (residual replacement) and let it decide. Returns the result, or the residual to go on with. */
  private async estimatePassed(): Promise<SolveResult<V> | number> {
    const { ctx, m, x, k } = this;
    const { space } = ctx;
    const own = m.trueResidualNorm?.(); // the step's own true residual (cg near its exit), else a product
    let tr = await ctx.take(own ?? m.restart(false));
    if (tr <= ctx.tol) {
      if (await ctx.confirm(x, tr)) return ctx.finish(x, 'converged', k, tr);
      tr = await ctx.take(m.restart(false)); // r on the verified kernel: the recurrence goes on from it
    }
    let current = tr;
    // every step only near the tolerance: far above it the restarted recurrence has many steps to go at the usual cadence
    // (a readback per step would cost ≈ 1 ms each on the GPU), and the drift it fixes is a few steps' worth
    this.denseChecks = tr <= DENSE_NEAR * ctx.tol;
    this.falseConvergences = tr > 0.5 * this.lastTrue ? this.falseConvergences + 1 : 0;
    this.lastTrue = Math.min(this.lastTrue, tr);
    if (this.falseConvergences >= STAGNATION_LIMIT && (await ctx.recheck(x, tr))) {
      // the stall came from a tuned kernel that went wrong: on the verified one now, go on
      current = await ctx.take(m.restart(false));
      this.falseConvergences = 0;
      this.lastTrue = current;
    } else if (this.falseConvergences >= STAGNATION_LIMIT) {
      // the better of this x and the best checked one (final compares their true residuals)
      return await this.final(
        'breakdown',
        `${ctx.method}: stagnation at iteration ${k}: the residual estimate passed the tolerance ${ctx.tol.toExponential(2)} ` +
          `${STAGNATION_LIMIT} times but ‖b − A·x‖/‖b‖ stays at ${(tr / ctx.bNorm).toExponential(2)}; the ${space.precision} ` +
          'space cannot resolve this tolerance (use refinedSolve for mixed-precision refinement)',
      );
    }
    return current;
  }
}


/**
 * Why a scalar may vanish or overflow for a sound system: ‖b‖ so small or large that squares of
 * the vectors (⟨p, A·p⟩ ~ ‖b‖²) leave float64 (host CG with b = 1e-200 said "⟨p, A·p⟩ = 0", as if A
 * were singular). Empty when ‖b‖ is within 1e±150.
 */
function rangeHint(bNorm: number): string {
  if (!(bNorm > 0) || (bNorm >= 1e-150 && bNorm <= 1e150)) return '';
  return ` (‖b‖ = ${bNorm.toExponential(2)}: products of vectors that size leave float64's range; scale b by a power of two, or use refinedSolve, which does)`;
}
