/**
 * BiCGStab (van der Vorst 1992; Barrett et al., Templates §2.3.8) for general square A, with
 * right preconditioning (x is updated with p̂ = M⁻¹·p and ŝ = M⁻¹·s).
 *
 * Memory traffic per iteration (n-vectors):
 * - matvecs: 2 (v = A·p̂, t = A·ŝ); preconditioner applies: 2 when M is set
 * - dots: ρ = ⟨r̂, r⟩, ⟨r̂, v⟩, ⟨t, t⟩, and ⟨t, s⟩ with ⟨s, s⟩ in one multiDot (⟨s, s⟩ for the
 *   near-breakdown test of ω); ‖r‖ one more reduction at checks only
 * - fused updates (combine): p = r + β·p − β·ω·v (3 reads, 1 write), s = r − α·v (2 + 1),
 *   x = x + α·p̂ + ω·ŝ (3 + 1), r = s − ω·t (2 + 1)
 * - total ≈ 18 vector reads + 4 writes + 2 matvecs; 7 vectors of storage (x, r, r̂, p, v, s, t), 9 with M
 * @module
 */
import type { LinearOperator, VectorSpace } from '@gpusparse/formats';
import { SolveContext } from '../common/context';
import { resolveOptions, type SolveOptions } from '../common/options';
import { nearZeroCosine, type RecurrenceMethod, release, runRecurrence, type Watch } from '../common/recurrence';
import type { SolveResult } from '../common/result';

class BicgstabMethod<V, S> implements RecurrenceMethod<V, S> {
  readonly x: V;
  private readonly r: V;
  private readonly rHat: V;
  private readonly p: V;
  private readonly pHat: V;
  private readonly v: V;
  private readonly sv: V;
  private readonly sHat: V;
  private readonly t: V;
  private rhoOld: S | undefined;
  private alpha: S | undefined;
  private omega: S | undefined;
  private fresh = true;
  /** |cos∠(t, s)| at or below which ω is rounding noise (../common/recurrence nearZeroCosine). */
  private readonly cosLimit: number;

  constructor(private readonly ctx: SolveContext<V, S>) {
    const s = ctx.space;
    const n = ctx.n;
    const hasM = ctx.opts.preconditioner !== undefined;
    this.x = ctx.initialX();
    this.r = s.create(n);
    this.rHat = s.create(n);
    this.p = s.create(n);
    this.pHat = hasM ? s.create(n) : this.p;
    this.v = s.create(n);
    this.sv = s.create(n);
    this.sHat = hasM ? s.create(n) : this.sv;
    this.t = s.create(n);
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
    release(s, this.rhoOld, this.alpha, this.omega);
    s.release(this.r);
    s.release(this.rHat);
    s.release(this.p);
    s.release(this.v);
    s.release(this.sv);
    s.release(this.t);
    if (this.pHat !== this.p) s.release(this.pHat);
    if (this.sHat !== this.sv) s.release(this.sHat);
  }

  residualNorm(): S {
    return this.ctx.space.norm2(this.r);
  }

