/**
 * Conjugate gradients with reliable updates (Sleijpen & van der Vorst 1996; the mixed-precision
 * form of Clark et al. 2010): one CG recurrence in the inner (float32) space for the whole
 * solve, with x and the true residual kept in the outer (extended) precision. Each time the
 * recursive residual has dropped by `delta` since the last replacement, the accumulated float32
 * correction is added to x in extended precision, r = b − A·x is recomputed there and replaces
 * the recursive one — but the search direction p is kept. CG thus keeps its Krylov space (and
 * its superlinear convergence) across outer steps, where restarted refinement throws it away at
 * every step: on the 3-D stencils of the bench set, float32 CG restarted at 1e-4 / 1e-5 needed
 * 1.8–2× the iterations of float64 CG.
 *
 * Vectors are scaled: at each replacement the float32 residual is r_true/‖r_true‖ (unit norm) and
 * p is rescaled with it, so float32 neither under- nor overflows however far the residual falls.
 *
 * Per iteration (no preconditioner): 1 float32 product, 2 dots, 3 axpby — plain CG's work, with
 * ⟨p, A·p⟩, the x_c / r updates and ⟨r, r⟩ in one pass where the space offers `cgStep`, and with
 * a check lag the direction update fused too (`cgIteration`; WebGPU: 4 dispatches per iteration
 * with the product, 5 without the lag, 8 unfused). Per check (every `checkEvery` iterations):
 * one readback, awaited `checkLag` iterations later (the GPU keeps running meanwhile), and one
 * copy of x_c. Per replacement: one readback of the scalars since the check (lag > 0), one
 * extended-precision residual (one readback), one update of x, one rescale of p, one clear of
 * the correction.
 * @module
 */
import type { StopReason } from '../common/result';
import { cgIteration, cgStep } from '../krylov/fused-update';
import {
  type CheckResult,
  type Pending,
  type ReliableCgHooks,
  type ReliableCgInput,
  type ReliableCgOutcome,
  type Watched,
  Work,
} from './reliable-cg-work';
import { CheckPlanner, judgeCheck } from './reliable-cg-plan';
import { returnedVoid } from '../common/operator-check';

export type { ReliableCgHooks, ReliableCgInput, ReliableCgOutcome } from './reliable-cg-work';

/**
 * Solve with reliable-update CG (A and the preconditioner symmetric positive definite). The
 * state holds x (updated in place) and b; the caller reads the solution from it.
 * @example
 * const out = await reliableCg({ space, op, state, tol: 1e-8 * bNorm, rn0: bNorm, delta: 1e-3, checkEvery: 32, maxSegment: 1000, maxReplacements: 30 }, hooks);
 */
export async function reliableCg<V, S>(inp: ReliableCgInput<V, S>, hooks: ReliableCgHooks): Promise<ReliableCgOutcome> {
  const w = new Work(inp.space, inp.op.rows, inp.preconditioner !== undefined);
  try {
    return await new Run(inp, hooks, w).solve();
  } finally {
    w.dispose();
  }
}

/** True/recursive residual ratio above which a replacement also restarts the search direction. */
const DRIFT = 2;

class Run<V, S> {
  private k = 0;
  private replacements = 0;
  /** ‖r_true‖ at the last replacement: the float32 vectors are in units of it. */
  private scale: number;
  private bestRn: number;
  private slow = 0;
  private segmentStart = 0;
  private readonly watched: Watched<S>[] = [];
  private stopAsked = false;
  /** Iteration of the next check (the first iteration is always checked). */
  private nextCheck = 1;
  private readonly planner: CheckPlanner;
  private readonly lag: number;
  private pending: Pending<S> | undefined;
  /** The search direction of the last iteration is already updated (the fused, lagged form). */
  private pDone = false;

  constructor(
    private readonly inp: ReliableCgInput<V, S>,
    private readonly hooks: ReliableCgHooks,
    private readonly w: Work<V, S>,
  ) {
    this.scale = inp.rn0;
    this.bestRn = inp.rn0;
    this.lag = Math.max(0, Math.floor(inp.checkLag ?? 0));
    this.planner = new CheckPlanner(inp);
  }

