/**
 * BiCG (Fletcher 1976; Barrett et al., Templates §2.3.5) for general square A. Needs Aᵀ
 * (`applyTranspose`), and M⁻ᵀ when preconditioned.
 *
 * Memory traffic per iteration (n-vectors):
 * - matvecs: 2 (q = A·p, q̂ = Aᵀ·p̂); preconditioner applies: 2 when M is set (M⁻¹, M⁻ᵀ)
 * - dots: ⟨p̂, q⟩ with ⟨q, q⟩ and ρ = ⟨ẑ, r⟩ with ⟨r, r⟩ (two multiDots, one pass each), ⟨p̂, p̂⟩ and ⟨ẑ, ẑ⟩:
 *   the near-breakdown tests of α's and β's denominators (‖r‖ one more reduction at checks only)
 * - axpby: 5 (x, r, r̂, p, p̂), each 2 reads + 1 write
 * - total ≈ 16 vector reads + 5 writes + 2 matvecs; 7 vectors of storage (x, r, r̂, p, p̂, q, q̂), 9 with M
 * @module
 */
import { type LinearOperator, NotSupportedError, type VectorSpace } from '@gpusparse/formats';
import { SolveContext } from '../common/context';
import { resolveOptions, type SolveOptions } from '../common/options';
import { nearZeroCosine, type RecurrenceMethod, release, runRecurrence, type Watch } from '../common/recurrence';
import type { SolveResult } from '../common/result';

class BicgMethod<V, S> implements RecurrenceMethod<V, S> {
  readonly x: V;
  private readonly r: V;
  private readonly rHat: V;
  private readonly z: V;
  private readonly zHat: V;
  private readonly p: V;
  private readonly pHat: V;
  private readonly q: V;
  private readonly qHat: V;
  private rho: S | undefined;
  private fresh = true;
  /** |cos| at or below which a denominator is rounding noise (../common/recurrence nearZeroCosine). */
  private readonly cosLimit: number;

  constructor(private readonly ctx: SolveContext<V, S>) {
    const s = ctx.space;
    const n = ctx.n;
    const hasM = ctx.opts.preconditioner !== undefined;
    this.x = ctx.initialX();
    this.r = s.create(n);
    this.rHat = s.create(n);
    this.z = hasM ? s.create(n) : this.r;
    this.zHat = hasM ? s.create(n) : this.rHat;
    this.p = s.create(n);
    this.pHat = s.create(n);
    this.q = s.create(n);
    this.qHat = s.create(n);
    this.cosLimit = nearZeroCosine(n, s.precision === 'f32' ? 2 ** -24 : 2 ** -53);
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
    s.release(this.rHat);
    s.release(this.p);
    s.release(this.pHat);
    s.release(this.q);
    s.release(this.qHat);
    if (this.z !== this.r) s.release(this.z);
    if (this.zHat !== this.rHat) s.release(this.zHat);
  }

  residualNorm(): S {
    return this.ctx.space.norm2(this.r);
  }

  async step(_k: number, w: Watch<S>): Promise<void> {
    const { ctx } = this;
    const s = ctx.space;
    const { x, r, rHat, z, zHat, p, pHat, q, qHat } = this;
    const hasM = ctx.opts.preconditioner !== undefined;
    if (this.fresh) {
      s.copy(r, rHat); // r̂ = r
      if (hasM) {
        ctx.precond(r, z); // z = M⁻¹·r
        ctx.precondTranspose(rHat, zHat); // ẑ = M⁻ᵀ·r̂
      }
      this.setRho(s.dot(zHat, r)); // ρ = ⟨ẑ, r⟩
      if (!(await w.ok('ρ = ⟨ẑ, r⟩', this.rho!))) return;
      s.copy(z, p); // p = z
      s.copy(zHat, pHat); // p̂ = ẑ
      this.fresh = false;
    }
    ctx.matvec(p, q); // q = A·p
    ctx.matvecTranspose(pHat, qHat); // q̂ = Aᵀ·p̂
    const [pq, qq] = s.multiDot([pHat, q], q); // ⟨p̂, q⟩, ⟨q, q⟩ in one pass
    if (!(await w.ok('⟨p̂, A·p⟩', pq!)) || !(await this.notNear(w, '⟨p̂, A·p⟩', pq!, pHat, qq!))) {
      release(s, pq, qq);
      return;
    }
    s.release(qq!);
    const alpha = s.div(this.rho!, pq!); // α = ρ / ⟨p̂, q⟩
    const minusAlpha = s.neg(alpha);
    s.axpby(alpha, p, 1, x); // x = x + α·p
    s.axpby(minusAlpha, q, 1, r); // r = r − α·q
    s.axpby(minusAlpha, qHat, 1, rHat); // r̂ = r̂ − α·q̂
    release(s, pq, alpha, minusAlpha);
    if (hasM) {
      ctx.precond(r, z); // z = M⁻¹·r
      ctx.precondTranspose(rHat, zHat); // ẑ = M⁻ᵀ·r̂
    }
    const [rhoNew, rr] = s.multiDot([zHat, r], r); // ρ' = ⟨ẑ, r⟩, and ⟨r, r⟩
    if (!(await w.ok('ρ = ⟨ẑ, r⟩', rhoNew!)) || !(await this.notNear(w, 'ρ = ⟨ẑ, r⟩', rhoNew!, zHat, rr!))) {
      s.release(rr!);
      this.setRho(rhoNew!);
      return;
    }
    s.release(rr!);
    const beta = s.div(rhoNew, this.rho!); // β = ρ' / ρ
    s.axpby(1, z, beta, p); // p = z + β·p
    s.axpby(1, zHat, beta, pHat); // p̂ = ẑ + β·p̂
    s.release(beta);
    this.setRho(rhoNew);
  }