  async step(_k: number, w: Watch<S>): Promise<void> {
    const { ctx } = this;
    const s = ctx.space;
    const { x, r, rHat, p, pHat, v, sv, sHat, t } = this;
    const hasM = ctx.opts.preconditioner !== undefined;
    if (this.fresh) s.copy(r, rHat); // r̂ = r₀ (shadow residual, fixed until the next restart)
    const rho = s.dot(rHat, r); // ρ = ⟨r̂, r⟩
    if (!(await w.ok('ρ = ⟨r̂, r⟩', rho))) return;
    if (this.fresh) {
      s.copy(r, p); // p = r
      this.fresh = false;
    } else {
      const q1 = s.div(rho, this.rhoOld!);
      const q2 = s.div(this.alpha!, this.omega!);
      const beta = s.mul(q1, q2); // β = (ρ/ρ_old)·(α/ω)
      const betaOmega = s.mul(beta, this.omega!);
      const minusBetaOmega = s.neg(betaOmega);
      s.combine([1, minusBetaOmega], [r, v], beta, p); // p = r + β·(p − ω·v)
      release(s, q1, q2, beta, betaOmega, minusBetaOmega);
    }
    release(s, this.rhoOld, this.alpha, this.omega);
    this.rhoOld = rho;
    this.alpha = undefined;
    this.omega = undefined;
    if (hasM) ctx.precond(p, pHat); // p̂ = M⁻¹·p
    ctx.matvec(pHat, v); // v = A·p̂
    const rv = s.dot(rHat, v);
    if (!(await w.ok('⟨r̂, v⟩', rv))) return;
    const alpha = s.div(rho, rv); // α = ρ / ⟨r̂, v⟩
    const minusAlpha = s.neg(alpha);
    s.combine([1, minusAlpha], [r, v], 0, sv); // s = r − α·v
    if (hasM) ctx.precond(sv, sHat); // ŝ = M⁻¹·s
    ctx.matvec(sHat, t); // t = A·ŝ
    const tt = s.dot(t, t);
    if (!(await w.ok('⟨t, t⟩', tt))) {
      // t = 0 means s = 0 (A nonsingular): the half step already solves the system
      s.axpby(alpha, pHat, 1, x); // x = x + α·p̂
      s.copy(sv, r); // r = s
      release(s, rv, alpha, minusAlpha, tt);
      return;
    }
    // cos²∠(t, s) = ⟨t, s⟩²/(⟨t, t⟩·⟨s, s⟩): ω is rounding noise at cos ≈ u (t ⟂ s, e.g. [[1, 2], [3, 4]], b = 1), and the
    // next β = (ρ/ρ_old)·(α/ω) would blow up: a near-breakdown, reported with the half step's x (its residual is s).
    // ⟨t, s⟩ and ⟨s, s⟩ in one pass over s; cos² as (⟨t, s⟩/⟨t, t⟩)·(⟨t, s⟩/⟨s, s⟩): the squares' products leave float32's range (A·1e6)
    const [ts, ss] = s.multiDot([t, sv], sv) as [S, S];
    const q1 = s.div(ts, tt);
    const q2 = s.div(ts, ss);
    const cos2 = s.mul(q1, q2);
    const fine = await w.near('cos²∠(t, s)', cos2, this.cosLimit ** 2);
    release(s, ss, q1, q2, cos2);
    if (!fine) {
      s.axpby(alpha, pHat, 1, x); // x = x + α·p̂
      s.copy(sv, r); // r = s
      release(s, rv, alpha, minusAlpha, tt, ts);
      return;
    }
    const omega = s.div(ts, tt); // ω = ⟨t, s⟩ / ⟨t, t⟩
    const minusOmega = s.neg(omega);
    s.combine([alpha, omega], [pHat, sHat], 1, x); // x = x + α·p̂ + ω·ŝ
    s.combine([1, minusOmega], [sv, t], 0, r); // r = s − ω·t
    release(s, rv, minusAlpha, tt, ts, minusOmega);
    this.alpha = alpha;
    this.omega = omega;
    await w.ok('ω = ⟨t, s⟩/⟨t, t⟩', omega);
  }
}

/**
 * Solve A·x = b for general square A by BiCGStab, optionally right-preconditioned. Breakdowns
 * (ρ = ⟨r̂, r⟩ = 0, ⟨r̂, v⟩ = 0, ω = 0) are reported as reason 'breakdown' with the scalar and
 * iteration in `detail`; so is ω's near-breakdown, |cos∠(t, s)| ≤ 16·max(1, log₂ n)·u (ω then
 * rounding noise, the next β would blow up), with x the half step x + α·p̂ (residual s). Stops when ‖b − A·x‖ ≤ max(rtol·‖b‖, atol), checked on the true residual.
 *
 * Cost per iteration: 2 matvecs, 3 dots and a 2-vector multiDot, 4 fused vector updates (+2 preconditioner applies).
 * @example
 * const a = generators.banded(100, 2, 3, { spd: true }); // nonsymmetric pattern works too
 * const res = await bicgstab(space, HostOperator.fromCsr(a), b, { rtol: 1e-10 });
 */
export async function bicgstab<V, S>(
  space: VectorSpace<V, S>,
  op: LinearOperator<V>,
  b: V,
  options: SolveOptions<V> = {},
): Promise<SolveResult<V>> {
  const opts = resolveOptions('bicgstab', space, op, b, options);
  const ctx = new SolveContext('bicgstab', space, op, b, opts);
  return runRecurrence(ctx, new BicgstabMethod(ctx));
}