  async solve(): Promise<ReliableCgOutcome> {
    const { inp } = this;
    const rn = inp.rn0;
    if (!Number.isFinite(rn)) return this.out('non-finite', rn, `refinedSolve: ‖b − A·x‖ = ${rn} before the first iteration`);
    if (rn <= inp.tol) return this.out('converged', rn);
    inp.state.correctionRhs(1 / rn, this.w.r); // r = r_true / ‖r_true‖
    this.freshDirection();
    for (;;) {
      if (inp.signal?.aborted) {
        await this.cleanTail();
        return this.out('stopped', await this.replace('stopped'), 'signal aborted');
      }
      this.k++;
      this.iterate();
      const segment = this.k - this.segmentStart;
      if (!this.pending && (this.k >= this.nextCheck || segment >= inp.maxSegment)) this.startCheck();
      const p = this.pending;
      if (!p || (this.k < p.evalAt && segment < inp.maxSegment)) {
        this.finishStep(); // lag 0 and no check here: the direction update waited for nothing
        continue;
      }
      const stop = await this.evaluate(p);
      if (stop) return stop;
    }
  }

  /**
   * One CG iteration: q = A·p, x_c += α·p, r −= α·q, z = M⁻¹·r, ρ' = ⟨r, z⟩ and, in the lagged
   * form, p = z + (ρ'/ρ)·p (one fused pass where the space offers it). ⟨p, q⟩ and ρ' are
   * watched: a vanishing or non-finite one is caught by the next check, which restores x_c.
   */
  private iterate(): void {
    const { inp, w } = this;
    const s = inp.space;
    this.hooks.count('matvec');
    returnedVoid(inp.op.apply(w.p, w.q), 'refinedSolve reliable cg', 'apply', w.q);
    const fuse = this.lag > 0;
    let pq: S;
    let rhoNew: S;
    if (!inp.preconditioner) {
      ({ pq, rr: rhoNew } = fuse ? cgIteration(s, w.rho!, w.p, w.q, w.xc, w.r) : cgStep(s, w.rho!, w.p, w.q, w.xc, w.r));
    } else {
      pq = s.dot(w.p, w.q);
      const alpha = s.div(w.rho!, pq);
      const minusAlpha = s.neg(alpha);
      s.axpby(alpha, w.p, 1, w.xc);
      s.axpby(minusAlpha, w.q, 1, w.r);
      for (const t of [alpha, minusAlpha]) s.release(t);
      this.hooks.count('precond');
      returnedVoid(inp.preconditioner.apply(w.r, w.z), 'refinedSolve reliable cg', 'preconditioner apply', w.z);
      rhoNew = s.dot(w.r, w.z);
      if (fuse) this.direction(rhoNew);
    }
    this.watched.push({ name: '⟨p, A·p⟩', k: this.k, s: s.mul(pq, 1) });
    s.release(pq);
    this.watched.push({ name: 'ρ = ⟨r, z⟩', k: this.k, s: s.mul(rhoNew, 1) });
    this.pDone = fuse;
    if (fuse) w.setRho(rhoNew);
    else this.rhoNew = rhoNew;
  }

  /** ρ' of the last iteration while its direction update waits for the check (lag 0). */
  private rhoNew: S | undefined;

  /** p = z + β·p with β = ρ'/ρ (no ρ update). */
  private direction(rhoNew: S): void {
    const s = this.inp.space;
    const beta = s.div(rhoNew, this.w.rho!);
    s.axpby(1, this.w.z, beta, this.w.p);
    s.release(beta);
  }

  /** Finish a lag-0 iteration: the direction update and ρ = ρ'. */
  private finishStep(): void {
    const rhoNew = this.rhoNew;
    if (rhoNew === undefined) return;
    this.rhoNew = undefined;
    this.direction(rhoNew);
    this.w.setRho(rhoNew);
  }

  /** Copy x_c aside and start the readback of ‖r‖ and the watched scalars (no wait). */
  private startCheck(): void {
    const { inp, w } = this;
    const s = inp.space;
    const snap = w.safe === 0 ? 1 : 0;
    s.copy(w.xc, w.snaps[snap]);
    const rho = this.rhoNew ?? w.rho!;
    const norm = inp.preconditioner ? s.norm2(w.r) : s.sqrt(rho);
    const list = this.watched.splice(0);
    this.hooks.count('readback');
    const read = s.readMany([norm, ...list.map((x) => x.s)]);
    read.catch(() => undefined); // awaited in evaluate(); a rejection is handled there
    (s as { flush?: () => void }).flush?.call(s);
    this.pending = { k: this.k, evalAt: this.k + this.lag, snap, read, norm, list };
  }

