/**
 * The restart cycles of GMRES(m) ({@link gmres} in ./gmres): the cycle state and its named steps
 * (start of a cycle, the Arnoldi steps of ./gmres-arnoldi, batch read with the Givens update, end
 * of cycle and restart, exit checks). Split from gmres.ts (no logic change: the same arithmetic,
 * order of operations, readbacks and dispatches).
 * @module
 */
import type { VectorSpace } from '@gpusparse/formats';
import type { SolveContext } from '../common/context';
import type { SolveResult, StopReason } from '../common/result';
import { GivensLeastSquares } from './givens';
import { ArnoldiSteps, type Ortho } from './gmres-arnoldi';
import type { ArnoldiBlock } from './gmres-block';
import { checkB, lazyNorm, type PendingColumn, readBatch } from './gmres-reads';
import { assertFloat32Resolves } from '../common/f32-range';

export type { Ortho };

/** The restart cycles of {@link gmres} (V, w, z, keep are work vectors owned by the caller). */
export async function cycles<V, S>(ctx: SolveContext<V, S>, x: V, V: V[], w: V, z: V, m: number, ortho: Ortho, keep: V[], block: ArnoldiBlock<V> | undefined): Promise<SolveResult<V>> {
  return new GmresCycles(ctx, x, V, w, z, m, ortho, keep, block).run();
}

/**
 * The state of {@link gmres}'s restart cycles and their steps: start of a cycle, Arnoldi step,
 * batch read with the Givens update, end of a cycle (x update, restart residual, exit checks).
 * One instance per solve; {@link GmresCycles.run} drives it.
 */
class GmresCycles<V, S> {
  private readonly space: VectorSpace<V, S>;
  private readonly opts: SolveContext<V, S>['opts'];
  private readonly b: V;
  private readonly method: string;
  private readonly n: number;
  private readonly hasM: boolean;
  private k = 0;
  private readonly arnoldi: ArnoldiSteps<V, S>;
  /** ‖b‖ not read yet (block, no x0): the first cycle starts from v₀ = −b/‖b‖ made in the block. */
  private lazyB: boolean;
  private beta = Number.NaN;
  private falseConvergences = 0;
  private lastTrue = Number.POSITIVE_INFINITY;
  // After a fallback to the verified kernel the solve starts afresh from x: new Krylov space
  // (the next cycle starts from r = b − A·x) and no stagnation record. The false convergences of
  // the wrong kernel's solve must not count: with two of them carried over, the first one on the
  // verified kernel ended the solve 'breakdown' (H100, poisson2d 256², rtol 1e-5: at 1.00e-5).
  // The level the least-squares estimate must reach to end a cycle: the tolerance, halved after
  // each false convergence (the estimate passed, the true residual did not). Near the space's
  // attainable accuracy the true residual of x + V·y sits a rounding gap above the estimate: a
  // cycle that stops as soon as the estimate passes tol leaves the true residual at 1.00x tol,
  // and three such cycles ended the solve 'breakdown' at true rel 1.00e-5 for rtol 1e-5 (H100,
  // poisson2d 256², gmres(30), with or without a fallback; lavapipe the same without any fault).
  private aim: number;
  // Aiming lower can also leave x worse where the space's accuracy is exhausted: the stagnation
  // exit returns the best x seen at a false convergence (keep[0], one copy per false convergence);
  // keep[1] holds x before the last update of a preconditioned run (restoreIfNonFinite).
  private best = { beta: Number.POSITIVE_INFINITY, k: 0 };
  // Deferred β: where the Hessenberg is read in batches, a cycle that ended without passing does
  // not read its restart residual on its own: v₀ = r/‖r‖ is scaled on the device and ‖r‖ travels
  // with the next cycle's first batch (one readback per cycle instead of two). The checks on β
  // run at that read, before any column is used: a cycle whose start had already converged is
  // discarded (its steps are not counted) and x stays the one β belongs to.
  private readonly deferrable: boolean;
  private betaDev: S | undefined;
  /** With a basis block, the deferred β is in the block's start row and v₀ = −r/β is made there. */
  private betaInBlock = false;

