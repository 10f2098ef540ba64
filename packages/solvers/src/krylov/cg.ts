/**
 * Conjugate gradients, optionally preconditioned (PCG), for symmetric positive definite A (and M).
 *
 * Memory traffic per iteration (n-vectors; M = preconditioner):
 * - matvecs: 1 (q = A·p); preconditioner applies: 1 when M is set
 * - dots: 2 (⟨p, q⟩, ρ = ⟨r, z⟩; ρ = ⟨r, r⟩ without M); ‖r‖ one more reduction at checks only with M.
 *   On the host wasm space ⟨p, q⟩ rides on the product ({@link matvecDot}) and ⟨r, r⟩ on the x, r
 *   update (cgUpdate): 4 vector reads fewer
 * - axpby: 3 (x, r, p), each reads 2 vectors and writes 1
 * - total ≈ 10 vector reads + 3 writes + the matvec (+ M's traffic); 4 vectors of storage (x, r, p, q), 5 with M (z)
 * @module
 */
import { type LinearOperator, unverifiedKernelOf, type VectorSpace } from '@gpusparse/formats';
import { SolveContext } from '../common/context';
import { resolveOptions, type SolveOptions } from '../common/options';
import { type RecurrenceMethod, release, runRecurrence, type Watch } from '../common/recurrence';
import type { SolveResult } from '../common/result';
import { createForOverwrite } from '../common/snapshot';
import { cgUpdate } from './fused-update';
import { asymmetryHint } from '../common/symmetry-probe';

class CgMethod<V, S> implements RecurrenceMethod<V, S> {
  readonly x: V;
  private readonly r: V;
  private readonly z: V;
  private readonly p: V;
  private readonly q: V;
  private rho: S | undefined;
  private fresh = true;
  /** The last step took r = b − A·x from products of the current vectors ({@link trueStep}). */
  private rIsTrue = false;
  /** The operator's and the space's fused kernels for {@link trueStep}, where both have them. */
  private readonly pair: TrueStepKernels<V, S> | undefined;

  constructor(private readonly ctx: SolveContext<V, S>) {
    const s = ctx.space;
    this.x = ctx.initialX();
    // r, z, p, q are written in full before they are read (copy, products): no zero fill
    this.r = createForOverwrite(s, ctx.n);
    this.z = ctx.opts.preconditioner ? createForOverwrite(s, ctx.n) : this.r;
    this.p = createForOverwrite(s, ctx.n);
    this.q = createForOverwrite(s, ctx.n);
    this.pair = ctx.opts.preconditioner ? undefined : trueStepKernels(ctx);
  }

  restart(xIsZero: boolean): S {
    const s = this.ctx.space;
    if (xIsZero) s.copy(this.ctx.b, this.r);
    else this.ctx.residual(this.x, this.r); // r = b − A·x
    this.fresh = true;
    this.rIsTrue = false;
    return s.norm2(this.r);
  }

  /** √ρ when the last step was a {@link trueStep} and ρ = ‖r‖² is in float64's safe range (norm2 would scale otherwise). */
  trueResidualNorm(): S | undefined {
    if (!this.rIsTrue || this.rho === undefined) return undefined;
    const rho = (this.rho as { value?: unknown }).value;
    return typeof rho === 'number' && rho >= 2 ** -900 && rho < Number.POSITIVE_INFINITY ? this.ctx.space.sqrt(this.rho) : undefined;
  }

  dispose(): void {
    const s = this.ctx.space;
    if (this.rho !== undefined) s.release(this.rho);
    s.release(this.r);
    s.release(this.p);
    s.release(this.q);
    if (this.z !== this.r) s.release(this.z);
  }

  residualNorm(): S {
    const s = this.ctx.space;
    if (this.ctx.opts.preconditioner || this.fresh || this.rho === undefined) return s.norm2(this.r);
    return s.sqrt(this.rho); // ‖r‖ = √⟨r, r⟩ without a preconditioner
  }

  async step(_k: number, w: Watch<S>, nearExit = false): Promise<void> {
    const { ctx } = this;
    const s = ctx.space;
    const { x, r, z, p, q } = this;
    const hasM = ctx.opts.preconditioner !== undefined;
    if (this.fresh) {
      if (hasM) ctx.precond(r, z); // z = M⁻¹·r
      this.setRho(s.dot(r, z)); // ρ = ⟨r, z⟩
      s.copy(z, p); // p = z
      this.fresh = false;
    }
    this.rIsTrue = false;
    // near the exit (trueStep): t = A·x into r with q = A·p, in one sweep of A; r is recomputed below
    const paired = nearExit && this.pair ? this.pair.applyPairDot.call(ctx.op, p, q, x, r, s) : undefined;
    if (paired !== undefined) ctx.stats.matvecs += 2;
    const pq = paired ?? matvecDot(ctx, p, q); // q = A·p, ⟨p, q⟩
    if (!(await w.ok('⟨p, A·p⟩', pq))) return;
    const alpha = s.div(this.rho!, pq); // α = ρ / ⟨p, q⟩
    let rhoNew: S;
    if (paired !== undefined) {
      rhoNew = this.pair!.cgTrueUpdate.call(s, alpha, p, q, x, r, ctx.b); // x += α·p, r = (b − A·x) − α·A·p, ρ' = ⟨r, r⟩
      this.rIsTrue = true;
    } else if (hasM) {
      const minusAlpha = s.neg(alpha);
      s.axpby(alpha, p, 1, x); // x = x + α·p
      s.axpby(minusAlpha, q, 1, r); // r = r − α·q
      release(s, minusAlpha);
      ctx.precond(r, z); // z = M⁻¹·r
      rhoNew = s.dot(r, z); // ρ' = ⟨r, z⟩
    } else {
      rhoNew = cgUpdate(s, alpha, p, q, x, r); // x += α·p, r −= α·q, ρ' = ⟨r, r⟩ (fused where the space can)
    }
    release(s, pq, alpha);
    if (!(await w.ok('ρ = ⟨r, z⟩', rhoNew))) {
      this.setRho(rhoNew);
      return;
    }
    const beta = s.div(rhoNew, this.rho!); // β = ρ' / ρ
    s.axpby(1, z, beta, p); // p = z + β·p
    s.release(beta);
    this.setRho(rhoNew);
  }

