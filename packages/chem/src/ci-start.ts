/**
 * Davidson's start vectors for the CI driver (./ci.ts): the lowest diagonal unit vectors (or
 * spin-adapted combinations) plus a small seeded random part, so that states orthogonal to
 * every unit-vector guess (other spin or spatial symmetry) are still reachable.
 * @module
 */
import { generators } from '@gpusparse/formats';
import { lowestIndices } from '@gpusparse/solvers';
import type { DeterminantSpace } from './determinants/space';
import type { HalfSpaceOperator } from './direct/operator';
import { spinAdaptedGuess } from './spin-guess';

/** Options of {@link startVectors}. */
export interface StartVectorOptions<V> {
  space: DeterminantSpace;
  diagonal: Float64Array;
  kSolve: number;
  /** Spin-adapted starts for this multiplicity (no penalty matrix: parity or a filter handles the rest). */
  multiplicity?: number;
  /** A projection of the host operator (e.g. onto one spin parity), applied to each start. */
  project?: (v: Float64Array) => void;
  /** Davidson in the half space of the spin parity: starts compressed to it. */
  half?: HalfSpaceOperator;
  fromArray: (v: Float64Array) => V;
}

/**
 * kSolve start vectors, and with spin-adapted starts 4 spare ones (for roots of another spin
 * shifted out later). Cost O(kSolve·n).
 */
export function startVectors<V>(o: StartVectorOptions<V>): { initial: V[]; spare: V[] } {
  const { space, diagonal, kSolve } = o;
  const adapted = o.multiplicity !== undefined;
  const guesses = adapted ? spinAdaptedGuess(space, diagonal, kSolve + 4, o.multiplicity!) : lowestIndices(diagonal, kSolve).slice(0, kSolve).map((i) => [{ index: i, value: 1 }]);
  const rand = generators.rng(12345);
  // spin-adapted starts: parity and the other-spin shift handle what the random part guards against, so
  // keep its norm at ≈ 10^-3 (1e-3 per entry is a norm of 0.13 at 2·10^5 entries: 24 instead of 19 iterations on H2O/6-31G)
  const amp = adapted ? 1e-3 / Math.sqrt(space.size / 12) : 1e-3;
  const initial = guesses.map((entries) => {
    const g = new Float64Array(space.size);
    if (o.half) {
      // the half space: compress the guess (which projects it onto the parity), then the random part there
      // (half as many numbers, no full-length projection: ≈ 30 ms less per start at 6·10^4 determinants)
      for (const { index, value } of entries) g[index] = value;
      const u = o.half.compress(g);
      const ampHalf = adapted ? 1e-3 / Math.sqrt(u.length / 12) : 1e-3;
      for (let j = 0; j < u.length; j++) u[j]! += (rand() - 0.5) * ampHalf;
      // the random part back to the wanted spin: with the spin-clean preconditioner (./pspace-precond.ts)
      // no state of another spin of the parity then enters Davidson's subspace
      if (adapted) o.half.spinProject?.(u, o.multiplicity!);
      return o.fromArray(u);
    }
    for (let j = 0; j < g.length; j++) g[j] = (rand() - 0.5) * amp;
    for (const { index, value } of entries) g[index] = value;
    o.project?.(g);
    return o.fromArray(g);
  });
  const spare = initial.splice(kSolve);
  return { initial, spare };
}
