/**
 * Davidson's initial subspace: the caller's vectors, else unit vectors at the lowest diagonal
 * entries (with a small seeded random part when the k-th lowest value ties), orthonormalised (CGS2 against the vectors kept so far + SVQB, dropping dependent
 * ones and taking further diagonal entries until k vectors are kept).
 * @module
 */
import { mulberry32, type VectorSpace } from '@gpusparse/formats';
import type { SolverStats } from '../common/result';
import { projectOutTwice, svqb } from './ortho';

/**
 * Indices of the k smallest entries of d (Davidson's initial guess: the lowest diagonal
 * entries), ascending by value then index (the order a full sort would give). For k ≤ 64 an
 * insertion selection in O(n·k) — a full sort of 1.2·10^7 diagonal entries takes 3 s here —
 * above that a full sort, O(n log n).
 * @example lowestIndices(Float64Array.of(3, 1, 2, 1), 3); // [1, 3, 2]
 */
export function lowestIndices(d: Float64Array, k: number): number[] {
  const kk = Math.max(0, Math.min(k, d.length));
  if (kk > 64) {
    return Array.from(d, (_, i) => i)
      .sort((a, b) => d[a]! - d[b]! || a - b)
      .slice(0, kk);
  }
  const best: number[] = [];
  const less = (x: number, y: number) => d[x]! < d[y]! || (d[x] === d[y] && x < y);
  for (let i = 0; i < d.length; i++) {
    if (best.length === kk && (kk === 0 || !less(i, best[kk - 1]!))) continue;
    let p = best.length === kk ? kk - 1 : best.length;
    if (best.length < kk) best.push(i);
    while (p > 0 && less(i, best[p - 1]!)) {
      best[p] = best[p - 1]!;
      p--;
    }
    best[p] = i;
  }
  return best;
}

/**
 * The orthonormal initial block from `guess` (the copied initial vectors, consumed; may be
 * empty) and unit vectors at the lowest entries of d: `nonFinite` (with the SVQB's block, for
 * the caller to return) when a Gram matrix was not finite.
 */
export async function initialSubspace<V, S>(space: VectorSpace<V, S>, d: Float64Array, k: number, guess0: V[], lindep: number, stats: SolverStats): Promise<{ v: V[]; nonFinite?: V[] }> {
  const n = d.length;
  let guess = guess0;
  // the lowest diagonal entries, as many as a guess normally needs; all of them (a full sort)
  // only if linear dependence used those up
  let order = lowestIndices(d, Math.min(n, 2 * k + 8));
  // the k-th lowest diagonal value shared with an entry left out: which unit vectors start is
  // arbitrary, and on a block-diagonal A with identical blocks they all fell in one block, which A
  // and the diagonal preconditioner never leave — davidson returned one copy of a 4-fold lowest
  // eigenvalue 'converged'. A small seeded random part (as the CI driver's starts have) reaches
  // the other blocks; distinct diagonals keep their exact unit vectors.
  const tied = k > 0 && order.length > k && d[order[k - 1]!] === d[order[k]!];
  const rand = tied ? mulberry32(0x5eed) : undefined;
  let nextUnit = 0;
  let v: V[] = [];
  for (let attempt = 0; v.length < k && (attempt === 0 || nextUnit < n) && attempt < n + 1; attempt++) {
    while (guess.length + v.length < k && nextUnit < n) {
      if (nextUnit >= order.length) order = lowestIndices(d, n);
      const e = space.create(n);
      const unit = new Float64Array(n);
      if (rand) for (let i = 0; i < n; i++) unit[i] = (rand() - 0.5) * 1e-3;
      unit[order[nextUnit++]!] = 1;
      space.write(e, unit);
      guess.push(e);
    }
    const refNorms = guess.map((g) => space.norm2(g));
    for (const g of guess) projectOutTwice(space, v, g); // g ← (I − VVᵀ)²·g
    const o = await svqb(space, guess, { dropTol: lindep, refNorms }, stats);
    if (o.nonFinite) return { v, nonFinite: o.block };
    v = [...v, ...o.block];
    guess = [];
  }
  return { v };
}
