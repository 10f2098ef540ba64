/**
 * Total spin S² = S_z² + S_z + S₋S₊ in a determinant space, exactly from the determinant
 * expansion, and the spin-penalty operator H + λ(S² − S(S+1))² that selects one multiplicity.
 * Determinants are |D⟩ = Π a†_α Π a†_β |0⟩ (alpha creators first), as in the Hamiltonian.
 * @module
 */
import {
  type CsrMatrix,
  csrFromTriplets,
  csrSpmv,
  InvalidParameterError,
  type LinearOperator,
} from '@gpusparse/formats';
import { countBelow, popcount32 } from '../determinants/bits';
import { pairHashGet } from '../determinants/pair-hash';
import type { DeterminantSpace } from '../determinants/space';
import { stringIndex } from '../determinants/strings';

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
  const ri: number[] = [];
  const ci: number[] = [];
  const v: number[] = [];
  forEachSpinTerm(
    space,
    (k, d) => {
      ri.push(k);
      ci.push(k);
      v.push(d);
    },
    (k, t, sign) => {
      ri.push(t);
      ci.push(k);
      v.push(sign);
    },
  );
  return csrFromTriplets(space.size, space.size, ri, ci, v);
}

/**
 * ⟨c|S²|c⟩ / ⟨c|c⟩ for several host CI vectors at once, without building S² (no storage beyond
 * the vectors: the matrix of a 10^7-determinant space would hold ~10^8 entries). Same terms and
 * conventions as {@link spinSquaredMatrix}. Cost O(size · n_open²) lookups, one pass.
 * @example
 * spinSquaredExpectations(space, [c0, c1]); // [0, 2] for a singlet and a triplet
 */
export function spinSquaredExpectations(space: DeterminantSpace, vectors: readonly Float64Array[]): number[] {
  const num = new Float64Array(vectors.length);
  for (const c of vectors) if (c.length !== space.size) throw new InvalidParameterError('spinSquaredExpectations vector length', String(space.size), c.length);
  forEachSpinTerm(
    space,
    (k, d) => {
      for (let r = 0; r < vectors.length; r++) num[r]! += d * vectors[r]![k]! ** 2;
    },
    (k, t, sign) => {
      for (let r = 0; r < vectors.length; r++) num[r]! += sign * vectors[r]![t]! * vectors[r]![k]!; // ⟨c|t⟩⟨t|S²|k⟩⟨k|c⟩
    },
  );
  return vectors.map((c, r) => {
    let den = 0;
    for (let i = 0; i < c.length; i++) den += c[i]! * c[i]!;
    return num[r]! / den;
  });
}

/**
 * Visit the terms of S² column by column: `diag(k, value)` once per determinant k, then
 * `off(k, t, ±1)` for every D_t = S₋S₊-partner of D_k inside the space.
 */
function forEachSpinTerm(space: DeterminantSpace, diag: (k: number, value: number) => void, off: (k: number, t: number, sign: number) => void): void {
  const sz = (space.nalpha - space.nbeta) / 2;
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
    diag(k, sz * sz + sz + popcount32(betaOnlyLo) + popcount32(betaOnlyHi));
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
        off(k, t, parity & 1 ? -1 : 1);
      }
    }
  }
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
 * P = (S² − S(S+1))² as a sparse matrix: zero on states of multiplicity 2S+1, positive on all
 * others (a linear shift would push lower multiplicities down). Cost O(Σ_i Σ_{k∈row i} len_k).
 * @example
 * const p = spinPenaltyMatrix(spinSquaredMatrix(space), 1); // singlets have P = 0
 */
export function spinPenaltyMatrix(s2: CsrMatrix, multiplicity: number): CsrMatrix {
  if (!Number.isInteger(multiplicity) || multiplicity < 1) throw new InvalidParameterError('spin.multiplicity', 'an integer ≥ 1 (2S+1)', multiplicity);
  const s = (multiplicity - 1) / 2;
  const shift = s * (s + 1);
  const n = s2.rows;
  // M = S² − shift·I, then P = M·M (row i: Σ_k M_ik · row k of M)
  const ri: number[] = [];
  const ci: number[] = [];
  const v: number[] = [];
  const acc = new Float64Array(n);
  const mark = new Int32Array(n).fill(-1);
  const cols: number[] = [];
  const m = (i: number, k: number, x: number) => (i === k ? x - shift : x);
  for (let i = 0; i < n; i++) {
    cols.length = 0;
    let hasDiag = false;
    for (let a = s2.rowPtr[i]!; a < s2.rowPtr[i + 1]!; a++) if (s2.colIdx[a] === i) hasDiag = true;
    const rowI: [number, number][] = [];
    for (let a = s2.rowPtr[i]!; a < s2.rowPtr[i + 1]!; a++) rowI.push([s2.colIdx[a]!, m(i, s2.colIdx[a]!, s2.values[a]!)]);
    if (!hasDiag) rowI.push([i, -shift]);
    for (const [k, mik] of rowI) {
      let kHasDiag = false;
      for (let b = s2.rowPtr[k]!; b < s2.rowPtr[k + 1]!; b++) {
        const j = s2.colIdx[b]!;
        if (j === k) kHasDiag = true;
        if (mark[j] !== i) {
          mark[j] = i;
          acc[j] = 0;
          cols.push(j);
        }
        acc[j]! += mik * m(k, j, s2.values[b]!);
      }
      if (!kHasDiag) {
        if (mark[k] !== i) {
          mark[k] = i;
          acc[k] = 0;
          cols.push(k);
        }
        acc[k]! += mik * -shift;
      }
    }
    for (const j of cols) {
      if (acc[j] === 0) continue;
      ri.push(i);
      ci.push(j);
      v.push(acc[j]!);
    }
  }
  return csrFromTriplets(n, n, ri, ci, v);
}

/**
 * The operator H + λ·P with P = (S² − S(S+1))² ({@link spinPenaltyMatrix}): states of the
 * wanted multiplicity keep their energy, every other state moves up by λ(S'(S'+1) − S(S+1))².
 * Cost per apply: one H product and one P product on the backend.
 * @example
 * const op = new SpinPenaltyOperator(h, p, 0.5, diagH, diagP); // H + 0.5·P
 */
export class SpinPenaltyOperator<V> implements LinearOperator<V> {
  readonly rows: number;
  readonly cols: number;
  readonly label: string;
  constructor(
    private readonly h: LinearOperator<V>,
    private readonly p: LinearOperator<V>,
    private readonly lambda: number,
    private readonly hDiagonal: Float64Array,
    private readonly pDiagonal: Float64Array,
  ) {
    if (!(Number.isFinite(lambda) && lambda > 0)) throw new InvalidParameterError('spin.penalty', 'a finite λ > 0', lambda);
    this.rows = h.rows;
    this.cols = h.cols;
    this.label = `${h.label ?? 'H'} + ${lambda}·(S² − S(S+1))²`;
  }
  apply(x: V, y: V): void {
    this.h.apply(x, y); // y = H·x
    this.p.applyScaled(this.lambda, x, 1, y); // y = y + λ·P·x
  }
  applyScaled(alpha: number, x: V, beta: number, y: V): void {
    this.h.applyScaled(alpha, x, beta, y); // y = α·H·x + β·y
    this.p.applyScaled(alpha * this.lambda, x, 1, y); // y = y + αλ·P·x
  }
  diagonal(): Float64Array {
    const out = new Float64Array(this.hDiagonal.length);
    for (let i = 0; i < out.length; i++) out[i] = this.hDiagonal[i]! + this.lambda * this.pDiagonal[i]!;
    return out;
  }
}
