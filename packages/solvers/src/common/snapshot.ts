/**
 * Saved iterates of the short-recurrence driver (common/recurrence.ts): the rollback checkpoint
 * and the best checked iterate. A slot holds either the start x — x0, or zeros when none was
 * given — without a vector, or a vector of its own made on its first save. A solve whose checks
 * all improve on the best estimate (most host CG solves: one check per iteration) never makes
 * the checkpoint vector: one n-vector fewer to allocate and, on a fresh host space, to fault in
 * page by page (≈ 0.5 ms per 1.6 MB on the 2-core VM; bench/RESULTS.md, session 12), and no
 * copies of x at the start.
 * @module
 */
import type { VectorSpace } from '@gpusparse/formats';

/**
 * A vector for an operation that writes every element without reading the old ones (combine
 * with β = 0, a copy, a product's output): the space's `createUninitialized` where it has one
 * (the WebGPU space: no zero-fill dispatch; the host wasm space: no zero-fill pass), else `create`.
 * @example const y = createForOverwrite(space, n); space.combine(c, basis, 0, y);
 */
export function createForOverwrite<V, S>(space: VectorSpace<V, S>, n: number): V {
  const f = (space as { createUninitialized?: (n: number) => V }).createUninitialized;
  return typeof f === 'function' ? f.call(space, n) : space.create(n);
}

/** One saved iterate: the start x (no vector) or a vector made on the first {@link Slot.save}. */
export class Slot<V, S> {
  private v: V | undefined;
  private atStart = true;

  constructor(
    private readonly space: VectorSpace<V, S>,
    private readonly n: number,
    /** The start iterate: the caller's x0 (never written), or undefined for zeros. */
    private readonly x0: V | undefined,
  ) {}

  /** slot ← x (one copy; the vector is made on the first save). */
  save(x: V): void {
    this.v ??= createForOverwrite(this.space, this.n);
    this.space.copy(x, this.v);
    this.atStart = false;
  }

  /** x ← slot (one copy, or a fill with zeros for the start of a solve without x0). */
  restore(x: V): void {
    if (!this.atStart) this.space.copy(this.v!, x);
    else if (this.x0 !== undefined) this.space.copy(this.x0, x);
    else this.space.fill(x, 0);
  }

  /** Release the vector, if one was made. */
  dispose(): void {
    if (this.v !== undefined) this.space.release(this.v);
    this.v = undefined;
  }
}