  /** Await a readback and judge its scalars. */
  private async settle(p: Pending<S>): Promise<CheckResult> {
    const s = this.inp.space;
    (s as { flush?: () => void }).flush?.call(s); // the iterations recorded since run while we wait
    let vals: number[];
    try {
      vals = await p.read;
    } finally {
      for (const x of p.list) s.release(x.s);
      s.release(p.norm);
    }
    return judgeCheck(vals, p.list, p.k, this.scale, this.inp.tol);
  }

  /**
   * Before x takes x_c outside a check: wait for a pending check and read the scalars of the
   * iterations after it; x_c goes back to the last verified copy when any was bad. Resolves to
   * true when x_c holds only verified iterations.
   */
  private async cleanTail(): Promise<boolean> {
    const { w } = this;
    const s = this.inp.space;
    const p = this.pending;
    this.pending = undefined;
    if (p) {
      const c = await this.settle(p);
      if (c.bad) {
        this.restoreSafe();
        return false;
      }
      w.safe = p.snap;
    }
    const list = this.watched.splice(0);
    if (!list.length) return true;
    this.hooks.count('readback');
    const vals = await s.readMany([1, ...list.map((x) => x.s)]);
    for (const x of list) s.release(x.s);
    if (!judgeCheck(vals, list, this.k, this.scale, this.inp.tol).bad) return true;
    this.restoreSafe();
    return false;
  }

  /** x_c = the last verified copy (0 when none). */
  private restoreSafe(): void {
    const { w } = this;
    const s = this.inp.space;
    if (w.safe < 0) s.fill(w.xc, 0);
    else s.copy(w.snaps[w.safe], w.xc);
    for (const x of this.watched.splice(0)) s.release(x.s);
  }

  /** Act on a check's readback: breakdown recovery, a replacement, or the plan of the next check. */
  private async evaluate(p: Pending<S>): Promise<ReliableCgOutcome | undefined> {
    const { inp, w } = this;
    this.pending = undefined;
    const check = await this.settle(p);
    if (check.bad) {
      // a vanishing or non-finite scalar: the correction since the last clean check is lost,
      // x gets the clean one, and CG restarts from the true residual with p = z
      this.restoreSafe();
      this.dropRhoNew();
      const rn = await this.replace('breakdown');
      if (rn <= inp.tol) return this.out('converged', rn);
      if (this.slow >= 1 || !Number.isFinite(rn)) {
        return this.out(Number.isFinite(check.value) ? 'breakdown' : 'non-finite', rn, `refinedSolve (reliable CG): ${check.name} = ${check.value} at iteration ${check.k}`);
      }
      this.slow++;
      this.freshDirection();
      return undefined;
    }
    w.safe = p.snap;
    const segment = this.k - this.segmentStart;
    const est = check.rel * this.scale;
    if (!(est <= inp.tol || check.rel <= inp.delta || segment >= inp.maxSegment)) {
      this.nextCheck = Math.max(this.k + 1, this.planner.plan(check.rel, p.k, this.scale));
      this.finishStep();
      return undefined;
    }
    const tailOk = await this.cleanTail();
    const old = this.scale;
    // the fused form already added the recursive z to p: take it out, the new z goes in below
    if (this.pDone && tailOk) inp.space.axpby(-1, w.z, 1, w.p);
    this.dropRhoNew();
    const rn = await this.replace(segment >= inp.maxSegment && check.rel > inp.delta ? 'max-iterations' : 'converged', est);
    const stop = this.verdict(rn);
    if (stop) return stop;
    // the recursive residual had drifted far from the true one (it fell below what float32
    // resolves): p is no longer conjugate to the new r, so CG restarts from it (p = z); the
    // same when iterations after the check went bad
    if (!tailOk || rn > DRIFT * est) this.freshDirection();
    else this.afterReplacement(old);
    return undefined;
  }

  private dropRhoNew(): void {
    if (this.rhoNew !== undefined) this.inp.space.release(this.rhoNew);
    this.rhoNew = undefined;
  }

