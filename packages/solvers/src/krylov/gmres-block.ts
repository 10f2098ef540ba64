/**
 * The optional device basis block of GMRES (GpuVectorSpace.gmresBlock): the cycle's basis in one
 * device buffer, so that a one-pass Gram–Schmidt step is a fixed number of dispatches for any
 * basis size, its projections and norm in a history row per step, and a cycle's rows plus the
 * restart residual's norm read back together. Spaces without it take the per-vector path.
 * @module
 */
import type { VectorSpace } from '@gpusparse/formats';

/**
 * The block as gmres uses it. Signs: the stored next vector is −w'/‖w'‖ (the Hessenberg entry
 * below the diagonal is −‖w'‖ in the stored basis) and `start` stores v₀ = −r/‖r‖.
 */
export interface ArnoldiBlock<V> {
  readonly capacity: number;
  /** v0 = −r/‖r‖ (also column 0), ‖r‖ kept for the next read; r is left negated. */
  start(r: V, v0: V): void;
  /** Column 0 := v0 (made by the caller). */
  setStart(v0: V): void;
  /** w ⟂ columns [0, m), next = −w'/‖w'‖ (column m); row `row` := [h_0 … h_{m−1}, ‖w'‖]. */
  step(m: number, w: V, next: V, row: number): void;
  /** The rows of these steps and, with `withStart`, the last start's ‖r‖, in one readback. */
  read(rows: readonly number[], withStart: boolean): Promise<{ steps: number[][]; start?: number }>;
  dispose(): void;
}

/** The space's block for a cycle of m steps, or undefined where it offers none (host spaces) or it does not fit. */
export function arnoldiBlock<V, S>(space: VectorSpace<V, S>, n: number, m: number): ArnoldiBlock<V> | undefined {
  const make = (space as { gmresBlock?: (n: number, capacity: number) => ArnoldiBlock<V> | undefined }).gmresBlock;
  if (typeof make !== 'function') return undefined;
  return make.call(space, n, m + 1);
}
