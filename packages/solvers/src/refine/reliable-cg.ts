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
 * ⟨p, A·p⟩, the x_c / r updates and ⟨r, r⟩ in one pass where the space offers `cgStep` (WebGPU:
 * 5 dispatches per iteration with the product instead of 8). Per
 * check (every `checkEvery` iterations): one readback. Per replacement: one extended-precision
 * residual (one readback), one update of x, one rescale of p, one clear of the correction.
 * @module
 */
import type { LinearOperator, VectorSpace } from '@gpusparse/formats';
import type { StopReason } from '../common/result';
import { cgStep } from '../krylov/fused-update';
import type { OuterState } from './host-refinement';

/** What {@link reliableCg} needs from the refinement driver. */
export interface ReliableCgInput<V, S> {
  space: VectorSpace<V, S>;
  op: LinearOperator<V>;
  preconditioner?: LinearOperator<V>;
  state: OuterState<V>;
  /** Stop when ‖b − A·x‖ ≤ tol (extended precision). */
  tol: number;
  /** ‖b − A·x₀‖ (‖b‖ when x₀ = 0). */
  rn0: number;
  /** Replace the residual when the recursive one fell by this factor since the last replacement. */
  delta: number;
  /** Iterations between readbacks of the recursive residual. */
  checkEvery: number;
  /** Most CG iterations between two replacements. */
  maxSegment: number;
  /** Most replacements. */
  maxReplacements: number;
  signal?: AbortSignal;
}

/** One segment between replacements, and the driver's hooks. */
export interface ReliableCgHooks {
  /** After each replacement: its true residual and the segment's iterations; false stops. */
  // biome-ignore lint/suspicious/noConfusingVoidType: callbacks that return nothing must be accepted
  onReplacement(info: { replacement: number; residual: number; iterations: number; reason: StopReason; estimate: number }): boolean | void;
  /** Counted float32 products / preconditioner applies / readbacks. */
  count(kind: 'matvec' | 'precond' | 'readback', n?: number): void;
}

/** Outcome of {@link reliableCg}. */
export interface ReliableCgOutcome {
  reason: StopReason;
  rn: number;
  detail?: string;
  iterations: number;
  replacements: number;
}

/** The float32 work vectors and the recurrence's scalars of one reliable-update CG solve. */
class Work<V, S> {
  readonly r: V;
  readonly z: V;
  readonly p: V;
  readonly q: V;
  /** Float32 correction since the last replacement, in units of the current scale. */
  readonly xc: V;
  /** xc at the last clean check (what a replacement uses after a breakdown). */
  readonly xcSafe: V;
  rho: S | undefined;

  constructor(
    readonly space: VectorSpace<V, S>,
    n: number,
    hasM: boolean,
  ) {
    this.r = space.create(n);
    this.z = hasM ? space.create(n) : this.r;
    this.p = space.create(n);
    this.q = space.create(n);
    this.xc = space.create(n);
    this.xcSafe = space.create(n);
  }

  setRho(s: S): void {
    if (this.rho !== undefined) this.space.release(this.rho);
    this.rho = s;
  }

  dispose(): void {
    const s = this.space;
    if (this.rho !== undefined) s.release(this.rho);
    for (const v of [this.r, this.p, this.q, this.xc, this.xcSafe]) s.release(v);
    if (this.z !== this.r) s.release(this.z);
  }
}

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

/** Fewest iterations between two checks planned from the observed rate. */
const MIN_GAP = 2;

/** True/recursive residual ratio above which a replacement also restarts the search direction. */
const DRIFT = 2;

