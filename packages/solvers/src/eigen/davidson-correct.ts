/**
 * Davidson's corrections: the diagonal preconditioner t_i = r_i / (d − θ_i + shift) (clamped,
 * PySCF's), or a caller's corrector; then their orthonormalisation against the subspace V
 * (CGS2 + SVQB, a second round where the first kept too little).
 * @module
 */
import type { VectorSpace } from '@gpusparse/formats';
import type { SolverStats } from '../common/result';
import { combineColumns, projectOutTwice, type SvqbResult, svqb } from './ortho';

/**
 * A replacement for the diagonal preconditioner: given the residuals of the unconverged roots
 * (`roots[j]` is the root of `residuals[j]`), all current Ritz values, and a way to form the
 * current Ritz vectors, return correction vectors (any number; they are orthogonalised and
 * filtered by the caller).
 */
export type DavidsonCorrector<V> = (c: {
  residuals: readonly V[];
  roots: readonly number[];
  theta: readonly number[];
  ritzVectors: () => V[];
}) => Promise<V[]>;

/** Denominator clamp of the diagonal preconditioner (PySCF: |d − θ| < 1e-8 → 1e-8). */
const CLAMP = 1e-8;
/**
 * On float64 spaces the second CGS2 + SVQB round runs only when the first kept less than this
 * squared fraction of some correction's norm: the round's loss of orthogonality grows like
 * ε / (kept fraction), so at ≥ 1e-2 the block is orthonormal (and ⟂ V) to ≈ 100ε after one
 * round ("twice is enough" — the second round only repairs what cancellation lost). float32
 * spaces always take both rounds.
 */
export const F64_ONE_ROUND_KEEP = 1e-2;

/** What one correction step needs: the residuals r_i of every root, the unconverged roots, θ. */
export interface CorrectionInput<V> {
  r: readonly V[];
  roots: readonly number[];
  theta: readonly number[];
  /** The subspace and the Ritz coefficients (for a corrector's Ritz vectors). */
  v: readonly V[];
  coeffs: readonly (readonly number[])[];
}

/** The diagonal d as a space vector, uploaded once per run (spaces with `shiftedDivide`). */
export interface DiagonalCache<V> {
  d: Float64Array;
  levelShift: number;
  inSpace?: V;
}

/** Corrections t_i for the unconverged roots: the corrector's, or r_i ∘ (d − θ_i + shift)⁻¹. */
export async function corrections<V, S>(space: VectorSpace<V, S>, x: CorrectionInput<V>, diag: DiagonalCache<V>, corrector: DavidsonCorrector<V> | undefined, stats: SolverStats): Promise<V[]> {
  const { r, roots, theta } = x;
  const n = diag.d.length;
  const t: V[] = [];
  if (corrector) {
    const snapshotV = x.v;
    const snapshotC = x.coeffs;
    const out = await corrector({ residuals: roots.map((i) => r[i]!), roots, theta, ritzVectors: () => combineColumns(space, snapshotV, snapshotC) });
    stats.precondApplies += roots.length;
    return out;
  }
  if (space.shiftedDivide) {
    // on the device: d uploaded once, t = r ∘ (d − θ + shift)⁻¹ by one kernel per root (no
    // host vector of n and no upload per root and iteration: seconds at 4·10^7 rows)
    diag.inSpace ??= space.fromArray(diag.d);
    for (const i of roots) {
      const ti = space.create(n);
      space.shiftedDivide(r[i]!, diag.inSpace, theta[i]! - diag.levelShift, CLAMP, ti); // t = r ∘ (d − θ + shift)⁻¹
      stats.precondApplies++;
      t.push(ti);
    }
    return t;
  }
  for (const i of roots) {
    const inv = new Float64Array(n);
    for (let j = 0; j < n; j++) {
      let den = diag.d[j]! - theta[i]! + diag.levelShift; // d_j − (θ − shift)
      if (Math.abs(den) < CLAMP) den = den < 0 ? -CLAMP : CLAMP;
      inv[j] = 1 / den;
    }
    const dinv = space.fromArray(inv);
    const ti = space.create(n);
    space.multiply(r[i]!, dinv, ti); // t = r ∘ (d − θ + shift)⁻¹
    stats.precondApplies++;
    space.release(dinv);
    t.push(ti);
  }
  return t;
}

/**
 * The corrections t (consumed) orthonormalised against V and each other: CGS2 + SVQB, a second
 * round in float32 or when the first kept less than {@link F64_ONE_ROUND_KEEP}. Returns both
 * rounds' outcomes (the second is the first when it did not run).
 */
export async function orthonormalCorrections<V, S>(space: VectorSpace<V, S>, v: readonly V[], t: V[], tNorms: S[], o: { lindep: number; f32: boolean; stats: SolverStats }): Promise<{ o1: SvqbResult<V>; o2: SvqbResult<V> }> {
  for (const ti of t) projectOutTwice(space, v, ti); // t ← (I − VVᵀ)²·t
  const o1 = await svqb(space, t, { dropTol: o.lindep, refNorms: tNorms }, o.stats);
  let o2 = o1;
  if (o.f32 || o1.nonFinite || o1.smallest < F64_ONE_ROUND_KEEP) {
    for (const ti of o1.block) projectOutTwice(space, v, ti);
    o2 = await svqb(space, o1.block, { dropTol: o.lindep }, o.stats);
  }
  return { o1, o2 };
}
