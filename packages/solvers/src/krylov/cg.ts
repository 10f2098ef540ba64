/**
 * Conjugate gradients, optionally preconditioned (PCG), for symmetric positive definite A (and M).
 *
 * Memory traffic per iteration (n-vectors; M = preconditioner):
 * - matvecs: 1 (q = A·p); preconditioner applies: 1 when M is set
 * - dots: 2 (⟨p, q⟩, ρ = ⟨r, z⟩; ρ = ⟨r, r⟩ without M); ‖r‖ one more reduction at checks only with M
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
    ctx.matvec(p, q); // q = A·p
    const pq = s.dot(p, q);
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
