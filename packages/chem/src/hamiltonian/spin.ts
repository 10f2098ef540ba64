/**
 * Total spin S² = S_z² + S_z + S₋S₊ in a determinant space, exactly from the determinant
 * expansion, and the spin-penalty operator H + λ(S² − S(S+1)) that selects one multiplicity.
 * Determinants are |D⟩ = Π a†_α Π a†_β |0⟩ (alpha creators first), as in the Hamiltonian.
 * @module
 */
import {
  type CsrMatrix,
  csrFromTriplets,
  csrSpmv,
  InvalidParameterError,
  type LinearOperator,
  type VectorSpace,
} from '@gpusparse/formats';
import { countBelow, popcount32 } from '../determinants/bits';
import type { DeterminantSpace } from '../determinants/space';
import { stringIndex } from '../determinants/strings';
import { pairHashGet } from '../determinants/pair-hash';

/**
 * S² as a sparse symmetric matrix over `space`. Diagonal: S_z² + S_z + #(β-only orbitals);
 * off-diagonal: S₋S₊ moves one β-only orbital p to α and one α-only orbital q to β,
 * D' = a†_qβ a_qα a†_pα a_pβ D, with the fermionic sign. Determinants outside the space are
 * dropped (exact when the space is closed under spin flips, e.g. FCI, CAS, or truncated CI
 * from a closed-shell reference). Cost O(size · n_open²).
 * @example
 * const s2 = spinSquaredMatrix(fciSpace(2, 1, 1)); // [[1,0,0,0],[0,1,1,0],...] in some order
 */
export function spinSquaredMatrix(space: DeterminantSpace): CsrMatrix {
  const sz = (space.nalpha - space.nbeta) / 2;
  const ri: number[] = [];
  const ci: number[] = [];
  const v: number[] = [];
  const n = space.norb;
  for (let k = 0; k < space.size; k++) {
    const ia = space.detAlpha[k]!;
    const ib = space.detBeta[k]!;
    const aLo = space.alpha.lo[ia]!;
    const aHi = space.alpha.hi[ia]!;
    const bLo = space.beta.lo[ib]!;
    const bHi = space.beta.hi[ib]!;
    // β-only (p) and α-only (q) orbitals
    const betaOnlyLo = (bLo & ~aLo) >>> 0;
    const betaOnlyHi = (bHi & ~aHi) >>> 0;
    const alphaOnlyLo = (aLo & ~bLo) >>> 0;
    const alphaOnlyHi = (aHi & ~bHi) >>> 0;
    ri.push(k);
    ci.push(k);
    v.push(sz * sz + sz + popcount32(betaOnlyLo) + popcount32(betaOnlyHi));
    for (let p = 0; p < n; p++) {
      const pb = p < 32 ? (betaOnlyLo >>> p) & 1 : (betaOnlyHi >>> (p - 32)) & 1;
      if (!pb) continue;
      for (let q = 0; q < n; q++) {
        const qa = q < 32 ? (alphaOnlyLo >>> q) & 1 : (alphaOnlyHi >>> (q - 32)) & 1;
        if (!qa) continue;
        // a_pβ, then a†_pα, then a_qα, then a†_qβ (the N_α phases of the β operators cancel)
        let parity = countBelow(bLo, bHi, p) + countBelow(aLo, aHi, p);
        let a1Lo = aLo;
        let a1Hi = aHi;
        if (p < 32) a1Lo = (a1Lo | (1 << p)) >>> 0;
        else a1Hi = (a1Hi | (1 << (p - 32))) >>> 0;
        parity += countBelow(a1Lo, a1Hi, q);
        if (q < 32) a1Lo = (a1Lo & ~(1 << q)) >>> 0;
        else a1Hi = (a1Hi & ~(1 << (q - 32))) >>> 0;
        let b1Lo = bLo;
        let b1Hi = bHi;
        if (p < 32) b1Lo = (b1Lo & ~(1 << p)) >>> 0;
        else b1Hi = (b1Hi & ~(1 << (p - 32))) >>> 0;
        parity += countBelow(b1Lo, b1Hi, q);
        if (q < 32) b1Lo = (b1Lo | (1 << q)) >>> 0;
        else b1Hi = (b1Hi | (1 << (q - 32))) >>> 0;
        const ta = stringIndex(space.alpha, a1Lo, a1Hi);
        const tb = stringIndex(space.beta, b1Lo, b1Hi);
        if (ta < 0 || tb < 0) continue;
        const t = pairHashGet(space.detHash, ta, tb);
        if (t < 0) continue;
        ri.push(t);
        ci.push(k);
        v.push(parity & 1 ? -1 : 1);
      }
    }
  }
  return csrFromTriplets(space.size, space.size, ri, ci, v);
}

