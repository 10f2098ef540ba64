/**
 * The checks of a Lanczos run's answer: explicit residuals before a run reports convergence, and
 * the multiplicity check after it. Single-vector Lanczos sees one copy of each multiple
 * eigenvalue in exact arithmetic; unless `checkMultiplicity` is false, a converged run is
 * followed by deflated runs from fresh random vectors (orthogonal to the converged ones) until
 * none finds a better eigenvalue. A deflated run whose Ritz value drops past the k-th wanted one
 * converges it (a missed copy); one whose Ritz value stays beyond the last found value before the
 * k-th stops as soon as its Krylov polynomial proves ({@link CopyBound}) that the random start had
 * less weight on any missed copy than a random vector has with probability `missChance` (default
 * 1e-4) — without converging anything. Host float64, k = 4, products of the whole solve (SciPy's
 * eigsh: 336 / 264): SiH4 (a triple) 339 → 291, ExaSP2_trpcage_8K 390 → 366 (session 10); the rule before
 * (stop at a residual ≤ √(thr·‖A‖) clear of λ_k) had no stated chance.
 * @module
 */
import type { StopReason } from '../common/result';
import { randomVector, readAndRelease } from './common';
import { type CheckResidue, type CoreOut, type KrylovState, type LanczosCtx, threshold } from './lanczos-step';
import { returnedVoid } from '../common/operator-check';

/**
 * Explicit residuals of the nWant wanted Ritz pairs (nWant products, one readback): the pairs
 * when all pass `thr` (the run's answer), else their residuals (the pairs released).
 */
export async function confirmResiduals<V, S>(c: LanczosCtx<V, S>, st: KrylovState<V, S>, nWant: number, thr: number): Promise<{ cand: { values: number[]; vectors: V[] }; res: number[]; ok: boolean }> {
  const { op, space, run } = c;
  const cand = st.ritz(nWant);
  const tmp = space.create(op.rows);
  const norms: S[] = [];
  for (let i = 0; i < cand.vectors.length; i++) {
    returnedVoid(op.apply(cand.vectors[i]!, tmp), 'lanczos', 'apply', tmp); // tmp = A·y
    run.stats.matvecs++;
    space.axpby(-cand.values[i]!, cand.vectors[i]!, 1, tmp); // tmp = A·y − θ·y
    norms.push(space.norm2(tmp));
  }
  const res = await readAndRelease(space, norms, run.stats);
  space.release(tmp);
  return { cand, res, ok: res.every((r) => r <= thr) };
}

/**
 * One deflated run for one pair: the locked vectors, a start (consumed), its seed, the certificate
 * point μ₀, and the answer so far with the pairs earlier check runs dropped from it (their values
 * are back in the deflated spectrum: ./lanczos-filter filterInterval). A run that returns no
 * value cleared the check without a Lanczos run (./lanczos-filter chebyshevFilter).
 */
export type CheckRun<V> = (locked: readonly V[], start: V, seed: number, mu0: number, answer: { values: readonly number[]; dropped: readonly number[] }) => Promise<CoreOut<V>>;

interface Answer<V> {
  values: number[];
  vectors: V[];
  reason: StopReason;
  detail?: string;
}

/**
 * The multiplicity check of a converged answer for k pairs: up to k deflated runs, each from a
 * fresh random start; a run that finds a value beyond λ_k, or proves ({@link CopyBound} at
 * {@link certificatePoint}) that its start would have shown a missed copy, ends the check; one
 * that finds a better value inserts it (a missed copy) and drops the k-th pair.
 */
