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
  const half = o.half;
  const projected = half && adapted && typeof half.spinProject === 'function' ? projectedRandom(half, rand, o.multiplicity!) : undefined;
  const g = new Float64Array(space.size); // one full-length scratch for every start (not kSolve + 4 of them awaiting collection)
  const initial = guesses.map((entries, j) => {
    if (half) {
      // the half space: compress the guess (which projects it onto the parity), then the random part there
      // (half as many numbers, no full-length projection: ≈ 30 ms less per start at 6·10^4 determinants)
      for (const { index, value } of entries) g[index] = value;
      const u = half.compress(g);
      for (const { index } of entries) g[index] = 0;
      if (projected) {
        // spin-adapted: the guess is a pure spin state; its random part is a combination of two random
        // vectors projected onto the wanted spin once (two projections instead of one per start: each
        // is a few S² products, 6.9 of 67 CPU s on H2O/6-31G ¹A1 when done per start), so with the
        // spin-clean preconditioner (./pspace-precond.ts) no state of another spin enters Davidson's subspace
        const [r1, r2] = projected;
        const c = Math.cos(1 + 0.7 * j);
        const s1 = Math.sin(1 + 0.7 * j);
        for (let i = 0; i < u.length; i++) u[i]! += c * r1[i]! + s1 * r2[i]!;
      } else {
        const ampHalf = 1e-3;
        for (let i = 0; i < u.length; i++) u[i]! += (rand() - 0.5) * ampHalf;
      }
      return o.fromArray(u);
    }
    for (let i = 0; i < g.length; i++) g[i] = (rand() - 0.5) * amp;
    for (const { index, value } of entries) g[index] = value;
    const v = Float64Array.from(g);
    o.project?.(v);
    return o.fromArray(v);
  });
  const spare = initial.splice(kSolve);
  return { initial, spare };
}

/**
 * Two seeded random vectors of the half space with entries of ≈ 10^-3/√(m/12) (a norm of ≈ 10^-3),
 * each projected onto the spin of `multiplicity`: the random parts of the spin-adapted starts.
 */
function projectedRandom(half: HalfSpaceOperator, rand: () => number, multiplicity: number): [Float64Array, Float64Array] {
  const m = half.rows;
  const amp = 1e-3 / Math.sqrt(m / 12);
  const make = () => {
    const r = Float64Array.from({ length: m }, () => (rand() - 0.5) * amp);
    half.spinProject(r, multiplicity);
    return r;
  };
  return [make(), make()];
}