  // the current cycle
  private kStart = 0;
  private ls: GivensLeastSquares | undefined;
  private pending: PendingColumn<S>[] = [];
  /** Columns usable for the update. */
  private used = 0;
  private stop: { reason: StopReason; detail?: string } | undefined;
  private estimate = Number.NaN;
  private passed = false;
  /** x before the last update is in keep[1], with its residual β and iteration (preconditioned runs). */
  private restorable: { beta: number; k: number } | undefined;

  constructor(
    private readonly ctx: SolveContext<V, S>,
    private readonly x: V,
    private readonly V: V[],
    private readonly w: V,
    private readonly z: V,
    private readonly m: number,
    ortho: Ortho,
    private readonly keep: V[],
    private readonly block: ArnoldiBlock<V> | undefined,
  ) {
    const { space, opts, b, method, n } = ctx;
    this.space = space;
    this.opts = opts;
    this.b = b;
    this.method = method;
    this.n = n;
    this.hasM = opts.preconditioner !== undefined;
    this.arnoldi = new ArnoldiSteps(ctx, V, w, z, ortho, block);
    this.lazyB = lazyNorm(block, opts);
    this.aim = ctx.tol;
    this.deferrable = opts.checkEvery > 1 && ortho !== 'icgs';
  }

  private basis(i: number): V {
    return this.arnoldi.basis(i);
  }

  /** r = b − A·x into w; its norm is the true residual (in the space's precision). */
  private async trueResidual(): Promise<number> {
    if (this.k === 0 && this.opts.x0 === undefined) {
      this.space.copy(this.b, this.w); // r = b
      return this.ctx.bNorm;
    }
    this.ctx.residual(this.x, this.w); // r = b − A·x
    return this.ctx.take(this.space.norm2(this.w));
  }

  /** Start afresh from x (after a fallback to the verified kernel): no stagnation record. */
  private fresh(): void {
    this.falseConvergences = 0;
    this.lastTrue = Number.POSITIVE_INFINITY;
    this.aim = this.ctx.tol;
    this.best = { beta: Number.POSITIVE_INFINITY, k: 0 };
  }

  /**
   * The checks on a β just read (kAt: the iteration it belongs to); a result ends the solve.
   * 'refreshed': a passing β did not pass on the operator's verified kernel ({@link SolveContext.confirm}):
   * the operator runs on that kernel now, and w and β hold the residual it gives.
   */
  private async checkBeta(kAt: number): Promise<SolveResult<V> | 'refreshed' | undefined> {
    const { ctx, x, beta } = this;
    if (!Number.isFinite(beta)) {
      const restored = this.restoreIfNonFinite();
      return ctx.finishExit(x, 'non-finite', kAt, this.beta, `${this.method}: ‖b − A·x‖ = ${beta} at iteration ${kAt}${restored ? `; ${restored}` : ''}`);
    }
    this.restorable = undefined; // a finite residual after the update: x stays
    if (beta <= ctx.tol) {
      if (await ctx.confirm(x, beta)) return ctx.finish(x, 'converged', kAt, beta);
      this.fresh(); // the history of the wrong kernel's solve says nothing of the verified one's
      this.beta = await this.trueResidual(); // r = b − A·x into w, on the verified kernel now
      return (await this.checkBeta(kAt)) ?? 'refreshed';
    }
    return undefined;
  }

  /** The cycles until a result. */
  async run(): Promise<SolveResult<V>> {
    this.beta = this.lazyB ? Number.NaN : await this.trueResidual();
    if (this.opts.recordHistory && !this.lazyB) this.ctx.history.push({ iteration: 0, residual: this.beta });
    if (this.lazyB) {
      this.space.copy(this.b, this.w);
      this.block!.start(this.w, this.basis(0));
      this.betaInBlock = true;
    }
    for (;;) {
      const start = await this.startCycle();
      if (start) return start;
      const steps = await this.steps();
      if (steps === 'restart') continue; // this cycle was built on the unverified residual
      if (steps) return steps;
      const end = await this.endCycle();
      if (end) return end;
    }
  }