export async function checkMultiplicity<V, S>(c: LanczosCtx<V, S>, k: number, seed: number, first: Answer<V>, runCheck: CheckRun<V>): Promise<Answer<V>> {
  const { space } = c;
  const n = c.op.rows;
  let { values, vectors, reason, detail } = first;
  const dropped: number[] = [];
  let residue: { of: CheckResidue<V>; value: number; vector: V } | undefined; // (s13-eig13) the last attempt's filtered start
  for (let attempt = 0; attempt < k; attempt++) {
    const mu0 = certificatePoint(values, c.sign, threshold(c));
    if (mu0 === undefined) break; // all k values are one: a missed copy of it changes nothing
    const free = residue && (await residue.of.clears(vectors, mu0, residue));
    residue?.of.release();
    residue = undefined;
    if (free) break; // (s13-eig13) the last attempt's start clears this one (./lanczos-residue)
    const extra = await runCheck(vectors, randomVector(space, n, seed + 101 * (attempt + 1)), seed + attempt + 1, mu0, { values, dropped });
    if (extra.reason !== 'converged') {
      for (const v of extra.vectors) space.release(v);
      extra.residue?.release();
      reason = extra.reason;
      detail = `lanczos: multiplicity check ${attempt + 1} ended with ${extra.reason}${extra.detail ? ` (${extra.detail})` : ''}`;
      break;
    }
    if (extra.values.length === 0) break; // (s12-eig18) cleared by the Chebyshev filter
    const theta = extra.values[0]!;
    if (!(c.sign * theta < c.sign * values[k - 1]! - threshold(c))) {
      for (const v of extra.vectors) space.release(v);
      extra.residue?.release();
      break;
    }
    // a missed (multiple) eigenvalue: insert it, drop the last wanted pair
    let pos = 0;
    while (pos < k && c.sign * values[pos]! <= c.sign * theta) pos++;
    dropped.push(values[k - 1]!);
    values = [...values.slice(0, pos), theta, ...values.slice(pos, k - 1)];
    space.release(vectors[k - 1]!);
    vectors = [...vectors.slice(0, pos), extra.vectors[0]!, ...vectors.slice(pos, k - 1)];
    if (extra.residue) residue = { of: extra.residue, value: theta, vector: extra.vectors[0]! };
  }
  residue?.of.release();
  return detail === undefined ? { values, vectors, reason } : { values, vectors, reason, detail };
}

/**
 * Where a check run's certificate is evaluated: a missed copy that changes the answer is a copy
 * of a found value strictly before the k-th (a copy of the k-th leaves the k values as they
 * are), so the last found value more than a threshold before the k-th, moved one threshold
 * towards it (the deflated copy of an eigenvalue found to the threshold lies within it).
 * Undefined when there is none (k = 1, or k copies of one value): nothing to check.
 */
export function certificatePoint(values: readonly number[], sign: 1 | -1, thr: number): number | undefined {
  const last = values[values.length - 1]!;
  for (let i = values.length - 2; i >= 0; i--) {
    if (sign * (last - values[i]!) > thr) return values[i]! + sign * thr;
  }
  return undefined;
}

/**
 * Basis of a multiplicity-check run on the one-pass host path (at most the caller's maxBasis),
 * keeping 5 Ritz vectors at its restarts (./lanczos-restart keepCount). There the certificate's
 * growth per product barely depends on either (ExaSP2_trpcage_8K, k = 4, check products at
 * basis 80 / 40 / 24 / 20 / 16: 98 / 100 / 104 / 106 / 107) while each step orthogonalises
 * against the locked vectors and the basis. Not on the batched (GPU, float32) path, whose check
 * runs keep the run's basis and half of it at a restart: on the H100, poisson3d 100×110×120
 * (k = 5 with eigsMixed's guard), a 16-vector check basis keeping 5 took 830 products where 40
 * keeping 20 takes 515 (session 10; a dense low spectrum needs the wider basis to deflate what
 * lies between μ₀ and the rest), in about the same time (≈ 280 against 310–340 ms) — the host
 * proxy (30×33×36: 145 against 136) had not shown it.
 */
export const CHECK_BASIS = 16;