  /**
   * Watch cos²∠(u, v) = d²/(⟨u, u⟩·vv) of a denominator d = ⟨u, v⟩ (vv = ⟨v, v⟩ given): at or
   * below nearZeroCosine² it is rounding noise and the step must not divide by it (one more dot).
   */
  private async notNear(w: Watch<S>, name: string, d: S, u: V, vv: S): Promise<boolean> {
    const s = this.ctx.space;
    const uu = s.dot(u, u);
    const q1 = s.div(d, uu);
    const q2 = s.div(d, vv);
    const cos2 = s.mul(q1, q2); // (d/⟨u, u⟩)·(d/⟨v, v⟩): no square of a product to leave float32's range
    const fine = await w.near(`cos²∠ of ${name}`, cos2, this.cosLimit ** 2);
    release(s, uu, q1, q2, cos2);
    return fine;
  }

  private setRho(rho: S): void {
    if (this.rho !== undefined) this.ctx.space.release(this.rho);
    this.rho = rho;
  }
}

/**
 * Solve A·x = b for general square A by BiCG. Requires `op.applyTranspose` (and
 * `preconditioner.applyTranspose` when preconditioned): without it a NotSupportedError is thrown
 * before any work, naming the operator. Breakdowns (ρ = 0, ⟨p̂, A·p⟩ = 0) are reasons; so are their
 * near-breakdowns, |cos∠| ≤ 16·max(1, log₂ n)·u of the vectors they pair (rounding noise: the
 * step would divide by it), with x the last iterate before it.
 *
 * Cost per iteration: 2 matvecs (A and Aᵀ), 2 multiDots + 2 dots, 5 axpby (+2 preconditioner applies).
 * @example
 * const op = HostOperator.fromCsr(a); // CSR host operators provide applyTranspose
 * const res = await bicg(space, op, b, { rtol: 1e-8 });
 */
export async function bicg<V, S>(
  space: VectorSpace<V, S>,
  op: LinearOperator<V>,
  b: V,
  options: SolveOptions<V> = {},
): Promise<SolveResult<V>> {
  if (typeof op.applyTranspose !== 'function') {
    throw new NotSupportedError(
      `bicg: operator '${op.label ?? 'unlabelled'}' (${op.rows}x${op.cols}) has no applyTranspose; BiCG needs y = Aᵀ·x. ` +
        'Wrap the matrix in an operator that provides applyTranspose (HostOperator.fromCsr does), or use bicgstab or gmres, which need only A·x.',
    );
  }
  const m = options.preconditioner;
  if (m && typeof m.applyTranspose !== 'function') {
    throw new NotSupportedError(
      `bicg: preconditioner '${m.label ?? 'unlabelled'}' has no applyTranspose; preconditioned BiCG needs M⁻ᵀ. ` +
        'Give a preconditioner with applyTranspose (jacobi and identity provide it), or use bicgstab or gmres.',
    );
  }
  const opts = resolveOptions('bicg', space, op, b, options);
  const ctx = new SolveContext('bicg', space, op, b, opts);
  return runRecurrence(ctx, new BicgMethod(ctx));
}