  /** v₀ from the residual in w (β read on the host, or still on the device); a result ends the solve. */
  private async startCycle(): Promise<SolveResult<V> | undefined> {
    const { space, ctx, x, opts } = this;
    this.kStart = this.k;
    this.ls = undefined;
    if (this.betaDev === undefined && !this.betaInBlock) {
      const end = await this.checkBeta(this.k);
      if (end && end !== 'refreshed') return end;
      if (this.k >= opts.maxIterations) return ctx.finishExit(x, 'max-iterations', this.k, this.beta);
      if (ctx.aborted()) return ctx.finishExit(x, 'stopped', this.k, this.beta, 'signal aborted');
      space.axpby(1 / this.beta, this.w, 0, this.basis(0)); // v₀ = r / β (β was read on the host)
      this.block?.setStart(this.basis(0));
      this.ls = new GivensLeastSquares(this.m, this.beta);
    } else if (this.betaDev !== undefined) {
      const inv = space.div(1, this.betaDev);
      space.axpby(inv, this.w, 0, this.basis(0)); // v₀ = r / β (β still on the device)
      space.release(inv);
    }
    this.pending = [];
    this.used = 0;
    this.stop = undefined;
    this.estimate = this.beta;
    this.passed = false;
    return undefined;
  }

  /** The cycle's Arnoldi steps, each batch read when due; 'restart': start the cycle again from x. */
  private async steps(): Promise<SolveResult<V> | 'restart' | undefined> {
    const { ctx, opts, m, arnoldi } = this;
    for (let j = 0; j < m && this.k < opts.maxIterations; j++) {
      // Arnoldi step j: w = A·M⁻¹·v_j orthogonalised into v_{j+1}, its Hessenberg column pending
      this.k++;
      if (arnoldi.ortho === 'icgs') await arnoldi.icgsStep(j, this.pending);
      else arnoldi.orthogonalize(j, arnoldi.product(j), this.pending); // records its passes, no await
      const last = j === m - 1 || this.k >= opts.maxIterations;
      // the first step's own check (an early stop) costs a readback per solve: not with the block
      if (!(last || (this.k === 1 && !this.block) || this.k % opts.checkEvery === 0 || ctx.aborted())) continue;
      const end = await this.readAndUpdate(j);
      if (end) return end;
      if (this.stop || this.passed) break;
    }
    return undefined;
  }

  /** The batch read after step j: the deferred β's checks, then the Givens update of the pending columns. */
  private async readAndUpdate(j: number): Promise<SolveResult<V> | 'restart' | undefined> {
    const { ctx } = this;
    const got = await readBatch(ctx, this.block, this.pending, this.betaDev, this.betaInBlock);
    if (this.betaDev !== undefined || this.betaInBlock) {
      const end = await this.takeBeta(got.beta!);
      if (end === 'refreshed') {
        // this cycle was built on the unverified residual: discard it, start again from x
        this.k = this.kStart;
        return 'restart';
      }
      if (end) return end;
    }
    this.addColumns(got.cols, j);
    this.pending.length = 0;
    if (!this.stop && !this.passed && (await ctx.report(this.k, this.estimate))) this.stop = { reason: 'stopped', detail: ctx.aborted() ? 'signal aborted' : 'onIteration returned false' };
    return undefined;
  }

