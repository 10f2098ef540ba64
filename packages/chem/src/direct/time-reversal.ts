/**
 * MS2 = 0 time-reversal symmetry of the direct σ. Swapping every α and β spin maps a state of
 * spin S to (−1)^S times itself, so with the same α and β strings the coefficients of a state
 * satisfy c(I, J) = s·c(J, I), s = (−1)^S: s = +1 holds the even spins (singlet, quintet, …),
 * s = −1 the odd ones (triplet, septet, …). H commutes with the swap, so σ = H·c has the same
 * symmetry when c has, and only the determinants (I, J) with J ≤ I need computing (half the work);
 * the others are copied with the sign s.
 *
 * The operator is P H P + (1 − P) D (1 − P), P the projector onto the s-symmetric vectors and D
 * a diagonal (diag H): on the s-symmetric subspace it is H (same eigenpairs). Started from
 * projected vectors, Davidson stays in that subspace (H, P and the diagonal preconditioner all
 * keep the parity; D on the other parity makes the preconditioner return rounding errors there
 * unamplified), so it finds only states of the chosen spin parity, without a penalty term.
 * @module
 */
import { NotSupportedError } from '@gpusparse/formats';
import type { DeterminantSpace } from '../determinants/space';
import type { DirectContext, DirectLayout } from './tables';

/** The determinant pairs of the swap in the direct layout. */
export interface TimeReversalPairs {
  parity: 1 | -1;
  /** Rows computed up to the diagonal: (I, J) with J ≤ I. */
  rowCompute: Int32Array;
  /** lower[k] = position of (I, J), J < I; upper[k] = position of (J, I). */
  lower: Int32Array;
  upper: Int32Array;
  /** Positions of (I, I). */
  diagonal: Int32Array;
  /**
   * The half space, in direct-layout order: half[k] = position of (I, J), J ≤ I (J = I only for
   * even parity: odd vectors vanish there); mirror[k] = position of (J, I), or −1 when J = I.
   */
  half: Int32Array;
  mirror: Int32Array;
  /**
   * Per half coordinate: ⟨(I, J)|H|(J, I)⟩, non-zero only when the strings I and J differ by one
   * orbital p ↔ q (then (pq|qp), both string signs equal): the diagonal of Qᵀ H Q is
   * diag(H) + s·coupling, the open-shell singlet/triplet splitting the preconditioner should see.
   */
  coupling: Float64Array;
}

function sameStrings(space: DeterminantSpace): boolean {
  const a = space.alpha;
  const b = space.beta;
  if (a.count !== b.count) return false;
  for (let i = 0; i < a.count; i++) if (a.lo[i] !== b.lo[i] || a.hi[i] !== b.hi[i]) return false;
  return true;
}

/** (pq|qp) when the strings (lo, hi) of I and J differ by one orbital (p in I, q in J), else 0. */
function exchange(iLo: number, iHi: number, jLo: number, jHi: number, n: number, eri: Float64Array): number {
  const dl = (iLo ^ jLo) >>> 0;
  const dh = (iHi ^ jHi) >>> 0;
  let p = -1;
  let q = -1;
  for (let x = 0; x < n; x++) {
    if (!(x < 32 ? (dl >>> x) & 1 : (dh >>> (x - 32)) & 1)) continue;
    const inI = x < 32 ? (iLo >>> x) & 1 : (iHi >>> (x - 32)) & 1;
    if (inI) {
      if (p >= 0) return 0;
      p = x;
    } else {
      if (q >= 0) return 0;
      q = x;
    }
  }
  return p < 0 || q < 0 ? 0 : eri[((p * n + q) * n + q) * n + p]!;
}

/**
 * The swap's pairs for `ctx` (a context of ./tables.ts over `space`). Throws NotSupportedError
 * unless MS2 = 0 with one string list for both spins (FCI and CAS spaces). Cost O(size).
 * @example const tr = timeReversalPairs(space, ctx, 1);
 */
