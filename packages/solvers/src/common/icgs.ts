/**
 * Iterated classical Gram–Schmidt with a loss-of-orthogonality test, for solvers on spaces
 * whose scalars are read for free (the host): one fused pass (multiDot, combine) per step, and
 * the second pass of CGS2 only when the step could have cost orthogonality.
 *
 * The test. If the basis Q has QᵀQ = I + E, one classical pass w' = w − Q·(Qᵀw) leaves
 * Qᵀw' = −E·(Qᵀw) (plus rounding ≈ (j+1)·u·‖w‖), so the new vector's loss is about
 * (‖E‖ + (j+1)·u)·‖w‖/‖w'‖: the loss grows by the norm drop ‖w‖/‖w'‖ at every step and
 * compounds. {@link IcgsBasis} tracks that bound and re-orthogonalises when it would pass
 * `tol` — by default √u, Simon's semi-orthogonality level, at which the projected matrices of
 * Lanczos and Arnoldi stay accurate to working precision. With `tol` = 0 every step whose norm
 * dropped at all is done twice; the classic Kahan–Parlett rule (second pass when
 * ‖w'‖ < ‖w‖/√2) is the special case of a fresh, orthogonal basis and tol = √2·(j+1)·u.
 * After a second pass the new vector is orthogonal to working precision ("twice is enough").
 * @module
 */
import type { VectorSpace } from '@gpusparse/formats';

/** Unit roundoff of float64 / float32. */
const U64 = 2 ** -53;
const U32 = 2 ** -24;

/** Outcome of one {@link IcgsBasis.step}. */
export interface IcgsStep {
  /** Projection coefficients Qᵀ·w₀ (the sum of both passes), as host numbers. */
  h: number[];
  /** ‖w‖ after the projection. */
  norm: number;
  /** w holds sign·w' (w' = w₀ − Q·h): fold the sign into the normalisation, no extra pass. */
  sign: 1 | -1;
  /** ‖w₀‖ before it. */
  norm0: number;
  /** True when the second pass ran. */
  twice: boolean;
}

/**
 * The loss-of-orthogonality bound of a growing orthonormal basis, and the orthogonalisation
 * step that keeps it below `tol`. Start a new one (or call {@link reset}) for a new basis.
 * @example
 * const ortho = new IcgsBasis(space);
 * const { h, norm, sign } = await ortho.step(basis, w); // sign·w ⟂ basis, ‖w‖ = norm
 * space.axpby(sign / norm, w, 0, next); // next basis vector
 */
export class IcgsBasis<V, S> {
  /** Current bound on max |qᵢᵀqₖ| (i ≠ k) of the basis. */
  loss = 0;
  /** Steps that needed the second pass (for reports and tests). */
  reorthogonalized = 0;
  /** Steps taken. */
  steps = 0;
  private readonly u: number;
  readonly tol: number;

  constructor(
    private readonly space: VectorSpace<V, S>,
    tol?: number,
    private readonly onRead?: () => void,
  ) {
    this.u = space.precision === 'f32' ? U32 : U64;
    this.tol = tol ?? Math.sqrt(this.u);
  }

  /** A new, exactly orthonormal basis (or one whose vectors were orthogonalised twice). */
  reset(loss = 0): void {
    this.loss = loss;
  }

  /**
   * w ← ±(I − QQᵀ)·w once, twice when the loss bound says so; returns Qᵀ·w₀, the norms and
   * the sign w is left with.
   * Reads 2 scalars (4 with the second pass) from the space. q may be empty (then only ‖w‖).
   */
  async step(q: readonly V[], w: V): Promise<IcgsStep> {
    const s = this.space;
    const j = q.length;
    this.steps++;
    const d = s.multiDot([...q, w], w); // Qᵀ·w and ‖w‖² in one pass over w
    const ww = d.pop()!;
    if (j > 0) s.combine(d, q, -1, w); // w ← Q·h − w = −w'
    const nrm = s.norm2(w);
    const got = await this.read([...d, ww, nrm]);
    const h = got.slice(0, j);
    const norm0 = Math.sqrt(Math.max(got[j]!, 0));
    let norm = got[j + 1]!;
    if (j === 0) return { h, norm, norm0, sign: 1, twice: false };
    const drop = norm > 0 ? norm0 / norm : Number.POSITIVE_INFINITY;
    const predicted = (this.loss + (j + 1) * this.u) * drop;
    if (predicted <= this.tol || !Number.isFinite(predicted)) {
      this.loss = Math.max(this.loss, predicted);
      return { h, norm, norm0, sign: -1, twice: false };
    }
    const g = s.multiDot(q, w); // Qᵀ·(−w') = −(second-pass coefficients)
    s.combine(g, q, -1, w); // w ← Q·g + w' = w₀ − Q·h − Q·h₂
    const nrm2 = s.norm2(w);
    const got2 = await this.read([...g, nrm2]);
    const normBefore = norm;
    norm = got2[j]!;
    for (let i = 0; i < j; i++) h[i] = h[i]! - got2[i]!;
    this.reorthogonalized++;
    // the second pass leaves ≈ (loss·predicted + (j+1)·u)·‖w'‖/‖w''‖; the old pairs keep theirs
    const after = (this.loss * Math.min(predicted, 1) + (j + 1) * this.u) * (norm > 0 ? normBefore / norm : Number.POSITIVE_INFINITY);
    this.loss = Math.max(this.loss, Number.isFinite(after) ? after : this.loss);
    return { h, norm, norm0, sign: 1, twice: true };
  }

  /**
   * Replace the bound by the measured loss of `q` (a basis whose vectors were recombined, e.g.
   * the Ritz vectors of a thick restart): max |qᵢᵀqₖ − δᵢₖ| from the Gram matrix, one multiDot
   * per vector and one read. Costs about |q|/2 multiDot passes of |q| vectors; pays when the
   * bound would otherwise force second passes for the steps that follow.
   */
  async remeasure(q: readonly V[]): Promise<number> {
    const s = this.space;
    const dots: S[] = [];
    for (let j = 0; j < q.length; j++) dots.push(...s.multiDot(q.slice(0, j + 1), q[j]!)); // G[0..j][j]
    const g = await this.read(dots);
    let loss = 0;
    let p = 0;
    for (let j = 0; j < q.length; j++) for (let i = 0; i <= j; i++, p++) loss = Math.max(loss, Math.abs(g[p]! - (i === j ? 1 : 0)));
    this.loss = Number.isFinite(loss) ? loss + q.length * this.u : Number.POSITIVE_INFINITY;
    return this.loss;
  }

  private async read(xs: S[]): Promise<number[]> {
    this.onRead?.();
    const v = await this.space.readMany(xs);
    for (const x of xs) this.space.release(x);
    return v;
  }
}