/**
 * ⟨c|S²|c⟩ / ⟨c|c⟩ for a host CI vector. Cost one sparse product.
 * @example
 * expectationValue(spinSquaredMatrix(space), c); // ≈ 2 for a triplet
 */
export function expectationValue(m: CsrMatrix, c: Float64Array): number {
  const y = csrSpmv(m, c);
  let num = 0;
  let den = 0;
  for (let i = 0; i < c.length; i++) {
    num += c[i]! * y[i]!;
    den += c[i]! * c[i]!;
  }
  return num / den;
}

/**
 * The operator H + λ(S² − S(S+1)): states of multiplicity 2S+1 keep their energy, others
 * are shifted up by λ·(S'(S'+1) − S(S+1)). Both operators must belong to `space`'s backend.
 * Cost per apply: one H product, one S² product, one axpby.
 * @example
 * const op = new SpinPenaltyOperator(h, s2, vs, 1, 0.5, diagH, diagS2); // singlets
 */
export class SpinPenaltyOperator<V, S> implements LinearOperator<V> {
  readonly rows: number;
  readonly cols: number;
  readonly label: string;
  private readonly shift: number;
  constructor(
    private readonly h: LinearOperator<V>,
    private readonly s2: LinearOperator<V>,
    private readonly space: VectorSpace<V, S>,
    multiplicity: number,
    private readonly lambda: number,
    private readonly hDiagonal?: Float64Array,
    private readonly s2Diagonal?: Float64Array,
  ) {
    if (!Number.isInteger(multiplicity) || multiplicity < 1) throw new InvalidParameterError('spin.multiplicity', 'an integer ≥ 1 (2S+1)', multiplicity);
    if (!(Number.isFinite(lambda) && lambda > 0)) throw new InvalidParameterError('spin.penalty', 'a finite λ > 0', lambda);
    const s = (multiplicity - 1) / 2;
    this.shift = s * (s + 1);
    this.rows = h.rows;
    this.cols = h.cols;
    this.label = `${h.label ?? 'H'} + ${lambda}(S² − ${this.shift})`;
  }
  apply(x: V, y: V): void {
    this.h.apply(x, y); // y = H·x
    this.s2.applyScaled(this.lambda, x, 1, y); // y = y + λ·S²·x
    this.space.axpby(-this.lambda * this.shift, x, 1, y); // y = y − λ·S(S+1)·x
  }
  applyScaled(alpha: number, x: V, beta: number, y: V): void {
    this.h.applyScaled(alpha, x, beta, y); // y = α·H·x + β·y
    this.s2.applyScaled(alpha * this.lambda, x, 1, y); // y = y + αλ·S²·x
    this.space.axpby(-alpha * this.lambda * this.shift, x, 1, y); // y = y − αλS(S+1)·x
  }
  diagonal(): Float64Array {
    const hd = this.hDiagonal ?? this.h.diagonal?.();
    const sd = this.s2Diagonal ?? this.s2.diagonal?.();
    if (!hd || !sd) throw new InvalidParameterError('diagonal', 'diagonals of H and S²', 'an operator without diagonal()');
    const out = new Float64Array(hd.length);
    for (let i = 0; i < out.length; i++) out[i] = hd[i]! + this.lambda * (sd[i]! - this.shift);
    return out;
  }
}