export function timeReversalPairs(space: DeterminantSpace, ctx: DirectContext, parity: 1 | -1): TimeReversalPairs {
  if (space.nalpha !== space.nbeta || !sameStrings(space)) {
    throw new NotSupportedError(`direct σ: time-reversal symmetry needs MS2 = 0 (as many α as β electrons) and one string list for both spins; ${space.label} has ${space.nalpha}α, ${space.nbeta}β`);
  }
  const { nA, rowStart, rowLen, irrepA, betaSorted, betaStart, target } = ctx;
  const pos = new Int32Array(nA); // position of string i inside its irrep's list
  for (let g = 0; g < 8; g++) for (let x = betaStart[g]!; x < betaStart[g + 1]!; x++) pos[betaSorted[x]!] = x - betaStart[g]!;
  const rowCompute = new Int32Array(nA);
  // typed arrays of the largest possible length, trimmed at the end (number[] pushes cost ≈ 20 ms at 4·10^5 determinants)
  const size = space.size;
  const lower = new Int32Array(size >>> 1);
  const upper = new Int32Array(size >>> 1);
  const diagonal = new Int32Array(Math.min(nA, size));
  const half = new Int32Array(size);
  const mirror = new Int32Array(size);
  const coupling = new Float64Array(size);
  let nPair = 0;
  let nDiag = 0;
  let nHalf = 0;
  const n = ctx.norb;
  const { lo, hi } = space.alpha;
  for (let i = 0; i < nA; i++) {
    const list = betaStart[irrepA[i]! ^ target]!;
    let b = 0;
    for (; b < rowLen[i]!; b++) {
      const j = betaSorted[list + b]!;
      if (j > i) break;
      if (j === i) {
        diagonal[nDiag++] = rowStart[i]! + b;
        if (parity > 0) {
          half[nHalf] = rowStart[i]! + b;
          mirror[nHalf++] = -1; // coupling stays 0
        }
      } else {
        lower[nPair] = rowStart[i]! + b;
        upper[nPair++] = rowStart[j]! + pos[i]!;
        half[nHalf] = rowStart[i]! + b;
        mirror[nHalf] = rowStart[j]! + pos[i]!;
        coupling[nHalf++] = exchange(lo[i]!, hi[i]!, lo[j]!, hi[j]!, n, ctx.eri);
      }
    }
    rowCompute[i] = b;
  }
  return {
    parity,
    rowCompute,
    lower: lower.slice(0, nPair),
    upper: upper.slice(0, nPair),
    diagonal: diagonal.slice(0, nDiag),
    half: half.slice(0, nHalf),
    mirror: mirror.slice(0, nHalf),
    coupling: coupling.slice(0, nHalf),
  };
}

/** Two full-length vectors in the direct layout: the products' input and output (16 B per determinant). */
export interface HalfScratch {
  xs: Float64Array;
  ys: Float64Array;
}

/**
 * Scratch for {@link timeReversedProduct} and {@link halfProduct}; one serves both of an operator.
 * @example const s = halfScratch(space.size);
 */
export function halfScratch(n: number): HalfScratch {
  return { xs: new Float64Array(n), ys: new Float64Array(n) };
}

/**
 * y = P H P x + other ∘ (1 − P) x in the direct layout, with `half(xs, ys)` computing the rows of
 * `ys` = H·xs up to the diagonal. Cost O(size) besides `half`; scratch: two vectors (`scratch`:
 * shared with {@link halfProduct} of the same operator, as both run synchronously).
 */
export function timeReversedProduct(tr: TimeReversalPairs, n: number, other: Float64Array, half: (x: Float64Array, y: Float64Array) => void, scratch: HalfScratch = halfScratch(n)): (x: Float64Array, y: Float64Array) => void {
  const { xs, ys } = scratch;
  const { lower, upper, diagonal } = tr;
  const s = tr.parity;
  return (x, y) => {
    for (let k = 0; k < lower.length; k++) {
      const a = 0.5 * (x[lower[k]!]! + s * x[upper[k]!]!);
      xs[lower[k]!] = a;
      xs[upper[k]!] = s * a;
    }
    for (let k = 0; k < diagonal.length; k++) xs[diagonal[k]!] = s > 0 ? x[diagonal[k]!]! : 0;
    half(xs, ys);
    for (let k = 0; k < lower.length; k++) {
      const v = ys[lower[k]!]!;
      y[lower[k]!] = v;
      y[upper[k]!] = s * v;
    }
    for (let k = 0; k < diagonal.length; k++) y[diagonal[k]!] = s > 0 ? ys[diagonal[k]!]! : 0;
    for (let i = 0; i < n; i++) y[i] += other[i]! * (x[i]! - xs[i]!);
  };
}

