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
import type { LinearOperator, VectorSpace } from '@gpusparse/formats';
import { SolveContext } from '../common/context';
import { resolveOptions, type SolveOptions } from '../common/options';
import { type RecurrenceMethod, release, runRecurrence, type Watch } from '../common/recurrence';
import type { SolveResult } from '../common/result';
import { cgUpdate } from './fused-update';

class CgMethod<V, S> implements RecurrenceMethod<V, S> {
  readonly x: V;
  private readonly r: V;
  private readonly z: V;
  private readonly p: V;
  private readonly q: V;
  private rho: S | undefined;
  private fresh = true;

  constructor(private readonly ctx: SolveContext<V, S>) {
    const s = ctx.space;
    this.x = ctx.initialX();
    this.r = s.create(ctx.n);
    this.z = ctx.opts.preconditioner ? s.create(ctx.n) : this.r;
    this.p = s.create(ctx.n);
    this.q = s.create(ctx.n);
  }

  restart(xIsZero: boolean): S {
    const s = this.ctx.space;
    if (xIsZero) s.copy(this.ctx.b, this.r);
    else this.ctx.residual(this.x, this.r); // r = b − A·x
    this.fresh = true;
    return s.norm2(this.r);
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

  async step(_k: number, w: Watch<S>): Promise<void> {
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
    const pq = matvecDot(ctx, p, q); // q = A·p, ⟨p, q⟩
    if (!(await w.ok('⟨p, A·p⟩', pq))) return;
    const alpha = s.div(this.rho!, pq); // α = ρ / ⟨p, q⟩
    let rhoNew: S;
    if (hasM) {
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
  return runRecurrence(ctx, new CgMethod(ctx));
}