  /** The deferred β, read with the cycle's first batch: its checks, and the least-squares problem it starts. */
  private async takeBeta(value: number): Promise<SolveResult<V> | 'refreshed' | undefined> {
    // v₀ made by the block is −r/β: the least-squares right-hand side is −β·e₁ in its basis
    const sign = this.betaInBlock ? -1 : 1;
    this.betaDev = undefined;
    this.betaInBlock = false;
    this.beta = value;
    if (this.lazyB) {
      this.lazyB = false;
      this.ctx.setBNorm(this.beta);
      await assertFloat32Resolves(this.ctx, this.beta);
      const end = checkB(this.ctx, this.x, this.beta);
      if (end) return end;
      // the tolerance exists only now: whatever the cycle state derives from it starts here
      // (a stop level taken from ctx.tol before this point would be NaN and never pass)
      this.fresh();
    }
    if (this.opts.recordHistory) this.ctx.history.push({ iteration: this.kStart, residual: this.beta });
    const end = await this.checkBeta(this.kStart);
    if (end) return end;
    this.ls = new GivensLeastSquares(this.m, sign * this.beta);
    this.estimate = this.beta;
    return undefined;
  }

  /** The Givens update of the columns just read (after step j): the estimate, or why the cycle stops. */
  private addColumns(cols: readonly number[][], j: number): void {
    const { method, k } = this;
    for (const vals of cols) {
      const c = this.ls!.columns;
      if (this.stop || this.passed) continue;
      const badAt = vals.findIndex((v) => !Number.isFinite(v));
      if (badAt >= 0) {
        this.stop = { reason: 'non-finite', detail: `${method}: Hessenberg entry H[${badAt}][${c}] = ${vals[badAt]} at iteration ${k - j + c}` };
        continue;
      }
      const st = this.ls!.addColumn(vals);
      if (st.singular) {
        if (c === 0) this.stop = { reason: 'breakdown', detail: `${method}: H[0][0] = H[1][0] = 0 at iteration ${k - j} (A·v₀ = 0: A is singular on the residual)` };
        else this.passed = true; // a singular column adds nothing: use the columns before it
        continue;
      }
      this.used = c + 1;
      this.estimate = st.estimate;
      if (this.estimate <= this.aim) this.passed = true;
    }
  }

  /** x += M⁻¹·V·y, then the restart residual (deferred, or read and checked); a result ends the solve. */
  private async endCycle(): Promise<SolveResult<V> | undefined> {
    const { space, ctx, x, w, opts, block } = this;
    // steps past the column that passed (done before the check saw it) are not counted as iterations
    if (this.passed) this.k = this.kStart + Math.max(this.used, 1);
    // with a preconditioner the update applies M⁻¹ once more: should it have begun to return NaN,
    // x + M⁻¹·V·y is non-finite (x was NaN at the 'non-finite' exit). x is kept (keep[1], one copy
    // per cycle) and restored when the residual after the update reads non-finite — here, or at
    // the next cycle's first read when that residual is deferred
    const before = this.hasM && this.used > 0 ? (this.keep[1] ??= space.create(this.n)) : undefined;
    if (before) {
      space.copy(x, before);
      this.restorable = { beta: this.beta, k: this.kStart };
    }
    if (this.used > 0) this.updateX();
    const previous = this.beta;
    if (this.deferrable && !this.stop && !this.passed && this.used > 0 && this.k < opts.maxIterations && !ctx.aborted()) {
      ctx.residual(x, w); // r = b − A·x; ‖r‖ is read with the next cycle's first batch
      if (block) {
        block.start(w, this.basis(0)); // v₀ = −r/‖r‖, ‖r‖ in the block
        this.betaInBlock = true;
      } else this.betaDev = space.norm2(w);
      return undefined;
    }
    this.beta = await this.trueResidual();
    const restored = this.restoreIfNonFinite();
    if (restored) this.stop = { reason: 'non-finite', detail: `${this.stop?.detail ? `${this.stop.detail}; ` : ''}${restored}` };
    if (opts.recordHistory) ctx.history.push({ iteration: this.k, residual: this.beta });
    return this.exitChecks(previous);
  }