/**
 * v ← P v in place (v in the space's order; `layout` maps it to the direct one). O(size).
 * @example projectParity(tr, layout, v);
 */
export function projectParity(tr: TimeReversalPairs, layout: DirectLayout, v: Float64Array): void {
  const at = (k: number) => (layout.perm ? layout.perm : undefined)?.[k] ?? k;
  // positions are in the direct layout: map back through the inverse permutation
  const inv = layout.perm ? new Int32Array(layout.size) : undefined;
  if (inv) for (let k = 0; k < layout.size; k++) inv[at(k)] = k;
  const idx = (p: number) => (inv ? inv[p]! : p);
  const s = tr.parity;
  for (let k = 0; k < tr.lower.length; k++) {
    const a = 0.5 * (v[idx(tr.lower[k]!)]! + s * v[idx(tr.upper[k]!)]!);
    v[idx(tr.lower[k]!)] = a;
    v[idx(tr.upper[k]!)] = s * a;
  }
  if (s < 0) for (let k = 0; k < tr.diagonal.length; k++) v[idx(tr.diagonal[k]!)] = 0;
}

/**
 * Coordinates of the half space: u[k] = √2·x(I, J) for a pair (J < I), u[k] = x(I, I) on the
 * diagonal. The map u ↦ x (x(J, I) = s·x(I, J)) is an isometry onto the s-symmetric vectors, so
 * Davidson on the half operator Qᵀ H Q sees the same eigenpairs with half the vector length and
 * none of the other parity. Writes x in the direct layout (every position). O(size).
 * @example expandHalf(tr, u, x);
 */
export function expandHalf(tr: TimeReversalPairs, u: Float64Array, x: Float64Array): void {
  const { half, mirror } = tr;
  const s = tr.parity * Math.SQRT1_2;
  if (tr.parity < 0) for (let k = 0; k < tr.diagonal.length; k++) x[tr.diagonal[k]!] = 0;
  for (let k = 0; k < half.length; k++) {
    const m = mirror[k]!;
    if (m < 0) x[half[k]!] = u[k]!;
    else {
      x[half[k]!] = Math.SQRT1_2 * u[k]!;
      x[m] = s * u[k]!;
    }
  }
}

/**
 * u = Qᵀ x for x in the direct layout: (x(I, J) + s·x(J, I))/√2 per pair, x(I, I) on the diagonal
 * (projection and change of coordinates in one pass). O(size).
 * @example compressHalf(tr, x, u);
 */
export function compressHalf(tr: TimeReversalPairs, x: Float64Array, u: Float64Array): void {
  const { half, mirror } = tr;
  const s = tr.parity;
  for (let k = 0; k < half.length; k++) {
    const m = mirror[k]!;
    u[k] = m < 0 ? x[half[k]!]! : Math.SQRT1_2 * (x[half[k]!]! + s * x[m]!);
  }
}

/**
 * v = Qᵀ H Q u with `rows(xs, ys)` computing the rows of ys = H·xs up to the diagonal (direct
 * layout): H Q u is s-symmetric, so Qᵀ of it is √2 times its lower entries. O(size) besides
 * `rows`; scratch: two vectors of the full size.
 */
export function halfProduct(tr: TimeReversalPairs, n: number, rows: (x: Float64Array, y: Float64Array) => void, scratch: HalfScratch = halfScratch(n)): (u: Float64Array, v: Float64Array) => void {
  const { xs, ys } = scratch;
  const { half, mirror } = tr;
  return (u, v) => {
    expandHalf(tr, u, xs);
    rows(xs, ys);
    for (let k = 0; k < half.length; k++) v[k] = mirror[k]! < 0 ? ys[half[k]!]! : Math.SQRT2 * ys[half[k]!]!;
  };
}