  /**
   * x += scale·x_c in extended precision, r_true = b − A·x, and (when finite and non-zero) the
   * float32 residual replaced by r_true/‖r_true‖, the new scale. Resolves to ‖r_true‖.
   */
  private async replace(reason: StopReason, estimate = Number.NaN): Promise<number> {
    const { inp, w } = this;
    await inp.state.update(this.scale, w.xc);
    inp.space.fill(w.xc, 0);
    w.safe = -1;
    const rn = await inp.state.residualNorm();
    this.replacements++;
    const iterations = this.k - this.segmentStart;
    this.segmentStart = this.k;
    this.planner.reset(this.k);
    this.slow = rn < 0.9 * this.bestRn ? 0 : this.slow + 1;
    if (rn < this.bestRn) {
      this.bestRn = rn;
      inp.state.saveBest();
    }
    if (Number.isFinite(rn) && rn > inp.tol) {
      this.scale = rn;
      inp.state.correctionRhs(1 / rn, w.r);
    }
    this.nextCheck = this.k + this.planner.gap(1, this.scale); // no readback right after a replacement
    this.stopAsked = (await this.hooks.onReplacement({ replacement: this.replacements, residual: rn, iterations, reason, estimate })) === false;
    return rn;
  }

  /** The stop rules after a replacement (converged, callback, non-finite, stagnation, limit). */
  private verdict(rn: number): ReliableCgOutcome | undefined {
    const { inp } = this;
    if (!Number.isFinite(rn)) return this.out('non-finite', rn, `refinedSolve: ‖b − A·x‖ = ${rn} at replacement ${this.replacements}`);
    if (rn <= inp.tol) return this.out('converged', rn);
    if (this.stopAsked) return this.out('stopped', rn, 'onOuterIteration returned false');
    if (this.slow >= 2) {
      inp.state.restoreBest();
      const detail =
        `refinedSolve (reliable CG): stagnation at replacement ${this.replacements}: ‖b − A·x‖ = ${rn.toExponential(2)} did not drop 10 % ` +
        `twice; the inner ${inp.space.precision} recurrence is too inaccurate for this matrix: tighten inner.rtol, add a preconditioner, or raise the inner precision`;
      return this.out('breakdown', this.bestRn, detail);
    }
    if (this.replacements >= inp.maxReplacements) return this.out('max-iterations', rn);
    return undefined;
  }

  /**
   * After a replacement r is in the new units (scale): z = M⁻¹·r, and p = z + β·p in the new
   * units (p and ρ rescaled by old/new; lag 0: β = ⟨r, z⟩/ρ as one more CG step; the fused form
   * keeps the recurrence's β, already in p) so that the recurrence goes on where it was.
   */
  private afterReplacement(oldScale: number): void {
    const { inp, w } = this;
    const s = inp.space;
    const ratio = oldScale / this.scale;
    if (inp.preconditioner) {
      this.hooks.count('precond');
      returnedVoid(inp.preconditioner.apply(w.r, w.z), 'refinedSolve reliable cg', 'preconditioner apply', w.z);
    }
    if (this.pDone) {
      s.axpby(1, w.z, ratio, w.p); // p = z + ratio·(β·p_old)
      w.setRho(s.dot(w.r, w.z));
      return;
    }
    s.axpby(ratio, w.p, 0, w.p); // p in the new units
    w.setRho(s.mul(w.rho!, ratio * ratio));
    const rz = s.dot(w.r, w.z);
    this.watched.push({ name: 'ρ = ⟨r, z⟩', k: this.k, s: s.mul(rz, 1) });
    this.direction(rz);
    w.setRho(rz);
  }

  private freshDirection(): void {
    const { inp, w } = this;
    const s = inp.space;
    this.dropRhoNew();
    if (inp.preconditioner) {
      this.hooks.count('precond');
      returnedVoid(inp.preconditioner.apply(w.r, w.z), 'refinedSolve reliable cg', 'preconditioner apply', w.z);
    }
    w.setRho(s.dot(w.r, w.z));
    s.copy(w.z, w.p);
    s.fill(w.xc, 0);
    w.safe = -1;
  }

  private out(reason: StopReason, rn: number, detail?: string): ReliableCgOutcome {
    this.dropRhoNew();
    const o: ReliableCgOutcome = { reason, rn, iterations: this.k, replacements: this.replacements };
    if (detail !== undefined) o.detail = detail;
    return o;
  }
}