/**
 * A check run that converges a pair (a missed copy, or a value at or beyond the k-th) takes its
 * explicit residual once the estimate is below this fraction of the threshold, or after
 * {@link COPY_WAIT} examinations below the threshold itself (estimates can level off near the
 * rounding floor of float32): a copy then joins the answer about as accurate as the pairs the
 * first run converged together, most of which went past the threshold while the last one
 * reached it, and eigsMixed's bound certifies it without a correction round (the shifted 20×20
 * Laplacian of df64-shared-operator.test.ts, whose second eigenvalue is double: a copy at
 * 1.2e-5 against the others' ≤ 2.3e-6 cost 18 correction products). The acceptance rule itself
 * (explicit residual ≤ threshold) is unchanged; costs steps only in a check run that converges.
 */
export const COPY_EARLY = 0.1;
/** See {@link COPY_EARLY}. */
export const COPY_WAIT = 2;

/** Whether a run whose estimates are all below `thr` takes its explicit residuals now ({@link COPY_EARLY}). */
export function confirmNow(look: { early: number; waited: number }, est: readonly number[], thr: number): boolean {
  if (look.early >= 1 || est.every((r) => r <= look.early * thr)) return true;
  look.waited++;
  return look.waited > COPY_WAIT;
}

/**
 * Default chance, for a random start, that a missed copy goes unseen by a check run that stops
 * on {@link CopyBound}'s certificate: the run ends once the start's component along any
 * eigenvector of the deflated operator on the wanted side of μ₀ is proven below
 * MISS_CHANCE·√(π/2N), below which a uniformly random unit vector of dimension N falls with
 * probability MISS_CHANCE. Each factor 10 lower costs ln 10 ≈ 2.3 more units of ln |p(μ₀)|
 * (ExaSP2_trpcage_8K, k = 4, half the basis kept in check runs: 1e-3 / 1e-4 / 1e-6 → 348 /
 * 368 / 403 products in all).
 */
export const MISS_CHANCE = 1e-4;

/**
 * A posteriori certificate of a multiplicity-check run: each basis vector q of a Lanczos run from
 * x is p_q(A)·x for a polynomial p_q, and its value at μ₀ ({@link certificatePoint}) follows
 * the run's own recurrence — μ·p_j = Σᵢ H_ij·p_i + β_j·p_{j+1}
 * for a step, p_y = Σᵢ s_i·p_i for a Ritz vector kept at a thick restart. Let φ = (p_0(μ₀), …,
 * p_m(μ₀)) over the basis and the next vector q_m. The unit vector y = Σᵢ φᵢ·qᵢ/‖φ‖ of their span
 * has p_y(μ₀) = ‖φ‖, the largest of any unit vector there (Cauchy–Schwarz), and p_y's roots all
 * lie beyond μ₀ while the run's extreme Ritz value does: p_y = r·ψ, where ψ has its roots at the
 * Ritz values discarded at thick restarts (Krylov–Schur with exact shifts: the basis spans
 * K_{m+1}(A, u), u = ψ(A)·x), each beyond the run's extreme Ritz value at that time, which only
 * moves towards μ₀ — and r is the reproducing kernel K_m(·, μ₀) of u's spectral measure, whose
 * roots are the eigenvalues other than μ₀ of the Gauss–Radau matrix [[H, f], [fᵀ, ω]] (H the
 * projected matrix, f the coupling of q_m, ω chosen so that μ₀ is an eigenvalue); by Sylvester's
 * inertia, with H − μ₀ positive definite (every Ritz value beyond μ₀) those m others are beyond
 * μ₀ too. So |p_y(μ)| ≥ ‖φ‖ for every μ on the wanted side of μ₀, and the start's component c
 * along an eigenvector z of the deflated operator with eigenvalue μ there obeys
 * |c|·‖φ‖ ≤ |⟨z, y⟩| ≤ 1. A large ‖φ‖ thus proves that the random start had next to no weight on
 * any missed copy, with no Ritz value converged. (Sessions ≤ 9 used |φ_m| of the next vector
 * alone: the same argument with y = q_m; ‖φ‖ ≥ |φ_m|, ExaSP2_trpcage_8K k = 4: 111 → 106
 * check products.) Exact-arithmetic argument; rounding adds components of order u per step,
 * which only help.
 */
