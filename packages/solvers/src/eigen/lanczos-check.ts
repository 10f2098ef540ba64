/**
 * The checks of a Lanczos run's answer: explicit residuals before a run reports convergence, and
 * the multiplicity check after it. Single-vector Lanczos sees one copy of each multiple
 * eigenvalue in exact arithmetic; unless `checkMultiplicity` is false, a converged run is
 * followed by deflated runs from fresh random vectors (orthogonal to the converged ones) until
 * none finds a better eigenvalue. A deflated run whose Ritz value drops past the k-th wanted one
 * converges it (a missed copy); one whose Ritz value stays beyond it stops as soon as its
 * residual is ≤ √(thr·‖A‖) and the interval θ ± r lies beyond it, without converging to tol
 * (SiH4 / ExaSP2_trpcage_8K, k = 4: the check's products 245 / 302 → 164 / 131; SiH4's triple
 * still found).
 * @module
 */
import type { StopReason } from '../common/result';
import { randomVector, readAndRelease } from './common';
import { type CoreOut, type KrylovState, type LanczosCtx, threshold } from './lanczos-step';

/**
 * Residual bound of an early-stopped multiplicity check: √(thr·‖A‖est), 1e-4·‖A‖ at tol 1e-8 —
 * an eigenvalue error of about thr for a gap of ‖A‖ (Kato–Temple), and a Ritz vector that the
 * Krylov space has amplified by ~10⁴ against the rest of the spectrum, which any lower
 * eigenvalue with a comparable share of the random start would have outpaced.
 */
export function looseThreshold<V, S>(c: LanczosCtx<V, S>): number {
  const thr = threshold(c);
  return Math.max(thr, Math.sqrt(thr * Math.max(c.normA, Number.MIN_VALUE)));
}

/**
 * A check run's first Ritz value θ (residual estimate r) is clear of the k-th wanted value λ_k:
 * r within the loose bound, and [θ − r, θ + r] — which holds an eigenvalue of the deflated
 * operator — wholly beyond λ_k by more than the threshold (Ritz values only move towards the
 * wanted end, so a θ below λ_k is kept running: a missed copy).
 */
export function clearOfLimit<V, S>(c: LanczosCtx<V, S>, theta: number, r: number, limit: number): boolean {
  return r <= looseThreshold(c) && c.sign * (theta - limit) > r + threshold(c);
}

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
    op.apply(cand.vectors[i]!, tmp); // tmp = A·y
    run.stats.matvecs++;
    space.axpby(-cand.values[i]!, cand.vectors[i]!, 1, tmp); // tmp = A·y − θ·y
    norms.push(space.norm2(tmp));
  }
  const res = await readAndRelease(space, norms, run.stats);
  space.release(tmp);
  return { cand, res, ok: res.every((r) => r <= thr) };
}

/** One deflated run for one pair: the locked vectors, a start (consumed), its seed, the k-th value. */
export type CheckRun<V> = (locked: readonly V[], start: V, seed: number, limit: number) => Promise<CoreOut<V>>;

interface Answer<V> {
  values: number[];
  vectors: V[];
  reason: StopReason;
  detail?: string;
}

/**
 * The multiplicity check of a converged answer for k pairs: up to k deflated runs, each from a
 * fresh random start; a run that finds a value beyond λ_k (or stops clear of it) ends the check,
 * one that finds a better value inserts it (a missed copy) and drops the k-th pair.
 */
export async function checkMultiplicity<V, S>(c: LanczosCtx<V, S>, k: number, seed: number, first: Answer<V>, runCheck: CheckRun<V>): Promise<Answer<V>> {
  const { space } = c;
  const n = c.op.rows;
  let { values, vectors, reason, detail } = first;
  for (let attempt = 0; attempt < k; attempt++) {
    const extra = await runCheck(vectors, randomVector(space, n, seed + 101 * (attempt + 1)), seed + attempt + 1, values[k - 1]!);
    if (extra.reason !== 'converged') {
      for (const v of extra.vectors) space.release(v);
      reason = extra.reason;
      detail = `lanczos: multiplicity check ${attempt + 1} ended with ${extra.reason}${extra.detail ? ` (${extra.detail})` : ''}`;
      break;
    }
    const theta = extra.values[0]!;
    if (!(c.sign * theta < c.sign * values[k - 1]! - threshold(c))) {
      for (const v of extra.vectors) space.release(v);
      break;
    }
    // a missed (multiple) eigenvalue: insert it, drop the last wanted pair
    let pos = 0;
    while (pos < k && c.sign * values[pos]! <= c.sign * theta) pos++;
    values = [...values.slice(0, pos), theta, ...values.slice(pos, k - 1)];
    space.release(vectors[k - 1]!);
    vectors = [...vectors.slice(0, pos), extra.vectors[0]!, ...vectors.slice(pos, k - 1)];
  }
  return detail === undefined ? { values, vectors, reason } : { values, vectors, reason, detail };
}
