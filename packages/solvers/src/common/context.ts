/**
 * Book-keeping shared by every Krylov solver: counted operator and preconditioner applications,
 * counted readbacks, the convergence rule, history, the user callback and abort signal, and the
 * final {@link SolveResult}.
 * @module
 */
import { type KernelMark, kernelMark, type LinearOperator, type ScalarLike, unverifiedKernelOf, type VectorSpace } from '@gpusparse/formats';
import { type HistoryPoint, newStats, type SolveResult, type SolverStats, type StopReason } from './result';
import type { ResolvedOptions } from './options';
import { returnedVoid } from './operator-check';
import { float32ToleranceUnresolved } from './f32-range';

/**
 * One solve in progress. Cost: every method forwards to the space or operator and bumps a
 * counter; `readOne`/`readMany` are the only synchronisation points.
 * @example
 * const ctx = new SolveContext('cg', space, op, b, resolveOptions('cg', space, op, b, {}));
 * ctx.matvec(x, q); // q = A·x, stats.matvecs += 1
 */
export class SolveContext<V, S> {
  readonly stats: SolverStats = newStats();
  readonly history: HistoryPoint[] = [];
  readonly n: number;
  /** ‖b‖ once {@link SolveContext.setBNorm} ran. */
  bNorm = Number.NaN;
  /** max(rtol·‖b‖, atol). */
  tol = Number.NaN;
  private readonly t0 = performance.now();
  /** The operator's kernel state at the start: products of this solve may have run unverified since. */
  private readonly mark: KernelMark | undefined;

  constructor(
    readonly method: string,
    readonly space: VectorSpace<V, S>,
    readonly op: LinearOperator<V>,
    readonly b: V,
    readonly opts: ResolvedOptions<V>,
  ) {
    this.n = op.rows;
    this.mark = kernelMark(op);
  }

  /** y = A·x (counted). */
  matvec(x: V, y: V): void {
    this.stats.matvecs++;
    returnedVoid(this.op.apply(x, y), this.method, 'apply', y);
  }

  /** y = Aᵀ·x (counted); the caller checked that the operator has it. */
  matvecTranspose(x: V, y: V): void {
    this.stats.matvecs++;
    returnedVoid(this.op.applyTranspose!(x, y), this.method, 'applyTranspose', y);
  }

  /** z = M⁻¹·r (counted); the caller checked that a preconditioner is set. */
  precond(r: V, z: V): void {
    this.stats.precondApplies++;
    returnedVoid(this.opts.preconditioner!.apply(r, z), this.method, 'preconditioner apply', z);
  }

  /** z = M⁻ᵀ·r (counted). */
  precondTranspose(r: V, z: V): void {
    this.stats.precondApplies++;
    returnedVoid(this.opts.preconditioner!.applyTranspose!(r, z), this.method, 'preconditioner applyTranspose', z);
  }

  /** r = b − A·x, one matvec. `x` and `r` must be different vectors. */
  residual(x: V, r: V): void {
    this.matvec(x, r);
    // r = b − A·x
    this.space.axpby(1, this.b, -1, r);
  }

  /** One scalar read (one synchronisation). */
  async readOne(s: ScalarLike<S>): Promise<number> {
    this.stats.readbacks++;
    return this.space.read(s);
  }

  /** Several scalars with one synchronisation. */
  async readMany(s: readonly ScalarLike<S>[]): Promise<number[]> {
    this.stats.readbacks++;
    return this.space.readMany(s);
  }

  /** Read a scalar the caller owns and release it (one synchronisation). */
  async take(s: S): Promise<number> {
    const v = await this.readOne(s);
    this.space.release(s);
    return v;
  }

  /** Read scalars the caller owns with one synchronisation and release them. */
  async takeMany(s: readonly S[]): Promise<number[]> {
    const v = await this.readMany(s);
    for (const x of s) this.space.release(x);
    return v;
  }

  /** Fix ‖b‖ and the tolerance max(rtol·‖b‖, atol). */
  setBNorm(bNorm: number): void {
    this.bNorm = bNorm;
    this.tol = Math.max(this.opts.rtol * bNorm, this.opts.atol);
  }