export class CopyBound {
  /** p_q(μ₀) of each basis vector and the next one, scaled by e^(−logScale). */
  private phi: number[] = [1];
  private logScale = 0;
  private valid = true;

  /**
   * @param mu0 the point of evaluation ({@link certificatePoint})
   * @param sign 1 when the smallest values are wanted, −1 for the largest
   * @param dim dimension of the deflated space (rows − locked vectors)
   * @param missChance the accepted chance (see {@link MISS_CHANCE})
   */
  constructor(
    readonly mu0: number,
    private readonly sign: 1 | -1,
    private readonly dim: number,
    private readonly missChance = MISS_CHANCE,
    logStart = 0,
  ) {
    // (s12-eig18) a start v/‖v‖ that is p(A)·x₀ with p(μ₀) = 1 (./lanczos-filter): its polynomials carry the factor 1/‖v‖
    this.logScale = logStart;
  }

  /** Columns up to `last` of H are in (`beta` = ‖w‖ of the last): extend p to their next vectors. */
  extend(h: readonly (readonly number[])[], last: number, beta: number): void {
    if (!this.valid) return;
    for (let j = this.phi.length - 1; j <= last; j++) {
      const b = j < last ? h[j + 1]![j]! : beta;
      let s = this.mu0 * this.phi[j]!;
      for (let i = 0; i <= j; i++) s -= h[i]![j]! * this.phi[i]!;
      const next = s / b;
      if (!Number.isFinite(next) || !(b > 0)) {
        this.valid = false;
        return;
      }
      this.phi[j + 1] = next;
    }
    const big = Math.abs(this.phi[this.phi.length - 1]!);
    if (big > 1e100) {
      // keep the values finite: a common scale in logScale
      for (let i = 0; i < this.phi.length; i++) this.phi[i] = this.phi[i]! * 1e-100;
      this.logScale += 100 * Math.LN10;
    }
  }

  /** Thick restart: Q·s for each kept coefficient vector s (length m), then the next vector q_m. */
  restart(kept: readonly (readonly number[])[], m: number): void {
    if (!this.valid) return;
    const phiNext = this.phi[m]!;
    this.phi = [...kept.map((s) => s.reduce((acc, x, i) => acc + x * this.phi[i]!, 0)), phiNext];
  }

  /** The basis went on from a vector that is not a polynomial in A times the start: no certificate. */
  invalidate(): void {
    this.valid = false;
  }

  /**
   * Whether the run may stop: its extreme Ritz value `theta` lies beyond μ₀ and the basis with
   * its next vector (index m) proves the start's weight on any missed copy below the miss chance.
   */
  certifies(theta: number, m: number): boolean {
    return this.sign * (theta - this.mu0) > 0 && this.ready(m);
  }

  /** Whether ‖φ‖ over the basis and the next vector (index m) is large enough, whatever the Ritz values (no decomposition needed). */
  ready(m: number): boolean {
    return this.logKernel(m) >= Math.log(Math.sqrt((2 * this.dim) / Math.PI) / this.missChance);
  }

  /** ln |p_next(μ₀)| (for diagnostics and tests). */
  logValue(m: number): number {
    return this.valid && this.phi.length > m ? Math.log(Math.abs(this.phi[m]!)) + this.logScale : Number.NaN;
  }

  /** ln ‖(p_0(μ₀), …, p_m(μ₀))‖: the largest |p_y(μ₀)| of a unit vector y of the basis and the next vector. */
  logKernel(m: number): number {
    if (!this.valid || this.phi.length <= m) return Number.NaN;
    let s = 0;
    for (let i = 0; i <= m; i++) s += this.phi[i]! * this.phi[i]!;
    return 0.5 * Math.log(s) + this.logScale;
  }
}