  private setRho(rho: S): void {
    if (this.rho !== undefined) this.ctx.space.release(this.rho);
    this.rho = rho;
  }
}

/**
 * CG's true-residual step (near the exit, on the host wasm space and CSR operator): q = A·p and
 * t = A·x in one sweep of A (`applyPairDot`), then x += α·p and r = (b − t) − α·q with ⟨r, r⟩ in
 * one pass (`cgTrueUpdate`). That r is b − A·x_new up to one rounding of x + α·p — as close to
 * the exit check's own product as that product's rounding — and replaces the recursive residual
 * (residual replacement: the recurrence goes on from it when it has not passed). The exit check
 * then takes ‖r‖ (trueResidualNorm) instead of a product of its own: a 6-iteration solve
 * sweeps A 6 times instead of 7.
 */
interface TrueStepKernels<V, S> {
  /** q = A·p, t = A·x, ⟨p, q⟩ (this = the operator); undefined where it cannot fuse (nothing done). */
  applyPairDot(p: V, q: V, x: V, t: V, space: unknown): S | undefined;
  /** x += α·p, r = (b − r) − α·q, ⟨r, r⟩ (this = the space). */
  cgTrueUpdate(alpha: S, p: V, q: V, x: V, r: V, b: V): S;
}

/** The kernels of {@link TrueStepKernels} where the operator and the space both offer them, and the operator's products are its verified ones. */
function trueStepKernels<V, S>(ctx: SolveContext<V, S>): TrueStepKernels<V, S> | undefined {
  const applyPairDot = (ctx.op as Partial<TrueStepKernels<V, S>>).applyPairDot;
  const cgTrueUpdate = (ctx.space as Partial<TrueStepKernels<V, S>>).cgTrueUpdate;
  if (typeof applyPairDot !== 'function' || typeof cgTrueUpdate !== 'function' || unverifiedKernelOf(ctx.op)) return undefined;
  return { applyPairDot, cgTrueUpdate };
}

/** An operator that returns ⟨x, A·x⟩ with its product (the host wasm CSR operator's applyDot). */
interface ApplyDotOperator<V, S> {
  /** y = A·x and ⟨x, y⟩ as `space` computes it, or undefined (nothing done) where it cannot fuse. */
  applyDot(x: V, y: V, space: unknown): S | undefined;
}

/**
 * q = A·p (counted) and ⟨p, q⟩: in one sweep where the operator offers applyDot for this space
 * (the host wasm CSR operator, bit-identical to the two calls), else matvec and dot.
 * @example const pq = matvecDot(ctx, p, q);
 */
export function matvecDot<V, S>(ctx: SolveContext<V, S>, p: V, q: V): S {
  const f = (ctx.op as Partial<ApplyDotOperator<V, S>>).applyDot;
  if (typeof f === 'function') {
    const pq = f.call(ctx.op, p, q, ctx.space);
    if (pq !== undefined) {
      ctx.stats.matvecs++;
      return pq;
    }
  }
  ctx.matvec(p, q);
  return ctx.space.dot(p, q);
}

/**
 * Solve A·x = b by (preconditioned) conjugate gradients. A and the preconditioner M ≈ A⁻¹ must be
 * symmetric positive definite; on an indefinite A it may still converge, and a vanishing
 * ⟨p, A·p⟩ is reported as reason 'breakdown'. Stops when ‖b − A·x‖ ≤ max(rtol·‖b‖, atol),
 * checked on the true residual.
 *
 * Cost per iteration: 1 matvec, 2 dots, 3 axpby (+1 preconditioner apply); 4–5 vectors of memory.
 * @example
 * const space = new HostVectorSpace();
 * const op = HostOperator.fromCsr(generators.poisson2d(16));
 * const res = await cg(space, op, space.fromArray(new Array(256).fill(1)), { rtol: 1e-8 });
 * res.converged; // true
 */
export async function cg<V, S>(
  space: VectorSpace<V, S>,
  op: LinearOperator<V>,
  b: V,
  options: SolveOptions<V> = {},
): Promise<SolveResult<V>> {
  const method = options.preconditioner ? 'pcg' : 'cg';
  const opts = resolveOptions(method, space, op, b, options);
  const ctx = new SolveContext(method, space, op, b, opts);
  const r = await runRecurrence(ctx, new CgMethod(ctx));
  if ((r.reason === 'breakdown' || r.reason === 'max-iterations') && r.iterations > 0) {
    // s14-harden-e: a non-symmetric A ended 'max-iterations' with nothing saying why
    const hint = await asymmetryHint(op, space, r.stats, 'gmres, bicgstab or bicg');
    if (hint) r.detail = `${r.detail ? `${r.detail}; ` : ''}${hint}`;
  }
  return r;
}