/** Denominators of the iterations since the last check (aliases owned here). */
interface Watched<S> {
  name: string;
  k: number;
  s: S;
}

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
  /** The last check (k, ‖r‖ in units of the scale) and the log-reduction per iteration seen. */
  private lastCheck = { k: 0, rel: 1 };
  private rate = 0;

  constructor(
    private readonly inp: ReliableCgInput<V, S>,
    private readonly hooks: ReliableCgHooks,
    private readonly w: Work<V, S>,
  ) {
    this.scale = inp.rn0;
    this.bestRn = inp.rn0;
  }

  async solve(): Promise<ReliableCgOutcome> {
    const { inp, w } = this;
    const s = inp.space;
    let rn = inp.rn0;
    if (!Number.isFinite(rn)) return this.out('non-finite', rn, `refinedSolve: ‖b − A·x‖ = ${rn} before the first iteration`);
    if (rn <= inp.tol) return this.out('converged', rn);
    inp.state.correctionRhs(1 / rn, w.r); // r = r_true / ‖r_true‖
    this.freshDirection();
    for (;;) {
      if (inp.signal?.aborted) return this.out('stopped', await this.replace('stopped'), 'signal aborted');
      this.k++;
      const rhoNew = this.step();
      const segment = this.k - this.segmentStart;
      const isCheck = this.k >= this.nextCheck || segment >= inp.maxSegment;
      if (!isCheck) {
        this.finishStep(rhoNew);
        continue;
      }
      const check = await this.check(rhoNew);
      if (check.bad) {
        // a vanishing or non-finite scalar: the correction since the last clean check is lost,
        // x gets the clean one, and CG restarts from the true residual with p = z
        s.copy(w.xcSafe, w.xc);
        s.release(rhoNew);
        rn = await this.replace('breakdown');
        if (rn <= inp.tol) return this.out('converged', rn);
        if (this.slow >= 1 || !Number.isFinite(rn)) {
          return this.out(Number.isFinite(check.value) ? 'breakdown' : 'non-finite', rn, `refinedSolve (reliable CG): ${check.name} = ${check.value} at iteration ${check.k}`);
        }
        this.slow++;
        this.freshDirection();
        continue;
      }
      s.copy(w.xc, w.xcSafe);
      const est = check.rel * this.scale;
      if (!(est <= inp.tol || check.rel <= inp.delta || segment >= inp.maxSegment)) {
        this.nextCheck = this.plan(check.rel);
        this.finishStep(rhoNew);
        continue;
      }
      s.release(rhoNew);
      const old = this.scale;
      rn = await this.replace(segment >= inp.maxSegment && check.rel > inp.delta ? 'max-iterations' : 'converged', est);
      const stop = this.verdict(rn);
      if (stop) return stop;
      // the recursive residual had drifted far from the true one (it fell below what float32
      // resolves): p is no longer conjugate to the new r, so CG restarts from it (p = z)
      if (rn > DRIFT * est) this.freshDirection();
      else this.afterReplacement(old);
    }
  }

  /**
   * The iteration of the next check: `checkEvery` on, or earlier when the reduction rate seen
   * between the last two checks predicts that the residual reaches δ or the tolerance sooner —
   * so that the solve stops (or replaces) near where it should instead of up to checkEvery − 1
   * iterations late. A wrong prediction only costs one more readback.
   */
  private plan(rel: number): number {
    const gap = this.k - this.lastCheck.k;
    if (gap > 0 && rel > 0 && rel < this.lastCheck.rel) this.rate = Math.log(rel / this.lastCheck.rel) / gap;
    this.lastCheck = { k: this.k, rel };
    return this.k + this.gap(rel);
  }

  /** Iterations to the next check from a residual `rel` (units of the scale) at the current rate. */
  private gap(rel: number): number {
    const { inp } = this;
    const target = Math.min(inp.delta, inp.tol / this.scale);
    let n = inp.checkEvery;
    if (this.rate < 0 && target > 0 && rel > target) {
      const need = Math.log(target / rel) / this.rate;
      if (need < n) n = Math.max(MIN_GAP, Math.ceil(need));
    }
    return n;
  }

  /** q = A·p, x_c += α·p, r −= α·q, z = M⁻¹·r; returns ρ' = ⟨r, z⟩ (the caller owns it). */
  private step(): S {
    const { inp, w } = this;
    const s = inp.space;
    this.hooks.count('matvec');
    inp.op.apply(w.p, w.q);
    if (!inp.preconditioner) {
      // ⟨p, q⟩, x_c += α·p, r −= α·q, ρ' = ⟨r, r⟩: one pass where the space fuses it (a
      // vanishing ⟨p, q⟩ is caught at the next check, which restores x_c from xcSafe)
      const { pq, rr } = cgStep(s, w.rho!, w.p, w.q, w.xc, w.r);
      this.watched.push({ name: '⟨p, A·p⟩', k: this.k, s: s.mul(pq, 1) });
      s.release(pq);
      return rr;
    }
    const pq = s.dot(w.p, w.q);
    this.watched.push({ name: '⟨p, A·p⟩', k: this.k, s: s.mul(pq, 1) });
    const alpha = s.div(w.rho!, pq);
    const minusAlpha = s.neg(alpha);
    s.axpby(alpha, w.p, 1, w.xc);
    s.axpby(minusAlpha, w.q, 1, w.r);
    for (const t of [pq, alpha, minusAlpha]) s.release(t);
    this.hooks.count('precond');
    inp.preconditioner.apply(w.r, w.z);
    return s.dot(w.r, w.z);
  }

  /** p = z + β·p with β = ρ'/ρ; ρ = ρ'. */
  private finishStep(rhoNew: S): void {
    const { w } = this;
    const s = this.inp.space;
    this.watched.push({ name: 'ρ = ⟨r, z⟩', k: this.k, s: s.mul(rhoNew, 1) });
    const beta = s.div(rhoNew, w.rho!);
    s.axpby(1, w.z, beta, w.p);
    s.release(beta);
    w.setRho(rhoNew);
  }

  /** Read ‖r‖ (relative to the scale) and the watched denominators with one synchronisation. */
  private async check(rhoNew: S): Promise<{ bad: boolean; rel: number; name: string; value: number; k: number }> {
    const s = this.inp.space;
    const norm = this.inp.preconditioner ? s.norm2(this.w.r) : s.sqrt(rhoNew);
    const list = this.watched.splice(0);
    this.hooks.count('readback');
    const vals = await s.readMany([norm, ...list.map((x) => x.s)]);
    for (const x of list) s.release(x.s);
    s.release(norm);
    const rel = vals[0]!;
    const tiny = rel * this.scale <= this.inp.tol;
    for (let i = 1; i < vals.length; i++) {
      const v = vals[i]!;
      if (!Number.isFinite(v) || (v === 0 && !tiny)) return { bad: true, rel, name: list[i - 1]!.name, value: v, k: list[i - 1]!.k };
    }
    if (!Number.isFinite(rel)) return { bad: true, rel, name: '‖r‖', value: rel, k: this.k };
    return { bad: false, rel, name: '', value: 0, k: this.k };
  }

  /**
   * x += scale·x_c in extended precision, r_true = b − A·x, and (when finite and non-zero) the
   * float32 residual replaced by r_true/‖r_true‖, the new scale. Resolves to ‖r_true‖.
   */
  private async replace(reason: StopReason, estimate = Number.NaN): Promise<number> {
    const { inp, w } = this;
    await inp.state.update(this.scale, w.xc);
    inp.space.fill(w.xc, 0);
    const rn = await inp.state.residualNorm();
    this.replacements++;
    const iterations = this.k - this.segmentStart;
    this.segmentStart = this.k;
    this.lastCheck = { k: this.k, rel: 1 };
    this.slow = rn < 0.9 * this.bestRn ? 0 : this.slow + 1;
    if (rn < this.bestRn) {
      this.bestRn = rn;
      inp.state.saveBest();
    }
    if (Number.isFinite(rn) && rn > inp.tol) {
      this.scale = rn;
      inp.state.correctionRhs(1 / rn, w.r);
    }
    this.nextCheck = this.k + this.gap(1); // no readback right after a replacement
    this.stopAsked = this.hooks.onReplacement({ replacement: this.replacements, residual: rn, iterations, reason, estimate }) === false;
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
   * After a replacement r is in the new units (scale): rescale p and ρ by old/new so that the
   * recurrence goes on where it was, z = M⁻¹·r, then p = z + β·p with β = ⟨r, z⟩/ρ.
   */
  private afterReplacement(oldScale: number): void {
    const { inp, w } = this;
    const s = inp.space;
    const ratio = oldScale / this.scale;
    if (inp.preconditioner) {
      this.hooks.count('precond');
      inp.preconditioner.apply(w.r, w.z);
    }
    s.axpby(ratio, w.p, 0, w.p); // p in the new units
    w.setRho(s.mul(w.rho!, ratio * ratio));
    this.finishStep(s.dot(w.r, w.z));
  }

  private freshDirection(): void {
    const { inp, w } = this;
    const s = inp.space;
    if (inp.preconditioner) {
      this.hooks.count('precond');
      inp.preconditioner.apply(w.r, w.z);
    }
    w.setRho(s.dot(w.r, w.z));
    s.copy(w.z, w.p);
    s.fill(w.xc, 0);
    s.fill(w.xcSafe, 0);
  }

  private out(reason: StopReason, rn: number, detail?: string): ReliableCgOutcome {
    const o: ReliableCgOutcome = { reason, rn, iterations: this.k, replacements: this.replacements };
    if (detail !== undefined) o.detail = detail;
    return o;
  }
}
