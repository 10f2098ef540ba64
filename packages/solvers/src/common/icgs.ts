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
 *
 * Cache. A pass of classical Gram–Schmidt reads the basis twice: Qᵀ·w, then w − Q·h. When Q is
 * larger than the last-level cache (GMRES(30) at 2·10^5 rows: up to 48 MB), both sweeps come
 * from memory, where modified Gram–Schmidt reads each vector twice in a row from cache. On host
 * spaces (scalars synchronous) a pass over a basis of more than {@link CHUNK_BYTES} runs in
 * chunks of basis vectors instead — the dots of a chunk against a copy of the incoming w (taken
 * in the first chunk's dot pass where the space can), then
 * that chunk's combine on w, while the chunk is still in cache —, the same operations in the
 * same order per element (combine's sum runs over the vectors in order, the chunks are multiples
 * of four), so the same bits as one multiDot and one combine.
 * @module
 */
import type { VectorSpace } from '@gpusparse/formats';
import { createForOverwrite } from './snapshot';


/** A space that returns ‖y‖ with its combine, bit-identical to combine then norm2 (the host wasm space). */
interface CombineNormSpace<V, S> {
  combineNorm(coeffs: readonly S[], xs: readonly V[], beta: number, y: V): S;
}

/** Unit roundoff of float64 / float32. */
const U64 = 2 ** -53;
const U32 = 2 ** -24;

/**
 * Bytes of basis above which a host pass runs in chunks of vectors (a quarter of a 32 MiB L3,
 * shared with the other cores' work); each chunk holds about a quarter of it, at least 4 vectors.
 */
export const CHUNK_BYTES = 8 * 2 ** 20;

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

  /** Basis bytes above which a pass runs in chunks (host spaces only; Infinity: never). */
  private readonly chunkBytes: number;
  /** The host space's combineNorm: a pass's last combine returns ‖w‖ (one read of w fewer, the same bits). */
  private readonly fused: CombineNormSpace<V, S> | undefined;
  /** The host space's multiDot with a copy of y in the same pass (WasmVectorSpace.multiDotCopy). */
  private readonly multiDotCopy: ((xs: readonly V[], y: V, dst: V) => S[]) | undefined;

  /**
   * @param space the vector space of the basis
   * @param tol the loss bound that triggers the second pass (default √u)
   * @param onRead called at every scalar readback (for the solvers' stats)
   * @param chunkBytes basis bytes above which a pass runs in cache-sized chunks of vectors
   *   (default {@link CHUNK_BYTES} on host spaces, never elsewhere; the result is the same)
   */
  constructor(
    private readonly space: VectorSpace<V, S>,
    tol?: number,
    private readonly onRead?: () => void,
    chunkBytes?: number,
  ) {
    this.u = space.precision === 'f32' ? U32 : U64;
    this.tol = tol ?? Math.sqrt(this.u);
    this.chunkBytes = chunkBytes ?? (space.name.startsWith('host') ? CHUNK_BYTES : Number.POSITIVE_INFINITY);
    const f = space as Partial<CombineNormSpace<V, S>>;
    this.fused = space.name.startsWith('host') && typeof f.combineNorm === 'function' ? (f as CombineNormSpace<V, S>) : undefined;
    const mc = (space as { multiDotCopy?: (xs: readonly V[], y: V, dst: V) => S[] }).multiDotCopy;
    this.multiDotCopy = typeof mc === 'function' ? mc : undefined;
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
    const [d, ww, fusedNorm] = this.project(q, w, true); // Qᵀ·w₀ and ‖w₀‖², w ← Q·h − w₀ = −w'
    const nrm = fusedNorm ?? s.norm2(w);
    const got = await this.read([...d, ww!, nrm]);
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
    const [g, , fusedNorm2] = this.project(q, w, false); // Qᵀ·(−w') = −(second-pass coefficients); w ← Q·g + w' = w₀ − Q·h − Q·h₂
    const nrm2 = fusedNorm2 ?? s.norm2(w);
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
   * d = Qᵀ·w (and ‖w‖² with `withNorm`), then w ← Q·d − w: one multiDot and one combine, or —
   * a basis of more than chunkBytes — the same chunk by chunk against a copy of w (module comment).
   * The third entry is ‖w‖ after it where the space's combineNorm took it with the last combine.
   */
  private project(q: readonly V[], w: V, withNorm: boolean): [S[], S | undefined, S | undefined] {
    const s = this.space;
    const j = q.length;
    const n = s.length(w);
    const per = Math.max(4, 4 * Math.floor(this.chunkBytes / 4 / (32 * n)));
    if (j === 0 || 8 * n * j <= this.chunkBytes || j <= per) {
      const d = s.multiDot(withNorm ? [...q, w] : q, w);
      const ww = withNorm ? d.pop() : undefined;
      if (j === 0) return [d, ww, undefined];
      if (this.fused) return [d, ww, this.fused.combineNorm(d, q, -1, w)];
      s.combine(d, q, -1, w);
      return [d, ww, undefined];
    }
    const w0 = createForOverwrite(s, n);
    const d: S[] = [];
    let ww: S | undefined;
    let nrm: S | undefined;
    for (let lo = 0; lo < j; lo += per) {
      const chunk = q.slice(lo, lo + per);
      let part: S[];
      if (lo > 0) part = s.multiDot(chunk, w0);
      // the first chunk's dots take w itself and copy it into w₀ in the same pass (the host
      // space's multiDotCopy: one read of w fewer, split over threads with the dots)
      else if (this.multiDotCopy) part = this.multiDotCopy.call(s, withNorm ? [...chunk, w] : chunk, w, w0);
      else {
        s.copy(w, w0);
        part = s.multiDot(withNorm ? [...chunk, w0] : chunk, w0);
      }
      if (lo === 0 && withNorm) ww = part.pop();
      // −w₀ + Σ over the chunks in order, as one combine (the last one returns ‖w‖ where fused)
      if (this.fused && lo + per >= j) nrm = this.fused.combineNorm(part, chunk, lo === 0 ? -1 : 1, w);
      else s.combine(part, chunk, lo === 0 ? -1 : 1, w);
      d.push(...part);
    }
    s.release(w0);
    return [d, ww, nrm];
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
