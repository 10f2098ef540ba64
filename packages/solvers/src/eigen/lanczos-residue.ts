/**
 * (s13-eig13) What a multiplicity-check attempt leaves for the next one: the Chebyshev-filtered
 * start v_j = p_j(A)·x₀ it handed to its Lanczos run (./lanczos-filter), once that run found a
 * missed copy y at θ. The next attempt's certificate point μ₀′ (./lanczos-check
 * certificatePoint) asks whether a copy of a found value at or before μ₀′ was missed; when θ lies
 * beyond μ₀′, v_j answers it for the price of one projection: a missed copy z there (A·z = λ·z,
 * z orthogonal to the new found vectors L′, λ on the wanted side of μ₀′) has
 * ⟨z, (I − L′L′ᵀ)·v_j⟩ = ⟨z, v_j⟩ = p_j(λ)·⟨z, x₀⟩ with |p_j(λ)| ≥ |p_j(μ₀′)| (μ₀′ before the
 * filter's interval, where |T_j| grows monotonically), so ‖(I − L′L′ᵀ)·v_j‖ ≤ t·|p_j(μ₀′)| proves
 * |⟨z, x₀⟩| ≤ t, the bound a fresh attempt's certificate gives, with the same miss chance: z lies
 * in eigenspaces other than θ's, so the copy found from x₀ says nothing of x₀'s weight on z. y
 * is an eigenvector only to the threshold: it leans on z by at most thr/(θ − μ₀′), which moves
 * ⟨z, x₀⟩ by at most that times |⟨y, x₀⟩|; the bound takes this term off t. poisson3d 40³ (k = 4,
 * λ₂ triple): the third attempt (139 filter steps at μ₀′ = λ₁) is cleared by the second's vector.
 * @module
 */
import { readAndRelease } from './common';
import { type LanczosCtx, threshold } from './lanczos-step';
import { createForOverwrite, projectOutTwice } from './ortho';

/** ln T_j(t) for t = cosh(a) ≥ 1 without overflow. */
export function logCheb(j: number, a: number): number {
  return j * a + Math.log((1 + Math.exp(-2 * j * a)) / 2);
}

/** A filter's polynomial (wanted-side coordinates): ℓ(x) = (x − cen)/half, a = acosh(|ℓ(μ₀)|), α = cen − half, and a copy of its start x₀. */
export interface FilterPoly<V> {
  cen: number;
  half: number;
  a: number;
  lo: number;
  x0: V;
}

/** A filtered start u = v_j/‖v_j‖ (v_j = u·e^(−logStart)) and its polynomial, after j steps. */
export class Residue<V, S> {
  constructor(
    private readonly c: LanczosCtx<V, S>,
    private readonly poly: FilterPoly<V> & { j: number; missChance: number },
    private readonly u: V,
    private readonly logStart: number,
  ) {}

  /** ln |p_j(μ)| for μ at or before α (p_j(μ₀) = 1). */
  logAt(mu: number): number {
    const { cen, half, a, j } = this.poly;
    return logCheb(j, Math.acosh((cen - this.c.sign * mu) / half)) - logCheb(j, a);
  }

  /**
   * Whether this start certifies the check at `mu0` against the found vectors `locked` (y, the
   * copy found from it, among them): θ beyond μ₀′, μ₀′ at or before α, and
   * ‖(I − LLᵀ)·v_j‖/|p_j(μ₀′)| + thr/(θ − μ₀′)·|⟨y, x₀⟩| ≤ missChance·√(π/(2·(n − |L|))).
   */
  async clears(locked: readonly V[], mu0: number, found: { value: number; vector: V }): Promise<boolean> {
    const { space, op, run, sign } = this.c;
    const gap = sign * (found.value - mu0);
    if (!(gap > 0) || !(sign * mu0 <= this.poly.lo)) return false;
    const w = createForOverwrite(space, op.rows);
    space.copy(this.u, w);
    projectOutTwice(space, locked, w);
    const [r, yx] = await readAndRelease(space, [space.norm2(w), space.dot(found.vector, this.poly.x0)], run.stats);
    space.release(w);
    const bound = r! * Math.exp(-this.logStart - this.logAt(mu0)) + (threshold(this.c) / gap) * Math.abs(yx!);
    return bound <= this.poly.missChance * Math.sqrt(Math.PI / (2 * (op.rows - locked.length)));
  }

  release(): void {
    this.c.space.release(this.u);
    this.c.space.release(this.poly.x0);
  }
}