  /** The initial vector x = x0 (copied, never mutated) or 0. */
  initialX(): V {
    const x = this.space.create(this.n);
    if (this.opts.x0 !== undefined) this.space.copy(this.opts.x0, x);
    return x;
  }

  /** True when the abort signal fired. */
  aborted(): boolean {
    return this.opts.signal?.aborted === true;
  }

  /**
   * Record a checked residual estimate: history, then the user callback (awaited when it
   * returns a Promise: session 13, a Promise was taken for "go on" and its rejection went
   * unhandled) and the abort signal. Resolves to true when the solve must stop ('stopped').
   */
  async report(iteration: number, residual: number): Promise<boolean> {
    if (this.opts.recordHistory) this.history.push({ iteration, residual });
    const cb = this.opts.onIteration;
    if (cb) {
      const verdict = await cb({ iteration, residual, relativeResidual: residual / this.bNorm, tolerance: this.tol });
      if (verdict === false) return true;
    }
    return this.aborted();
  }

  /** Note something that went wrong without ending the solve (result.stats.warnings). */
  warn(message: string): void {
    (this.stats.warnings ??= []).push(message);
  }

  /**
   * Before a 'converged' verdict on x whose true residual `tr` came from the operator's products:
   * when those run on a kernel other than the operator's verified one ({@link unverifiedKernelOf}:
   * in-solve tuning switched to a faster candidate), ‖b − A·x‖ once more on the verified kernel
   * (one product, one readback). True when it passes the tolerance, or when there is nothing to
   * check (no cost then). Otherwise the operator falls back to the verified kernel, the warning
   * goes into stats.warnings, and the caller must restart from r = b − A·x and go on: a kernel
   * that went wrong after the tuning never hands back a wrong x labelled converged.
   */
  async confirm(x: V, tr: number): Promise<boolean> {
    const chk = unverifiedKernelOf(this.op, this.mark);
    if (!chk) return true;
    const r = this.space.create(this.n);
    try {
      this.stats.matvecs++;
      chk.applyVerified(x, r); // r = A·x on the verified kernel
      this.space.axpby(1, this.b, -1, r); // r = b − A·x
      const verified = await this.take(this.space.norm2(r));
      if (verified <= this.tol) return true;
      const active = chk.activeLabel;
      const why = `gave ‖b − A·x‖ = ${tr.toExponential(2)} where the verified kernel ${chk.verifiedLabel} gives ${verified.toExponential(2)} (tolerance ${this.tol.toExponential(2)})`;
      chk.fallBackToVerified(why);
      this.warn(`${this.method}: the operator's tuned kernel ${active} ${why}; the operator fell back to the verified kernel and the solve went on from this x`);
      return false;
    } finally {
      this.space.release(r);
    }
  }

  /**
   * Before a stop for stagnation or breakdown on an operator that runs an unverified kernel: A·x
   * on the tuned and on the verified kernel (two products, one readback). True when they differ
   * by more than 1e-3 of ‖A·x‖ (or not finitely): the operator fell back to the verified kernel
   * (warning in stats.warnings) and the caller must restart from r = b − A·x and go on — the
   * stall came from the tuned kernel, not from the problem. False (no cost when nothing runs
   * unverified): the stop stands.
   */
  async recheck(x: V, tr: number): Promise<boolean> {
    const chk = unverifiedKernelOf(this.op, this.mark);
    if (!chk) return false;
    const p = this.space.create(this.n);
    const q = this.space.create(this.n);
    try {
      this.stats.matvecs += 2;
      this.op.apply(x, p); // the tuned kernel's A·x
      chk.applyVerified(x, q); // the verified kernel's
      const qn = this.space.norm2(q);
      this.space.axpby(-1, q, 1, p); // p = difference
      const [d, s] = await this.takeMany([this.space.norm2(p), qn]);
      // float32 summation order moves a product by ~1e-7 of its norm
      if (d! <= 1e-3 * s!) return false;
      const active = chk.activeLabel;
      const why = `gave A·x differing from the verified kernel ${chk.verifiedLabel}'s by ${d!.toExponential(2)} (‖A·x‖ = ${s!.toExponential(2)}) when the solve stalled at ‖b − A·x‖ = ${tr.toExponential(2)}`;
      chk.fallBackToVerified(why);
      this.warn(`${this.method}: the operator's tuned kernel ${active} ${why}; the operator fell back to the verified kernel and the solve went on from this x`);
      return true;
    } finally {
      this.space.release(p);
      this.space.release(q);
    }
  }

