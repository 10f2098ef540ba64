/**
 * The CI driver's checks and dense solve for a direct σ with time-reversal symmetry
 * (./direct/time-reversal.ts). That operator is P H P + (1 − P) D (1 − P): H on the chosen spin
 * parity, and on the other parity a diagonal whose eigenvalues are not eigenvalues of H. Davidson
 * never sees the second block (its starts are projected), but a dense eigensolve of the whole
 * operator does — so the dense solve here runs on the half space Qᵀ H Q instead, and the
 * driver refuses a multiplicity of the other parity (it would lie in the fake block).
 * @module
 */
import { InvalidParameterError } from '@gpusparse/formats';
import { denseCiSolve } from './ci-phases';
import type { DeterminantSpace } from './determinants/space';
import { denseColumnsCsr } from './direct/ci';
import type { HalfSpaceOperator } from './direct/operator';
import { spinSquaredExpectations } from './hamiltonian/spin';

/** What the driver knows of a host operator with time reversal. */
interface ParityOperator {
  readonly parity?: 1 | -1;
  readonly half?: HalfSpaceOperator;
}

const parityWords = (s: 1 | -1) => (s > 0 ? 'even spin parity (S = 0, 2, …: multiplicity 1, 5, …)' : 'odd spin parity (S = 1, 3, …: multiplicity 3, 7, …)');

/**
 * Refuse what the parity operator cannot answer: a multiplicity of the other parity (its states
 * are not in the operator's H block), more roots than the parity holds. O(1).
 * @example checkParityRun(h.host, 3, 2) // throws when h.host keeps the even parity
 */
export function checkParityRun(host: unknown, multiplicity: number | undefined, nroots: number): void {
  const op = host as ParityOperator | undefined;
  if (op?.parity === undefined) return;
  if (multiplicity !== undefined) {
    const want = ((multiplicity - 1) / 2) % 2 === 0 ? 1 : -1;
    if (want !== op.parity) throw new InvalidParameterError('spin.multiplicity', `a multiplicity of the direct σ's time-reversal ${parityWords(op.parity)}`, multiplicity);
  }
  if (op.half && nroots > op.half.rows) throw new InvalidParameterError('nroots', `at most ${op.half.rows} (the states of ${parityWords(op.parity)} in this space)`, nroots);
}

/** The half-space operator of a host operator with time reversal, if it has one. */
export function parityHalf(host: unknown): HalfSpaceOperator | undefined {
  return (host as ParityOperator | undefined)?.half;
}

/**
 * The lowest `nroots` eigenpairs of H on one spin parity by a dense solve of Qᵀ H Q (m × m, m the
 * half-space size), vectors expanded to the full space. With `multiplicity`, the states of that
 * spin come first (⟨S²⟩ within 1e-6 of S(S+1)), the lowest of other spins of the parity after
 * them only when too few exist (the driver's notes then name them). Cost m products, O(m³).
 * @example const { values, vectors } = denseHalfSolve(op.half, space, 2, 3);
 */
export function denseHalfSolve(half: HalfSpaceOperator, space: DeterminantSpace, nroots: number, multiplicity: number | undefined): { values: number[]; vectors: Float64Array[] } {
  const m = half.rows;
  const all = denseCiSolve(denseColumnsCsr(half, m), m, undefined, 0, m);
  const vectors = all.vectors.map((u) => half.expand(u));
  let order = vectors.map((_, i) => i);
  if (multiplicity !== undefined) {
    const target = ((multiplicity - 1) / 2) * ((multiplicity + 1) / 2);
    const s2 = spinSquaredExpectations(space, vectors);
    const fits = (i: number) => Math.abs(s2[i]! - target) <= 1e-6 * Math.max(1, target);
    order = [...order.filter(fits), ...order.filter((i) => !fits(i))];
  }
  const pick = order.slice(0, nroots);
  return { values: pick.map((i) => all.values[i]!), vectors: pick.map((i) => vectors[i]!) };
}
