/**
 * The spin penalty that selects one multiplicity: P = (S² − S(S+1))² as a sparse matrix
 * ({@link spinPenaltyMatrix}), the operator H + λ·P ({@link SpinPenaltyOperator}), and
 * ⟨c|S²|c⟩ through a built S² ({@link expectationValue}). Split from ./spin.ts (no logic change).
 * @module
 */
import { type CsrMatrix, csrFromTriplets, csrSpmv, InvalidParameterError, type LinearOperator } from '@gpusparse/formats';

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