  /**
   * Build the result of an exit without a 'converged' verdict ('max-iterations', 'breakdown',
   * 'stopped', 'non-finite') on x whose true residual `tr` came from the operator's products. When
   * those run on a kernel other than the operator's verified one ({@link unverifiedKernelOf}), the
   * reported residual is ‖b − A·x‖ recomputed on the verified kernel: a kernel that went wrong
   * after the tuning must not hand the user a wrong residual figure. A·x on the tuned kernel comes
   * with it (two products, one readback): when the two products differ by more than 1e-3 of ‖A·x‖
   * (as {@link SolveContext.recheck} judges), the operator falls back to the verified kernel
   * (warning in stats.warnings). The residual figures alone cannot tell: near float32's floor two
   * right kernels' residuals differ by their rounding. A 'max-iterations' or 'breakdown' exit
   * whose verified residual passes the tolerance is 'converged' (the verdict belongs to the
   * verified residual). No cost when nothing runs unverified.
   */
  async finishExit(x: V, reason: StopReason, iterations: number, tr: number, detail?: string): Promise<SolveResult<V>> {
    const chk = unverifiedKernelOf(this.op, this.mark);
    if (!chk || reason === 'converged' || !Number.isFinite(this.bNorm)) return this.finish(x, reason, iterations, tr, detail);
    const p = this.space.create(this.n);
    const q = this.space.create(this.n);
    let verified: number;
    let d: number;
    let s: number;
    try {
      this.stats.matvecs += 2;
      this.op.apply(x, p); // the tuned kernel's A·x
      chk.applyVerified(x, q); // the verified kernel's
      const qn = this.space.norm2(q);
      this.space.axpby(-1, q, 1, p); // p = difference
      this.space.axpby(1, this.b, -1, q); // q = b − A·x on the verified kernel
      [d, s, verified] = (await this.takeMany([this.space.norm2(p), qn, this.space.norm2(q)])) as [number, number, number];
    } finally {
      this.space.release(p);
      this.space.release(q);
    }
    if (Number.isFinite(s) && !(d <= 1e-3 * s)) {
      const active = chk.activeLabel;
      const why = `gave ‖b − A·x‖ = ${tr.toExponential(2)} at the '${reason}' exit where the verified kernel ${chk.verifiedLabel} gives ${verified.toExponential(2)} (A·x differs by ${d.toExponential(2)}, ‖A·x‖ = ${s.toExponential(2)})`;
      chk.fallBackToVerified(why);
      this.warn(`${this.method}: the operator's tuned kernel ${active} ${why}; the operator fell back to the verified kernel and the result reports the verified residual`);
      detail = `${detail ? `${detail}; ` : ''}trueResidual recomputed on the verified kernel ${chk.verifiedLabel} (the tuned kernel ${active} gave ${tr.toExponential(2)})`;
    }
    if ((reason === 'max-iterations' || reason === 'breakdown') && verified <= this.tol) {
      detail = `${detail ? `${detail}; ` : ''}the '${reason}' exit's residual on the verified kernel passes the tolerance`;
      reason = 'converged';
    }
    return this.finish(x, reason, iterations, verified, detail);
  }

  /** Build the result; `converged` is decided by the true residual against the tolerance. */
  finish(x: V, reason: StopReason, iterations: number, trueResidual: number, detail?: string): SolveResult<V> {
    this.stats.ms = performance.now() - this.t0;
    const unresolved = reason === 'converged' ? float32ToleranceUnresolved(this.space.precision, this.n, this.tol, this.bNorm, this.method) : undefined;
    if (unresolved) {
      reason = 'breakdown';
      detail = detail ? `${detail}; ${unresolved}` : unresolved;
    }
    const result: SolveResult<V> = {
      x,
      converged: reason === 'converged',
      reason,
      iterations,
      trueResidual,
      bNorm: this.bNorm,
      history: this.history,
      stats: this.stats,
      method: this.method,
    };
    if (detail !== undefined) result.detail = detail;
    return result;
  }
}