  /** When β (just read after an update) is non-finite and x before it was kept: x and β back, and what was done in words. */
  private restoreIfNonFinite(): string | undefined {
    const r = this.restorable;
    if (!r || Number.isFinite(this.beta)) return undefined;
    this.restorable = undefined;
    this.space.copy(this.keep[1]!, this.x); // x = the cycle's start, whose residual is r.beta
    this.beta = r.beta;
    return `x + M⁻¹·V·y was non-finite (the preconditioner's products?), x is the cycle's start (‖b − A·x‖ = ${r.beta.toExponential(2)}, iteration ${r.k})`;
  }

  /** x = x + M⁻¹·V·y with y the least-squares solution over the used columns. */
  private updateX(): void {
    const { space, ctx, x, w, z } = this;
    const y = this.ls!.solve(this.used);
    const coeffs = Array.from(y);
    const vs = this.V.slice(0, this.used);
    if (this.hasM) {
      space.combine(coeffs, vs, 0, w); // w = V·y
      ctx.precond(w, z); // z = M⁻¹·V·y
      space.axpby(1, z, 1, x); // x = x + M⁻¹·V·y
    } else space.combine(coeffs, vs, 1, x); // x = x + V·y
  }

  /** The checks on the restart residual just read (previous: the cycle's starting β); a result ends the solve. */
  private async exitChecks(previous: number): Promise<SolveResult<V> | undefined> {
    const { ctx, x, stop, used, passed } = this;
    const beta = this.beta;
    if (stop?.reason === 'breakdown' && (await ctx.recheck(x, beta))) {
      this.fresh();
      this.beta = await this.trueResidual(); // the breakdown came from a tuned kernel that went wrong: go on
      return undefined;
    }
    if (stop && !(stop.reason === 'stopped' && beta <= ctx.tol)) return ctx.finishExit(x, stop.reason, this.k, beta, stop.detail);
    const stalled = (used === 0 && beta >= previous) || (passed && beta > ctx.tol && beta > 0.5 * this.lastTrue && this.falseConvergences >= 2);
    if (stalled && (await ctx.recheck(x, beta))) {
      // the stall came from a tuned kernel that went wrong: on the verified one now, go on
      this.fresh();
      this.beta = await this.trueResidual();
      return undefined;
    }
    if (used === 0 && beta >= previous) {
      return ctx.finishExit(x, 'breakdown', this.k, beta, `${this.method}: no progress in a cycle at iteration ${this.k} (singular least-squares problem)`);
    }
    if (passed && beta > ctx.tol) return this.falseConvergence();
    return undefined;
  }

  /** A false convergence (the estimate passed, ‖b − A·x‖ did not): aim lower, keep the best x, end at the third. */
  private falseConvergence(): Promise<SolveResult<V>> | undefined {
    const { space, ctx, x, keep, k } = this;
    let beta = this.beta;
    this.falseConvergences = beta > 0.5 * this.lastTrue ? this.falseConvergences + 1 : 0;
    this.lastTrue = Math.min(this.lastTrue, beta);
    this.aim = Math.max(this.aim / 2, ctx.tol / 16);
    if (beta < this.best.beta) {
      space.copy(x, (keep[0] ??= space.create(this.n)));
      this.best = { beta, k };
    }
    if (this.falseConvergences < 3) return undefined;
    let detail =
      `${this.method}: stagnation at iteration ${k}: the least-squares estimate passed the tolerance ${ctx.tol.toExponential(2)} ` +
      `3 times but ‖b − A·x‖ stays at ${beta.toExponential(2)}; the ${space.precision} space cannot resolve this tolerance ` +
      '(use refinedSolve for mixed-precision refinement)';
    if (this.best.beta < beta) {
      space.copy(keep[0]!, x);
      detail += `; x is the best one, from iteration ${this.best.k} (‖b − A·x‖ = ${this.best.beta.toExponential(2)})`;
      beta = this.best.beta;
      this.beta = beta;
    }
    return ctx.finishExit(x, 'breakdown', k, beta, detail);
  }
}
